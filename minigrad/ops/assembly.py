"""Tensors assembled from others: block_diag, cartesian_prod, combinations, the index pairs of a
triangle (tril_indices, triu_indices), and two small stencils, diff and cross.

All but block_diag and cross compose existing ops (``stack``, ``index_select``, ``narrow`` and
subtraction), so their gradients need nothing new. block_diag places each input in a block of
zeros, and its gradient cuts the blocks out again; cross's gradient is two more cross products.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.functional_ops import cat, stack
from minigrad.ops.arrange import meshgrid
from minigrad.ops.broadcast import broadcast_error, flag, integer, sum_to, type_name, wrap_dim
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, check_tensor


# -- block_diag, cartesian_prod, combinations -----------------------------------------------------
class BlockDiag(Function):
    """The inputs (matrices; a vector is a row, a number a 1x1) down the diagonal of a zero matrix."""

    node_name = "BlockDiagBackward0"

    @staticmethod
    def forward(ctx, *tensors):
        blocks = [t._data.reshape((1,) * (2 - t.ndim) + t.shape) for t in tensors]
        dtype = dtypes.get_default_dtype().numpy if not tensors else tensors[0]._data.dtype
        for b in blocks[1:]:  # PyTorch's promotion, a 0-d input counting as much as any
            dtype = dtypes.result_type(np.zeros(1, dtype), b)
        out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)), dtype=dtype)
        corners, row, col = [], 0, 0
        for b in blocks:
            out[row:row + b.shape[0], col:col + b.shape[1]] = b
            corners.append((row, col, b.shape))
            row, col = row + b.shape[0], col + b.shape[1]
        ctx.corners = corners
        ctx.inputs = [(t.shape, t.dtype) for t in tensors]
        return Tensor._wrap(out if blocks else np.zeros((1, 0), dtype=dtype))

    @staticmethod
    def backward(ctx, grad):
        return tuple(grad[r:r + h, c:c + w].reshape(shape).to(dtype) if needed else None
                     for (r, c, (h, w)), (shape, dtype), needed in zip(ctx.corners, ctx.inputs, ctx.needs_input_grad))


def block_diag(*tensors: Tensor) -> Tensor:
    """A block-diagonal matrix of the inputs, in order (scipy.linalg.block_diag)."""
    for i, t in enumerate(tensors):
        check_tensor("block_diag", "tensors", i + 1, t)
        if t.ndim > 2:
            raise RuntimeError(f"block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has "
                               f"{t.ndim} dimensions")
    return BlockDiag.apply(*tensors)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Every combination of one element of each vector, one per row (itertools.product)."""
    for i, t in enumerate(tensors):
        check_tensor("cartesian_prod", "tensors", i + 1, t)
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([g.flatten() for g in meshgrid(*tensors, indexing="ij")], dim=1)


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Every choice of ``r`` elements of a vector, in order (itertools.combinations, or
    combinations_with_replacement), one per row."""
    check_tensor("combinations", "input", 1, input)
    r, with_replacement = integer(r, "r"), flag(with_replacement, "with_replacement")
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return input.new_empty(0)
    choose = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    picks = np.array(list(choose(range(input.shape[0]), r)), dtype=np.int64).reshape(-1, r)
    return stack([input.index_select(0, Tensor._wrap(np.ascontiguousarray(picks[:, j]))) for j in range(r)], dim=1)


# -- tril_indices, triu_indices -------------------------------------------------------------------
def _triangle(name: str, numpy_fn, row: int, col: int, offset: int, dtype) -> Tensor:
    row, col, offset = integer(row, "row"), integer(col, "col"), integer(offset, "offset")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    np_dtype = dtypes.to_numpy_dtype(dtype)
    if np_dtype.kind != "i":
        raise NotImplementedError(f"\"{name}\" not implemented for '{dtypes.scalar_type_name(np_dtype)}': "
                                  "pass an integer dtype")
    rows, cols = numpy_fn(row, offset, col)
    return Tensor._wrap(np.stack([rows, cols]).astype(np_dtype))


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=dtypes.int64, device=None, layout=None) -> Tensor:
    """The (row, column) indices of the lower triangle of a row x col matrix, as a 2 x N tensor:
    ``m[tuple(tril_indices(3, 3))]`` reads it row by row. ``offset`` moves the diagonal up (> 0)."""
    return _triangle("tril_indices", np.tril_indices, row, col, offset, dtype)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=dtypes.int64, device=None, layout=None) -> Tensor:
    """The (row, column) indices of the upper triangle of a row x col matrix, as a 2 x N tensor."""
    return _triangle("triu_indices", np.triu_indices, row, col, offset, dtype)


# -- diff, cross ----------------------------------------------------------------------------------
@tensor_method(top_level=True)
def diff(self, n: int = 1, dim: int = -1, prepend: Tensor | None = None, append: Tensor | None = None) -> Tensor:
    """The ``n``-th forward difference along ``dim`` (``x[1:] - x[:-1]``, n times), after joining
    ``prepend`` and ``append`` on; for bools, whether neighbours differ."""
    n = integer(n, "n")
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is not None and not isinstance(extra, Tensor):
            raise TypeError(f"diff(): argument '{name}' must be Tensor, not {type_name(extra)}")
    if self.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = wrap_dim(dim, self.ndim)
    parts = [self]
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is None:
            continue
        if extra.ndim != self.ndim:
            raise RuntimeError("diff expects prepend or append to be the same dimension as input")
        parts.insert(0 if name == "prepend" else len(parts), extra)
    if n == 0:  # a copy of the input alone, as PyTorch's (prepend and append are left out)
        return self.new_empty(self.shape).copy_(self)
    result = cat(parts, d) if len(parts) > 1 else self
    length = result.shape[d]
    for _ in range(min(n, length)):
        length -= 1
        later, earlier = result.narrow(d, 1, length), result.narrow(d, 0, length)
        result = later.logical_xor(earlier) if result._data.dtype == np.bool_ else later - earlier
    return result


class LinalgCross(Function):
    """The cross product of 3-vectors along ``dim`` (the inputs broadcast)."""

    node_name = "LinalgCrossBackward0"

    @staticmethod
    def forward(ctx, a, b, dim):
        ctx.dim, ctx.shapes = dim, (a.shape, b.shape)
        ctx.save_for_backward(a, b)
        return Tensor._wrap(np.ascontiguousarray(np.cross(a._data, b._data, axis=dim)))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b, _ = ctx.needs_input_grad
        grad_a = sum_to(LinalgCross.apply(b, grad, ctx.dim), ctx.shapes[0]) if need_a else None
        grad_b = sum_to(LinalgCross.apply(grad, a, ctx.dim), ctx.shapes[1]) if need_b else None
        return grad_a, grad_b, None


# PyTorch warns once per process that cross without dim is deprecated.
_warned_default_dim = False


@tensor_method(top_level=True)
def cross(self, other: Tensor, dim: int | None = None) -> Tensor:
    """The cross product along ``dim`` (size 3); without one, the first dim of size 3, with a
    deprecation warning as in PyTorch (linalg.cross takes dim=-1)."""
    global _warned_default_dim
    check_tensor("cross", "other", 1, other)
    if self.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    if self._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected scalar type {self.dtype} but found {other.dtype}: convert other with "
                           ".to(self.dtype)")
    try:
        shape = np.broadcast_shapes(self.shape, other.shape)
    except ValueError:
        raise broadcast_error(self.shape, other.shape) from None
    if dim is None:
        if not _warned_default_dim:
            warnings.warn("Using cross without specifying the dim arg is deprecated: pass the dim explicitly "
                          "(its default will become -1, linalg.cross's)", UserWarning, stacklevel=2)
            _warned_default_dim = True
        dim = next((i for i, size in enumerate(shape) if size == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input: cross needs one, shapes {list(self.shape)} and "
                               f"{list(other.shape)}")
    d = wrap_dim(dim, self.ndim)
    if self.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got {self.shape[d]} and "
                           f"{other.shape[d]}")
    return LinalgCross.apply(self, other, d)
