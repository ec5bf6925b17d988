"""``Adam``: a step per parameter from running averages of the gradient and its square.

PyTorch's update for each parameter p with gradient g, at step t = 1, 2, ...:

    g = g + weight_decay * p                    # L2 penalty (AdamW would decay p directly)
    m = beta1 * m + (1 - beta1) * g             # average gradient: the direction
    v = beta2 * v + (1 - beta2) * g * g         # average squared gradient: the scale
    m_hat = m / (1 - beta1 ** t)                # m and v start at 0, so early averages are
    v_hat = v / (1 - beta2 ** t)                #   too small: bias correction undoes that
    p = p - lr * m_hat / (sqrt(v_hat) + eps)

Dividing by sqrt(v_hat) gives every parameter a step of about ``lr``, however
large or small its gradients are. (No ``amsgrad``, unlike PyTorch.)
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from minigrad.optim.optimizer import Optimizer
from minigrad.tensor import Tensor


class Adam(Optimizer):
    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
    ) -> None:
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if eps < 0.0:
            raise ValueError(f"Invalid epsilon value: {eps}")
        for i, beta in enumerate(betas):
            if not 0.0 <= beta < 1.0:
                raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        (beta1, beta2), weight_decay = group["betas"], group["weight_decay"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._wrap(np.zeros_like(p._data))     # m
            state["exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))  # v
        if weight_decay != 0:
            grad = grad + weight_decay * p._data
        state["step"] += 1
        t = state["step"]
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        m *= beta1
        m += (1 - beta1) * grad
        v *= beta2
        v += (1 - beta2) * grad * grad
        # PyTorch's arrangement: lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)
        denom = np.sqrt(v) / math.sqrt(1 - beta2**t) + group["eps"]
        p._data -= (group["lr"] / (1 - beta1**t)) * (m / denom)
