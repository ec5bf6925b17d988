"""Determinants, inverses and solves (det, slogdet, logdet, inv, solve, solve_triangular), the
pseudo-inverse and least squares (pinv, lstsq), each with its ``Function`` and PyTorch's derivative.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes, return_types
from minigrad.autograd.function import Function
from minigrad.functional_ops import where
from minigrad.ops.broadcast import NOT_GIVEN, number, sum_to
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.linalg._common import LinAlgError, _eye_like, _matrices, _wrap


class Det(Function):
    """det(A); gA = g det(A) A⁻ᵀ, or g times the cofactor matrix (from the SVD) where A is singular."""

    node_name = "LinalgDetBackward0"

    @staticmethod
    def forward(ctx, A):
        out = _wrap(np.linalg.det(A._data), A._data.dtype)
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        A, det = ctx.saved_tensors
        scale = (grad * det).unsqueeze(-1).unsqueeze(-1)
        if np.all(det._data != 0):
            return scale * inv(A).mT
        # the cofactors, det(U) det(Vh) U diag(∏_{j≠i} s_j) Vh, for any A (PyTorch's singular case)
        U, S, Vh = np.linalg.svd(A._data)
        others = np.stack([np.prod(np.delete(S, i, axis=-1), axis=-1) for i in range(S.shape[-1])], axis=-1)
        signs = np.linalg.det(U) * np.linalg.det(Vh)
        cofactors = signs[..., None, None] * (U * others[..., None, :]) @ Vh
        return scale * _wrap(cofactors, A._data.dtype)


@tensor_method("det", top_level=True, out=False)
def det(self: Tensor) -> Tensor:
    """The determinant of each square matrix in ``self``."""
    return Det.apply(_matrices("det", self))


class Slogdet(Function):
    """(sign, log|det A|); the sign is constant where defined (no gradient), gA = g A⁻ᵀ for the logarithm."""

    node_name = "LinalgSlogdetBackward0"

    @staticmethod
    def forward(ctx, A):
        sign, logabsdet = np.linalg.slogdet(A._data)
        ctx.save_for_backward(A)
        return _wrap(sign, A._data.dtype), _wrap(logabsdet, A._data.dtype)

    @staticmethod
    def backward(ctx, _grad_sign, grad):
        A, = ctx.saved_tensors
        return grad.unsqueeze(-1).unsqueeze(-1) * inv(A).mT


@tensor_method("slogdet", top_level=True, out=False)
def _slogdet(self: Tensor) -> return_types.slogdet:
    """``torch.slogdet``: ``(sign, logabsdet)``, the sign and log of the absolute value of the determinant."""
    return return_types.slogdet(*Slogdet.apply(_matrices("slogdet", self)))


def slogdet(A: Tensor) -> return_types.linalg_slogdet:
    """``(sign, logabsdet)``: det(A) = sign · exp(logabsdet), without det's overflow or underflow."""
    return return_types.linalg_slogdet(*Slogdet.apply(_matrices("slogdet", A)))


@tensor_method(top_level=True, out=False)
def logdet(self: Tensor) -> Tensor:
    """log det: NaN where the determinant is negative and -inf where it is 0, as PyTorch's (from slogdet)."""
    sign, logabsdet = Slogdet.apply(_matrices("logdet", self))
    return where(sign == -1, math.nan, logabsdet)


class Inv(Function):
    """A⁻¹; gA = -A⁻ᵀ g A⁻ᵀ."""

    node_name = "LinalgInvExBackward0"

    @staticmethod
    def forward(ctx, A):
        try:
            out = _wrap(np.linalg.inv(A._data), A._data.dtype)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.inv: the input matrix is singular (a zero pivot in its LU factorisation), "
                              "so it has no inverse: check its rank, or use linalg.pinv") from None
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return -(out.mT @ grad @ out.mT)


def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix in ``A``; ``LinAlgError`` if one is singular."""
    return Inv.apply(_matrices("inv", A))


@tensor_method(top_level=True)
def inverse(self: Tensor) -> Tensor:
    """``torch.inverse``: ``linalg.inv``."""
    return inv(self)


def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """PyTorch's rule: B is a vector (or a batch of them) if 1-D, or if its shape is A's without the last dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])


