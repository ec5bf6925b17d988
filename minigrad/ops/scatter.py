"""Writing along indices: scatter, scatter_reduce, the index_* family, index_put, put,
masked_scatter, and the inverses of views (diagonal_scatter, select_scatter, slice_scatter).

Each op is ``out = input.clone()`` with some places of ``out`` written from (or reduced
with) a source. The gradients read those places back: the source gets the gradient of
where it went (``gather``, ``index_select``, ``take``, ``masked_select``); the input keeps
its gradient where it survived and gets 0 where it was overwritten. A reduction shares
its gradient among what it combined (PyTorch's formulas: a product's gradient is the
product of the others, a tie for a max shares the gradient evenly).

The index_* forms are the scatter forms with a vector index spread along the other dims
(``_spread``): ``a.index_add(0, i, s)`` is ``a.scatter_add(0, i[:, None].expand_as(s), s)``.
So one ``Function`` per kind of write serves both forms (``Scatter`` also index_copy and index_fill,
``ScatterReduce`` also index_reduce), each subclass named as PyTorch names its node; index_add
has its own for alpha, and scatter_add keeps indexing.py's ``ScatterAdd``.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.autograd.function import Function
from minigrad.functional_ops import cat, where
from minigrad.ops.broadcast import broadcast_error, flag, integer, number, sum_to, type_name, wrap_dim
from minigrad.ops.indexing import _check_bounds, _check_gather_shapes, full_index
from minigrad.ops.registry import tensor_method
from minigrad.ops.subscript import IndexPut
from minigrad._tensor import Tensor, check_tensor

_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")
_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


# -- scatter and scatter_reduce ------------------------------------------------------------------
class Scatter(Function):
    """``src[i][j]`` written at ``out[i][index[i][j]]`` (dim 1); with repeated indices one of them wins."""

    node_name = "ScatterBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src):
        ctx.dim = dim
        ctx.save_for_backward(index)
        out = a._data.copy()
        out[_key(index._data, dim, a.ndim)] = src._data if isinstance(src, Tensor) else src
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        index, = ctx.saved_tensors
        need_a, _, _, need_src = ctx.needs_input_grad
        grad_a = ScatterValue.apply(grad, ctx.dim, index, 0) if need_a else None
        return grad_a, None, None, grad.gather(ctx.dim, index) if need_src else None


class ScatterValue(Scatter):
    """``scatter`` of a number (PyTorch's second overload)."""

    node_name = "ScatterBackward1"


class ScatterReduceLegacy(Function):
    """``scatter(..., reduce='add' / 'multiply')``: PyTorch has no derivative for it."""

    node_name = "torch::autograd::NotImplemented"

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce):
        out = a._data.copy()
        ufunc = np.add if reduce == "add" else np.multiply
        ufunc.at(out, _key(index._data, dim, a.ndim), src._data if isinstance(src, Tensor) else src)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("the derivative of scatter with reduce= is not implemented: use scatter_reduce, "
                           "which has one, or scatter_add")


class ScatterReduce(Function):
    """``src`` reduced into ``a`` at ``index`` along ``dim`` (sum, prod, mean, amax or amin);
    ``include_self=False`` leaves a's own values out of the places written to."""

    node_name = "ScatterReduceBackward0"

    @staticmethod
    def forward(ctx, a, dim, index, src, reduce, include_self):
        ctx.dim, ctx.reduce, ctx.include_self = dim, reduce, include_self
        out = Tensor._wrap(_reduced(a._data, _key(index._data, dim, a.ndim), src._data, reduce, include_self))
        ctx.save_for_backward(a, index, src, out)  # (the output too: PyTorch's formulas use it)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, index, src, result = ctx.saved_tensors
        grad_a, grad_src = _reduce_backward(grad, a, ctx.dim, index, src, ctx.reduce, ctx.include_self, result)
        need_a, _, _, need_src, _, _ = ctx.needs_input_grad
        return grad_a if need_a else None, None, None, grad_src if need_src else None, None, None


