"""Order statistics: median, nanmedian, kthvalue, mode, quantile and nanquantile.

Along a dim, each returns ``(values, indices)`` (a named tuple as ``torch.return_types.median``)
and the gradient of a value goes to the element it was taken from, as for ``max(dim)``.
Without a dim, median and nanmedian return the value alone, and their gradient is shared
evenly by every element equal to it (PyTorch's ``evenly_distribute_backward``).

The median is the *lower* median, the ``(n - 1) // 2``-th smallest (no averaging), as in
PyTorch. NaN counts as larger than everything: median of a row with a NaN is NaN,
nanmedian and nanquantile leave NaNs out. quantile is composed from ``sort`` and ``lerp``
(PyTorch's too), so its gradient needs nothing new.
"""
from __future__ import annotations

import numpy as np

from minigrad import return_types
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import NOT_GIVEN, flag, integer, type_name, wrap_dim
from minigrad.ops.indexing import full_index
from minigrad.ops.registry import tensor_method
from minigrad.ops.subscript import IndexAdd, saved_index
from minigrad._tensor import Tensor


class _Selected(Function):
    """The values of ``a`` at ``index`` (keepdim shape) along ``dim``; the gradient goes back there."""

    @staticmethod
    def forward(ctx, a, dim, index, keepdim):
        ctx.dim, ctx.keepdim, ctx.input_shape = dim, keepdim, a.shape
        if a.ndim == 0:
            values, indices = a._data.copy(), np.zeros((), dtype=np.int64)
        else:
            values, indices = a._data[full_index(index, dim)], index.astype(np.int64)
            if not keepdim:
                values, indices = values.squeeze(dim), indices.squeeze(dim)
        indices = Tensor._wrap(np.asarray(indices, order="C"))
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)  # as PyTorch, which scatters at the indices output in backward
        return Tensor._wrap(np.asarray(values, order="C")), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        index = saved_index(*ctx.saved_tensors)
        if ctx.input_shape and not ctx.keepdim:
            grad, index = grad.unsqueeze(ctx.dim), np.expand_dims(index, ctx.dim)
        key = full_index(index, ctx.dim) if ctx.input_shape else ()
        return IndexAdd.apply(grad, key, ctx.input_shape), None, None, None


class MedianDim(_Selected):
    node_name = "MedianBackward1"


class NanmedianDim(_Selected):
    node_name = "NanmedianBackward1"


class Kthvalue(_Selected):
    node_name = "KthvalueBackward0"


class Mode(_Selected):
    node_name = "ModeBackward0"


class _EvenlyDistributed(Function):
    """A value of ``a`` chosen by ``pick``; its gradient is shared by the elements equal to it."""

    @staticmethod
    def forward(ctx, a, value):
        out = Tensor._wrap(np.asarray(value, dtype=a._data.dtype))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        data, value = a._data, out._data
        mask = Tensor._wrap((data == value) | (np.isnan(data) & np.isnan(value)))
        return mask * (grad / mask.sum()), None


class Median(_EvenlyDistributed):
    node_name = "MedianBackward0"


class Nanmedian(_EvenlyDistributed):
    node_name = "NanmedianBackward0"


def _kth_index(x: np.ndarray, dim: int, k_of_count) -> np.ndarray:
    """The index (keepdim shape) of the k-th smallest along ``dim``, k = ``k_of_count(count)`` for the
    count of non-NaN values of each row; rows where k is past the numbers point at their first NaN."""
    order = np.argsort(x, axis=dim, kind="stable")  # NaNs sort last
    nan = np.isnan(x) if x.dtype.kind == "f" else np.zeros(x.shape, dtype=bool)
    count = np.sum(~nan, axis=dim, keepdims=True)
    return np.take_along_axis(order, k_of_count(count), axis=dim)


def _check_not_empty(name: str, a: Tensor, dim: int | None) -> None:
    size = a.numel() if dim is None else (a.shape[dim] if a.ndim else 1)
    if size == 0:
        where = "" if dim is None else f" along dim {dim}"
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size{where}: the tensor "
                         f"of shape {list(a.shape)} has no values there")


