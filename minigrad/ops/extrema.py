"""Reductions and scans PyTorch has beside sum and max: amax, amin, cumprod, cummax, cummin,
count_nonzero, std_mean, var_mean, nansum, nanmean.

Their derivatives:

    amax, amin     the gradient is shared evenly among the elements equal to the result
                   (max(dim) gives it all to one index instead): d xᵢ = grad · [xᵢ = m] / #{j: xⱼ = m}.
    cumprod        yⱼ = Πᵢ≤ⱼ xᵢ, so d xₖ = Σⱼ≥ₖ gradⱼ · Πᵢ≤ⱼ,ᵢ≠ₖ xᵢ. Without zeros that is
                   (reverse cumsum of grad · y) / xₖ; a zero makes that 0/0, so then the product
                   without xₖ is formed for each k (xₖ replaced by 1), an n² cost only then.
    cummax, cummin each output is one of the inputs (its index is returned): the gradient goes
                   back to that index, added up where several outputs picked the same input.
    std_mean       d var = 2 (x - mean) / (N - correction), d std = d var / (2 std),
    var_mean       d mean = 1 / N; one node for both results, as in PyTorch.
    nansum         a sum that skips NaN: NaN inputs get no gradient. nanmean is nansum / count.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import flag, normalize_dims, wrap_dim
from minigrad.ops.elementwise import Where
from minigrad.ops.scan import check_inplace_dtype
from minigrad.ops.stats import _infinite_scale, correction_of
from minigrad.ops.subscript import saved_index
from minigrad._tensor import Tensor, check_tensor
from minigrad.ops.registry import tensor_method
from minigrad import return_types


def _kept(grad: Tensor, dims: tuple, keepdim: bool) -> Tensor:
    """``grad`` of a reduction over ``dims`` with the reduced dims back as 1s, to broadcast."""
    if keepdim or not dims:
        return grad
    shape = list(grad.shape)
    for d in sorted(dims):
        shape.insert(d, 1)
    return grad.reshape(*shape)


def _reduced_dims(a: Tensor, dim) -> tuple:
    """amax's ``dim``: () or [] means every dim, as None does elsewhere."""
    return normalize_dims(None if dim is None or (isinstance(dim, (tuple, list)) and not dim) else dim, a.ndim)


