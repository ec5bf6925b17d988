"""``Adagrad`` and ``Adadelta``: a step size for each coordinate, from the squares of its past gradients.

Adagrad (Duchi et al., 2011) divides each gradient by the root of the *sum*
of its squares so far: a coordinate that keeps seeing large gradients takes
small steps, a rarely touched one (a rare word's embedding) keeps large ones.
PyTorch's update for parameter p with gradient g at its step t = 1, 2, ...
(and ours, in the same order of floating-point operations):

    g = -g                                  if maximize
    g = g + weight_decay * p                if weight_decay != 0
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g * g                           # s starts at initial_accumulator_value
    p = p - clr * g / (sqrt(s) + eps)

The sum only grows, so the steps only shrink. Adadelta (Zeiler, 2012) keeps
running averages instead, of the squared gradients (v) and of the squared
updates (u), and scales each gradient by their ratio: an update measured in the
parameter's own units, so its ``lr`` is 1.0 and rarely needs tuning.

    v = rho * v + (1 - rho) * g * g
    d = sqrt(u + eps) / sqrt(v + eps) * g
    u = rho * u + (1 - rho) * d * d
    p = p - lr * d
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minigrad.optim.optimizer import Optimizer, _check_non_negative
from minigrad._tensor import Tensor


class Adagrad(Optimizer):
    """Adagrad, with PyTorch's ``lr_decay`` (the rate divided by ``1 + (t - 1) * lr_decay``).

    As PyTorch's, it creates every parameter's state on construction, so
    ``state_dict()`` lists them all before the first step, and the sum starts
    at the constructor's ``initial_accumulator_value`` even in a parameter
    group that sets its own (PyTorch reads only the default).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        lr_decay: float = 0,
        weight_decay: float = 0,
        initial_accumulator_value: float = 0,
        eps: float = 1e-10,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check_non_negative(lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                            initial_accumulator_value=initial_accumulator_value, eps=eps)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p])

    def _init_state(self, p: Tensor, state: dict) -> None:
        state["step"] = 0
        state["sum"] = Tensor._wrap(np.full_like(p._data, self.defaults["initial_accumulator_value"]))

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        if not state:  # a parameter of a group added after construction
            self._init_state(p, state)
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * p._data
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        s = state["sum"]._data
        s += grad * grad
        p._data += (-clr * grad) / (np.sqrt(s) + group["eps"])


class Adadelta(Optimizer):
    """Adadelta; ``rho`` is the averages' decay, in [0, 1]."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        _check_non_negative(eps=eps, weight_decay=weight_decay)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        rho, eps = group["rho"], group["eps"]
        if not state:
            state["step"] = 0
            state["square_avg"] = Tensor._wrap(np.zeros_like(p._data))  # v
            state["acc_delta"] = Tensor._wrap(np.zeros_like(p._data))   # u
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * p._data
        v, u = state["square_avg"]._data, state["acc_delta"]._data
        v *= rho
        v += (1 - rho) * grad * grad
        delta = np.sqrt(u + eps) / np.sqrt(v + eps) * grad
        u *= rho
        u += (1 - rho) * delta * delta
        p._data += -group["lr"] * delta