def _median(a: Tensor, dim, keepdim, ignore_nan: bool):
    """PyTorch's two overloads: median() of every element, median(dim, keepdim=False) along dim."""
    name = "nanmedian" if ignore_nan else "median"
    if dim is NOT_GIVEN:
        if keepdim is not NOT_GIVEN:
            raise TypeError(f"{name}(): keepdim goes with a dim: pass {name}(dim, keepdim={keepdim})")
        if a.numel() == 0:
            return (Nanmedian if ignore_nan else Median).apply(a, np.nan)
        x = a._data.ravel()
        values = x[~np.isnan(x)] if ignore_nan and x.dtype.kind == "f" else x
        if values.size == 0 or (not ignore_nan and x.dtype.kind == "f" and np.isnan(x).any()):
            value = np.nan
        else:
            value = np.partition(values, (values.size - 1) // 2)[(values.size - 1) // 2]
        return (Nanmedian if ignore_nan else Median).apply(a, value)
    d = wrap_dim(integer(dim, "dim"), a.ndim)
    _check_not_empty(name, a, d)
    keepdim = False if keepdim is NOT_GIVEN else flag(keepdim, "keepdim")
    node, named = (NanmedianDim, return_types.nanmedian) if ignore_nan else (MedianDim, return_types.median)
    if a.ndim == 0:
        return named(*node.apply(a, d, None, keepdim))
    x = a._data
    n = x.shape[d]
    if ignore_nan:  # the lower median of the numbers; a row of NaNs gives its first NaN
        index = _kth_index(x, d, lambda count: np.maximum(count - 1, 0) // 2)
    else:  # a row with a NaN gives that NaN (argsort puts NaNs last: the first of them)
        index = _kth_index(x, d, lambda count: np.where(count < n, count, (n - 1) // 2))
    return named(*node.apply(a, d, index, keepdim))


@tensor_method(top_level=True, out=False)  # (PyTorch's takes out= only with a dim, as a tuple)
def median(self: Tensor, dim: int = NOT_GIVEN, keepdim: bool = NOT_GIVEN):
    """The lower median of all elements (a tensor), or along ``dim`` as (values, indices); NaN if any is NaN."""
    return _median(self, dim, keepdim, ignore_nan=False)


@tensor_method(top_level=True, out=False)  # (PyTorch's takes out= only with a dim, as a tuple)
def nanmedian(self: Tensor, dim: int = NOT_GIVEN, keepdim: bool = NOT_GIVEN):
    """median with the NaNs left out (NaN only where every value is NaN)."""
    return _median(self, dim, keepdim, ignore_nan=True)


@tensor_method(top_level=True)
def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> return_types.kthvalue:
    """The ``k``-th smallest value along ``dim`` (k counts from 1) and its index."""
    k, d = integer(k, "k"), wrap_dim(dim, self.ndim)
    n = self.shape[d] if self.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}: k={k}, but the "
                           f"dimension has size {n}")
    keepdim = flag(keepdim, "keepdim")
    if self.ndim == 0:
        return return_types.kthvalue(*Kthvalue.apply(self, d, None, keepdim))
    order = np.argsort(self._data, axis=d, kind="stable")
    index = np.take(order, [k - 1], axis=d)
    return return_types.kthvalue(*Kthvalue.apply(self, d, index, keepdim))


def _row_mode(row: np.ndarray) -> int:
    """The index of the last occurrence of the most frequent value (the smallest, among equally frequent)."""
    values, inverse, counts = np.unique(row, return_inverse=True, return_counts=True)
    best = int(np.argmax(counts))  # the first of the largest counts: the smallest such value
    return int(np.flatnonzero(inverse.reshape(-1) == best)[-1])


@tensor_method(top_level=True)
def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> return_types.mode:
    """The most frequent value along ``dim`` (the smallest of equally frequent ones) and an index of it."""
    d, keepdim = wrap_dim(dim, self.ndim), flag(keepdim, "keepdim")
    if self.ndim == 0:
        return return_types.mode(*Mode.apply(self, d, None, keepdim))
    _check_not_empty("mode", self, d)
    moved = np.moveaxis(self._data, d, -1)
    rows = moved.reshape(-1, moved.shape[-1])
    index = np.array([_row_mode(row) for row in rows], dtype=np.int64).reshape(*moved.shape[:-1], 1)
    return return_types.mode(*Mode.apply(self, d, np.moveaxis(index, -1, d), keepdim))


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name: str, a: Tensor, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    """PyTorch's ``quantile_compute``: sort, find the rank q·(n - 1) of each q, and interpolate
    between the values at the ranks below and above it (n counts the non-NaN values for nanquantile;
    quantile of a row with a NaN is NaN)."""
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype, got {a.dtype}: "
                           "convert it with .float()")
    if not isinstance(interpolation, str):
        raise TypeError(f"{name}(): argument 'interpolation' must be str, not {type_name(interpolation)}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest. "
                           f"Got {interpolation}")
    scalar_q = not isinstance(q, Tensor)
    if scalar_q:
        if not isinstance(q, (float, int, np.number, np.bool_)):
            raise TypeError(f"{name}(): argument 'q' must be a float or a Tensor, not {type_name(q)}")
        qs = np.array([float(q)], dtype=a._data.dtype)
    else:
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor, got a {q.ndim}D tensor")
        if q._data.dtype != a._data.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor ({q.dtype} and {a.dtype})")
        qs = q._data.reshape(-1)
    if np.any((qs < 0) | (qs > 1)) or np.isnan(qs).any():
        raise RuntimeError(f"{name}() q values must be in the range [0, 1], got {qs.tolist()}")
    if a.numel() == 0 and dim is None or (dim is not None and a.ndim and a.shape[wrap_dim(dim, a.ndim)] == 0):
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    keepdim = flag(keepdim, "keepdim")
    if dim is None:
        x, d = a.reshape(-1), 0
    else:
        d = wrap_dim(dim, a.ndim)
        x = a if a.ndim else a.reshape(1)
    sorted_x = x.sort(d).values
    n = sorted_x.shape[d]
    data = sorted_x._data
    nan = np.isnan(data)
    if ignore_nan:  # a row of NaNs: rank 0, its first NaN
        ranks = np.maximum(qs.reshape((-1,) + (1,) * data.ndim) * ((~nan).sum(axis=d, keepdims=True) - 1), 0)
    else:  # a row with a NaN: the rank of its last value, a NaN
        ranks = np.where(nan.any(axis=d, keepdims=True), n - 1, qs.reshape((-1,) + (1,) * data.ndim) * (n - 1))
    if interpolation == "lower":
        ranks = np.floor(ranks)
    elif interpolation == "higher":
        ranks = np.ceil(ranks)
    elif interpolation == "nearest":
        ranks = np.round(ranks)  # half to even, as PyTorch's round
    shape = (len(qs),) + data.shape[:d] + (1,) + data.shape[d + 1:]
    expanded = sorted_x.unsqueeze(0).expand(len(qs), *data.shape)
    below = np.broadcast_to(np.floor(ranks), shape)
    out = expanded.gather(d + 1, Tensor._wrap(below.astype(np.int64)))
    if interpolation in ("linear", "midpoint"):
        above = np.broadcast_to(np.ceil(ranks), shape)
        weights = np.full(shape, 0.5) if interpolation == "midpoint" else np.broadcast_to(ranks, shape) - below
        high = expanded.gather(d + 1, Tensor._wrap(above.astype(np.int64)))
        out = out.lerp(high, Tensor._wrap(weights.astype(data.dtype)))
    if keepdim and dim is None:
        out = out.reshape(len(qs), *([1] * a.ndim))
    elif not keepdim or a.ndim == 0:
        out = out.squeeze(d + 1)
    return out.squeeze(0) if scalar_q else out


@tensor_method(top_level=True)
def quantile(self: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
             interpolation: str = "linear") -> Tensor:
    """The ``q``-quantiles (a number, or a 1-D tensor: one result each, stacked first) over ``dim``."""
    return _quantile("quantile", self, q, dim, keepdim, interpolation, ignore_nan=False)


@tensor_method(top_level=True)
def nanquantile(self: Tensor, q, dim: int | None = None, keepdim: bool = False, *,
                interpolation: str = "linear") -> Tensor:
    """quantile with the NaNs left out."""
    return _quantile("nanquantile", self, q, dim, keepdim, interpolation, ignore_nan=True)

