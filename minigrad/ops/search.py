"""Searching and counting values: unique, unique_consecutive, bincount, histc, searchsorted,
bucketize and isin.

They answer questions about values (which occur, how often, where they would go), so
they have no gradient. PyTorch still records unique's result, and bincount's with weights
that need a gradient, with a node whose backward fails; ``_NoDerivative`` does the same,
so ``requires_grad`` and ``grad_fn`` read as PyTorch's and the failure comes at backward,
with PyTorch's exception type.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import flag, integer, number, type_name, wrap_dim
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, check_tensor


class _NoDerivative(Function):
    """``result`` (computed already) as the output of an op PyTorch has no derivative for."""

    error: type = NotImplementedError
    op = ""

    @staticmethod
    def forward(ctx, a, result):
        return Tensor._wrap(result)

    @staticmethod
    def backward(ctx, grad):
        cls = ctx._forward_cls
        raise cls.error(f"the derivative for '{cls.op}' is not implemented: compute it without recording "
                        "(detach the input) or differentiate another way")


class Unique2(_NoDerivative):
    node_name, op = "Unique2Backward0", "_unique2"


class UniqueDim(_NoDerivative):
    node_name, op = "UniqueDimBackward0", "unique_dim"


class UniqueConsecutive(_NoDerivative):
    node_name, op = "UniqueConsecutiveBackward0", "unique_consecutive"


class Bincount(_NoDerivative):
    node_name, op, error = "torch::autograd::NotImplemented", "bincount", RuntimeError


def _answer(values: np.ndarray, inverse: np.ndarray, counts: np.ndarray, node: type, a: Tensor,
            return_inverse: bool, return_counts: bool):
    out = node.apply(a, np.require(values, requirements="C"))  # (ascontiguousarray would make a 0-d array 1-d)
    extra = [Tensor._wrap(np.require(x, np.int64, "C")) for x, wanted in
             ((inverse, return_inverse), (counts, return_counts)) if wanted]
    return (out, *extra) if extra else out


def _check_empty_dims(op: str, x: np.ndarray, d: int) -> None:
    """An empty tensor has distinct slices along ``d`` only if ``d`` is its one dimension of size 0."""
    if x.size == 0 and (x.shape[d] != 0 or sum(n == 0 for n in x.shape) > 1):
        raise RuntimeError(f"{op}(): the tensor of shape {list(x.shape)} has dimensions of size 0 other than dim "
                           f"{d}, so it has no slices along it to compare")


# -- unique, unique_consecutive -------------------------------------------------------------------
@tensor_method(top_level=True, out=False)
def unique(self, sorted: bool = True, return_inverse: bool = False, return_counts: bool = False,
           dim: int | None = None):
    """The distinct values in ascending order (with ``dim``: the distinct slices along it); with
    ``return_inverse`` where each element went, with ``return_counts`` how often each occurs.
    ``sorted=False`` sorts too, as PyTorch's CPU kernel does. Each NaN counts as distinct."""
    flag(sorted, "sorted")
    return_inverse, return_counts = flag(return_inverse, "return_inverse"), flag(return_counts, "return_counts")
    x = self._data
    if dim is None:
        values, inverse, counts = np.unique(x.reshape(-1), return_inverse=True, return_counts=True, equal_nan=False)
        return _answer(values, inverse.reshape(x.shape), counts, Unique2, self, return_inverse, return_counts)
    if self.ndim == 0:
        raise IndexError(f"unique(): a 0-d tensor has no dimension {dim}: leave dim out")
    d = wrap_dim(dim, self.ndim)
    _check_empty_dims("unique", x, d)
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True, axis=d)
    return _answer(values, inverse.reshape(-1), counts, UniqueDim, self, return_inverse, return_counts)


@tensor_method(top_level=True, out=False)
def unique_consecutive(self, return_inverse: bool = False, return_counts: bool = False, dim: int | None = None):
    """One element (or slice along ``dim``) of each run of equal neighbours, in order: ``uniq`` of Unix."""
    return_inverse, return_counts = flag(return_inverse, "return_inverse"), flag(return_counts, "return_counts")
    x = self._data
    if dim is None:
        flat = x.reshape(-1)
        starts = np.ones(flat.size, dtype=bool)
        starts[1:] = flat[1:] != flat[:-1]
        values, shape = flat[starts], x.shape
    else:
        if self.ndim == 0:
            raise IndexError(f"unique_consecutive(): a 0-d tensor has no dimension {dim}: leave dim out")
        d = wrap_dim(dim, self.ndim)
        _check_empty_dims("unique_consecutive", x, d)
        slices = np.moveaxis(x, d, 0).reshape(x.shape[d], math.prod(x.shape) // max(x.shape[d], 1))
        starts = np.ones(slices.shape[0], dtype=bool)
        starts[1:] = (slices[1:] != slices[:-1]).any(axis=1)
        values, shape = np.compress(starts, x, axis=d), (starts.size,)
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), starts.size))
    return _answer(values, inverse.reshape(shape), counts, UniqueConsecutive, self, return_inverse, return_counts)


