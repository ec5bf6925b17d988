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

from minigrad.optim.optimizer import Optimizer, _check_betas, _check_non_negative, blocks
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
        state["step"] += 1
        t = state["step"]
        self._step_in_blocks(p, grad, group, state, t)

    @staticmethod
    def _step_in_blocks(p: Tensor, grad: np.ndarray, group: dict, state: dict, t: int) -> None:
        """The update above, into p, m and v's memory with ``out=``, a block at a time through two
        scratch blocks (``optimizer.blocks``): it allocates nothing. p.grad is left alone."""
        (beta1, beta2), lr, eps, weight_decay = group["betas"], group["lr"], group["eps"], group["weight_decay"]
        decoupled, amsgrad = group.get("decoupled_weight_decay"), group["amsgrad"]
        arrays = [p._data, grad, state["exp_avg"]._data, state["exp_avg_sq"]._data]
        if amsgrad:
            arrays.append(state["max_exp_avg_sq"]._data)
        weight = 1 - beta1
        bias_correction2 = math.sqrt(1 - beta2**t)
        step_size = -(lr / (1 - beta1**t))
        for part in blocks(arrays, [True, False, True, True, True][:len(arrays)], scratch=2):
            P, G, M, V, s1, s2 = *part[:4], part[-2], part[-1]
            g = G
            if group["maximize"]:
                g = np.negative(G, out=s1)
            if weight_decay != 0:
                if decoupled:  # AdamW: p = p * (1 - lr * wd)
                    np.multiply(P, 1 - lr * weight_decay, out=P)
                else:  # Adam: g = g + wd * p
                    np.multiply(P, weight_decay, out=s2)
                    g = np.add(g, s2, out=s1)
            # m = lerp(m, g, 1 - beta1), PyTorch's formula (_lerp)
            np.subtract(g, M, out=s2)
            if weight < 0.5:
                np.multiply(s2, weight, out=s2)
                np.add(M, s2, out=M)
            else:
                np.multiply(s2, 1 - weight, out=s2)
                np.subtract(g, s2, out=M)
            # v = beta2 * v + (1 - beta2) * g * g
            np.multiply(V, beta2, out=V)
            np.multiply(g, 1 - beta2, out=s2)
            np.multiply(s2, g, out=s2)
            np.add(V, s2, out=V)
            if amsgrad:
                V = np.maximum(part[4], V, out=part[4])
            # p = p + (-lr / (1 - beta1 ** t)) * m / (sqrt(v) / sqrt(1 - beta2 ** t) + eps)
            denom = np.sqrt(V, out=s2)
            np.divide(denom, bias_correction2, out=denom)
            np.add(denom, eps, out=denom)
            np.multiply(M, step_size, out=s1)
            np.divide(s1, denom, out=s1)
            np.add(P, s1, out=P)


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
