"""Numerical-analysis helpers: the trapezoidal rule (trapezoid, trapz, cumulative_trapezoid) and
the Vandermonde matrix (vander), composed from sums, differences and cumulative products as
PyTorch composes them, so their gradients need nothing new.

    ∫ y dx ≈ Σᵢ (xᵢ₊₁ - xᵢ)(yᵢ + yᵢ₊₁) / 2       (with spacing dx: dx (Σ y - (y₀ + yₙ) / 2))
"""
from __future__ import annotations

from minigrad.functional_ops import cat
from minigrad.ops.broadcast import integer, wrap_dim
from minigrad._tensor import Tensor, _tensor_argument


def _spacings(name: str, y: Tensor, x, dx, dim: int):
    """The widths x[i+1] - x[i] along ``dim`` (a tensor, broadcast against y's pairs), or the number dx."""
    if x is not None and dx is not None:
        raise TypeError(f"{name}(): pass either x or dx, not both")
    if x is None:
        return 1 if dx is None else dx
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'x' must be Tensor, not {type(x).__name__}: pass a spacing as dx=")
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point, got {x.shape[0]} x "
                               f"values for {y.shape[dim]} samples along dim {dim}")
        shape = [1] * y.ndim
        shape[dim] = x.shape[0] - 1
        return x.diff().reshape(shape) if x.shape[0] > 1 else x[:0].reshape(shape)
    n = x.shape[dim if x.ndim == y.ndim else -1]
    return x.narrow(dim, 1, n - 1) - x.narrow(dim, 0, n - 1)


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The integral of ``y`` along ``dim`` by the trapezoidal rule, at points ``x`` or spaced ``dx`` (1)."""
    y = _tensor_argument("trapezoid", "y", 0, y)
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    spacing = _spacings("trapezoid", y, x, dx, d)
    if n == 0:
        return y.sum(d) * 0
    if not isinstance(spacing, Tensor):
        return (y.sum(d) - (y.select(d, 0) + y.select(d, -1)) * 0.5) * spacing
    return (spacing * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1))).sum(d) / 2


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """``trapezoid`` under its older name."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1) -> Tensor:
    """The running integral of ``y`` along ``dim`` (one value fewer than y), by the trapezoidal rule."""
    y = _tensor_argument("cumulative_trapezoid", "y", 0, y)
    d = wrap_dim(dim, y.ndim)
    n = y.shape[d]
    spacing = _spacings("cumulative_trapezoid", y, x, dx, d)
    if n == 0:
        return y.narrow(d, 0, 0) * 1
    return (spacing * (y.narrow(d, 1, n - 1) + y.narrow(d, 0, n - 1)) / 2).cumsum(d)


def vander(x: Tensor, N: int | None = None, increasing: bool = False) -> Tensor:
    """The Vandermonde matrix of a vector: columns x⁰, x¹, …, x^(N-1) (reversed unless ``increasing``)."""
    x = _tensor_argument("vander", "x", 0, x)
    if x.ndim != 1:
        raise RuntimeError(f"x must be a one-dimensional tensor, got {x.ndim} dimensions")
    n = x.shape[0] if N is None else integer(N, "N")
    if n < 0:
        raise RuntimeError(f"N must be non-negative, got {n}")
    if x._data.dtype.kind in "biu":
        x = x.long()
    columns = [x.new_ones(x.shape[0], min(n, 1))]
    if n > 1:
        columns.append(x.unsqueeze(1).expand(x.shape[0], n - 1).cumprod(1))
    out = cat(columns, 1)
    return out if increasing else out.flip(1)
