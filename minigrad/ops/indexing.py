"""Indexing with index tensors: gather, scatter_add, index_select, and masked_fill.

``gather``, ``index_select`` and ``scatter_add`` are NumPy advanced indexing with
an index built from the index tensor (``full_index``). Their gradients are the
same index used the other way: what ``gather`` read is added back where it was
read from (``IndexAdd``, which sums repeated indices), and ``scatter_add`` sends
each source element the gradient of the place it was added to (``gather``).
``masked_fill``'s gradient is zero where the mask replaced the input.

The index and mask tensors are kept with ``save_for_backward``, as PyTorch keeps
them: a second backward without ``retain_graph`` fails, and changing them in
place before backward is caught by the version check.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, number, sum_to, wrap_dim
from minigrad.ops.subscript import IndexAdd
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.ops.registry import tensor_method


def full_index(index: np.ndarray, dim: int) -> tuple:
    """The NumPy index that reads ``out[i][j][k] = a[i][index[i][j][k]][k]`` (for dim 1), of index's shape."""
    grid = list(np.indices(index.shape, sparse=True))
    grid[dim] = index
    return tuple(grid)


def _index_array(index: Tensor, op: str) -> np.ndarray:
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._data.dtype.kind != "i":
        raise RuntimeError(f"{op}(): Expected dtype int32 or int64 for index, got {index.dtype}: convert it with .long()")
    return index._data


def _check_bounds(index: np.ndarray, size: int, dim: int) -> None:
    """Indices must lie in [0, size): unlike Python's, negative indices are errors here, as in PyTorch."""
    bad = (index < 0) | (index >= size)
    if bad.any():
        raise RuntimeError(f"index {index[bad].flat[0]} is out of bounds for dimension {dim} with size {size}")


def _check_gather_shapes(op: str, a: Tensor, dim: int, index: np.ndarray, src: Tensor | None = None) -> None:
    if index.ndim != max(a.ndim, 1) and not (a.ndim == 0 and index.ndim == 0):
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor ({op})")
    for k in range(index.ndim):
        if k != dim and a.ndim and index.shape[k] > a.shape[k]:
            raise RuntimeError(
                f"Size does not match at dimension {k} expected index {list(index.shape)} to be no larger "
                f"than self {list(a.shape)} apart from dimension {dim}"
            )
        if src is not None and src.ndim and index.shape[k] > src.shape[k]:
            raise RuntimeError(
                f"Expected index {list(index.shape)} to be no larger than self {list(a.shape)} apart from "
                f"dimension {dim} and to be no larger size than src {list(src.shape)}"
            )


class Gather(Function):
    """``out[i][j] = a[i][index[i][j]]`` (dim 1): pick one element per index entry along ``dim``."""

    node_name = "GatherBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        d = wrap_dim(dim, a.ndim)
        idx = _index_array(index, "gather")
        _check_gather_shapes("gather", a, d, idx)
        _check_bounds(idx, a.shape[d] if a.ndim else 1, d)
        ctx.dim, ctx.input_shape = d, a.shape
        ctx.save_for_backward(index, a)  # a only for PyTorch's version check: it saves self too
        return Tensor._wrap(np.asarray(a._data[full_index(idx, d)], order="C") if a.ndim else a._data.copy())

    @staticmethod
    def backward(ctx, grad):
        index, _ = ctx.saved_tensors
        key = full_index(index._data, ctx.dim) if ctx.input_shape else ()
        return IndexAdd.apply(grad, key, ctx.input_shape), None, None


class ScatterAdd(Function):
    """``out = a`` plus ``src[i][j]`` added at ``out[i][index[i][j]]`` (dim 1); repeated indices add up."""

    node_name = "ScatterAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        d = wrap_dim(dim, a.ndim)
        idx = _index_array(index, "scatter_add")
        if not isinstance(src, Tensor):
            raise TypeError(f"scatter_add(): argument 'src' must be Tensor, not {type(src).__name__}")
        if src._data.dtype != a._data.dtype:
            raise RuntimeError(f"scatter(): Expected self.dtype to be equal to src.dtype ({a.dtype} vs {src.dtype})")
        _check_gather_shapes("scatter_add", a, d, idx, src)
        _check_bounds(idx, a.shape[d] if a.ndim else 1, d)
        ctx.dim, ctx.src_shape = d, src.shape
        ctx.src_key = tuple(slice(0, n) for n in idx.shape)  # only src's first index.shape elements are used
        ctx.save_for_backward(index)
        out = a._data.copy()
        np.add.at(out, full_index(idx, d) if a.ndim else (), src._data[ctx.src_key])
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        need_a, _, _, need_src = ctx.needs_input_grad
        index, = ctx.saved_tensors
        grad_src = None
        if need_src:
            grad_src = Gather.apply(grad, ctx.dim, index)
            if grad_src.shape != ctx.src_shape:
                grad_src = IndexAdd.apply(grad_src, ctx.src_key, ctx.src_shape)
        return grad if need_a else None, None, None, grad_src


