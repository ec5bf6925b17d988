"""``Adam`` and ``AdamW``: a step per parameter from running averages of the gradient and its square.

PyTorch's update for each parameter p with gradient g, at step t = 1, 2, ...
(and ours, in the same order of floating-point operations):

    g = -g                       if maximize
    p = p * (1 - lr * wd)        AdamW: decay the weights directly ("decoupled")
    g = g + wd * p               Adam:  an L2 penalty folded into the gradient
    m = m + (1 - beta1) * (g - m)             # average gradient (PyTorch's lerp)
    v = beta2 * v + (1 - beta2) * g * g       # average squared gradient: the scale
    v_max = max(v_max, v)                     # amsgrad: never let the scale shrink
    denom = sqrt(v) / sqrt(1 - beta2 ** t) + eps
    p = p - lr / (1 - beta1 ** t) * m / denom

m and v start at 0, so early averages are too small: the two ``1 - beta ** t``
factors (bias correction) undo that. Dividing by sqrt(v) gives every
parameter a step of about ``lr``, however large or small its gradients are.
Why AdamW: with Adam's L2 penalty the decay is divided by sqrt(v) too, so
parameters with large gradients are barely decayed; AdamW decays all alike.
"""
from __future__ import annotations

import math
from typing import Iterable

import numpy as np

from minigrad.optim.optimizer import Optimizer, _check_betas, _check_non_negative
from minigrad._tensor import Tensor


def _lerp(start: np.ndarray, end: np.ndarray, weight: float) -> None:
    """start += weight * (end - start), in place, with PyTorch's formula (it switches sides at 0.5)."""
    if weight < 0.5:
        start += weight * (end - start)
    else:
        start[...] = end - (end - start) * (1 - weight)


def _apply_weight_decay(p: Tensor, grad: np.ndarray, group: dict) -> np.ndarray:
    """Adam's L2 term in the gradient, or AdamW's decay of the weights (``decoupled_weight_decay``)."""
    weight_decay = group["weight_decay"]
    if weight_decay != 0:
        if group.get("decoupled_weight_decay"):
            p._data *= 1 - group["lr"] * weight_decay
        else:
            grad = grad + weight_decay * p._data
    return grad


def _update_averages(m: np.ndarray, v: np.ndarray, grad: np.ndarray, beta1: float, beta2: float) -> None:
    """Adam's running averages, in place: m of the gradient (a lerp), v of its square."""
    _lerp(m, grad, 1 - beta1)
    v *= beta2
    v += (1 - beta2) * grad * grad


class Adam(Optimizer):
    """Adam (Kingma & Ba, 2015); ``decoupled_weight_decay=True`` makes it AdamW.

    ``foreach`` is accepted for PyTorch's signature and ignored (there is one
    implementation, the loop over parameters PyTorch uses on the CPU).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable, differentiable=differentiable,
                        fused=fused, decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        (beta1, beta2), lr = group["betas"], group["lr"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._wrap(np.zeros_like(p._data))     # m
            state["exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))  # v
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        t = state["step"]
        grad = _apply_weight_decay(p, grad, group)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        _update_averages(m, v, grad, beta1, beta2)
        if group["amsgrad"]:
            v_max = state["max_exp_avg_sq"]._data
            np.maximum(v_max, v, out=v_max)
            v = v_max
        denom = np.sqrt(v) / math.sqrt(1 - beta2**t) + group["eps"]
        p._data += (-(lr / (1 - beta1**t)) * m) / denom


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter, 2019): ``p *= 1 - lr * weight_decay`` each step.

    Note the default ``weight_decay=0.01``, as in PyTorch (Adam's is 0).
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
