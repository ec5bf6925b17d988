"""``linear`` as one fused Function: ``input @ weight.T + bias`` and its three gradients.

Built from the generic operations, a linear layer records a transpose, a
matmul and an add, and its backward adds a sum (to undo the bias's
broadcast) and two transposes: about ten Function calls for three BLAS
calls' worth of arithmetic. At the batch sizes of the course that
bookkeeping, not the arithmetic, is what a training step costs, so the
common case (a batch of row vectors) gets one node. PyTorch does the same
and names it ``AddmmBackward0`` (``MmBackward0`` without a bias).

    d input  = grad @ weight          (N, out) @ (out, in)
    d weight = grad.T @ input         (out, N) @ (N, in)
    d bias   = grad.sum(0)            every row of the batch used the bias once
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.core.builtin import plain, record
from minigrad._tensor import Tensor


def _affine(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    out = input._data @ weight._data.T
    if bias is not None:
        out += bias._data
    return Tensor._wrap(out)


class Linear(Function):
    node_name = "AddmmBackward0"

    @staticmethod
    def forward(ctx, input, weight, bias=None):
        need = ctx.needs_input_grad
        # input only for the weight's gradient, weight only for the input's (as PyTorch's addmm);
        # set directly, as the other built-in ops do (save_for_backward's checks are for user code)
        ctx._to_save = (input if need[1] else None, weight if need[0] else None)
        return _affine(input, weight, bias)

    @staticmethod
    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        return linear_backward(input, weight, grad, ctx.needs_input_grad)


def linear_backward(input: Tensor | None, weight: Tensor | None, grad: Tensor,
                    needed: tuple) -> tuple:
    """(d input, d weight, d bias) = (grad @ weight, grad.T @ input, grad.sum(0)), where ``needed``.

    An ordinary backward goes straight to NumPy and records nothing; with
    ``create_graph=True`` its twin, the same formulas from tensor operations, is
    recorded so that it can be differentiated again. Same BLAS calls, same values.
    """
    need_input, need_weight, need_bias = needed
    if not is_grad_enabled():
        g = grad._data
        return (Tensor._wrap(g @ weight._data) if need_input else None,
                Tensor._wrap(g.T @ input._data) if need_weight else None,
                Tensor._wrap(np.add.reduce(g, axis=0)) if need_bias else None)  # (g.sum(0) without its wrapper)
    return (grad @ weight if need_input else None,
            grad.T @ input if need_weight else None,
            grad.sum(0) if need_bias else None)


class LinearNoBias(Linear):
    node_name = "MmBackward0"


def fused_linear(input: Tensor, weight: Tensor, bias: Tensor | None) -> Tensor:
    """``Linear.apply`` (``LinearNoBias`` without a bias); a plain call is recorded directly (core/builtin.py)."""
    cls = Linear if bias is not None else LinearNoBias
    if plain(input, weight) and (bias is None or bias._base is None):
        needs = (input._requires_grad, weight._requires_grad, bias is not None and bias._requires_grad)
        out = _affine(input, weight, bias)
        if True in needs:
            record(cls, (input, weight, bias), out, needs, (input if needs[1] else None, weight if needs[0] else None))
        return out
    return cls.apply(input, weight, bias)


def fits_fused_linear(input: Tensor, weight: Tensor, bias: Tensor | None) -> bool:
    """The common case the fused node handles: a 2-D batch, matching sizes and one float dtype.

    Anything else (other ranks, mixed dtypes, wrong sizes) takes the generic
    operations, which broadcast, promote, and raise PyTorch's error messages.
    (``F.linear`` has already refused a bias whose dtype differs from the weight's.)
    """
    x, w = input._data, weight._data
    if x.ndim != 2 or w.ndim != 2 or x.shape[1] != w.shape[1] or x.dtype != w.dtype or x.dtype.kind != "f":
        return False
    return bias is None or bias._data.shape == (w.shape[0],)
