"""``Rprop``: resilient backpropagation, which uses only the *sign* of each gradient.

Rprop (Riedmiller & Braun, 1993) keeps a step size per coordinate and moves
by it against the gradient's sign. While the sign stays the same, the step
grows (times ``etas[1]``); when it flips, the last step jumped over a minimum,
so the step shrinks (times ``etas[0]``) and this coordinate waits one step.
PyTorch's update for parameter p with gradient g (and ours, in the same order):

    g = -g                                  if maximize
    s = s * etas[1]   where g * g_prev > 0  # s starts at lr
    s = s * etas[0]   where g * g_prev < 0, and there g = 0
    s = clamp(s, *step_sizes)
    p = p - sign(g) * s
    g_prev = g

It suits full-batch training: a minibatch's noisy signs would shrink every
step. Note that ``lr`` is read once, to start ``s``, so a scheduler that
changes it afterwards changes nothing, in PyTorch as here.
"""
from __future__ import annotations

from typing import Iterable

import numpy as np

from minigrad.optim.optimizer import Optimizer, _check_non_negative
from minigrad._tensor import Tensor


class Rprop(Optimizer):
    """Rprop; ``etas`` = (shrink, grow) factors, ``step_sizes`` = (smallest, largest) step."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check_non_negative(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach, maximize=maximize,
                        differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _update(self, p: Tensor, grad: np.ndarray, group: dict, state: dict) -> None:
        (etaminus, etaplus), (step_size_min, step_size_max) = group["etas"], group["step_sizes"]
        if not state:
            state["step"] = 0
            state["prev"] = Tensor._wrap(np.zeros_like(p._data))
            state["step_size"] = Tensor._wrap(np.full_like(p._data, group["lr"]))
        state["step"] += 1
        if group["maximize"]:
            grad = -grad
        prev, step_size = state["prev"]._data, state["step_size"]._data
        factor = np.sign(grad * prev, out=np.empty_like(prev))  # p's dtype, so etas round as PyTorch's do
        factor[factor > 0] = etaplus
        factor[factor < 0] = etaminus
        factor[factor == 0] = 1
        step_size *= factor
        np.clip(step_size, step_size_min, step_size_max, out=step_size)
        grad = np.where(factor == etaminus, 0, grad)
        p._data += -np.sign(grad) * step_size
        prev[...] = grad
