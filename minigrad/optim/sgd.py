"""``SGD``: stochastic gradient descent, with momentum, Nesterov momentum and weight decay.

PyTorch's update for each parameter p with gradient g (and ours, line by line):

    g = g + weight_decay * p                    # L2 penalty, if weight_decay != 0
    b = g                  on the first step    # momentum buffer, if momentum != 0
    b = momentum * b + (1 - dampening) * g      afterwards
    g = g + momentum * b   if nesterov, else g = b
    p = p - lr * g

Note PyTorch's form of momentum: the buffer sums raw gradients and lr scales
the sum (some texts fold lr into the buffer instead; the two differ when lr changes).
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minigrad.optim.optimizer import Optimizer
from minigrad._tensor import Tensor


class SGD(Optimizer):
    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        momentum: float = 0,
        dampening: float = 0,
        weight_decay: float = 0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        """``maximize=True`` climbs the gradient; ``foreach`` is accepted for PyTorch's signature and
        ignored, ``differentiable`` and ``fused`` only at their defaults (``optimizer.py``)."""
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov,
                        maximize=maximize, foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        if group["maximize"]:
            grad = -grad
        if weight_decay != 0:
            grad = grad + weight_decay * p._data  # a new array: p.grad itself is left alone
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = Tensor._wrap(grad.copy())
            else:
                buf._data *= momentum
                buf._data += (1 - group["dampening"]) * grad
            grad = grad + momentum * buf._data if group["nesterov"] else buf._data
        p._data -= group["lr"] * grad