class IndexSelect(Function):
    """The entries ``index`` (a vector) along ``dim``, in that order: ``a.index_select(0, i)`` is ``a[i]``."""

    node_name = "IndexSelectBackward0"

    @staticmethod
    def forward(ctx, a, dim, index):
        d = wrap_dim(dim, a.ndim)
        idx = _index_array(index, "index_select")
        if idx.ndim > 1:
            raise IndexError(f"index_select(): Index is supposed to be a vector, got {idx.ndim}-D")
        idx = idx.reshape(-1)
        if a.ndim == 0 and idx.size != 1:
            raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
        size = a.shape[d] if a.ndim else 1
        if ((idx < 0) | (idx >= size)).any():  # PyTorch's own wording, and its type
            raise IndexError(f"index out of range in self (dimension {d} has size {size})")
        ctx.dim, ctx.input_shape = d, a.shape
        ctx.save_for_backward(index)
        return Tensor._wrap(np.asarray(a._data[_select_key(idx, d)], order="C") if a.ndim else a._data.copy())

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        key = _select_key(index._data.reshape(-1), ctx.dim) if ctx.input_shape else ()
        return IndexAdd.apply(grad, key, ctx.input_shape), None, None


def _select_key(idx: np.ndarray, dim: int) -> tuple:
    return (slice(None),) * dim + (idx,)


class MaskedFill(Function):
    """``value`` where ``mask`` is True, the input elsewhere (the mask broadcasts)."""

    node_name = "MaskedFillBackward0"

    @staticmethod
    def forward(ctx, a, mask, value):
        if not isinstance(mask, Tensor) or mask._data.dtype != np.bool_:
            got = mask.dtype if isinstance(mask, Tensor) else type(mask).__name__
            raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {got}: use mask.bool()")
        if isinstance(value, Tensor) and value.ndim:
            raise RuntimeError(
                f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {value.ndim} dimension(s)."
            )
        fill = value._data if isinstance(value, Tensor) else value
        try:
            out = np.where(mask._data, np.asarray(fill).astype(a._data.dtype), a._data)
        except ValueError:
            raise broadcast_error(a.shape, mask.shape) from None
        ctx.input_shape = a.shape
        ctx.save_for_backward(mask)
        return Tensor._wrap(np.asarray(out, order="C"))

    @staticmethod
    def backward(ctx, grad):
        need_a, _, need_value = ctx.needs_input_grad
        mask, = ctx.saved_tensors
        grad_a = sum_to(grad.masked_fill(mask, 0), ctx.input_shape) if need_a else None
        grad_value = grad.masked_fill(Tensor._wrap(~mask._data), 0).sum() if need_value else None
        return grad_a, None, grad_value


class MaskedFillTensor(MaskedFill):
    """``masked_fill`` with a 0-d tensor value, which gets the sum of the gradient where the mask is True."""

    node_name = "MaskedFillBackward1"


def masked_fill_function(value) -> type:
    """A tensor value is a different overload in PyTorch, with its own node name."""
    if isinstance(value, Tensor):
        return MaskedFillTensor
    number(value, "value")
    return MaskedFill


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method(top_level=True)
def gather(self, dim: int, index: Tensor) -> Tensor:
    return Gather.apply(self, dim, index)


@tensor_method(top_level=True)
def scatter_add(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return ScatterAdd.apply(self, dim, index, src)


@tensor_method()
def scatter_add_(self, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return self._inplace(ScatterAdd, dim, index, src)


@tensor_method(top_level=True)
def index_select(self, dim: int, index: Tensor) -> Tensor:
    return IndexSelect.apply(self, dim, index)


@tensor_method(top_level=True, out=False)
def masked_fill(self, mask: Tensor, value) -> Tensor:
    return masked_fill_function(value).apply(self, _tensor_argument("masked_fill", "mask", 1, mask), value)


@tensor_method()
def masked_fill_(self, mask: Tensor, value) -> Tensor:
    return self._inplace(masked_fill_function(value), _tensor_argument("masked_fill_", "mask", 1, mask), value)
