"""Reductions: sum, mean, max and min, with PyTorch's ``dim`` / ``keepdim``.

The gradient of a reduction flows back to every element that was reduced:
``sum`` copies the incoming gradient to all of them (``expand``), ``mean`` also
divides by their count, and ``max`` sends it only to the winners.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import return_types
from minigrad.autograd.function import Function
from minigrad.core.builtin import plain, record
from minigrad.ops.broadcast import NOT_GIVEN, flag, integer, normalize_dims, type_name
from minigrad.ops.elementwise import Maximum, Where
from minigrad.ops.shape import expanded
from minigrad.ops.subscript import IndexAdd, saved_index
from minigrad.ops.special import Minimum
from minigrad._tensor import Tensor
from minigrad.ops.registry import tensor_method


def _keepdim_shape(shape: tuple, dims: tuple) -> tuple:
    return tuple(1 if i in dims else n for i, n in enumerate(shape))


def _summed(a: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    out = np.add.reduce(a._data, axis=dims, keepdims=keepdim)  # (ndarray.sum, without its Python wrapper)
    if out.dtype.kind in "bi":
        out = out.astype(np.int64)  # PyTorch sums integers and booleans as int64
    return Tensor._wrap(np.asarray(out, order="C"))  # a new tensor is row-major, as in PyTorch


class Sum(Function):
    node_name = "SumBackward1"

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        ctx.dims = normalize_dims(dim, a.ndim)
        ctx.input_shape = a._data.shape
        ctx.keepdim = keepdim
        return _summed(a, ctx.dims, keepdim)

    @staticmethod
    def backward(ctx, grad):
        if not ctx.keepdim and grad.ndim:  # a 0-d gradient expands to any shape as it is
            grad = grad.reshape(_keepdim_shape(ctx.input_shape, ctx.dims))
        return expanded(grad, ctx.input_shape), None, None


class Mean(Function):
    node_name = "MeanBackward1"

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        if not a.is_floating_point():
            raise RuntimeError(
                "mean(): could not infer output dtype. Input dtype must be either a floating point "
                f"or complex dtype. Got: {a.dtype}. Call .float() first."
            )
        ctx.dims = normalize_dims(dim, a.ndim)
        ctx.input_shape = a.shape
        ctx.keepdim = keepdim
        ctx.count = math.prod([a.shape[d] for d in ctx.dims])
        with np.errstate(invalid="ignore", divide="ignore"):
            return Tensor._wrap(np.asarray(a._data.mean(axis=ctx.dims, keepdims=keepdim), order="C"))

    @staticmethod
    def backward(ctx, grad):
        if not ctx.keepdim:
            grad = grad.reshape(_keepdim_shape(ctx.input_shape, ctx.dims))
        return grad.expand(ctx.input_shape) / ctx.count, None, None


class SumAll(Sum):
    """``sum()`` over every element: PyTorch names its node differently."""

    node_name = "SumBackward0"


class MeanAll(Mean):
    node_name = "MeanBackward0"


class MaxAll(Function):
    """max() or min() of all elements: ties share the gradient equally, as in PyTorch.

    It saves its input and output (as PyTorch does) and finds the winners in backward:
    the elements equal to the result, or, when the result is NaN, the NaN elements.
    """

    node_name = "MaxBackward1"

    @staticmethod
    def forward(ctx, a, largest=True):
        if a.numel() == 0:
            raise RuntimeError(
                f"{'max' if largest else 'min'}(): Expected reduction dim to be specified for input.numel() == 0. "
                "Specify the reduction dim with the 'dim' argument."
            )
        out = Tensor._wrap(np.asarray(a._data.max() if largest else a._data.min()))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        x, result = a._data, out._data
        winners = np.isnan(x) if np.isnan(result) else x == result
        # where, not grad * mask: an inf gradient gives the losers 0, not NaN
        return Where.apply(winners, grad / int(winners.sum()), 0.0), None


class MaxDim(Function):
    """max(dim) or min(dim): values and the index of each; the gradient goes to that index."""

    node_name = "MaxBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim=False, largest=True):
        if a.ndim == 0:  # PyTorch: the value itself, index 0
            normalize_dims(dim, 0)  # checks dim
            ctx.dim = None
            indices = Tensor._wrap(np.zeros((), dtype=np.int64))
            ctx.mark_non_differentiable(indices)
            ctx.save_for_backward(indices)  # as PyTorch: so a second backward raises
            return Tensor._wrap(a._data.copy()), indices
        (d,) = normalize_dims(dim, a.ndim)
        if a.shape[d] == 0:
            raise IndexError(f"{'max' if largest else 'min'}(): Expected reduction dim {d} to have non-zero size.")
        pick = np.argmax if largest else np.argmin
        indices = np.expand_dims(pick(a._data, axis=d), d)
        values = np.take_along_axis(a._data, indices, axis=d)
        if not keepdim:
            values, indices = values.squeeze(d), indices.squeeze(d)
        ctx.dim, ctx.keepdim, ctx.input_shape = d, keepdim, a.shape
        indices = Tensor._wrap(np.asarray(indices, dtype=np.int64, order="C"))
        ctx.mark_non_differentiable(indices)
        # PyTorch saves the indices output: freed after backward (a second one raises), and
        # changing them in place before backward is a version-counter error, not a wrong gradient
        ctx.save_for_backward(indices)
        return Tensor._wrap(np.asarray(values, order="C")), indices

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        index = saved_index(*ctx.saved_tensors)
        if ctx.dim is None:  # 0-d input: PyTorch scatters grad into new zeros, a tensor of its own
            return grad.clone(), None, None, None
        if not ctx.keepdim:
            grad, index = grad.unsqueeze(ctx.dim), np.expand_dims(index, ctx.dim)
        return IndexAdd.apply(grad, _full_index(index, ctx.dim), ctx.input_shape), None, None, None


def _full_index(indices: np.ndarray, dim: int) -> tuple:
    """The advanced index that picks ``indices`` along ``dim`` and everything along the rest."""
    grid = list(np.indices(indices.shape, sparse=True))
    grid[dim] = indices
    return tuple(grid)


def extremum(a: Tensor, first=NOT_GIVEN, keepdim=NOT_GIVEN, dim=NOT_GIVEN, other=NOT_GIVEN,
             largest: bool = True):
    """PyTorch's three overloads: ``a.max()`` of every element, ``a.max(other)`` elementwise, and
    ``a.max(dim, keepdim=False)`` -> (values, indices). A positional tensor is ``other`` unless
    ``keepdim`` is given: then it is the dim (a 0-d integer one), as PyTorch reads it."""
    name = "max" if largest else "min"
    if first is not NOT_GIVEN and (dim is not NOT_GIVEN or other is not NOT_GIVEN):
        raise TypeError(f"{name}() got its first argument twice: pass it by position or as dim= / other=")
    if other is not NOT_GIVEN or (isinstance(first, Tensor) and keepdim is NOT_GIVEN):
        other = first if other is NOT_GIVEN else other
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' must be Tensor, not {type_name(other)}")
        if keepdim is not NOT_GIVEN:
            raise TypeError(f"{name}(other=...) takes no keepdim: keepdim goes with a dim, x.{name}(dim, keepdim)")
        return (Maximum if largest else Minimum).apply(a, other)
    dim = first if dim is NOT_GIVEN else dim
    if dim is NOT_GIVEN:
        if keepdim is not NOT_GIVEN:
            raise TypeError(f"{name}(): keepdim= needs a dim, as in x.{name}(dim, keepdim={keepdim!r}); "
                            f"x.{name}() without a dim reduces every element to one value")
        return (MaxAll if largest else MinAll).apply(a, largest)
    if dim is None:
        raise TypeError(f"{name}(): argument 'dim' must be int, not NoneType: "
                        f"x.{name}() without a dim reduces every element to one value")
    dim, keepdim = integer(dim), False if keepdim is NOT_GIVEN else flag(keepdim, "keepdim")
    result_type = return_types.max if largest else return_types.min
    return result_type(*(MaxDim if largest else MinDim).apply(a, dim, keepdim, largest))


class MinAll(MaxAll):
    """min(): PyTorch names its node apart from max's."""

    node_name = "MinBackward1"


