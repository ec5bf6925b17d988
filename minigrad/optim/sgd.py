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

from minigrad.kernels.elementwise import _sgd_step
from minigrad.optim.optimizer import BLOCK, Optimizer, blocks, scratch_views
from minigrad._tensor import Tensor


_KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


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
        """The update above, into p's memory (and the buffer's) with ``out=``, a block at a time through
        two scratch blocks (``optimizer.blocks``): after the first step, which makes the buffer, it
        allocates nothing. p.grad itself is left alone."""
        P = p._data
        plain = not (group["momentum"] or group["weight_decay"] or group["maximize"])
        if plain:
            lr = group["lr"]
            if ((type(lr) is float or type(lr) is int) and grad.dtype == P.dtype and P.dtype in _KERNEL_DTYPES
                    and grad.shape == P.shape and P.flags.c_contiguous and P.flags.writeable
                    and grad.flags.c_contiguous):
                # p -= lr * g in one pass, no scratch (kernels.sgd_step_, its checks made here): the
                # same two roundings as NumPy's below, for a Python number lr (a NumPy scalar or a
                # tensor is cast otherwise by NumPy: those take NumPy's path)
                _sgd_step(P.reshape(-1), grad.reshape(-1), P.dtype.type(lr))
                return
            if P.size <= BLOCK:
                # plain SGD on a parameter of one block (the loop below's work in this case, without
                # its bookkeeping): p = p - lr * g through one scratch array, the same two operations
                step = scratch_views(P, 2)[1]
                np.multiply(grad, lr, out=step)
                np.subtract(P, step, out=P)
                return
        weight_decay, momentum, dampening, lr = group["weight_decay"], group["momentum"], group["dampening"], group["lr"]
        maximize, nesterov = group["maximize"], group["nesterov"]
        arrays, writes = [p._data, grad], [True, False]
        first = False
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:  # the first step: the buffer starts as the (decayed) gradient
                buf = state["momentum_buffer"] = Tensor._wrap(np.empty_like(grad))
                first = True
            arrays.append(buf._data)
            writes.append(True)
        for part in blocks(arrays, writes, scratch=2):
            P, G, s1, s2 = part[0], part[1], part[-2], part[-1]
            g = G
            if weight_decay != 0:  # g = (-)G + weight_decay * P
                np.multiply(P, weight_decay, out=s1)
                np.subtract(s1, G, out=s1) if maximize else np.add(G, s1, out=s1)
                g = s1
            elif maximize:
                g = np.negative(G, out=s1)
            if momentum != 0:
                B = part[2]
                if first:
                    np.copyto(B, g)
                else:
                    np.multiply(B, momentum, out=B)
                    if dampening != 0:  # (1 - 0) * g is g: skipping the product changes no bit
                        g_scaled = np.multiply(g, 1 - dampening, out=s2)
                        np.add(B, g_scaled, out=B)
                    else:
                        np.add(B, g, out=B)
                if nesterov:  # g = g + momentum * B
                    np.multiply(B, momentum, out=s2)
                    g = np.add(g, s2, out=s2)
                else:
                    g = B
            step = g if g is s1 or g is s2 else s2  # (never into G, p.grad's memory, nor into the buffer)
            np.multiply(g, lr, out=step)
            np.subtract(P, step, out=P)