def _key(index: np.ndarray, dim: int, ndim: int) -> tuple:
    return full_index(index, dim) if ndim else ()


def _reduced(a: np.ndarray, key: tuple, src: np.ndarray, reduce: str, include_self: bool) -> np.ndarray:
    """``a`` with ``src`` reduced into it at ``key`` (NumPy's unbuffered ``ufunc.at``: repeats combine)."""
    out = a.copy()
    if not include_self:  # the places written to start from the reduction's identity
        out[key] = _identity(reduce, a.dtype)
    if reduce == "mean":
        np.add.at(out, key, src)
        count = np.full(a.shape, 1 if include_self else 0, dtype=a.dtype)
        np.add.at(count, key, 1)
        count[count == 0] = 1
        return out // count if a.dtype.kind in "iub" else out / count
    ufunc = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}[reduce]
    ufunc.at(out, key, src)
    return out


def _identity(reduce: str, dtype: np.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    low, high = (-np.inf, np.inf) if dtype.kind == "f" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
    return low if reduce == "amax" else high


def _reduce_backward(grad, a, dim, index, src, reduce, include_self, result):
    """PyTorch's gradients of scatter_reduce (FunctionsManual's scatter_reduce_backward), composed of ops."""
    if reduce == "sum":
        grad_a, grad_src = grad, grad.gather(dim, index)
    elif reduce == "mean":
        count = (a.new_ones(a.shape) if include_self else a.new_zeros(a.shape)).scatter_add(
            dim, index, src.new_ones(src.shape))
        count = count.masked_fill(count == 0, 1)
        grad_a = grad / count
        grad_src = grad_a.gather(dim, index)
    elif reduce == "prod":
        # the product of the others, also where a value is 0 (then dividing by it would not do)
        masked_a = a.masked_fill(a == 0, 1)
        grad_a = grad * masked_a.scatter_reduce(dim, index, src, "prod", include_self=include_self) / masked_a
        src_zero = src == 0
        zeros_there = a.new_zeros(a.shape).scatter_add(dim, index, src_zero.to(a.dtype)).gather(dim, index)
        single_zero = src_zero.logical_and(zeros_there == 1)
        without_it = a.scatter_reduce(dim, index, src.masked_fill(single_zero, 1), "prod", include_self=include_self)
        grad_src = where(single_zero, (grad * without_it).gather(dim, index),
                         (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1))
    else:  # amax, amin: shared evenly among the values equal to the result
        value = result.gather(dim, index)
        a_is_result, src_is_result = a == result, src == value
        shares = a_is_result.to(a.dtype).scatter_add(dim, index, src_is_result.to(a.dtype))
        grad_shared = grad / shares
        grad_a = a_is_result * grad_shared
        grad_src = src_is_result * grad_shared.gather(dim, index)
    if not include_self:
        grad_a = grad_a.scatter(dim, index, 0)
    return grad_a, grad_src


def _scatter_arguments(op: str, a: Tensor, dim, index, src=None) -> tuple:
    """dim wrapped, index checked (dtype, rank, sizes, bounds), as PyTorch's scatter checks them."""
    d = wrap_dim(dim, a.ndim)
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type_name(index)}")
    if index._data.dtype.kind != "i":
        raise RuntimeError(f"{op}(): Expected dtype int32/int64 for index, got {index.dtype}: convert it with .long()")
    idx = index._data
    _check_gather_shapes(op, a, d, idx, src if isinstance(src, Tensor) else None)
    _check_bounds(idx, a.shape[d] if a.ndim else 1, d)
    return d, index


def _source(op: str, a: Tensor, src, index: Tensor) -> Tensor:
    """src checked against self's dtype, cut to index's shape (only that part of it is written)."""
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}(): argument 'src' must be Tensor, not {type_name(src)}")
    if src._data.dtype != a._data.dtype:
        raise RuntimeError(f"{op}(): Expected self.dtype to be equal to src.dtype, got {a.dtype} and "
                           f"{src.dtype}: convert src with .to(self.dtype)")
    if src.ndim and src.shape != index.shape:
        return src[tuple(slice(0, n) for n in index.shape)]
    return src


