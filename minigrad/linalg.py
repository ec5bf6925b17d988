"""``minigrad.linalg``: PyTorch's ``torch.linalg``, on NumPy's LAPACK, with PyTorch's derivatives.

Each factorisation is one ``Function`` (its node named as PyTorch's: ``LinalgDetBackward0`` ...)
whose forward calls ``numpy.linalg`` and whose backward is PyTorch's formula written with tensor
operations, so ``create_graph=True`` differentiates it again. Everything else (norms, powers,
``multi_dot``, ``lstsq``'s solution's gradient) is composed from those and matmul.

    d det(A)       = det(A) tr(A⁻¹ dA)           gA = g det(A) A⁻ᵀ
    d log|det(A)|  = tr(A⁻¹ dA)                  gA = g A⁻ᵀ
    d A⁻¹          = -A⁻¹ dA A⁻¹                 gA = -A⁻ᵀ g A⁻ᵀ
    X = A⁻¹B                                     gB = A⁻ᵀ gX,  gA = -gB Xᵀ

The factorisations (qr, eigh, svd, cholesky) follow PyTorch's ``FunctionsManual.cpp``; their
docstrings give the formula. A singular or non-positive-definite input raises ``LinAlgError``,
a ``RuntimeError`` as ``torch.linalg.LinAlgError`` is, so ``except RuntimeError`` catches both.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes, return_types
from minigrad.autograd.function import Function
from minigrad.functional_ops import cat, where
from minigrad.ops.broadcast import NOT_GIVEN, flag, integer, number, sum_to, wrap_dim
from minigrad.ops.registry import tensor_method
from minigrad.ops.stats import Norm
from minigrad._tensor import Tensor, _tensor_argument

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eigh", "eigvalsh", "inv", "inv_ex",
    "lstsq", "matmul", "matrix_exp", "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
    "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander",
    "vecdot", "vector_norm",
]


class LinAlgError(RuntimeError):
    """A matrix the factorisation cannot handle: singular, or not positive-definite."""


# -- checks -------------------------------------------------------------------

def _matrices(name: str, A, square: bool = True) -> Tensor:
    """``A`` as PyTorch checks it: a float tensor of (batches of) matrices, square if asked."""
    A = _tensor_argument(name, "A", 0, A)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{name}: The input tensor A must have at least 2 dimensions.")
    if A._data.dtype.kind != "f":
        raise RuntimeError(f"linalg.{name}: Expected a floating point or complex tensor as input. "
                           f"Got {dtypes.scalar_type_name(A._data.dtype)}: convert it with .float() or .double()")
    if square and A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    return A


def _wrap(array: np.ndarray, dtype: np.dtype) -> Tensor:
    return Tensor._wrap(np.asarray(array, dtype=dtype, order="C"))


def _diag_embed(v: Tensor) -> Tensor:
    """A batch of diagonal matrices with ``v`` on the diagonal (differentiable)."""
    n = v.shape[-1]
    return v.unsqueeze(-1) * Tensor._wrap(np.eye(n, dtype=v._data.dtype))


def _eye_like(A: Tensor) -> Tensor:
    return Tensor._wrap(np.broadcast_to(np.eye(A.shape[-1], dtype=A._data.dtype), A.shape).copy())


# -- determinants and inverses -----------------------------------------------

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


@tensor_method("det", top_level=True, out=False)
def det(self: Tensor) -> Tensor:
    """The determinant of each square matrix in ``self``."""
    return Det.apply(_matrices("det", self))


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


def inv(A: Tensor) -> Tensor:
    """The inverse of each square matrix in ``A``; ``LinAlgError`` if one is singular."""
    return Inv.apply(_matrices("inv", A))


@tensor_method(top_level=True)
def inverse(self: Tensor) -> Tensor:
    """``torch.inverse``: ``linalg.inv``."""
    return inv(self)


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


# -- pseudo-inverse and least squares -----------------------------------------

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


# -- factorisations -------------------------------------------------------------

def _qr_backward(gQ: Tensor, gR: Tensor, Q: Tensor, R: Tensor) -> Tensor:
    """gA = (gQ + Q copyltu(M)) R⁻ᵀ with M = R gRᵀ - gQᵀ Q (m >= n), copyltu(M) = tril(M) + tril(M, -1)ᵀ."""
    M = R @ gR.mT - gQ.mT @ Q
    return solve_triangular(R.mT, gQ + Q @ (M.tril() + M.tril(-1).mT), upper=False, left=False)


class Qr(Function):
    """A = QR. For m < n, A = Q [X | Y] splits into its leading square block X = Q R₁ and the rest
    Y = Q R₂: X's gradient is the square case's with gQ + Y gR₂ᵀ, Y's is Q gR₂."""

    node_name = "LinalgQrBackward0"

    @staticmethod
    def forward(ctx, A, mode):
        ctx.mode = mode
        if mode == "r":
            return _wrap(np.zeros(0), A._data.dtype), _wrap(np.linalg.qr(A._data, mode="r"), A._data.dtype)
        Q, R = (_wrap(factor, A._data.dtype) for factor in np.linalg.qr(A._data, mode=mode))
        ctx.save_for_backward(Q, R)
        return Q, R

    @staticmethod
    def backward(ctx, gQ, gR):
        if ctx.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
                               "Use linalg.qr(A, mode='reduced') to differentiate through linalg.qr.")
        Q, R = ctx.saved_tensors
        m, n = Q.shape[-2], R.shape[-1]
        if ctx.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and nrows > ncols: "
                               "use mode='reduced'")
        if m >= n:
            return _qr_backward(gQ, gR, Q, R), None
        gX = _qr_backward(gQ + Q @ R[..., m:] @ gR[..., m:].mT, gR[..., :m], Q, R[..., :m])
        return cat([gX, Q @ gR[..., m:]], -1), None