class Solve(Function):
    """X = A⁻¹B for a matrix (..., n, k) or vector B; gB = A⁻ᵀ gX, gA = -gB Xᵀ (summed over broadcast batches)."""

    node_name = "LinalgSolveExBackward0"

    @staticmethod
    def forward(ctx, A, B):
        ctx.vector = vector = _is_vector_rhs(A, B)
        b = B._data[..., None] if vector else B._data
        if b.shape[-2] != A.shape[-1]:
            raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                               f"({A.shape[-2]}x{A.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
        try:
            batch = np.broadcast_shapes(A.shape[:-2], b.shape[:-2])
        except ValueError:
            raise RuntimeError(f"linalg.solve: the batch dimensions of A {list(A.shape)} and B {list(B.shape)} "
                               "cannot be broadcast") from None
        a = np.broadcast_to(A._data, (*batch, *A.shape[-2:]))
        b = np.broadcast_to(b, (*batch, *b.shape[-2:]))
        try:
            x = np.linalg.solve(a, b)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.solve: The solver failed because the input matrix is singular: "
                              "use linalg.lstsq for a least-squares solution") from None
        out = _wrap(x[..., 0] if vector else x, A._data.dtype)
        ctx.save_for_backward(A, out)
        ctx.shapes = A.shape, B.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        A, X = ctx.saved_tensors
        shape_a, shape_b = ctx.shapes
        gB = solve(A.mT, grad)
        gA = None
        if ctx.needs_input_grad[0]:
            gA = -(gB.unsqueeze(-1) @ X.unsqueeze(-2) if ctx.vector else gB @ X.mT)
            gA = sum_to(gA, shape_a)
        return gA, sum_to(gB, shape_b) if ctx.needs_input_grad[1] else None


def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with ``A @ X = B`` (``X @ A = B`` if not ``left``); B may be a (batch of) vector(s)."""
    A = _matrices("solve", A)
    B = _tensor_argument("solve", "B", 1, B)
    if A._data.dtype != B._data.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A of type "
                           f"{dtypes.scalar_type_name(A._data.dtype)} and B of type "
                           f"{dtypes.scalar_type_name(B._data.dtype)} instead: convert one with .to(dtype)")
    if not left:  # X A = B  <=>  Aᵀ Xᵀ = Bᵀ
        return Solve.apply(A.mT, B.mT).mT
    return Solve.apply(A, B)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True, unitriangular: bool = False) -> Tensor:
    """``solve`` reading only A's upper (or lower) triangle, with ones on its diagonal if ``unitriangular``."""
    A = _matrices("solve_triangular", A)
    A = A.triu() if upper else A.tril()
    if unitriangular:
        eye = _eye_like(A)
        A = A * (1 - eye) + eye
    return solve(A, B, left=left)


def _cutoff(S: np.ndarray, atol, rtol, m: int, n: int) -> np.ndarray:
    """PyTorch's threshold at or below which a singular value counts as zero: max(atol, rtol · σ_max),
    with rtol = eps · max(m, n) when neither is given (0 when only a positive atol is)."""
    atol, rtol = (t._data if isinstance(t, Tensor) else t for t in (atol, rtol))
    if rtol is None:
        rtol = 0.0 if atol is not None and np.any(np.asarray(atol) > 0) else np.finfo(S.dtype).eps * max(m, n)
    atol = 0.0 if atol is None else atol
    largest = S[..., :1] if S.shape[-1] else np.zeros((*S.shape[:-1], 1), S.dtype)
    return np.maximum(np.asarray(atol)[..., None], np.asarray(rtol)[..., None] * largest)


def _pinv_backward(grad: Tensor, pinvA: Tensor, A: Tensor) -> Tensor:
    """PyTorch's ``pinv_backward``, arranged to multiply the smallest matrices."""
    m, n = A.shape[-2:]
    pinvAh, gradh = pinvA.mT, grad.mT
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        return -(pinvA @ K).mT + KpinvAh - (A @ pinvA) @ KpinvAh + (pinvAh @ pinvA) @ (gradh - K @ A)
    K = pinvA @ gradh
    pinvAhK = pinvAh @ K
    return -(K @ pinvA).mT + (gradh - A @ K) @ pinvA @ pinvAh + pinvAhK - pinvAhK @ pinvA @ A


