"""``ASGD``: SGD with a decaying step size, that also keeps a running average of the parameters.

Averaged SGD (Polyak & Juditsky, 1992): with a noisy gradient, the iterates
jitter around the minimum, and their average is closer to it than any one of
them. PyTorch's update for parameter p with gradient g at its step t = 1, 2, ...
(and ours, in the same order of floating-point operations):

    g = -g                                  if maximize
    g = g + weight_decay * p                if weight_decay != 0
    p = p * (1 - lambd * eta)               # eta starts at lr
    p = p - eta * g
    ax = ax + mu * (p - ax)                 # mu = 1 copies p: no averaging before t0
    eta = lr / (1 + lambd * lr * t) ** alpha
    mu = 1 / max(1, t - t0)

The average ``state[p]["ax"]`` is not used by the step; evaluate the model with
it by copying it into the parameters. Note that ``eta`` and ``mu`` are 0-dim
tensors of the default dtype, as in PyTorch, rounded to float32 by default.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minigrad.optim.optimizer import Optimizer, _check_non_negative, _scalar_state
from minigrad._tensor import Tensor


class ASGD(Optimizer):
    """Averaged SGD; averaging starts after ``t0`` steps (a million by default)."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, weight_decay=weight_decay)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["step"] = 0
            state["eta"] = _scalar_state(lr)
            state["mu"] = _scalar_state(1.0)
            state["ax"] = Tensor._wrap(np.zeros_like(p._data))
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        t = state["step"]
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * p._data
        eta, mu, ax = state["eta"].item(), state["mu"].item(), state["ax"]._data
        p._data *= 1 - lambd * eta
        p._data += -eta * grad
        if mu != 1:
            ax += (p._data - ax) * mu
        else:
            ax[...] = p._data
        # PyTorch copies the new values in through a tensor of the default dtype, which rounds them.
        state["eta"]._data[...] = _scalar_state(lr / (1 + lambd * lr * t) ** group["alpha"])._data
        state["mu"]._data[...] = _scalar_state(1 / max(1, t - group["t0"]))._data