def qr(A: Tensor, mode: str = "reduced") -> return_types.linalg_qr:
    """A = QR, Q's columns orthonormal and R upper-triangular; ``mode`` 'reduced', 'complete' or 'r' (R only)."""
    A = _matrices("qr", A, square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), "
                           "'r', or 'complete'")
    return return_types.linalg_qr(*Qr.apply(A, mode))


class Eigh(Function):
    """A = V diag(L) Vᵀ for symmetric A (PyTorch's ``linalg_eig_backward``, Hermitian case):

        gA = V (skew(Vᵀ gV) / 2 / E  with gL on the diagonal) Vᵀ,   E_ij = L_j - L_i
    """

    node_name = "LinalgEighBackward0"

    @staticmethod
    def forward(ctx, A, UPLO):
        L, V = np.linalg.eigh(A._data, UPLO=UPLO)
        L, V = _wrap(L, A._data.dtype), _wrap(V, A._data.dtype)
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(L, V)
        return L, V

    @staticmethod
    def backward(ctx, gL, gV):
        L, V = ctx.saved_tensors
        if gV is None:  # eigenvalues only
            return (V * gL.unsqueeze(-2)) @ V.mT, None
        eye = Tensor._wrap(np.eye(L.shape[-1], dtype=L._data.dtype))
        VhgV = V.mT @ gV
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye  # 1 on the diagonal, not divided by
        inner = (VhgV - VhgV.mT) * 0.5 / E * (1 - eye)
        if gL is not None:
            inner = inner + _diag_embed(gL)
        return V @ inner @ V.mT, None


def _uplo(name: str, UPLO: str) -> str:
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"{name}: Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return UPLO


def eigh(A: Tensor, UPLO: str = "L") -> return_types.linalg_eigh:
    """The eigenvalues (ascending) and orthonormal eigenvectors of symmetric A, read from its lower
    (``UPLO='L'``) or upper triangle. Each eigenvector's sign is LAPACK's choice."""
    A = _matrices("eigh", A)
    return return_types.linalg_eigh(*Eigh.apply(A, _uplo("linalg.eigh", UPLO)))


def eigvalsh(A: Tensor, UPLO: str = "L") -> Tensor:
    """The eigenvalues of symmetric A, ascending."""
    return Eigh.apply(_matrices("eigvalsh", A), _uplo("linalg.eigvalsh", UPLO))[0]


