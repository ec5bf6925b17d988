"""The ``*_ex`` forms (an error code instead of an exception: inv_ex, cholesky_ex, solve_ex), and
small compositions: diagonal, vander, cond, tensorinv, tensorsolve.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import return_types
from minigrad.functional_ops import cat
from minigrad.ops.broadcast import flag, integer, wrap_dim
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.linalg._common import LinAlgError, _eye_like, _matrices
from minigrad.linalg.inverses import Inv, inv, solve
from minigrad.linalg.factorizations import Cholesky, svdvals
from minigrad.linalg.norms import matrix_norm


def _zero_pivot(a: np.ndarray) -> int:
    """LAPACK getrf's info for one matrix: the 1-based column of the first zero pivot of its LU
    factorisation with partial pivoting, 0 if there is none."""
    a = a.astype(np.float64)
    for j in range(a.shape[0]):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if a[p, j] == 0:
            return j + 1
        a[[j, p]] = a[[p, j]]
        a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return 0


def _not_positive_definite(a: np.ndarray) -> int:
    """LAPACK potrf's info for one matrix: the order of the first leading minor that is not positive-definite."""
    for k in range(1, a.shape[0] + 1):
        try:
            np.linalg.cholesky(a[:k, :k])
        except np.linalg.LinAlgError:
            return k
    return 0


def _infos(A: Tensor, failed) -> np.ndarray:
    batch = A.shape[:-2]
    matrices = A._data.reshape(-1, *A.shape[-2:])
    return np.array([failed(m) for m in matrices], dtype=np.int32).reshape(batch)


def _ex(name: str, A: Tensor, failed, compute, check_errors: bool) -> tuple:
    """``(compute(), info)``, info 0 where the factorisation worked; where it failed, a LinAlgError if
    ``check_errors``, else NaNs (PyTorch leaves whatever LAPACK computed there)."""
    infos = _infos(A, failed)
    if not infos.any():
        return compute(), Tensor._wrap(infos)
    if check_errors:
        raise LinAlgError(f"linalg.{name}: the factorisation failed (info={infos.max()}): the input is singular "
                          "or not positive-definite")
    return None, Tensor._wrap(infos)


def inv_ex(A: Tensor, *, check_errors: bool = False) -> return_types.linalg_inv_ex:
    """``(inverse, info)``: info is LAPACK's (the first zero pivot, 0 if A is invertible), instead of an error."""
    A = _matrices("inv_ex", A)
    inverse, info = _ex("inv_ex", A, _zero_pivot, lambda: Inv.apply(A), check_errors)
    if inverse is None:
        inverse = Tensor._wrap(np.full(A.shape, np.nan, dtype=A._data.dtype))
    return return_types.linalg_inv_ex(inverse, info)


def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False) -> return_types.linalg_cholesky_ex:
    """``(L, info)``: info is the order of the first leading minor that is not positive-definite (0: none)."""
    A = _matrices("cholesky_ex", A)
    L, info = _ex("cholesky_ex", A, _not_positive_definite, lambda: Cholesky.apply(A, flag(upper, "upper")),
                  check_errors)
    if L is None:
        L = Tensor._wrap(np.full(A.shape, np.nan, dtype=A._data.dtype))
    return return_types.linalg_cholesky_ex(L, info)


def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False) -> return_types.linalg_solve_ex:
    """``(result, info)``: ``solve`` with LAPACK's info (the first zero pivot of A) instead of an error."""
    A = _matrices("solve_ex", A)
    result, info = _ex("solve_ex", A, _zero_pivot, lambda: solve(A, B, left=left), check_errors)
    if result is None:
        result = solve(_eye_like(A), B, left=left) * math.nan
    return return_types.linalg_solve_ex(result, info)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """The diagonal of each matrix (``offset`` above it if positive): ``A.diagonal(offset, dim1, dim2)``."""
    return _tensor_argument("diagonal", "A", 0, A).diagonal(offset, dim1, dim2)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """The Vandermonde matrices of the vectors in ``x``'s last dim: columns x⁰, x¹, …, x^(N-1)
    (increasing, unlike ``minigrad.vander``), as PyTorch's: ones beside the cumprod of [x, x, …]."""
    x = _tensor_argument("vander", "x", 0, x)
    if x.ndim == 0:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else integer(N, "N")
    if n <= 1:
        raise RuntimeError(f"N must be greater than 1, got {n}")
    column = x.unsqueeze(-1)
    if column._data.dtype.kind == "b":
        column = column.long()
    powers = column.expand(*x.shape, n - 1).cumprod(-1)
    return cat([powers.new_ones(*x.shape, 1), powers], -1)


def cond(A: Tensor, p=None) -> Tensor:
    """The condition number ‖A‖ ‖A⁻¹‖ in the norm ``p`` (None or 2: σ_max / σ_min; -2: its inverse)."""
    A = _matrices("cond", A, square=p not in (None, 2, -2))
    if p in (None, 2, -2):
        S = svdvals(A)
        ratio = S[..., 0] / S[..., -1]
        return ratio if p != -2 else 1 / ratio
    return matrix_norm(A, p) * matrix_norm(inv(A), p)


def tensorinv(A: Tensor, ind: int = 2) -> Tensor:
    """The inverse of ``A`` read as a matrix of shape (prod(shape[:ind]), prod(shape[ind:])), reshaped to
    shape[ind:] + shape[:ind]: ``tensordot(tensorinv(A), A, ind)`` is the identity."""
    A = _tensor_argument("tensorinv", "A", 0, A)
    ind = integer(ind, "ind")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {math.prod(cols)} != {math.prod(rows)}")
    return inv(A.reshape(math.prod(rows), math.prod(cols))).reshape(*cols, *rows)


def tensorsolve(A: Tensor, B: Tensor, dims=None) -> Tensor:
    """X with ``tensordot(A, X, X.ndim) = B``: A read as a matrix of shape (B.numel(), X.numel()),
    after moving ``dims`` of A to the end."""
    A, B = _tensor_argument("tensorsolve", "A", 0, A), _tensor_argument("tensorsolve", "B", 1, B)
    if dims is not None:
        dims = [wrap_dim(d, A.ndim) for d in dims]
        A = A.permute([d for d in range(A.ndim) if d not in dims] + dims)
    result_shape = A.shape[B.ndim:]
    if math.prod(result_shape) != B.numel():
        raise RuntimeError(f"Expected self to satisfy the requirement prod(result_shape) == other.numel(), but got "
                           f"{math.prod(result_shape)} != {B.numel()}")
    return solve(A.reshape(B.numel(), math.prod(result_shape)), B.reshape(-1)).reshape(result_shape)
