"""Matrix multiplication (BLAS does the arithmetic; we do the bookkeeping).

For ``C = A @ B``: ``dA = dC @ Bᵀ`` and ``dB = Aᵀ @ dC``. 1-D operands are
treated as a row (on the left) or a column (on the right) and the extra
dimension removed again; batch dimensions broadcast, so their gradients are
summed back with ``sum_to``.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import sum_to
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.ops.registry import binary_operator


def _check(a: Tensor, b: Tensor) -> None:
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {a.ndim}D and {b.ndim}D"
        )
    if a._data.dtype != b._data.dtype and not _batched_without_arithmetic(a, b):
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}. "
            "Convert one of them with .to(dtype), .float() or .double()"
        )
    k_a = a.shape[-1]
    k_b = b.shape[-2] if b.ndim > 1 else b.shape[0]
    if k_a != k_b:
        if a.ndim == 2 and b.ndim == 2:
            raise RuntimeError(
                f"mat1 and mat2 shapes cannot be multiplied ({a.shape[0]}x{a.shape[1]} and {b.shape[0]}x{b.shape[1]})"
            )
        raise RuntimeError(
            f"matmul: shapes {list(a.shape)} and {list(b.shape)} cannot be multiplied: the last "
            f"dimension of the first ({k_a}) must equal the {'first' if b.ndim == 1 else 'second-to-last'} "
            f"dimension of the second ({k_b})"
        )
    if a._data.dtype == b._data.dtype == np.bool_:
        raise NotImplementedError("matmul is not implemented for 'Bool': convert with .int() or .float() first")


def _batched_without_arithmetic(a: Tensor, b: Tensor) -> bool:
    """Whether PyTorch lets two dtypes through: a batched product with nothing to compute.

    PyTorch checks the dtypes only once it multiplies: a batched product (``bmm``) whose
    result is empty, or whose inner dimension is 0 (all zeros), returns a tensor of ``b``'s
    dtype without the check. Which products are batched is PyTorch's choice: a 3-D+ by
    1-D/2-D product is folded into one ``mm`` (which checks the dtypes first) when the
    smaller operand requires grad, or the larger one is empty or has contiguous batch
    dimensions, except that a 2-D ``a`` is never folded if it does not require grad; and
    two 3-D operands of different batch sizes, one of them 1 and requiring grad, are
    multiplied as a matrix and a batch (so folded into ``mm`` too).
    """
    if a.ndim < 3 and b.ndim < 3:
        return False
    if a.ndim == b.ndim == 3 and a.shape[0] != b.shape[0] and (
            a.shape[0] == 1 and a.requires_grad or b.shape[0] == 1 and b.requires_grad):
        return False
    if (a.ndim < 3 or b.ndim < 3) and _folded(a, b):
        return False
    k = a.shape[-1]
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:  # the dtypes are named first, as in PyTorch
        return False
    rows, cols = (a.shape[-2] if a.ndim > 1 else 1), (b.shape[-1] if b.ndim > 1 else 1)
    return k == 0 or 0 in (rows, cols, *batch)


def _folded(a: Tensor, b: Tensor) -> bool:
    """PyTorch's ``should_fold``: whether a 3-D+ operand times a 1-D/2-D one is one ``mm``/``mv``."""
    larger, smaller = (a, b) if a.ndim >= b.ndim else (b, a)
    if larger.ndim < 3 or smaller.ndim > 2:
        return False
    if smaller.requires_grad:
        return True
    if a.ndim == 2:
        return False
    if larger.numel() == 0:
        return True
    shape, strides = list(larger._data.shape), list(larger._data.strides)
    if larger is b:  # the batch folded is b's transpose (mT)
        shape[-2:], strides[-2:] = shape[:-3:-1], strides[:-3:-1]
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(larger.ndim - 2))


class MatMul(Function):
    """``a @ b``: ``a`` is saved only for ``b``'s gradient and ``b`` only for ``a``'s, as in PyTorch."""

    node_name = "MatmulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _check(a, b)
        need_a, need_b = ctx.needs_input_grad
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.shapes = a.shape, b.shape
        try:  # in b's dtype: two dtypes get here only for a product that is all zeros (see _check)
            return Tensor._wrap(np.asarray(np.matmul(a._data, b._data)).astype(b._data.dtype, copy=False))
        except ValueError:  # batch dimensions that don't broadcast
            raise RuntimeError(
                f"matmul: the batch dimensions of {list(a.shape)} and {list(b.shape)} cannot be broadcast"
            ) from None

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        shape_a, shape_b = ctx.shapes
        if len(shape_b) == 1:  # first: for 1-D @ 1-D the incoming gradient is 0-d
            grad = grad.unsqueeze(-1)
        if len(shape_a) == 1:
            grad = grad.unsqueeze(-2)
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            b2 = b.unsqueeze(-1) if b.ndim == 1 else b
            a2_shape = (1, *shape_a) if len(shape_a) == 1 else shape_a
            grad_a = sum_to(grad @ b2.transpose(-1, -2), a2_shape).reshape(shape_a)
        if need_b:
            a2 = a.unsqueeze(0) if a.ndim == 1 else a
            b2_shape = (*shape_b, 1) if len(shape_b) == 1 else shape_b
            grad_b = sum_to(a2.transpose(-1, -2) @ grad, b2_shape).reshape(shape_b)
        return grad_a, grad_b