class Svd(Function):
    """A = U diag(S) Vh (PyTorch's ``svd_backward``): with skew(X) = X - Xᵀ and E_jk = S_k² - S_j²,

        gA = U ((skew(Uᵀ gU) S + S skew(Vᵀ gV)) / E + diag(gS)) Vh
             + (I - UUᵀ) gU S⁻¹ Vh  (m > n)   or   U S⁻¹ gVh (I - VVᵀ)  (m < n)

    With ``full_matrices`` only the first k = min(m, n) columns of U (rows of Vh) enter, as in PyTorch.
    """

    node_name = "LinalgSvdBackward0"

    @staticmethod
    def forward(ctx, A, full_matrices):
        U, S, Vh = (_wrap(f, A._data.dtype) for f in np.linalg.svd(A._data, full_matrices=full_matrices))
        ctx.set_materialize_grads(False)
        ctx.save_for_backward(U, S, Vh)
        return U, S, Vh

    @staticmethod
    def backward(ctx, gU, gS, gVh):
        U, S, Vh = ctx.saved_tensors
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        gU = None if gU is None else gU[..., :k]
        gVh = None if gVh is None else gVh[..., :k, :]
        m, n = U.shape[-2], Vh.shape[-1]
        if gU is None and gVh is None:
            return U @ (gS.unsqueeze(-1) * Vh) if m >= n else (U * gS.unsqueeze(-2)) @ Vh, None
        eye = Tensor._wrap(np.eye(k, dtype=S._data.dtype))
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + eye
        inner = 0
        if gU is not None:
            UhgU = U.mT @ gU
            inner = (UhgU - UhgU.mT) * S.unsqueeze(-2)
        if gVh is not None:
            VhgV = Vh @ gVh.mT
            inner = inner + S.unsqueeze(-1) * (VhgV - VhgV.mT)
        inner = inner / E * (1 - eye)
        if gS is not None:
            inner = inner + _diag_embed(gS)
        if m > n and gU is not None:
            gUSinv = gU / S.unsqueeze(-2)
            return (U @ inner + gUSinv - U @ (U.mT @ gUSinv)) @ Vh, None
        if m < n and gVh is not None:
            SinvgVh = gVh / S.unsqueeze(-1)
            return U @ (inner @ Vh + SinvgVh - (SinvgVh @ Vh.mT) @ Vh), None
        return U @ inner @ Vh, None


def svd(A: Tensor, full_matrices: bool = True, *, driver: str | None = None) -> return_types.linalg_svd:
    """A = U diag(S) Vh, S descending; with ``full_matrices`` U and Vh are square. Signs are LAPACK's choice."""
    return return_types.linalg_svd(*Svd.apply(_matrices("svd", A, square=False), bool(full_matrices)))


def svdvals(A: Tensor, *, driver: str | None = None) -> Tensor:
    """The singular values of A, descending (differentiable: gA = U diag(gS) Vh)."""
    return Svd.apply(_matrices("svdvals", A, square=False), False)[1]


class Cholesky(Function):
    """A = L Lᵀ (PyTorch's ``cholesky_backward``): Φ = tril(Lᵀ gL) with its diagonal halved, made
    symmetric, then gA = L⁻ᵀ Φ L⁻¹. With ``upper``, U = Lᵀ comes out (and gL = gUᵀ goes in)."""

    node_name = "LinalgCholeskyExBackward0"

    @staticmethod
    def forward(ctx, A, upper):
        try:
            L = np.linalg.cholesky(A._data)
        except np.linalg.LinAlgError:
            raise LinAlgError("linalg.cholesky: The factorization could not be completed because the input is not "
                              "positive-definite: check that A is symmetric with positive eigenvalues") from None
        L = _wrap(L, A._data.dtype)
        ctx.upper = upper
        ctx.save_for_backward(L)
        return L.mT.contiguous() if upper else L

    @staticmethod
    def backward(ctx, grad):
        L, = ctx.saved_tensors
        gL = grad.mT if ctx.upper else grad
        gA = (L.mT @ gL).tril()
        gA = 0.5 * (gA + gA.tril(-1).mT)
        gA = solve_triangular(L.mT, gA, upper=True)
        return solve_triangular(L, gA, upper=False, left=False), None


class CholeskyLegacy(Cholesky):
    """``torch.cholesky``'s node (the older function, same factorisation)."""

    node_name = "CholeskyBackward0"


def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """L lower-triangular with A = L Lᵀ (Lᵀ if ``upper``); ``LinAlgError`` if A is not positive-definite."""
    return Cholesky.apply(_matrices("cholesky", A), bool(upper))


@tensor_method("cholesky", top_level=True)
def _cholesky(self: Tensor, upper: bool = False) -> Tensor:
    """``torch.cholesky``: ``linalg.cholesky`` with ``upper`` positional."""
    return CholeskyLegacy.apply(_matrices("cholesky", self), flag(upper, "upper"))


@tensor_method("qr", top_level=True, out=False)
def _qr(self: Tensor, some: bool = True) -> return_types.qr:
    """``torch.qr``: ``linalg.qr`` in mode 'reduced' (``some``) or 'complete'."""
    return return_types.qr(*qr(self, "reduced" if flag(some, "some") else "complete"))


@tensor_method("svd", top_level=True, out=False)
def _svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> return_types.svd:
    """``torch.svd``: (U, S, V) with V = Vhᵀ; without ``compute_uv``, U and V are zeros."""
    U, S, Vh = svd(self, full_matrices=not flag(some, "some"))
    if not flag(compute_uv, "compute_uv"):
        return return_types.svd(U.detach().zero_(), S, Vh.detach().mT.zero_())
    return return_types.svd(U, S, Vh.mT)


