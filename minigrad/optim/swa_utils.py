"""Weight averaging: ``AveragedModel`` (SWA and EMA), its learning-rate schedule ``SWALR``, and ``update_bn``.

Stochastic Weight Averaging (Izmailov et al., 2018): late in training, with a
constant or cyclic learning rate, SGD bounces around a wide basin; the average
of the weights it visits sits nearer the basin's centre and usually
generalises better than any single one. An exponential moving average (EMA) of
the weights does the same with more weight on recent steps.

    swa_model = AveragedModel(model)                 # a deep copy, plus an n_averaged buffer
    swa_scheduler = SWALR(optimizer, swa_lr=0.05)
    for epoch in range(epochs):
        train_one_epoch(model, optimizer)
        if epoch >= swa_start:
            swa_model.update_parameters(model)       # the running mean of the weights so far
            swa_scheduler.step()
    update_bn(train_loader, swa_model)               # batch-norm statistics for the averaged weights

The average of weights is not the average of their batch-norm statistics, so
``update_bn`` runs the data through once more to recompute them. An averaging
function takes ``(averaged, current, num_averaged)``: ``avg_fn`` one tensor at a
time, returning the new average; ``multi_avg_fn`` lists of them, in place.
``get_swa_*`` give the running mean, ``get_ema_*(decay)`` the moving average
``decay * averaged + (1 - decay) * current``. The first update copies.

As in PyTorch on the CPU, without an averaging function the running mean is
``averaged + (current - averaged) / (n + 1)``, one tensor at a time. ``device``
is accepted for PyTorch's signature; minigrad has the CPU.
"""
from __future__ import annotations

import copy
import itertools
import math
from typing import Any, Callable, Iterable, Sequence

from minigrad.autograd.grad_mode import no_grad
from minigrad.creation import tensor
from minigrad.dtypes import int64
from minigrad.nn.module import Module
from minigrad.nn.modules.batchnorm import _BatchNorm
from minigrad.nn.modules.instancenorm import _InstanceNorm
from minigrad.optim.lr_scheduler import LRScheduler, _format_param
from minigrad.optim.optimizer import Optimizer
from minigrad._tensor import Tensor

__all__ = [
    "AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
    "get_swa_avg_fn",
]

AvgFn = Callable[[Tensor, Tensor, "Tensor | int"], Tensor]
MultiAvgFn = Callable[[Sequence[Tensor], Sequence[Tensor], "Tensor | int"], None]


def _check_decay(decay: float) -> None:
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in [0,1] range.")