# PyTorch names the node after the case it dispatched to.
class Mm(MatMul):
    node_name = "MmBackward0"


class Mv(MatMul):
    node_name = "MvBackward0"


class Dot(MatMul):
    node_name = "DotBackward0"


class Bmm(MatMul):
    node_name = "BmmBackward0"


class UnsafeView(Function):
    """A reshape of a fresh result nothing else sees (PyTorch's ``_unsafe_view``): not a view."""

    node_name = "UnsafeViewBackward0"

    @staticmethod
    def forward(ctx, a, shape):
        ctx.input_shape = a.shape
        return Tensor._wrap(a._data.reshape(shape))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class SqueezeFresh(Function):
    """``squeeze_(dim)`` of a fresh result nothing else sees (PyTorch's node for the in-place squeeze)."""

    node_name = "SqueezeBackward4"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        return Tensor._wrap(a._data.squeeze(dim))

    @staticmethod
    def backward(ctx, grad):
        return grad.unsqueeze(ctx.dim), None


def matmul(a: Tensor, b: Tensor) -> Tensor:
    """``a @ b`` for every rank, made of the steps PyTorch's matmul takes (``_matmul_impl``).

    So its graph is PyTorch's: a vector times a matrix is ``mm`` of the vector as a row, then
    ``squeeze_``; a batch times a vector or a matrix is folded into one ``mm``/``mv`` when
    ``should_fold`` says so (``_folded``); other batches are expanded to a common batch and
    multiplied with ``bmm``. Node hooks see the gradients of those steps, as PyTorch's do.
    """
    a, b = _tensor_argument("matmul", "input", 0, a), _tensor_argument("matmul", "other", 1, b)
    _check(a, b)
    if a.ndim == 2 and b.ndim == 2:
        return Mm.apply(a, b)
    if a.ndim == 2 and b.ndim == 1:
        return Mv.apply(a, b)
    if a.ndim == 1 and b.ndim == 1:
        return Dot.apply(a, b)
    if a.ndim == 1 and b.ndim == 2:
        return SqueezeFresh.apply(Mm.apply(a.unsqueeze(0), b), 0)
    if _folded(a, b):
        transpose = b.ndim > a.ndim  # fold b's transpose, times a's
        t1 = b.mT if transpose else a
        t2 = (a.t() if a.ndim == 2 else a) if transpose else b
        rows = t1.shape[:-1]
        folded = t1.reshape(math.prod(rows), t1.shape[-1])
        if t2.ndim == 1:
            return UnsafeView.apply(Mv.apply(folded, t2), rows)
        out = UnsafeView.apply(Mm.apply(folded, t2), (*rows, t2.shape[1]))
        return out.mT.contiguous() if transpose else out
    if a.ndim == b.ndim == 3 and a.shape[0] != b.shape[0]:
        # a batch of one that requires grad is multiplied as a matrix (then folded), as in PyTorch
        if a.shape[0] == 1 and a.requires_grad:
            return matmul(a.squeeze(0), b)
        if b.shape[0] == 1 and b.requires_grad:
            return matmul(a, b.squeeze(0))
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except ValueError:
        raise RuntimeError(
            f"matmul: the batch dimensions of {list(a.shape)} and {list(b.shape)} cannot be broadcast"
        ) from None
    count = math.prod(batch)
    n, k = (a.shape[-2] if a.ndim > 1 else 1), a.shape[-1]
    a3 = a.expand(*batch, n, k).reshape(count, n, k)
    if b.ndim == 1:
        product = Bmm.apply(a3, b.expand(*batch, k).reshape(count, k).unsqueeze(2)).squeeze(-1)
    else:
        p = b.shape[-1]
        product = Bmm.apply(a3, b.expand(*batch, k, p).reshape(count, k, p))
    return UnsafeView.apply(product, (*batch, *a.shape[-2:-1], *(b.shape[-1:] if b.ndim > 1 else ())))


binary_operator("matmul", "matmul", matmul, lambda self, other: matmul(other, self))