class Pinv(Function):
    """The Moore-Penrose pseudo-inverse, from the SVD with singular values below the cutoff dropped."""

    node_name = "LinalgPinvBackward0"

    @staticmethod
    def forward(ctx, A, atol, rtol):
        U, S, Vh = np.linalg.svd(A._data, full_matrices=False)
        keep = S > _cutoff(S, atol, rtol, *A.shape[-2:])
        with np.errstate(divide="ignore"):
            S_inv = np.where(keep, 1 / np.where(keep, S, 1), 0)
        out = _wrap((np.swapaxes(Vh, -1, -2) * S_inv[..., None, :]) @ np.swapaxes(U, -1, -2), A._data.dtype)
        ctx.save_for_backward(A, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        A, out = ctx.saved_tensors
        return _pinv_backward(grad, out, A), None, None


def pinv(A: Tensor, rcond=NOT_GIVEN, hermitian: bool = False, *, atol=None, rtol=None) -> Tensor:
    """The pseudo-inverse; singular values at most max(atol, rtol · σ_max) count as zero.

    PyTorch's two overloads: ``pinv(A, *, atol=None, rtol=None)`` and the older ``pinv(A, rcond)``
    (rcond is rtol). ``hermitian`` is accepted; the SVD serves both cases.
    """
    A = _matrices("pinv", A, square=False)
    if rcond is not NOT_GIVEN:
        if atol is not None or rtol is not None:
            raise TypeError("pinv(): pass either rcond or atol/rtol, not both")
        rtol = rcond
    return Pinv.apply(A, atol, rtol)


@tensor_method(top_level=True, out=False)
def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
    """``torch.pinverse``: ``linalg.pinv(self, rtol=rcond)``."""
    return pinv(self, rtol=number(rcond, "rcond"))


class Lstsq(Function):
    """The least-squares solution of ``A X = B``; its gradient is pinv(A) B's (PyTorch's ``linalg_lstsq_backward``)."""

    node_name = "LinalgLstsqBackward0"

    @staticmethod
    def forward(ctx, A, B, rcond, driver):
        ctx.vector = vector = B.ndim == A.ndim - 1
        a, b = A._data, (B._data[..., None] if vector else B._data)
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = np.broadcast_to(a, (*batch, *a.shape[-2:])).reshape(-1, *a.shape[-2:])
        b = np.broadcast_to(b, (*batch, *b.shape[-2:])).reshape(-1, *b.shape[-2:])
        m, n = a.shape[-2:]
        if rcond is None:
            rcond = np.finfo(a.dtype).eps * max(m, n)
        results = [np.linalg.lstsq(ai, bi, rcond=rcond) for ai, bi in zip(a, b)]
        x = np.stack([r[0] for r in results]).reshape(*batch, n, b.shape[-1])
        rank = np.array([r[2] for r in results], dtype=np.int64).reshape(batch)
        S = np.stack([r[3] for r in results]).reshape(*batch, -1) if results else np.zeros((*batch, min(m, n)))
        full_rank = bool(np.all(rank == n))
        residuals = (np.stack([r[1] for r in results]).reshape(*batch, -1)
                     if driver != "gelsy" and m > n and (full_rank or driver == "gels") else np.zeros(0))
        outputs = (
            _wrap(x[..., 0] if vector else x, a.dtype),
            _wrap(residuals, a.dtype),
            Tensor._wrap(rank if driver != "gels" else np.zeros(0, np.int64)),
            _wrap(S if driver in ("gelsd", "gelss") else np.zeros(0), a.dtype),
        )
        ctx.mark_non_differentiable(*outputs[1:])
        ctx.save_for_backward(A, B)
        return outputs

    @staticmethod
    def backward(ctx, grad, _residuals, _rank, _singular_values):
        A, B = ctx.saved_tensors
        gX, B = (grad.unsqueeze(-1), B.unsqueeze(-1)) if ctx.vector else (grad, B)
        pinvA = Pinv.apply(A, None, None)
        gA = _pinv_backward(gX @ B.mT, pinvA, A) if ctx.needs_input_grad[0] else None
        gB = None
        if ctx.needs_input_grad[1]:
            gB = pinvA.mT @ gX
            gB = gB.squeeze(-1) if ctx.vector else gB
        return gA, gB, None, None


def lstsq(A: Tensor, B: Tensor, rcond: float | None = None, *, driver: str | None = None) -> return_types.linalg_lstsq:
    """The X minimising ‖A X - B‖, as ``(solution, residuals, rank, singular_values)``.

    As PyTorch's CPU drivers: ``gelsy`` (the default) gives the rank; ``gelsd`` and ``gelss`` also
    the singular values; all but ``gelsy`` the squared residuals when A is tall (and of full rank;
    ``gels`` assumes it and gives no rank).
    """
    A = _matrices("lstsq", A, square=False)
    B = _tensor_argument("lstsq", "B", 1, B)
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss); "
                           f"got {driver!r}".removeprefix("torch."))
    rows = B.shape[-2] if B.ndim >= A.ndim else B.shape[-1]
    if rows != A.shape[-2]:
        raise RuntimeError(f"linalg.lstsq: input.size(-2) should match other.size(-2) ({A.shape[-2]} and {rows})")
    return return_types.linalg_lstsq(*Lstsq.apply(A, B, rcond, driver))