def _scatter(a: Tensor, dim, index, src=None, value=None, reduce=None, inplace: bool = False) -> Tensor:
    """scatter / scatter_: a tensor src (ScatterBackward0) or a number (ScatterBackward1), or a reduce."""
    op = "scatter_" if inplace else "scatter"
    d, index = _scatter_arguments(op, a, dim, index, src)
    if isinstance(src, Tensor):
        args = (d, index, _source(op, a, src, index))
        node = Scatter
        if reduce is not None:
            warnings.warn("The reduce argument of scatter with a tensor src is deprecated and will be removed "
                          "in a future release: use scatter_reduce, which has more reductions", UserWarning,
                          stacklevel=3)
    else:
        args, node = (d, index, number(value if src is None else src, "value")), ScatterValue
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError("reduce argument must be either add or multiply.")
        args, node = args + (reduce,), ScatterReduceLegacy
    return a._inplace(node, *args) if inplace else node.apply(a, *args)


@tensor_method(top_level=True)
def scatter(self, dim: int, index: Tensor, src=None, value=None, *, reduce: str | None = None) -> Tensor:
    """``self`` with ``src[i][j]`` (or ``value``) written at ``[i][index[i][j]]`` (dim 1)."""
    return _scatter(self, dim, index, src, value, reduce)


@tensor_method()
def scatter_(self, dim: int, index: Tensor, src=None, value=None, *, reduce: str | None = None) -> Tensor:
    return _scatter(self, dim, index, src, value, reduce, inplace=True)


def _check_str(op: str, reduce) -> None:
    if not isinstance(reduce, str):
        raise TypeError(f"{op}(): argument 'reduce' (position 4) must be str, not {type_name(reduce)}")


def _scatter_reduce(a: Tensor, dim, index, src, reduce: str, include_self: bool, inplace: bool) -> Tensor:
    op = "scatter_reduce_" if inplace else "scatter_reduce"
    _check_str(op, reduce)
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    d, index = _scatter_arguments(op, a, dim, index, src)
    args = (d, index, _source("scatter_reduce", a, src, index), reduce, flag(include_self, "include_self"))
    return a._inplace(ScatterReduce, *args) if inplace else ScatterReduce.apply(a, *args)