# -- functions of a matrix ------------------------------------------------------

def _expm(a: np.ndarray) -> np.ndarray:
    """exp(a) by scaling and squaring: the Taylor series of a / 2ˢ (1-norm at most 1/2, 18 terms), squared s times."""
    a = a.astype(np.float64)
    norm = np.abs(a).sum(-2).max() if a.size else 0.0
    s = max(0, math.ceil(math.log2(norm / 0.5))) if norm > 0.5 else 0
    a = a / 2 ** s
    eye = np.broadcast_to(np.eye(a.shape[-1]), a.shape)
    result, term = eye.copy(), eye
    for k in range(1, 19):
        term = term @ a / k
        result = result + term
    for _ in range(s):
        result = result @ result
    return result


class MatrixExp(Function):
    """exp(A) = Σ Aᵏ/k!. PyTorch's backward: gA is the top-right block of exp([[Aᵀ, g], [0, Aᵀ]])."""

    node_name = "LinalgMatrixExpBackward0"

    @staticmethod
    def forward(ctx, A):
        ctx.save_for_backward(A)
        return _wrap(_expm(A._data), A._data.dtype)

    @staticmethod
    def backward(ctx, grad):
        A, = ctx.saved_tensors
        n = A.shape[-1]
        At, zeros = A.mT, Tensor._wrap(np.zeros(A.shape, dtype=A._data.dtype))
        block = cat([cat([At, grad], -1), cat([zeros, At], -1)], -2)
        return MatrixExp.apply(block)[..., :n, n:]


@tensor_method(top_level=True, out=False)
def matrix_exp(self: Tensor) -> Tensor:
    """The matrix exponential Σ Aᵏ/k! of each square matrix A in ``self``."""
    return MatrixExp.apply(_matrices("matrix_exp", self))


@tensor_method(top_level=True)
def matrix_power(A: Tensor, n: int) -> Tensor:
    """Aⁿ by repeated squaring, as PyTorch multiplies (A⁻¹ first for n < 0; the identity for n = 0)."""
    n = integer(n, "n")
    A = _tensor_argument("matrix_power", "A", 0, A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they are "
                           f"{A.shape[-2] if A.ndim > 1 else 1} by {A.shape[-1] if A.ndim else 1} matrices")
    if n == 0:
        return _eye_like(A)
    if n < 0:
        A, n = inv(A), -n
    if n == 1:
        return A.clone()
    if n == 2:
        return A @ A
    if n == 3:
        return (A @ A) @ A
    result = z = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = A if z is None else z @ z
        if bit:
            result = z if result is None else result @ z
    return result


def multi_dot(tensors) -> Tensor:
    """The product of a chain of matrices (the first may be a row vector, the last a column), in the
    cheapest order: the classic dynamic programme over where to split the chain."""
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    first_vector, last_vector = tensors[0].ndim == 1, tensors[-1].ndim == 1
    if first_vector:
        tensors[0] = tensors[0].unsqueeze(0)
    if last_vector:
        tensors[-1] = tensors[-1].unsqueeze(-1)
    for i, t in enumerate(tensors):
        if t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
    dims = [tensors[0].shape[0]] + [t.shape[1] for t in tensors]
    count = len(tensors)
    cost = [[0] * count for _ in range(count)]
    split = [[0] * count for _ in range(count)]
    for length in range(1, count):
        for i in range(count - length):
            j = i + length
            cost[i][j] = math.inf
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def product(i: int, j: int) -> Tensor:
        return tensors[i] if i == j else product(i, split[i][j]) @ product(split[i][j] + 1, j)

    out = product(0, count - 1)
    if first_vector:
        out = out.squeeze(0)
    if last_vector:
        out = out.squeeze(-1)
    return out


def cross(input: Tensor, other: Tensor, *, dim: int = -1) -> Tensor:
    """The cross product of 3-vectors along ``dim`` (the others broadcast): ``torch.cross`` with dim=-1
    by default (``ops/assembly.py``)."""
    return _tensor_argument("cross", "input", 0, input).cross(other, dim=dim)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1) -> Tensor:
    """The dot product of ``x`` and ``y`` along ``dim``, broadcasting the other dimensions."""
    return (_tensor_argument("vecdot", "x", 0, x) * _tensor_argument("vecdot", "y", 1, y)).sum(dim)


# -- norms and rank -------------------------------------------------------------

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


matmul = Tensor.matmul


# -- the *_ex forms (an error code instead of an exception), and small compositions ----------------

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
