"""sort and topk: values in order along a dimension, and where each came from.

Both return ``(values, indices)`` as a named tuple, like ``torch.return_types.sort``.
The indices are integers and get no gradient; the gradient of each value goes
back to the position it was taken from (``IndexAdd`` at the indices), so
elements topk left out get zero.

Sorting is stable (equal values keep their order) and NaN counts as the largest
value, as in PyTorch: first when descending, last when ascending.
"""
from __future__ import annotations


import numpy as np

from minigrad import return_types
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import NOT_GIVEN, flag, integer, wrap_dim
from minigrad.ops.indexing import full_index
from minigrad.ops.layout import like_first
from minigrad.ops.subscript import IndexAdd, saved_index
from minigrad._tensor import Tensor
from minigrad.ops.registry import tensor_method


def _order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """Stable argsort along ``dim``; descending sorts the reversed array so ties keep their order."""
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    return n - 1 - np.flip(np.argsort(np.flip(x, dim), axis=dim, kind="stable"), dim)


class _Picked(Function):
    """Values taken at ``indices`` along ``dim``; the base of Sort and Topk (PyTorch names them apart)."""

    @staticmethod
    def forward(ctx, a, dim, order):
        ctx.dim, ctx.input_shape = dim, a.shape
        if a.ndim == 0:
            values, indices = a._data.copy(), np.zeros((), dtype=np.int64)
        else:
            # laid out as the input, as PyTorch's sort (NumPy's take gives row-major)
            values = like_first(a._data[full_index(order, dim)], a._data)
            indices = like_first(order.astype(np.int64), a._data)
        indices = Tensor._wrap(indices)
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)  # as PyTorch: freed after backward, so a second one fails
        return Tensor._wrap(values), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        index = saved_index(*ctx.saved_tensors)
        key = full_index(index, ctx.dim) if ctx.input_shape else ()
        return IndexAdd.apply(grad, key, ctx.input_shape), None, None


class Sort(_Picked):
    node_name = "SortBackward0"


class Topk(_Picked):
    node_name = "TopkBackward0"


class SortStable(_Picked):
    """``sort(stable=...)``: PyTorch's second overload, with a node of its own name."""

    node_name = "SortBackward1"


@tensor_method(top_level=True)
def sort(a: Tensor, *args, stable=NOT_GIVEN, **kwargs) -> return_types.sort:
    """The values along ``dim`` in order, and their indices in ``a``; equal values keep their order.

    PyTorch's two overloads: ``sort(dim=-1, descending=False)``, and, once ``stable`` is given
    (any value, even None), ``sort(*, stable, dim=-1, descending=False)`` with dim and descending
    by keyword only. minigrad always sorts stably.
    """
    if stable is NOT_GIVEN:
        return _sort(Sort, a, *args, **kwargs)
    if args:
        raise TypeError(f"sort(): with stable=, pass dim and descending by keyword, e.g. "
                        f"sort(stable={stable}, dim={args[0]}); got {len(args)} positional argument(s)")
    return _sort(SortStable, a, **kwargs)


@tensor_method(top_level=True)
def msort(self) -> Tensor:
    """The values sorted along the first dimension: ``sort(self, dim=0).values``."""
    return sort(self, 0).values


@tensor_method(top_level=True, out=False)
def argsort(a: Tensor, *args, stable=NOT_GIVEN, **kwargs) -> Tensor:
    """The indices that sort ``a`` along ``dim`` (``sort(...).indices``), with sort's two overloads."""
    return sort(a, *args, stable=stable, **kwargs).indices


def _sort(node: type, a: Tensor, dim: int = -1, descending: bool = False) -> return_types.sort:
    d = wrap_dim(dim, a.ndim)
    order = _order(a._data, d, flag(descending, "descending")) if a.ndim else None
    return return_types.sort(*node.apply(a, d, order))


@tensor_method(top_level=True)
def topk(a: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> return_types.topk:
    """The ``k`` largest (or smallest) values along ``dim``, in order, and their indices."""
    d, k = wrap_dim(dim, a.ndim), integer(k, "k")
    flag(largest, "largest"), flag(sorted, "sorted")
    n = a.shape[d] if a.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError(f"selected index k out of range (k={k}, and dimension {d} has size {n})")
    if a.ndim == 0:
        return return_types.topk(*Topk.apply(a, d, None))
    order = np.take(_order(a._data, d, largest), np.arange(k), axis=d)
    return return_types.topk(*Topk.apply(a, d, order))