# -- bincount, histc ------------------------------------------------------------------------------
@tensor_method(top_level=True, out=False)
def bincount(self, weights: Tensor | None = None, minlength: int = 0) -> Tensor:
    """How often each of 0, 1, ..., max occurs in a vector of non-negative ints (with ``weights``:
    the sum of the weights of its occurrences), at least ``minlength`` counts long."""
    minlength = integer(minlength, "minlength")
    if self._data.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{dtypes.scalar_type_name(self._data.dtype)}':"
                                  " bincount counts integers, convert the input with .long()")
    x = self._data
    if x.ndim == 1 and x.size == 0:  # counts of nothing: int64 zeros, weights or not, as in PyTorch
        return Tensor._wrap(np.zeros(max(minlength, 0), dtype=np.int64))
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim != 1 or (x.size and x.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is None:
        return Tensor._wrap(np.bincount(x, minlength=minlength).astype(np.int64))
    check_tensor("bincount", "weights", 1, weights)
    if weights.ndim != 1 or weights.shape[0] != x.size:
        raise RuntimeError("weights should be 1-d and have the same length as input")
    # float32 weights give float32 counts; any other weights float64, as in PyTorch
    dtype = np.float32 if weights._data.dtype == np.float32 else np.float64
    counts = np.bincount(x, weights=weights._data.astype(np.float64), minlength=minlength).astype(dtype)
    return Bincount.apply(weights, counts)


@tensor_method(top_level=True)
def histc(self, bins: int = 100, min=0, max=0) -> Tensor:  # noqa: A002 (PyTorch's argument names)
    """A histogram: how many elements fall in each of ``bins`` equal bins between ``min`` and ``max``
    (both 0: the data's own range). Elements outside the range are not counted."""
    bins, low, high = integer(bins, "bins"), number(min, "min"), number(max, "max")
    x = self._data
    if bins <= 0:  # (the arguments are checked before the dtype, as in PyTorch)
        raise RuntimeError(f"histogram(): bins must be > 0, but got {bins} for dimension 0")
    if low == high and x.size:
        low, high = float(x.min()), float(x.max())
    if low == high:
        low, high = low - 1, high + 1
    if not (math.isfinite(low) and math.isfinite(high)):
        raise RuntimeError(f"histc: range of [{low}, {high}] is not finite")
    if low > high:
        raise RuntimeError("histc: max must be larger than min")
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{dtypes.scalar_type_name(x.dtype)}': "
                                  "convert the input with .float()")
    lo, hi = x.dtype.type(low), x.dtype.type(high)
    inside = x[(x >= lo) & (x <= hi)]
    # PyTorch's linear binning, in the input's dtype; the right edge belongs to the last bin
    position = ((inside - lo) * x.dtype.type(bins) / (hi - lo)).astype(np.int64)
    counts = np.bincount(np.minimum(position, bins - 1), minlength=bins)
    return Tensor._wrap(counts.astype(x.dtype))


# -- searchsorted, bucketize, isin ----------------------------------------------------------------
def searchsorted(sorted_sequence: Tensor, values, *, out_int32: bool = False, right: bool = False,
                 side: str | None = None, out: Tensor | None = None, sorter: Tensor | None = None) -> Tensor:
    """Where each of ``values`` would go in the (last dim of) ``sorted_sequence`` to keep it sorted:
    the index of the first element >= the value (``right``/side='right': > the value)."""
    check_tensor("searchsorted", "sorted_sequence", 1, sorted_sequence)
    right, out_int32 = flag(right, "right"), flag(out_int32, "out_int32")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("searchsorted(): side and right can't be set to opposites, got side of left while "
                               "right was True")
        right = side == "right"
    scalar = not isinstance(values, Tensor)
    v = np.asarray(number(values, "values")) if scalar else values._data
    seq = sorted_sequence._data
    if sorter is not None:
        check_tensor("searchsorted", "sorter", 1, sorter)
        if sorter._data.dtype != np.int64:
            raise RuntimeError(f"searchsorted(): sorter must be a tensor of long dtype but got {sorter.dtype}")
        if sorter.shape != sorted_sequence.shape:
            raise RuntimeError("searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {list(sorted_sequence.shape)}and got sorter tensor {list(sorter.shape)}")
        if sorter._data.size and (sorter._data.min() < 0 or sorter._data.max() >= seq.shape[-1]):
            raise RuntimeError("searchsorted(): sorter index out of range")
        seq = np.take_along_axis(seq, sorter._data, axis=-1)
    if seq.ndim > 1 and (scalar or v.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(
            "searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries "
            f"tensor and input value tensor must match, but we got boundaries tensor {list(seq.shape)} and input "
            f"value tensor {list(v.shape)}")
    if seq.ndim == 0:
        raise RuntimeError("searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got a 0-d boundaries tensor")
    where = "right" if right else "left"
    if seq.ndim == 1:
        found = np.searchsorted(seq, v, side=where)
    else:
        rows, vals = seq.reshape(-1, seq.shape[-1]), v.reshape(-1, v.shape[-1])
        found = np.stack([np.searchsorted(r, w, side=where) for r, w in zip(rows, vals)]).reshape(v.shape)
    result = Tensor._wrap(np.asarray(found, dtype=np.int32 if out_int32 else np.int64))
    if out is not None:
        out._data[...] = result._data  # (the caller's out=: the shape must match)
        return out
    return result


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out: Tensor | None = None) -> Tensor:
    """The bucket of each element among the sorted 1-D ``boundaries``: ``searchsorted(boundaries, input)``."""
    check_tensor("bucketize", "boundaries", 2, boundaries)
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each of ``elements`` is among ``test_elements`` (``invert``: is not); either may be a number."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments: got ({type_name(elements)}, "
                        f"{type_name(test_elements)}); at least one of them must be a Tensor")
    flag(assume_unique, "assume_unique")
    x = elements._data if isinstance(elements, Tensor) else np.asarray(number(elements, "elements"))
    test = test_elements._data if isinstance(test_elements, Tensor) else np.asarray(number(test_elements,
                                                                                          "test_elements"))
    return Tensor._wrap(np.isin(x, test, invert=flag(invert, "invert")))