class MinDim(MaxDim):
    node_name = "MinBackward0"


def arg_extremum(a: Tensor, dim=None, keepdim: bool = False, largest: bool = True) -> Tensor:
    pick = np.argmax if largest else np.argmin
    name = "argmax" if largest else "argmin"
    if dim is None:  # the index into the flattened tensor, of shape (1, 1, ...) with keepdim
        if a.numel() == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
        return Tensor._wrap(np.asarray(pick(a._data, keepdims=flag(keepdim, "keepdim")), dtype=np.int64))
    if a.ndim == 0:  # PyTorch: index 0 of the value itself
        normalize_dims(dim, 0)  # checks dim
        return Tensor._wrap(np.zeros((), dtype=np.int64))
    (d,) = normalize_dims(dim, a.ndim)
    if a.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return Tensor._wrap(np.asarray(pick(a._data, axis=d, keepdims=flag(keepdim, "keepdim")), dtype=np.int64, order="C"))


def logical_reduce(reduce, a: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """``all``/``any`` over ``dim`` (an int or a tuple; None: every element), as a bool tensor."""
    axes = None if dim is None else normalize_dims(dim, a.ndim)
    return Tensor._wrap(np.asarray(reduce(a._data, axis=axes, keepdims=flag(keepdim, "keepdim")), order="C"))


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method("all", top_level=True)
def _all(self, dim=None, keepdim: bool = False) -> Tensor:
    """Whether every element (along ``dim``) is nonzero: a bool tensor, no gradient."""
    return logical_reduce(np.all, self, dim, keepdim)


@tensor_method("any", top_level=True)
def _any(self, dim=None, keepdim: bool = False) -> Tensor:
    """Whether some element (along ``dim``) is nonzero: a bool tensor, no gradient."""
    return logical_reduce(np.any, self, dim, keepdim)


@tensor_method("sum", top_level=True)
def _sum(self, dim=None, keepdim: bool = False) -> Tensor:
    flag(keepdim, "keepdim")
    if dim is None and self._requires_grad and plain(self) and self._data.dtype.kind == "f":
        # a plain call, recorded directly (core/builtin.py)
        dims = normalize_dims(None, self._data.ndim)
        out = _summed(self, dims, keepdim)
        ctx = record(SumAll, (self, None, keepdim), out, (True, False, False))
        ctx.dims, ctx.input_shape, ctx.keepdim = dims, self._data.shape, keepdim
        return out
    return (SumAll if dim is None else Sum).apply(self, dim, keepdim)


@tensor_method(top_level=True)
def mean(self, dim=None, keepdim: bool = False) -> Tensor:
    flag(keepdim, "keepdim")
    return (MeanAll if dim is None else Mean).apply(self, dim, keepdim)


@tensor_method("max", top_level=True)
def _max(self, dim_or_other: int | Tensor = NOT_GIVEN, /, keepdim: bool = NOT_GIVEN, *,
         dim: int = NOT_GIVEN, other: Tensor = NOT_GIVEN):
    return extremum(self, dim_or_other, keepdim, dim, other)


@tensor_method("min", top_level=True)
def _min(self, dim_or_other: int | Tensor = NOT_GIVEN, /, keepdim: bool = NOT_GIVEN, *,
         dim: int = NOT_GIVEN, other: Tensor = NOT_GIVEN):
    return extremum(self, dim_or_other, keepdim, dim, other, largest=False)


@tensor_method(top_level=True)
def argmax(self, dim=None, keepdim: bool = False) -> Tensor:
    return arg_extremum(self, dim, keepdim)


@tensor_method(top_level=True)
def argmin(self, dim=None, keepdim: bool = False) -> Tensor:
    return arg_extremum(self, dim, keepdim, largest=False)
