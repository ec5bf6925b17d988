"""``RMSprop``: divide each gradient by a running root-mean-square of its recent values.

PyTorch's update for each parameter p with gradient g (and ours, in the same order):

    g = -g                                      if maximize
    g = g + weight_decay * p                    if weight_decay != 0
    v = alpha * v + (1 - alpha) * g * g         # running mean of the squared gradient
    centered:  a = a + (1 - alpha) * (g - a)    # running mean of the gradient
               avg = sqrt(v - a * a) + eps      # an estimate of the gradient's spread
    otherwise: avg = sqrt(v) + eps
    momentum:  b = momentum * b + g / avg;  p = p - lr * b
    otherwise: p = p - lr * g / avg

Like Adam without the first-moment average and the bias correction (Hinton's
lecture 6e, 2012): a parameter whose gradients are large takes smaller steps.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minigrad.optim.adam import _lerp
from minigrad.optim.optimizer import Optimizer, _check_non_negative
from minigrad._tensor import Tensor


class RMSprop(Optimizer):
    """``foreach`` is accepted for PyTorch's signature and ignored; ``capturable`` and
    ``differentiable`` only at their defaults (``optimizer.py``)."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum: float = 0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
                        centered=centered, capturable=capturable, foreach=foreach, maximize=maximize,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        alpha, momentum = group["alpha"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = Tensor._wrap(np.zeros_like(p._data))
            if momentum > 0:
                state["momentum_buffer"] = Tensor._wrap(np.zeros_like(p._data))
            if group["centered"]:
                state["grad_avg"] = Tensor._wrap(np.zeros_like(p._data))
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        if group["weight_decay"] != 0:
            grad = grad + group["weight_decay"] * p._data
        v = state["square_avg"]._data
        v *= alpha
        v += (1 - alpha) * grad * grad
        if group["centered"]:
            a = state["grad_avg"]._data
            _lerp(a, grad, 1 - alpha)
            avg = np.sqrt(v + (-1 * a) * a)
        else:
            avg = np.sqrt(v)
        avg += group["eps"]
        if momentum > 0:
            buf = state["momentum_buffer"]._data
            buf *= momentum
            buf += grad / avg
            p._data += -group["lr"] * buf
        else:
            p._data += (-group["lr"] * grad) / avg