# -- amax, amin -------------------------------------------------------------------------------------
class Amax(Function):
    node_name = "AmaxBackward0"
    name, reduce = "amax", staticmethod(np.amax)

    @classmethod
    def forward(cls, ctx, a, dim=(), keepdim=False):
        dims = _reduced_dims(a, dim)
        if a.numel() == 0 and _reduced_dims(a, None) == dims and (dim is None or not isinstance(dim, int)):
            raise RuntimeError(f"{cls.name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        for d in dims:
            if a.shape[d] == 0:
                raise IndexError(f"{cls.name}(): Expected reduction dim {d} to have non-zero size.")
        out = np.asarray(cls.reduce(a._data, axis=dims, keepdims=True))
        ctx.dims, ctx.keepdim = dims, keepdim
        result = Tensor._wrap(np.asarray(out if keepdim else out.reshape(
            [n for i, n in enumerate(a.shape) if i not in dims]), order="C"))
        # The input and the result, as PyTorch saves them: the winners are found in backward, so an
        # in-place change to the input in between is caught instead of using a stale mask.
        ctx.save_for_backward(a, result)
        return result

    @staticmethod
    def backward(ctx, grad):
        a, result = ctx.saved_tensors
        mask = a._data == _kept(result, ctx.dims, ctx.keepdim)._data  # (not the NaN: PyTorch's mask misses it too)
        count = Tensor._wrap(mask.sum(axis=ctx.dims, keepdims=True).astype(grad._data.dtype))
        return _kept(grad, ctx.dims, ctx.keepdim) / count * Tensor._wrap(mask.astype(grad._data.dtype)), None, None


class Amin(Amax):
    node_name = "AminBackward0"
    name, reduce = "amin", staticmethod(np.amin)


@tensor_method(top_level=True)
def amax(self, dim=(), keepdim: bool = False) -> Tensor:
    """The largest value over ``dim`` (every dim by default); a tie shares the gradient."""
    return Amax.apply(self, dim, flag(keepdim, "keepdim"))


@tensor_method(top_level=True)
def amin(self, dim=(), keepdim: bool = False) -> Tensor:
    return Amin.apply(self, dim, flag(keepdim, "keepdim"))


# -- cumprod --------------------------------------------------------------------------------------------
class Cumprod(Function):
    node_name = "CumprodBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = wrap_dim(dim, a.ndim)
        x = a._data
        out = x.copy() if a.ndim == 0 else np.cumprod(x, axis=ctx.dim)
        out = Tensor._wrap(np.asarray(out.astype(np.int64) if out.dtype.kind in "biu" else out, order="C"))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if a.ndim == 0:
            return grad, None
        d = ctx.dim
        if not (a._data == 0).any():
            return (grad * out).flip(d).cumsum(d).flip(d) / a, None
        # Move dim last; row k of x_without[..., k, :] is x with xₖ replaced by 1.
        x, g = a.transpose(d, -1), grad.transpose(d, -1)
        n = x.shape[-1]
        eye = Tensor._wrap(np.eye(n, dtype=x._data.dtype))
        x_without = x.unsqueeze(-2) * (1 - eye) + eye
        later = Tensor._wrap(np.triu(np.ones((n, n), dtype=x._data.dtype)))  # j >= k
        grad_x = (x_without.cumprod(-1) * later * g.unsqueeze(-2)).sum(-1)
        return grad_x.transpose(d, -1), None


@tensor_method(top_level=True)
def cumprod(self, dim: int, *, dtype=None) -> Tensor:
    """The running product along ``dim``; ``dtype`` converts the input first."""
    return Cumprod.apply(self if dtype is None else self.to(dtype=dtype), dim)


@tensor_method()
def cumprod_(self, dim: int, *, dtype=None) -> Tensor:
    check_inplace_dtype(self, dtype, "cumprod")
    return self._inplace(Cumprod, dim)


# -- cummax, cummin -----------------------------------------------------------------------------------
class Cummax(Function):
    node_name = "CummaxBackward0"

    @classmethod
    def forward(cls, ctx, a, dim):
        d = wrap_dim(dim, a.ndim)
        ctx.dim, ctx.input_shape = d, a.shape
        x = a._data if a.ndim else a._data.reshape(1)
        values, indices = np.empty_like(x), np.empty(x.shape, dtype=np.int64)
        floating = x.dtype.kind == "f"
        for i in range(x.shape[d]):
            here = (slice(None),) * d + (i,)
            xi = x[here]
            if i == 0:
                take = np.ones(xi.shape, dtype=bool)
            else:  # ties go to the later index; a NaN wins and stays, as in PyTorch
                take = cls.better(xi, values[(slice(None),) * d + (i - 1,)])
                if floating:
                    take |= np.isnan(xi)
            previous = (slice(None),) * d + (max(i - 1, 0),)
            values[here] = np.where(take, xi, values[previous])
            indices[here] = np.where(take, i, indices[previous])
        values, indices = values.reshape(a.shape), Tensor._wrap(indices.reshape(a.shape))
        ctx.mark_non_differentiable(indices)
        ctx.save_for_backward(indices)
        return Tensor._wrap(values), indices

    @staticmethod
    def better(x, best):
        return x >= best

    @staticmethod
    def backward(ctx, grad, _grad_indices):
        indices, = ctx.saved_tensors
        saved_index(indices)
        if grad.ndim == 0:
            return grad.clone(), None
        zeros = Tensor._wrap(np.zeros(ctx.input_shape, dtype=grad._data.dtype))
        return zeros.scatter_add(ctx.dim, indices, grad), None


class Cummin(Cummax):
    node_name = "CumminBackward0"

    @staticmethod
    def better(x, best):
        return x <= best


@tensor_method(top_level=True, out=False)
def cummax(self, dim: int):
    """The running maximum along ``dim`` and the index each value came from."""
    return return_types.cummax(*Cummax.apply(self, dim))


@tensor_method(top_level=True, out=False)
def cummin(self, dim: int):
    return return_types.cummin(*Cummin.apply(self, dim))


# -- count_nonzero -----------------------------------------------------------------------------------------
@tensor_method(top_level=True, out=False)
def count_nonzero(self, dim=None) -> Tensor:
    """How many elements are not zero, over ``dim`` (an int or a tuple; every dim by default): int64."""
    dims = normalize_dims(dim, self.ndim)
    return Tensor._wrap(np.asarray(np.count_nonzero(self._data, axis=dims), dtype=np.int64))


# -- std_mean, var_mean --------------------------------------------------------------------------------------
def _welford_mean(x: np.ndarray, dims: tuple) -> np.ndarray:
    """The mean over ``dims`` (kept) as PyTorch's var_mean and std_mean find it, one value at a time
    (``mean += (x - mean) / n``), for a mean with an infinity in it: an infinity not last among the
    values meets one of them and gives NaN (``var_mean([inf, 1.0])``'s mean is NaN, its ``mean()`` inf)."""
    kept = [d for d in range(x.ndim) if d not in dims]
    rows = np.moveaxis(x, kept + list(dims), range(x.ndim)).reshape([x.shape[d] for d in kept] + [-1])
    mean = rows[..., 0].copy()
    for n in range(1, rows.shape[-1]):
        mean += (rows[..., n] - mean) / (n + 1)
    return mean.reshape([1 if d in dims else x.shape[d] for d in range(x.ndim)])


class VarMean(Function):
    """The variance (or, with ``root``, the standard deviation) and the mean, in one pass and one node."""

    node_name = "VarMeanBackward0"
    name, root = "var_mean", False

    @classmethod
    def forward(cls, ctx, a, dim, correction, keepdim):
        if a._data.dtype.kind != "f":
            raise RuntimeError(f"std and var only support floating point and complex dtypes (got {a.dtype}): "
                               "call .float() first")
        dims = normalize_dims(dim, a.ndim)
        ctx.dims, ctx.keepdim = dims, keepdim
        x = a._data
        count = math.prod([a.shape[d] for d in dims])
        ctx.dof = dof = max(count - correction, 0)
        if dof == 0:
            warnings.warn(f"{cls.name}(): degrees of freedom is <= 0. Correction should be strictly less than the "
                          f"reduction factor (input numel divided by output numel): {count} values, "
                          f"correction={correction}.", UserWarning, stacklevel=5)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = x.sum(axis=dims, keepdims=True) / count
            spread = ((x - mean) ** 2).sum(axis=dims, keepdims=True) / dof
            if cls.root:
                spread = np.sqrt(spread)
            if count > 1 and np.isinf(mean).any():
                mean = _welford_mean(x, dims)
        ctx.count, ctx.root, ctx.whole = count, cls.root, dim is None or a.ndim == 0
        shape = [n for i, n in enumerate(a.shape) if i not in dims]
        spread, mean = (Tensor._wrap(np.asarray(v if keepdim else v.reshape(shape), dtype=x.dtype, order="C"))
                        for v in (spread, mean))
        ctx.set_materialize_grads(False)
        if cls.root:  # (as PyTorch: std_mean saves its std, var_mean only its input)
            ctx.save_for_backward(a, spread)
        else:
            ctx.save_for_backward(a)
        return spread, mean

    @staticmethod
    def backward(ctx, grad_spread, grad_mean):
        # PyTorch's var_mean_backward: each part only for an output that got a gradient (None otherwise:
        # at dof 0 the spread's part is nan even for a zero gradient), in its order of operations
        a, *spread = ctx.saved_tensors
        grad = None
        if grad_spread is not None and ctx.whole and not ctx.dof and not ctx.root:
            # PyTorch's var_backward: the incoming gradient times NaN where x is the mean and inf elsewhere,
            # recorded only through the gradient (as Var.backward; std_mean's stays recorded in PyTorch)
            grad = grad_spread * _infinite_scale(a._data)
        elif grad_spread is not None:
            grad_spread = _kept(grad_spread, ctx.dims, ctx.keepdim)
            if ctx.root:  # d std = d var / (2 std), and 0 where std = 0, as PyTorch
                spread = _kept(spread[0], ctx.dims, ctx.keepdim)
                grad_spread = Where.apply(spread._data == 0, 0.0, grad_spread / (spread * 2))
            scale = 2.0 / ctx.dof if ctx.dof else math.inf
            grad = scale * grad_spread * (a - a.mean(ctx.dims, keepdim=True))
        if grad_mean is not None:
            part = _kept(grad_mean, ctx.dims, ctx.keepdim).expand(*a.shape) / ctx.count
            grad = part if grad is None else grad + part
        return grad, None, None, None


class StdMean(VarMean):
    node_name = "StdMeanBackward0"
    name, root = "std_mean", True


def var_mean(input: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(input.var(dim), input.mean(dim))``, computed together."""
    check_tensor("var_mean", "input", 1, input)
    dim, correction = correction_of("var_mean", dim, unbiased, keepdim, correction)
    return VarMean.apply(input, dim, correction, bool(keepdim))


def std_mean(input: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> tuple:
    """``(input.std(dim), input.mean(dim))``, computed together."""
    check_tensor("std_mean", "input", 1, input)
    dim, correction = correction_of("std_mean", dim, unbiased, keepdim, correction)
    return StdMean.apply(input, dim, correction, bool(keepdim))


# -- nansum, nanmean -------------------------------------------------------------------------------------------
class Nansum(Function):
    node_name = "NansumBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, keepdim=False):
        dims = normalize_dims(dim, a.ndim)
        ctx.dims, ctx.keepdim = dims, keepdim
        x = a._data
        out = np.nansum(x, axis=dims, keepdims=keepdim) if x.dtype.kind == "f" else x.sum(axis=dims, keepdims=keepdim)
        ctx.save_for_backward(a)  # (PyTorch saves the input: its NaNs are found in backward)
        return Tensor._wrap(np.asarray(out, dtype=np.int64 if x.dtype.kind in "biu" else x.dtype, order="C"))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        kept = Tensor._wrap((~np.isnan(a._data)).astype(grad._data.dtype))
        return _kept(grad, ctx.dims, ctx.keepdim) * kept, None, None


@tensor_method(top_level=True)
def nansum(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The sum, NaN counted as 0."""
    return Nansum.apply(self if dtype is None else self.to(dtype=dtype), dim, flag(keepdim, "keepdim"))


@tensor_method(top_level=True)
def nanmean(self, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """The mean of the values that are not NaN: nansum over their count."""
    if self._data.dtype.kind != "f":
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype but got {self.dtype}: "
                           "call .float() first")
    counted = Tensor._wrap(~np.isnan(self._data)).sum(dim, keepdim)
    return self.nansum(dim, keepdim, dtype=dtype) / counted
