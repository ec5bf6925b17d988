"""``Adamax``, ``NAdam`` and ``RAdam``: Adam with its scale, its momentum or its first steps changed.

Read ``adam.py`` first. All three keep Adam's average gradient
``m = m + (1 - beta1) * (g - m)`` and, after ``g = -g`` (maximize) and weight
decay (an L2 term ``g = g + wd * p``, or, with ``decoupled_weight_decay``,
``p = p * (1 - lr * wd)`` as AdamW), PyTorch's updates at step t = 1, 2, ...
are (and ours, in the same order of floating-point operations):

Adamax (Kingma & Ba, 2015, section 7) scales by a decaying maximum of |g|
instead of a root mean square, so one huge gradient is forgotten geometrically:

    u = max(beta2 * u, |g| + eps)
    p = p - lr / (1 - beta1 ** t) * m / u

NAdam (Dozat, 2016) looks ahead as Nesterov momentum does: it steps with the
momentum it *will* have, mixing the new gradient with m by factors mu_t that
warm up with ``momentum_decay`` (mu_prod is the product of mu_1 .. mu_t):

    v = beta2 * v + (1 - beta2) * g * g
    mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    denom = sqrt(v / (1 - beta2 ** t)) + eps
    p = p - lr * (1 - mu_t) / (1 - mu_prod) * g / denom
          - lr * mu_{t+1} / (1 - mu_prod * mu_{t+1}) * m / denom

RAdam (Liu et al., 2019) notices that in the first steps v averages too few
squares to be trusted, which is why Adam needs a warm-up. While the length of
the average, rho_t, is at most 5 it takes plain momentum steps; afterwards
Adam's steps, times a factor r_t that rectifies their variance:

    rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 t beta2 ** t / (1 - beta2 ** t)
    rho_t <= 5:  p = p - lr * m / (1 - beta1 ** t)
    rho_t > 5:   p = p - lr * m / (1 - beta1 ** t) * sqrt(1 - beta2 ** t) / (sqrt(v) + eps) * r_t
                 r_t = sqrt((rho_t - 4) (rho_t - 2) rho_inf / ((rho_inf - 4) (rho_inf - 2) rho_t))
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minigrad.optim.adam import _apply_weight_decay, _lerp, _update_averages
from minigrad.optim.optimizer import Optimizer, _check_betas, _check_non_negative, _scalar_state
from minigrad._tensor import Tensor


class Adamax(Optimizer):
    """Adamax: Adam with the infinity norm. Note its default ``lr=2e-3``, as in PyTorch."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._wrap(np.zeros_like(p._data))  # m
            state["exp_inf"] = Tensor._wrap(np.zeros_like(p._data))  # u
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        grad = _apply_weight_decay(p, grad, group)
        m, u = state["exp_avg"]._data, state["exp_inf"]._data
        _lerp(m, grad, 1 - beta1)
        u *= beta2
        np.maximum(u, np.abs(grad) + group["eps"], out=u)
        p._data += (-(group["lr"] / (1 - beta1 ** state["step"])) * m) / u


class NAdam(Optimizer):
    """NAdam; ``decoupled_weight_decay=True`` decays the weights as AdamW does (NAdamW).

    ``state[p]["mu_product"]`` is a 0-dim tensor of the default dtype, as in
    PyTorch, whose float32 rounding shows in the updates.
    """

    def __init__(
        self,
        params: Iterable,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay, momentum_decay=momentum_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        (beta1, beta2), lr, momentum_decay = group["betas"], group["lr"], group["momentum_decay"]
        if not state:
            state["step"] = 0
            state["mu_product"] = _scalar_state(1.0)
            state["exp_avg"] = Tensor._wrap(np.zeros_like(p._data))     # m
            state["exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))  # v
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        t = state["step"]
        bias_correction2 = 1 - beta2**t
        grad = _apply_weight_decay(p, grad, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        mu_product = state["mu_product"]._data
        mu_product *= mu  # in the state's dtype, as PyTorch
        mu_product_next = float(mu_product) * mu_next
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        _update_averages(m, v, grad, beta1, beta2)
        denom = np.sqrt(v / bias_correction2) + group["eps"]
        p._data += (-lr * (1.0 - mu) / (1.0 - float(mu_product)) * grad) / denom
        p._data += ((-lr * mu_next) / (1.0 - mu_product_next) * m) / denom


class RAdam(Optimizer):
    """RAdam; ``decoupled_weight_decay=True`` decays the weights as AdamW does."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0,
        decoupled_weight_decay: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr, eps=eps)
        _check_betas(betas)
        _check_non_negative(weight_decay=weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize, foreach=foreach,
                        capturable=capturable, decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = Tensor._wrap(np.zeros_like(p._data))     # m
            state["exp_avg_sq"] = Tensor._wrap(np.zeros_like(p._data))  # v
        if group["maximize"]:
            grad = -grad
        state["step"] += 1
        t = state["step"]
        grad = _apply_weight_decay(p, grad, group)
        m, v = state["exp_avg"]._data, state["exp_avg_sq"]._data
        _update_averages(m, v, grad, beta1, beta2)
        bias_correction1, bias_correction2 = 1 - beta1**t, 1 - beta2**t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / bias_correction2
        update = m / bias_correction1 * group["lr"]
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            update = update * (bias_correction2**0.5 / (np.sqrt(v) + group["eps"])) * rect
        p._data -= update