@tensor_method(top_level=True)
def scatter_reduce(self, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    """``src`` combined into ``self`` at ``index`` along ``dim`` by ``reduce``; repeated indices all count."""
    return _scatter_reduce(self, dim, index, src, reduce, include_self, inplace=False)


@tensor_method()
def scatter_reduce_(self, dim: int, index: Tensor, src: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    return _scatter_reduce(self, dim, index, src, reduce, include_self, inplace=True)


# -- index_add, index_copy, index_fill, index_reduce: the scatter forms along one dim -------------
class IndexAddAlong(Function):
    """``a.index_add(dim, index, source, alpha=)``: source's slices times alpha added at index's places."""

    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, a, dim, spread, source, alpha):
        ctx.dim, ctx.alpha = dim, alpha
        ctx.save_for_backward(spread)
        out = a._data.copy()
        np.add.at(out, _key(spread._data, dim, a.ndim), source._data * alpha if alpha != 1 else source._data)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        spread, = ctx.saved_tensors
        grad_source = grad.gather(ctx.dim, spread) if ctx.needs_input_grad[3] else None
        if grad_source is not None and ctx.alpha != 1:
            grad_source = grad_source * ctx.alpha
        return grad, None, None, grad_source, None


class IndexCopy(Scatter):
    node_name = "IndexCopyBackward0"


class IndexFill(Scatter):
    """``index_fill`` with a number."""

    node_name = "IndexFillBackward0"


class IndexFillTensor(Function):
    """``index_fill`` with a 0-d tensor, which gets the sum of the gradient of the filled places."""

    node_name = "IndexFillBackward1"

    @staticmethod
    def forward(ctx, a, dim, spread, value):
        ctx.dim = dim
        ctx.save_for_backward(spread)
        out = a._data.copy()
        out[_key(spread._data, dim, a.ndim)] = value._data
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        spread, = ctx.saved_tensors
        need_a, _, _, need_value = ctx.needs_input_grad
        grad_a = IndexFill.apply(grad, ctx.dim, spread, 0) if need_a else None
        grad_value = None
        if need_value:  # each filled place once (spread repeats a place for a repeated index: count it once)
            filled = np.zeros(grad.shape, dtype=bool)
            filled[_key(spread._data, ctx.dim, grad.ndim)] = True
            grad_value = grad.masked_fill(Tensor._wrap(~filled), 0).sum()
        return grad_a, None, None, grad_value


class IndexReduce(ScatterReduce):
    node_name = "IndexReduceBackward0"


def _vector_index(op: str, a: Tensor, dim, index, int32: type | None = None, int32_message: str = "") -> tuple:
    """dim wrapped and the index vector checked: 1-D (or 0-d) integers.

    PyTorch's index_add and index_reduce take int32 too; the others refuse it with the
    exception ``int32`` (IndexError for index_fill, RuntimeError for index_copy)."""
    d = wrap_dim(dim, a.ndim)
    if not isinstance(index, Tensor):
        raise TypeError(f"{op}(): argument 'index' must be Tensor, not {type_name(index)}")
    kind = index._data.dtype
    if kind != np.int64 and not (int32 is None and kind == np.int32):
        raise (int32 or RuntimeError)(int32_message or f"{op}(): Expected dtype int32/int64 for index but got: "
                                      f"{index.dtype}: convert it with .long()")
    if index.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector, got a {index.ndim}-D index")
    return d, index._data.reshape(-1)


def _in_range(op: str, a: Tensor, d: int, idx: np.ndarray, error: type, negatives: bool = False) -> np.ndarray:
    """The index's entries in [0, size) of dimension ``d`` (index_fill also takes [-size, 0), as Python
    does); PyTorch's exception type differs per op (RuntimeError for index_add, IndexError for the others)."""
    size = a.shape[d] if a.ndim else 1
    bad = (idx < (-size if negatives else 0)) | (idx >= size)
    if bad.any():
        raise error(f"{op}(): index {idx[bad][0]} is out of bounds for dimension {d} with size {size}")
    return idx % max(size, 1)


def _spread(idx: np.ndarray, dim: int, shape: tuple) -> Tensor:
    """The vector ``idx`` along ``dim``, repeated along the other dims of ``shape``: a scatter index."""
    if not shape:
        return Tensor._wrap(idx.reshape(()).astype(np.int64))
    along = [1] * len(shape)
    along[dim] = idx.size
    return Tensor._wrap(np.ascontiguousarray(np.broadcast_to(idx.reshape(along), shape), dtype=np.int64))


def _index_source(op: str, a: Tensor, d: int, idx: np.ndarray, source, mismatch: type = RuntimeError) -> Tensor:
    """source checked: a tensor of self's rank and dtype whose size along dim is the index's length.
    A wrong length is an IndexError for index_copy, a RuntimeError for the others, as in PyTorch."""
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): argument 'source' must be Tensor, not {type_name(source)}")
    if source.ndim == 0 and a.ndim:
        if mismatch is IndexError and idx.size != 1:
            raise IndexError(f"{op}(): When source is scalar, index should have one element (got {idx.size})")
        if mismatch is RuntimeError:
            raise RuntimeError(f"{op}(): Indexing dim {d} is out of bounds of the source tensor with dim 0: "
                               "source needs self's dims")
    if mismatch is IndexError and source.ndim and a.ndim and source.ndim != a.ndim:
        raise IndexError(f"{op}(): When source and destination are not scalars, their dimensionality must match. "
                         f"Source dimensionality ({source.ndim}), destination dimensionality ({a.ndim})")
    if source.ndim and d >= source.ndim:
        raise RuntimeError(f"{op}(): Indexing dim {d} is out of bounds of the source tensor with dim "
                           f"{source.ndim}: source needs self's dims")
    length = source.shape[d] if source.ndim else 1
    if length != idx.size:
        raise mismatch(f"{op}(): Number of indices ({idx.size}) should be equal to source.size(dim): ({length}), "
                       f"for dim: {d}")
    expected = a.shape[:d] + (idx.size,) + a.shape[d + 1:] if a.ndim else ()
    if source.ndim and source.shape != expected:
        raise RuntimeError(f"{op}(): source must have the shape {list(expected)} (self's, with the index's length "
                           f"at dim {d}), got {list(source.shape)}")
    if source._data.dtype != a._data.dtype:
        raise RuntimeError(f"{op}(): self ({a.dtype}) and source ({source.dtype}) must have the same dtype: "
                           "convert source with .to(self.dtype)")
    return source.reshape(expected) if source.shape != expected else source


