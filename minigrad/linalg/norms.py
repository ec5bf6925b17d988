"""Norms and rank: vector_norm, matrix_norm, norm, matrix_rank.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.ops.broadcast import number, wrap_dim
from minigrad.ops.stats import Norm
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.linalg._common import _matrices
from minigrad.linalg.inverses import _cutoff
from minigrad.linalg.factorizations import svdvals


def vector_norm(x: Tensor, ord: float = 2, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """(Σ|x|ᵒʳᵈ)^(1/ord) over ``dim`` (every element by default); ord may be inf, -inf or 0."""
    x = _tensor_argument("vector_norm", "x", 0, x)
    if dtype is not None:
        x = x.to(dtype=dtype)
    return Norm.apply(x, number(ord, "ord"), dim, keepdim)


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None) -> Tensor:
    """A matrix norm over the two dims ``dim``: 'fro', 'nuc' (Σσ), 2 and -2 (largest and smallest σ),
    1 and -1 (largest and smallest column sum of |A|), inf and -inf (the same for rows)."""
    A = _tensor_argument("matrix_norm", "A", 0, A)
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    if dtype is not None:
        A = A.to(dtype=dtype)
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {dim}")
    d0, d1 = wrap_dim(dim[0], A.ndim), wrap_dim(dim[1], A.ndim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if isinstance(ord, str):
        if ord == "fro":
            return vector_norm(A, 2, (d0, d1), keepdim)
        if ord != "nuc":
            raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    elif ord not in (1, -1, 2, -2, math.inf, -math.inf):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if ord in ("nuc", 2, -2):  # over the singular values of A with the two dims moved last, as PyTorch
        permutation = [d for d in range(A.ndim) if d not in (d0, d1)] + [d0, d1]
        S = svdvals(A.permute(permutation))
        out = S.sum(-1) if ord == "nuc" else S.amax(-1) if ord == 2 else S.amin(-1)
        if keepdim:
            out = out.unsqueeze(-1).unsqueeze(-1).permute(np.argsort(permutation).tolist())
        return out
    if abs(ord) == math.inf:
        d0, d1 = d1, d0
    summed = A.abs().sum(d0, keepdim=keepdim)
    d1 -= not keepdim and d0 < d1
    return summed.amax(d1, keepdim=keepdim) if ord > 0 else summed.amin(d1, keepdim=keepdim)


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None) -> Tensor:
    """``vector_norm`` or ``matrix_norm``: a matrix norm for a 2-tuple ``dim`` (or a 2-D A with ``ord``
    but no dim), a vector norm otherwise (the 2-norm of every element without ord or dim)."""
    A = _tensor_argument("norm", "A", 0, A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim, dtype=dtype)
        if len(dims) != 1:
            raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. Got {list(dims)}")
    elif ord is not None:
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.ndim}D.")
        if A.ndim == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: ord must be a number for a vector norm, got {ord!r}")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def matrix_rank(A: Tensor, tol=None, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The number of singular values above max(atol, rtol · σ_max) (rtol = eps · max(m, n) by default;
    the older ``tol`` is atol)."""
    A = _matrices("matrix_rank", A, square=False)
    if tol is not None:
        atol = tol
    S = np.linalg.svd(A._data, compute_uv=False)
    return Tensor._wrap(np.asarray((S > _cutoff(S, atol, rtol, *A.shape[-2:])).sum(-1), dtype=np.int64))
