"""Learning-rate schedules: change each parameter group's ``"lr"`` as training goes on.

    scheduler = StepLR(optimizer, step_size=30, gamma=0.1)
    for epoch in range(100):
        train(...)              # calls optimizer.step() for each batch
        scheduler.step()        # once per epoch, after the optimizer's steps

A scheduler counts epochs in ``last_epoch`` and, at each ``step()``, writes
new learning rates into ``optimizer.param_groups``. It computes them the way
PyTorch does: *recursively*, from the current ``group["lr"]`` (so several
schedulers can be chained on one optimizer), with a closed form used only
when ``step(epoch)`` is given an epoch (deprecated, as in PyTorch).
"""
from __future__ import annotations

import math
import warnings
from typing import Any

from minigrad.optim.optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR"]

_EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being "
    "deprecated where possible. Please use `scheduler.step()` to step the "
    "scheduler. During the deprecation, if epoch is different from None, the "
    "closed form is used instead of the new chainable form, where available."
)


class LRScheduler:
    """Base class: subclasses define ``get_lr()`` (the next rates) and may define ``_get_closed_form_lr()``.

    On creation it records each group's ``initial_lr`` (the ``base_lrs``) and
    takes a first step to epoch 0, as PyTorch does.
    """

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(
                        f"param 'initial_lr' is not specified in param_groups[{i}] when resuming scheduler with "
                        "last_epoch >= 0: load the optimizer's state_dict first, or start from last_epoch=-1"
                    )
        self.base_lrs: list[float] = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for epoch ``last_epoch``, one per parameter group."""
        raise NotImplementedError

    def get_last_lr(self) -> list[float]:
        """The learning rates the last ``step()`` set (a copy: changing it changes nothing)."""
        return list(self._last_lr)

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and write the new learning rates into the optimizer.

        Call it after ``optimizer.step()``: called before, the first rate of
        the schedule is skipped, and PyTorch's warning says so.
        """
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(
                "Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                "In PyTorch 1.1.0 and later, you should call them in the opposite order: "
                "`optimizer.step()` before `lr_scheduler.step()`.  Failure to do this "
                "will result in PyTorch skipping the first value of the learning rate schedule.",
                UserWarning,
                stacklevel=2,
            )
        self._step_count += 1
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            warnings.warn(_EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer (which has a state_dict of its own)."""
        return {key: value for key, value in self.__dict__.items() if key != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)

    def _current_lrs(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every ``step_size`` epochs."""

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1) -> None:
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [lr * self.gamma for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size) for base_lr in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Follow half a cosine from the base rate down to ``eta_min`` over ``T_max`` epochs (then back up).

    The target is ``eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``;
    like PyTorch, each step reaches it by scaling the current rate (the
    recursive form), so a rate changed by hand or by another scheduler is respected.
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1) -> None:
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        t, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and t > 0:  # resumed at a later epoch: jump to the closed form
            return self._get_closed_form_lr()
        if (t - 1 - t_max) % (2 * t_max) == 0:  # the bottom of the cosine: the recursive ratio would be 0/0
            return [lr + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, lr in zip(self.base_lrs, self._current_lrs())]
        ratio = (1 + math.cos(math.pi * t / t_max)) / (1 + math.cos(math.pi * (t - 1) / t_max))
        return [ratio * (lr - eta_min) + eta_min for lr in self._current_lrs()]

    def _get_closed_form_lr(self) -> list[float]:
        return [self.eta_min + (base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]