def _index_add(a: Tensor, dim, index, source, alpha, inplace: bool) -> Tensor:
    d, idx = _vector_index("index_add_", a, dim, index)
    source = _index_source("index_add_", a, d, idx, source)
    idx = _in_range("index_add_", a, d, idx, RuntimeError)
    args = (d, _spread(idx, d, source.shape), source, number(alpha, "alpha"))
    return a._inplace(IndexAddAlong, *args) if inplace else IndexAddAlong.apply(a, *args)


@tensor_method(top_level=True)
def index_add(self, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """``source``'s slices along ``dim`` (times ``alpha``) added to self's slices ``index``; repeats add up."""
    return _index_add(self, dim, index, source, alpha, inplace=False)


@tensor_method()
def index_add_(self, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    return _index_add(self, dim, index, source, alpha, inplace=True)


def _index_copy(a: Tensor, dim, index, source, inplace: bool) -> Tensor:
    d, idx = _vector_index("index_copy_", a, dim, index, RuntimeError,
                           f"index_copy_(): Expected a long tensor for index, but got {getattr(index, 'dtype', '')}: "
                           "convert it with .long()")
    source = _index_source("index_copy_", a, d, idx, source, IndexError)
    idx = _in_range("index_copy_", a, d, idx, IndexError)
    args = (d, _spread(idx, d, source.shape), source)
    return a._inplace(IndexCopy, *args) if inplace else IndexCopy.apply(a, *args)


@tensor_method(top_level=True)
def index_copy(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
    """self with its slices ``index`` along ``dim`` replaced by ``source``'s, in order."""
    return _index_copy(self, dim, index, source, inplace=False)


@tensor_method()
def index_copy_(self, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return _index_copy(self, dim, index, source, inplace=True)


def _index_fill(a: Tensor, dim, index, value, inplace: bool) -> Tensor:
    d, idx = _vector_index("index_fill", a, dim, index, IndexError,
                           "index_fill_(): Expected dtype int64 for index: convert it with .long()")
    idx = _in_range("index_fill_", a, d, idx, IndexError, negatives=True)
    spread = _spread(idx, d, a.shape[:d] + (idx.size,) + a.shape[d + 1:] if a.ndim else ())
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        node, value = IndexFillTensor, value.to(a.dtype) if value.dtype != a.dtype else value
    else:
        node, value = IndexFill, number(value, "value")
    return a._inplace(node, d, spread, value) if inplace else node.apply(a, d, spread, value)


@tensor_method(top_level=True, out=False)
def index_fill(self, dim: int, index: Tensor, value) -> Tensor:
    """self with its slices ``index`` along ``dim`` set to ``value`` (a number or a 0-d tensor)."""
    return _index_fill(self, dim, index, value, inplace=False)


@tensor_method()
def index_fill_(self, dim: int, index: Tensor, value) -> Tensor:
    return _index_fill(self, dim, index, value, inplace=True)


def _index_reduce(a: Tensor, dim, index, source, reduce: str, include_self: bool, inplace: bool) -> Tensor:
    op = "index_reduce_" if inplace else "index_reduce"
    _check_str(op, reduce)
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d, idx = _vector_index(op, a, dim, index)
    source = _index_source(op, a, d, idx, source)
    idx = _in_range(op, a, d, idx, IndexError)
    args = (d, _spread(idx, d, source.shape), source, reduce, flag(include_self, "include_self"))
    return a._inplace(IndexReduce, *args) if inplace else IndexReduce.apply(a, *args)


@tensor_method(top_level=True)
def index_reduce(self, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    """``source``'s slices along ``dim`` combined into self's slices ``index`` by ``reduce``."""
    return _index_reduce(self, dim, index, source, reduce, include_self, inplace=False)


@tensor_method()
def index_reduce_(self, dim: int, index: Tensor, source: Tensor, reduce: str, *, include_self: bool = True) -> Tensor:
    return _index_reduce(self, dim, index, source, reduce, include_self, inplace=True)


# -- index_put, put, masked_scatter ---------------------------------------------------------------
class IndexPutAccumulate(Function):
    """``a.index_put(indices, values, accumulate=True)``: values added at the indexed places; repeats add up."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, a, key, values):
        ctx.key, ctx.values_shape = key, values.shape
        out = a._data.copy()
        target = out[key].shape
        try:
            added = np.broadcast_to(values._data, target)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(values.shape)} cannot be broadcast to "
                               f"indexing result of shape {list(target)}") from None
        np.add.at(out, key, added)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        grad_values = sum_to(grad[ctx.key], ctx.values_shape) if ctx.needs_input_grad[2] else None
        return grad, None, grad_values


def _index_key(op: str, a: Tensor, indices) -> tuple:
    """The NumPy key of index_put's tuple of index tensors (integer or bool; None keeps a dim whole)."""
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}(): argument 'indices' (position 1) must be tuple of Tensors, not {type_name(indices)}")
    key = []
    for t in indices:
        if t is None:
            key.append(slice(None))
            continue
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): argument 'indices' must be tuple of Tensors, not an element of type "
                            f"{type_name(t)}")
        if t._data.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        key.append(t._data)
    if len(key) > max(a.ndim, 1):
        raise IndexError(f"too many indices for tensor of dimension {a.ndim} (got {len(key)})")
    try:
        a._data[tuple(key)]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    return tuple(key)


def _index_put(a: Tensor, indices, values, accumulate: bool, inplace: bool) -> Tensor:
    op = "index_put_" if inplace else "index_put"
    key = _index_key(op, a, indices)
    check_tensor(op, "values", 2, values)
    if values._data.dtype != a._data.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got {a.dtype} for the "
                           f"destination and {values.dtype} for the source: convert values with .to(self.dtype)")
    node = IndexPutAccumulate if flag(accumulate, "accumulate") else IndexPut
    return a._inplace(node, key, values) if inplace else node.apply(a, key, values)


@tensor_method(top_level=True, out=False)
def index_put(self, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """``self[indices] = values`` out of place (``accumulate``: ``self[indices] += values``, repeats add up)."""
    return _index_put(self, indices, values, accumulate, inplace=False)


@tensor_method(top_level=True)
def index_put_(self, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    return _index_put(self, indices, values, accumulate, inplace=True)


class Put(Function):
    """``source`` written (or added) at the flat positions ``index`` of ``a``, as if ``a`` were 1-D."""

    node_name = "PutBackward0"

    @staticmethod
    def forward(ctx, a, flat, source, accumulate):
        ctx.accumulate, ctx.source_shape = accumulate, source.shape
        ctx.save_for_backward(flat)
        out = a._data.copy()
        positions, values = flat._data.reshape(-1) % max(out.size, 1), source._data.reshape(-1)
        if accumulate:
            np.add.at(out.reshape(-1), positions, values)
        else:
            out.reshape(-1)[positions] = values
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        flat, = ctx.saved_tensors
        need_a, _, need_source, _ = ctx.needs_input_grad
        grad_a = None
        if need_a:
            grad_a = grad if ctx.accumulate else Put.apply(grad, flat, grad.new_zeros(ctx.source_shape), False)
        grad_source = grad.take(flat).reshape(ctx.source_shape) if need_source else None
        return grad_a, None, grad_source, None


def _put(a: Tensor, index, source, accumulate: bool, inplace: bool) -> Tensor:
    check_tensor("put_", "index", 1, index)
    check_tensor("put_", "source", 2, source)
    if index._data.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {index.dtype}: convert it with .long()")
    if source._data.dtype != a._data.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = {a.dtype} "
                           f"and source.dtype = {source.dtype}")
    if index.numel() != source.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    n, flat = a.numel(), index._data
    bad = (flat < -n) | (flat >= n)
    if bad.any():
        raise IndexError(f"out of range: tried to access index {flat[bad].flat[0]} on a tensor of {n} elements.")
    args = (index, source, flag(accumulate, "accumulate"))
    return a._inplace(Put, *args) if inplace else Put.apply(a, *args)


@tensor_method(top_level=True, out=False)
def put(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """self with ``source`` written at the positions ``index`` of its flattened form (``accumulate``: added)."""
    return _put(self, index, source, accumulate, inplace=False)


@tensor_method()
def put_(self, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    return _put(self, index, source, accumulate, inplace=True)


class MaskedScatter(Function):
    """``source``'s first elements, in order, written where ``mask`` is True."""

    node_name = "MaskedScatterBackward0"

    @staticmethod
    def forward(ctx, a, mask, source):
        ctx.source_shape = source.shape
        ctx.save_for_backward(mask)
        out = a._data.copy()
        out[mask._data] = source._data.reshape(-1)[:int(mask._data.sum())]
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        mask, = ctx.saved_tensors
        need_a, _, need_source = ctx.needs_input_grad
        grad_a = grad.masked_fill(mask, 0) if need_a else None
        grad_source = None
        if need_source:  # the gradient of the elements used, zeros for the rest of source
            used = grad.masked_select(mask)
            rest = grad.new_zeros(math.prod(ctx.source_shape) - used.shape[0])
            grad_source = cat([used, rest]).reshape(ctx.source_shape)
        return grad_a, None, grad_source


def _masked_scatter(a: Tensor, mask, source, inplace: bool) -> Tensor:
    op = "masked_scatter_" if inplace else "masked_scatter"
    check_tensor(op, "mask", 1, mask)
    check_tensor(op, "source", 2, source)
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {mask.dtype}: "
                           "use mask.bool()")
    if source._data.dtype != a._data.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got {a.dtype} and "
                           f"{source.dtype}: convert source with .to(self.dtype)")
    try:
        shape = np.broadcast_shapes(a.shape, mask.shape)
    except ValueError:
        raise broadcast_error(a.shape, mask.shape) from None
    if inplace and shape != a.shape:
        raise RuntimeError(f"masked_scatter_: the mask of shape {list(mask.shape)} must broadcast to self's shape "
                           f"{list(a.shape)}")
    mask = mask if mask.shape == shape else Tensor._wrap(np.ascontiguousarray(np.broadcast_to(mask._data, shape)))
    if int(mask._data.sum()) > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if inplace:
        return a._inplace(MaskedScatter, mask, source)
    return MaskedScatter.apply(a if a.shape == shape else a.expand(shape), mask, source)


@tensor_method(top_level=True, out=False)
def masked_scatter(self, mask: Tensor, source: Tensor) -> Tensor:
    """self with ``source``'s elements, in order, written where ``mask`` (broadcast with self) is True."""
    return _masked_scatter(self, mask, source, inplace=False)


@tensor_method()
def masked_scatter_(self, mask: Tensor, source: Tensor) -> Tensor:
    return _masked_scatter(self, mask, source, inplace=True)


# -- reading along indices: take_along_dim, and where as a method --------------------------------
@tensor_method(top_level=True)
def take_along_dim(self, indices: Tensor, dim: int | None = None) -> Tensor:
    """gather after broadcasting self and ``indices`` over the other dims (NumPy's take_along_axis);
    without ``dim``, over the flattened self."""
    check_tensor("take_along_dim", "indices", 1, indices)
    if dim is None:  # (gather's index: int32 too)
        return self.reshape(-1).gather(0, indices.reshape(-1))
    if indices._data.dtype != np.int64:
        raise RuntimeError(f"take_along_dim(): dtype of indices should be int64 but got {indices.dtype}: "
                           "convert it with .long()")
    d = wrap_dim(dim, self.ndim)
    if self.ndim != indices.ndim:
        raise RuntimeError(f"take_along_dim(): input and indices should have the same number of dimensions, but got "
                           f"{self.ndim} dimensions for input, and {indices.ndim} dimensions for indices")
    if not self.ndim:
        return self.gather(0, indices)
    sizes = list(self.shape)
    sizes[d] = indices.shape[d]
    try:
        shape = list(np.broadcast_shapes(tuple(sizes), indices.shape))
    except ValueError:
        raise broadcast_error(tuple(sizes), indices.shape) from None
    indices = indices.broadcast_to(shape)
    shape[d] = self.shape[d]
    return self.broadcast_to(shape).gather(d, indices)


@tensor_method("where")
def _where(self, condition: Tensor, y) -> Tensor:
    """``x.where(condition, y)`` is ``minigrad.where(condition, x, y)``."""
    return where(condition, self, y)


# -- the inverses of views: diagonal_scatter, select_scatter, slice_scatter -----------------------
class ViewScatter(Function):
    """``a`` with the part that ``view`` (a view op, a function of a tensor) reads replaced by ``src``."""

    @staticmethod
    def forward(ctx, a, src, view):
        positions = view(Tensor._wrap(np.arange(a.numel(), dtype=np.int64).reshape(a.shape)))._data
        if src.shape != positions.shape:
            raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                               f"slice size = {list(positions.shape)}")
        ctx.view, ctx.src_dtype = view, src.dtype
        out = a._data.copy()
        out.reshape(-1)[positions.reshape(-1)] = src._data.reshape(-1)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_src, _ = ctx.needs_input_grad
        grad_part = ctx.view(grad)
        grad_a = ctx._forward_cls.apply(grad, grad_part.new_zeros(grad_part.shape), ctx.view) if need_a else None
        grad_src = grad_part.to(ctx.src_dtype) if need_src else None
        return grad_a, grad_src, None


class DiagonalScatter(ViewScatter):
    node_name = "DiagonalScatterBackward0"


class SelectScatter(ViewScatter):
    node_name = "SelectScatterBackward0"


class SliceScatter(ViewScatter):
    node_name = "SliceScatterBackward0"


@tensor_method(top_level=True, out=False)
def diagonal_scatter(self, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """self with ``self.diagonal(offset, dim1, dim2)`` replaced by ``src``."""
    check_tensor("diagonal_scatter", "src", 1, src)
    offset = integer(offset, "offset")
    return DiagonalScatter.apply(self, src, lambda t: t.diagonal(offset, dim1, dim2))


@tensor_method(top_level=True, out=False)
def select_scatter(self, src: Tensor, dim: int, index: int) -> Tensor:
    """self with ``self.select(dim, index)`` replaced by ``src``."""
    check_tensor("select_scatter", "src", 1, src)
    dim, index = integer(dim), integer(index, "index")
    return SelectScatter.apply(self, src, lambda t: t.select(dim, index))


@tensor_method(top_level=True)
def slice_scatter(self, src: Tensor, dim: int = 0, start: int | None = None, end: int | None = None,
                  step: int = 1) -> Tensor:
    """self with the slice ``start:end:step`` of dim ``dim`` replaced by ``src``."""
    check_tensor("slice_scatter", "src", 1, src)
    d = wrap_dim(dim, self.ndim)
    part = slice(None if start is None else integer(start, "start"), None if end is None else integer(end, "end"),
                 integer(step, "step"))
    if part.step <= 0:
        raise RuntimeError("slice step must be positive")
    return SliceScatter.apply(self, src, lambda t: t[(slice(None),) * d + (part,)])
