"""Reductions with a formula: logsumexp, vector norms, variance and standard deviation.

    logsumexp(x) = m + log Σ exp(x - m)      (m = max x: same value, no overflow)
        d/dx = exp(x - logsumexp(x))          (the softmax of x)
    ‖x‖₂ = √Σx²                d/dx = x / ‖x‖₂            (0 where ‖x‖₂ = 0, as in PyTorch)
    ‖x‖₁ = Σ|x|                d/dx = sign(x)
    ‖x‖∞ = max|x|              d/dx = sign(x) at the largest |x| (shared by ties), 0 elsewhere
    ‖x‖ₚ = (Σ|x|ᵖ)^(1/p)       d/dx = x |x|ᵖ⁻² / ‖x‖ₚᵖ⁻¹
    var(x) = Σ(x - x̄)² / (N - correction)    d/dx = 2 (x - x̄) / (N - correction)
    std(x) = √var(x)                          d/dx = (x - x̄) / ((N - correction) std(x)), 0 where std = 0

Every backward is written with tensor operations on the saved input and output,
so ``create_graph=True`` can differentiate it again. ``correction=1`` (the
default, Bessel's correction) is the sample variance; ``correction=0`` the
population variance (``unbiased=False`` is the older spelling).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import flag, normalize_dims, number, wrap_dim
from minigrad._tensor import Tensor
from minigrad.ops.registry import tensor_method


def _float(a: Tensor) -> np.ndarray:
    x = a._data
    return x if x.dtype.kind == "f" else x.astype(dtypes.default_float.numpy)


def _keep_dims(ctx, grad: Tensor) -> Tensor:
    """The gradient of a reduced tensor with the reduced dims back as 1s, to broadcast over the input."""
    if ctx.keepdim or grad.ndim == 0:
        return grad
    return grad.reshape(tuple(1 if i in ctx.dims else n for i, n in enumerate(ctx.input_shape)))


def _setup(ctx, a: Tensor, dim, keepdim: bool) -> None:
    ctx.dims, ctx.keepdim, ctx.input_shape = normalize_dims(dim, a.ndim), flag(keepdim, "keepdim"), a.shape


class Logsumexp(Function):
    node_name = "LogsumexpBackward0"

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        _setup(ctx, a, dim, keepdim)
        x = _float(a)
        if x.size == 0:
            with np.errstate(divide="ignore"):  # log 0 = -inf: the sum of no terms
                out = np.log(np.zeros_like(x).sum(axis=ctx.dims, keepdims=keepdim))
        else:
            m = np.array(x.max(axis=ctx.dims, keepdims=True))  # an array even for a 0-d input
            m[~np.isfinite(m)] = 0  # rows of -inf (or with inf) need no shift, and inf - inf is NaN
            with np.errstate(divide="ignore"):
                out = np.log(np.exp(x - m).sum(axis=ctx.dims, keepdims=True)) + m
            if not keepdim:
                out = out.squeeze(axis=ctx.dims)
        out = Tensor._wrap(np.asarray(out, dtype=x.dtype, order="C"))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        return _keep_dims(ctx, grad) * (a - _keep_dims(ctx, out)).exp(), None, None


@tensor_method(top_level=True)
def logsumexp(a: Tensor, dim: int | tuple, keepdim: bool = False) -> Tensor:
    """log(sum(exp(a))) over ``dim``, computed without overflow (the max is taken out first)."""
    if dim is None:  # (PyTorch's dim has no default: every dim is spelled out)
        raise TypeError("logsumexp(): argument 'dim' must be tuple of ints, not NoneType: pass the dims to "
                        "reduce, tuple(range(x.ndim)) for every element")
    return Logsumexp.apply(a, dim, keepdim)


class Norm(Function):
    """The vector p-norm over ``dim`` (all elements by default)."""

    node_name = "LinalgVectorNormBackward0"

    @staticmethod
    def forward(ctx, a, p=2, dim=None, keepdim=False):
        if a._data.dtype.kind != "f":
            raise RuntimeError(
                f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {a.dtype}: call .float() first"
            )
        _setup(ctx, a, dim, keepdim)
        ctx.p = p = float(p)
        x, axes = np.abs(a._data), ctx.dims
        if math.isinf(p) and x.size == 0 and (axes == () or any(a.shape[d] == 0 for d in axes)):
            raise RuntimeError(
                "linalg.vector_norm cannot compute the inf norm on an empty tensor because the operation "
                "does not have an identity"
            )
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if p == 2:
                out = np.sqrt((x * x).sum(axis=axes, keepdims=keepdim))
            elif p == 1:
                out = x.sum(axis=axes, keepdims=keepdim)
            elif p == math.inf:
                out = x.max(axis=axes, keepdims=keepdim)
            elif p == -math.inf:
                out = x.min(axis=axes, keepdims=keepdim)
            elif p == 0:
                out = (x != 0).sum(axis=axes, keepdims=keepdim).astype(x.dtype)
            else:
                out = (x ** p).sum(axis=axes, keepdims=keepdim) ** (1 / p)
        out = Tensor._wrap(np.asarray(out, dtype=x.dtype, order="C"))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        grad, norm, p = _keep_dims(ctx, grad), _keep_dims(ctx, out), ctx.p
        if p == 0:
            return Tensor._wrap(np.zeros_like(a._data)), None, None, None
        if p == 1:
            return grad * a.sign(), None, None, None
        if math.isinf(p):
            at_extreme = Tensor._wrap((np.abs(a._data) == norm._data).astype(a._data.dtype))
            share = at_extreme / at_extreme.sum(ctx.dims, keepdim=True)
            return grad * a.sign() * share, None, None, None
        # PyTorch's norm_backward, term for term, so that non-finite gradients at a zero norm
        # come out as in PyTorch (grad times a masked 0 is NaN for an infinite grad)
        zero = Tensor._wrap(norm._data == 0)
        if p == 2:
            return grad * (a / norm).masked_fill(zero, 0), None, None, None
        if p < 1:
            scaled = a.sign() * (a.abs() ** (p - 1)).masked_fill(Tensor._wrap(a._data == 0), 0)
            return scaled * grad * norm ** (1 - p), None, None, None
        scaled = a.sign() * a.abs() ** (p - 1) if p < 2 else a * a.abs() ** (p - 2)
        return scaled * (grad / norm ** (p - 1)).masked_fill(zero, 0), None, None, None


@tensor_method(top_level=True)
def norm(a: Tensor, p="fro", dim=None, keepdim: bool = False) -> Tensor:
    """``torch.norm``: a vector norm (p = 1, 2, inf, -inf, 0 or any number); 'fro' is the 2-norm."""
    if p is None or (isinstance(p, str) and p == "fro"):  # (None: PyTorch's default for the 2-norm too)
        if dim is not None and len(normalize_dims(dim, a.ndim)) > 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
        p = 2
    elif isinstance(p, str):
        raise RuntimeError(f"norm: p={p!r} is not supported; minigrad has vector norms (p a number) and 'fro'")
    return Norm.apply(a, number(p, "p"), dim, keepdim)


def _degrees_of_freedom(ctx, a: Tensor, correction, op: str) -> float:
    """N - correction, at least 0: dividing by 0 then gives inf or NaN, as in PyTorch (with its warning)."""
    ctx.count = count = math.prod([a.shape[d] for d in ctx.dims])
    dof = count - correction
    if dof <= 0:
        warnings.warn(
            f"{op}(): degrees of freedom is <= 0. Correction should be strictly less than the reduction "
            f"factor (input numel divided by output numel): {count} values, correction={correction}.",
            UserWarning,
            stacklevel=6,  # user code -> Tensor.var -> var -> apply -> forward -> here
        )
    return max(dof, 0)


def _infinite_scale(data: np.ndarray) -> Tensor:
    """What var's backward multiplies the gradient by when it divides by 0 degrees of freedom: 2 / 0
    times (x - mean), NaN where x is the mean and inf elsewhere (PyTorch's ``where(x == mean, nan, inf)``)."""
    return Tensor._wrap(np.where(data == (data.mean() if data.size else 0), np.nan, np.inf).astype(data.dtype))


class Var(Function):
    node_name = "VarBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, correction=1, keepdim=False):
        _check_float(a)
        _setup(ctx, a, dim, keepdim)
        ctx.dof = _degrees_of_freedom(ctx, a, correction, "var")
        ctx.whole = dim is None or a.ndim == 0
        ctx.save_for_backward(a)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = _squared_deviations(a, ctx) / ctx.dof
        return Tensor._wrap(np.asarray(out, dtype=a._data.dtype, order="C"))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        if ctx.whole and ctx.dof <= 0:
            # PyTorch's var_backward: 2 / 0 times (x - mean) is the incoming gradient times a constant,
            # NaN where x is the mean and inf elsewhere: recorded only through the gradient (create_graph)
            return grad * _infinite_scale(a._data), None, None, None
        centred = a - a.sum(ctx.dims, keepdim=True) / ctx.count  # not mean(): no warning when empty
        return _keep_dims(ctx, grad) * centred * 2 / ctx.dof, None, None, None


@tensor_method(top_level=True)
def var(a: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> Tensor:
    dim, correction = correction_of("var", dim, unbiased, keepdim, correction)
    return Var.apply(a, dim, correction, keepdim)


class Std(Function):
    node_name = "StdBackward0"

    @staticmethod
    def forward(ctx, a, dim=None, correction=1, keepdim=False):
        _check_float(a)
        _setup(ctx, a, dim, keepdim)
        ctx.dof = _degrees_of_freedom(ctx, a, correction, "std")
        with np.errstate(invalid="ignore", divide="ignore"):
            out = Tensor._wrap(np.asarray(np.sqrt(_squared_deviations(a, ctx) / ctx.dof), dtype=a._data.dtype, order="C"))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        out = _keep_dims(ctx, out)
        centred = a - a.sum(ctx.dims, keepdim=True) / ctx.count  # not mean(): no warning when empty
        scale = (_keep_dims(ctx, grad) / out).masked_fill(Tensor._wrap(out._data == 0), 0)  # 0 at std = 0, as PyTorch
        return centred * scale / ctx.dof, None, None, None


@tensor_method(top_level=True)
def std(a: Tensor, dim=None, unbiased: bool | None = None, keepdim: bool = False, *, correction=None) -> Tensor:
    dim, correction = correction_of("std", dim, unbiased, keepdim, correction)
    return Std.apply(a, dim, correction, keepdim)


def _check_float(a: Tensor) -> None:
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"std and var only support floating point and complex dtypes (got {a.dtype}): call .float() first")


def _squared_deviations(a: Tensor, ctx) -> np.ndarray:
    x = a._data
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = x.mean(axis=ctx.dims, keepdims=True) if x.size else np.zeros_like(x.sum(axis=ctx.dims, keepdims=True))
        d = x - mean
        out = (d * d).sum(axis=ctx.dims, keepdims=ctx.keepdim)
    return out


def correction_of(name: str, dim, unbiased, keepdim, correction) -> tuple:
    """``(dim, correction)`` from PyTorch's three spellings of var, std, var_mean and std_mean:
    ``(dim, unbiased=True, keepdim=False)``, ``(dim=None, *, correction=1, keepdim=False)``, and a
    bool alone, the old positional ``unbiased`` (``x.var(False)``), which takes no other argument."""
    if isinstance(dim, bool):
        if unbiased is not None or correction is not None or keepdim is not False:
            raise TypeError(f"{name}(): a bool as the first argument is unbiased ({name}({dim})), which takes no "
                            f"other argument: pass the dim first, None for every element, as in "
                            f"{name}(None, {dim}, keepdim=True)")
        dim, unbiased = None, dim
    if unbiased is None:
        return dim, 1 if correction is None else correction
    if correction is not None:
        raise TypeError(f"{name}() takes either unbiased= or correction=, not both")
    return dim, int(flag(unbiased, "unbiased"))


class Logcumsumexp(Function):
    """log Σⱼ≤ᵢ exp(xⱼ) along ``dim``. PyTorch's backward splits the incoming gradient by sign so that
    each part is summed in log space too: gx = exp(rev_lcse(log g⁺ - out) + x) - exp(rev_lcse(log g⁻ - out) + x),
    rev_lcse being logcumsumexp from the end."""

    node_name = "LogcumsumexpBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        x = a._data
        out = x.copy() if x.ndim == 0 else np.logaddexp.accumulate(x, axis=dim)
        out = Tensor._wrap(np.asarray(out, order="C"))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if a.ndim == 0:
            return grad, None
        d = ctx.dim
        lowest = np.finfo(a._data.dtype).min
        log_abs = grad.abs().log()
        positive = log_abs.masked_fill(Tensor._wrap(~(grad._data > 0)), lowest)
        negative = log_abs.masked_fill(Tensor._wrap(~(grad._data < 0)), lowest)

        def reversed_scan(t: Tensor) -> Tensor:
            return Logcumsumexp.apply(t.flip(d), d).flip(d)

        return (reversed_scan(positive - out) + a).exp() - (reversed_scan(negative - out) + a).exp(), None


@tensor_method(top_level=True)
def logcumsumexp(a: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(a))) along ``dim``, without overflow (each step is a logaddexp)."""
    if a._data.dtype.kind != "f":
        raise NotImplementedError(f"logcumsumexp is not implemented for '{dtypes.scalar_type_name(a._data.dtype)}': "
                                  "convert the tensor with .float()")
    return Logcumsumexp.apply(a, wrap_dim(dim, a.ndim))


@tensor_method(top_level=True)
def renorm(a: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled down to norm ``maxnorm``
    (times 1/(norm + 1e-7), as PyTorch); the others unchanged."""
    return a * _renorm_factor(a, p, dim, maxnorm)


@tensor_method()
def renorm_(a: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """``renorm`` in place: the factor comes from a clone, whose values the write leaves as they were
    for backward (a MulBackward0 node, where PyTorch has one RenormBackward0: the same gradient)."""
    return a.mul_(_renorm_factor(a.clone(), p, dim, maxnorm))


def _renorm_factor(a: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    """renorm's scale of each slice along ``dim``: maxnorm / (norm + 1e-7) where norm > maxnorm, else 1."""
    p, maxnorm = number(p, "p"), number(maxnorm, "maxnorm")
    if p <= 0:
        raise RuntimeError(f"renorm: non-positive-norm not supported, got p={p}")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if a.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {a.ndim} dimensions")
    d = wrap_dim(dim, a.ndim)
    if a._data.dtype.kind != "f":
        raise RuntimeError(f"renorm is not implemented for {a.dtype}: convert the tensor with .float()")
    norms = Norm.apply(a, p, tuple(i for i in range(a.ndim) if i != d), True)
    return (maxnorm / (norms + 1e-7)).masked_fill(Tensor._wrap(~(norms._data > maxnorm)), 1.0)