def get_ema_multi_avg_fn(decay: float = 0.999) -> MultiAvgFn:
    """In place, each ``ema`` moves ``1 - decay`` of the way to its current tensor (a lerp, for floats)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list: Sequence[Tensor], current_param_list: Sequence[Tensor], _: Any) -> None:
        if ema_param_list[0].is_floating_point():
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.lerp_(p_model, 1 - decay)
        else:  # integers (a buffer such as num_batches_tracked): computed in floats, truncated back
            for p_ema, p_model in zip(ema_param_list, current_param_list):
                p_ema.copy_(p_ema * decay + p_model * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn() -> MultiAvgFn:
    """In place, the running mean: each average moves ``1 / (num_averaged + 1)`` of the way to its current tensor.

    The weight is computed from ``num_averaged`` as PyTorch does: from the
    integer buffer it is a tensor of the default dtype, so float32-rounded by default.
    """
    @no_grad()
    def swa_update(averaged_param_list: Sequence[Tensor], current_param_list: Sequence[Tensor],
                   num_averaged: Tensor | int) -> None:
        if not averaged_param_list[0].is_floating_point():
            raise RuntimeError(
                f"the running mean of {averaged_param_list[0].dtype} tensors can't be kept in place in integers "
                "(PyTorch's in-place division refuses them): average only floating-point tensors (use_buffers=False "
                "leaves integer buffers out), or pass avg_fn=get_swa_avg_fn()"
            )
        weight = float(1 / (num_averaged + 1))
        for p_averaged, p_model in zip(averaged_param_list, current_param_list):
            p_averaged.lerp_(p_model, weight)

    return swa_update


def get_ema_avg_fn(decay: float = 0.999) -> AvgFn:
    """The new average of one tensor: ``decay * ema + (1 - decay) * current``."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn() -> AvgFn:
    """The new running mean of one tensor: ``averaged + (current - averaged) / (num_averaged + 1)``."""
    @no_grad()
    def swa_update(averaged_param: Tensor, current_param: Tensor, num_averaged: Tensor | int) -> Tensor:
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters are the average of ``model``'s at each ``update_parameters``.

    ``use_buffers=True`` averages the buffers too (and counts their integers);
    otherwise they are copied from ``model`` at each update.
    """

    n_averaged: Tensor

    def __init__(
        self,
        model: Module,
        device: Any = None,
        avg_fn: AvgFn | None = None,
        multi_avg_fn: MultiAvgFn | None = None,
        use_buffers: bool = False,
    ) -> None:
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=int64))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.module(*args, **kwargs)

    @no_grad()
    def update_parameters(self, model: Module) -> None:
        """Fold ``model``'s current weights into the average (the first call copies them)."""
        if self.use_buffers:
            averaged = list(itertools.chain(self.module.parameters(), self.module.buffers()))
            current = list(itertools.chain(model.parameters(), model.buffers()))
        else:
            averaged, current = list(self.parameters()), list(model.parameters())
        pairs = list(zip(averaged, current))
        if self.n_averaged == 0:
            for p_averaged, p_model in pairs:
                p_averaged.copy_(p_model)
        if self.n_averaged > 0:
            if self.avg_fn is not None:
                for p_averaged, p_model in pairs:
                    p_averaged.copy_(self.avg_fn(p_averaged.detach(), p_model.detach(), self.n_averaged))
            elif self.multi_avg_fn is not None:
                for group in _by_dtype(pairs):
                    self.multi_avg_fn([a.detach() for a, _ in group], [c.detach() for _, c in group],
                                      self.n_averaged)
            else:
                swa = get_swa_avg_fn()
                for p_averaged, p_model in pairs:
                    p_averaged.copy_(swa(p_averaged.detach(), p_model.detach(), self.n_averaged))
        if not self.use_buffers:
            for b_swa, b_model in zip(self.module.buffers(), model.buffers(), strict=True):
                b_swa.copy_(b_model)
        self.n_averaged += 1


def _by_dtype(pairs: list[tuple[Tensor, Tensor]]) -> list[list[tuple[Tensor, Tensor]]]:
    """The pairs in groups of one dtype (in order of first appearance): a multi_avg_fn gets one list per dtype."""
    groups: dict[Any, list] = {}
    for averaged, current in pairs:
        groups.setdefault(averaged.dtype, []).append((averaged, current))
    return list(groups.values())


@no_grad()
def update_bn(loader: Iterable[Any], model: Module, device: Any = None) -> None:
    """Recompute every batch norm's running statistics as the plain average over one pass of ``loader``.

    Each batch (or its first element, for ``(input, target)`` pairs) goes
    through ``model`` in training mode, with ``momentum=None`` (a cumulative
    average); afterwards momenta and the training flag are restored.
    """
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    for input in loader:
        if isinstance(input, (list, tuple)):
            input = input[0]
        if device is not None:
            input = input.to(device)
        model(input)
    for module, momentum in momenta.items():
        module.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneal each group's learning rate to its ``swa_lr`` over ``anneal_epochs`` epochs, then hold it.

    Each step moves the rate ``alpha`` of the way from where it would have
    been without annealing to ``swa_lr``, ``alpha`` growing from 0 to 1 along
    half a cosine (``"cos"``) or a line (``"linear"``).
    """

    def __init__(self, optimizer: Optimizer, swa_lr: float | list[float], anneal_epochs: int = 10,
                 anneal_strategy: str = "cos", last_epoch: int = -1) -> None:
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._set_anneal_func(anneal_strategy)
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t: float) -> float:
        return t

    @staticmethod
    def _cosine_anneal(t: float) -> float:
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr: float, swa_lr: float, alpha: float) -> float:
        """The rate before the last step's annealing: undo ``lr = alpha * swa_lr + (1 - alpha) * initial``."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self) -> list[float]:
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev_lrs = [self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
                    for group in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [group["swa_lr"] * alpha + lr * (1 - alpha) for group, lr in zip(self.optimizer.param_groups, prev_lrs)]

    def _set_anneal_func(self, anneal_strategy: str) -> None:
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal

    def state_dict(self) -> dict[str, Any]:
        """Everything but the optimizer and the annealing function (rebuilt from its name on loading)."""
        return {key: value for key, value in self.__dict__.items() if key not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.__dict__.update(state_dict)
        self._set_anneal_func(self._anneal_strategy)
