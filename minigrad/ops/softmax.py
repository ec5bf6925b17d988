"""softmax and log_softmax along one dimension.

Both subtract the maximum before exponentiating (same result, no overflow).
Both backward passes need only the *output*, which is what they save:
softmax: ``dx = y * (dy - sum(dy * y))``; log_softmax: ``dx = dy - exp(y) * sum(dy)``.
"""
from __future__ import annotations

import numpy as np

from minigrad import kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.ops.broadcast import wrap_dim
from minigrad._tensor import Tensor
from minigrad.ops.registry import tensor_method


def _shifted(a: Tensor, dim: int) -> np.ndarray:
    x = a._data
    return x - x.max(axis=dim, keepdims=True) if x.size else x


def _check_float(a: Tensor, name: str) -> None:
    if a._data.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for {a.dtype}: call .float() first, or pass dtype=')


class Softmax(Function):
    node_name = "SoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        _check_float(a, "softmax")
        ctx.dim = wrap_dim(dim, a.ndim)
        if a._data.dtype.kind == "f" and a.ndim:  # the fused kernel: one pass per row
            out = Tensor._wrap(kernels.softmax_forward(a._data, axis=ctx.dim))
        else:
            e = np.exp(_shifted(a, ctx.dim))
            out = Tensor._wrap(e / e.sum(axis=ctx.dim, keepdims=True))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return softmax_backward(y, grad, ctx.dim), None


def softmax_backward(y: Tensor, grad: Tensor, dim: int) -> Tensor:
    """y * (grad - sum(grad * y)) from the saved output y, as PyTorch computes it.

    The fused kernel for an ordinary backward; with ``create_graph=True`` its twin,
    the same formula from tensor operations, recorded. ``tests/kernels/test_twins.py``
    checks that they agree, inf and NaN included.
    """
    if not is_grad_enabled():
        return Tensor._wrap(kernels.softmax_backward(y._data, grad._data, axis=dim))
    return y * (grad - (grad * y).sum(dim, keepdim=True))


class LogSoftmax(Function):
    node_name = "LogSoftmaxBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        _check_float(a, "log_softmax")
        ctx.dim = wrap_dim(dim, a.ndim)
        if a._data.dtype.kind == "f" and a.ndim:  # the kernel: Numba row loops around NumPy's exp
            out = Tensor._wrap(kernels.log_softmax_forward(a._data, axis=ctx.dim))
        else:
            axis = ctx.dim if a.ndim else None  # NumPy has no axis 0 in a 0-d array
            shifted = _shifted(a, axis)
            out = Tensor._wrap(shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad - y.exp() * grad.sum(ctx.dim, keepdim=True), None


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method(top_level=True)
def softmax(self, dim: int, dtype=None) -> Tensor:
    return Softmax.apply(self if dtype is None else self.to(dtype=dtype), dim)


@tensor_method(top_level=True)
def log_softmax(self, dim: int, dtype=None) -> Tensor:
    return LogSoftmax.apply(self if dtype is None else self.to(dtype=dtype), dim)
