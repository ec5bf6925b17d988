"""The factorisations qr, eigh, svd and cholesky, after PyTorch's ``FunctionsManual.cpp`` (each
``Function``'s docstring gives its formula), and the Tensor methods of their old forms.
"""
from __future__ import annotations

import numpy as np

from minigrad import return_types
from minigrad.autograd.function import Function
from minigrad.functional_ops import cat
from minigrad.ops.broadcast import flag
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor
from minigrad.linalg._common import LinAlgError, _diag_embed, _matrices, _wrap
from minigrad.linalg.inverses import solve_triangular


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


@tensor_method("qr", top_level=True, out=False)
def _qr(self: Tensor, some: bool = True) -> return_types.qr:
    """``torch.qr``: ``linalg.qr`` in mode 'reduced' (``some``) or 'complete'."""
    return return_types.qr(*qr(self, "reduced" if flag(some, "some") else "complete"))


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


@tensor_method("svd", top_level=True, out=False)
def _svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> return_types.svd:
    """``torch.svd``: (U, S, V) with V = Vhᵀ; without ``compute_uv``, U and V are zeros."""
    U, S, Vh = svd(self, full_matrices=not flag(some, "some"))
    if not flag(compute_uv, "compute_uv"):
        return return_types.svd(U.detach().zero_(), S, Vh.detach().mT.zero_())
    return return_types.svd(U, S, Vh.mT)


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
