"""Learning-rate schedules: change each parameter group's ``"lr"`` as training goes on.

    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...)              # calls optimizer.step() for each batch
        scheduler.step()        # once per epoch, after the optimizer's steps

A scheduler counts epochs in ``last_epoch`` and, at each ``step()``, writes
new learning rates into ``optimizer.param_groups``. Most compute them the way
PyTorch does: *recursively*, by scaling the current ``group["lr"]`` (so
several schedulers can be chained on one optimizer), with a closed form used
only when ``step(epoch)`` is given an epoch (deprecated, as in PyTorch):

- StepLR, MultiStepLR, ExponentialLR, MultiplicativeLR: multiply by a factor
  every ``step_size`` epochs, at milestones, every epoch, or by a function's value;
- ConstantLR, LinearLR: a warm-up, by a constant or a linearly growing factor;
- PolynomialLR, CosineAnnealingLR: decay to 0 (``eta_min``) along a curve.

Others compute each rate from the base rate, so they overwrite other changes:
LambdaLR (``base_lr * f(epoch)``), CosineAnnealingWarmRestarts, and the two
per-batch cycles CyclicLR and OneCycleLR, which also cycle the momentum (or
Adam's ``beta1``) against the rate. SequentialLR runs schedulers one after the
other, ChainedScheduler all at once; ReduceLROnPlateau lowers the rate when a
measured metric stops improving: ``scheduler.step(val_loss)``.

Where minigrad differs from PyTorch: PyTorch wraps ``optimizer.step`` to warn
when a scheduler steps first; minigrad's ``Optimizer.step`` records the call
itself (a subclass that overrides ``step`` must call it). Calling ``get_lr()``
outside ``step()`` doesn't warn, and learning rates are numbers, not tensors.

The schedules live in this package by kind: ``base.py`` (LRScheduler), ``schedules.py`` (the
multiplying, warm-up, curve and lambda schedules), ``cyclic.py`` (CyclicLR, OneCycleLR),
``chained.py`` (SequentialLR, ChainedScheduler) and ``plateau.py`` (ReduceLROnPlateau); every
name is here, at PyTorch's path.
"""
from __future__ import annotations

# The single-file module's imports, kept so that every name it had is still here
import math
import types
import warnings
from bisect import bisect_right
from collections import Counter
from typing import Any, Callable, Iterable, Sequence

from minigrad.optim.optimizer import Optimizer

__all__ = [
    "LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
    "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
    "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR",
]

from minigrad.optim.lr_scheduler.base import _EPOCH_DEPRECATION_WARNING, LRScheduler, _LRScheduler, _format_param
from minigrad.optim.lr_scheduler.schedules import (
    StepLR, MultiStepLR, ExponentialLR, _SavesLambdaState, _one_per_group, MultiplicativeLR, ConstantLR, LinearLR,
    PolynomialLR, CosineAnnealingLR, LambdaLR, CosineAnnealingWarmRestarts,
)
from minigrad.optim.lr_scheduler.cyclic import _uses_beta1, _set_momentum, _start_momentum, CyclicLR, OneCycleLR, _phase
from minigrad.optim.lr_scheduler.chained import _check_schedulers, _RunsSchedulers, SequentialLR, ChainedScheduler
from minigrad.optim.lr_scheduler.plateau import ReduceLROnPlateau

