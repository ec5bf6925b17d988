"""``minigrad.nn.utils.parametrizations``: three constraints on a weight, as parametrizations.

- ``weight_norm``: ``w = g * v / ||v||``, so the length ``g`` and the direction ``v`` of each
  output's weights are learned separately (Salimans & Kingma, 2016).
- ``spectral_norm``: ``w / sigma(w)``, the largest singular value estimated by one power
  iteration per training step, which bounds the layer's Lipschitz constant (GAN critics).
- ``orthogonal``: a weight with orthonormal columns (or rows), through the matrix
  exponential or the Cayley map of a skew-symmetric matrix, or a product of Householder
  reflections.

Each is a small Module registered with ``parametrize.register_parametrization``, so the
unconstrained tensors live in ``module.parametrizations.weight`` under PyTorch's
``state_dict`` keys, and every constraint is composed of tensor ops: autograd
differentiates it, to any order. ``orthogonal`` has all three of PyTorch's maps; the
Householder product it needs is written here with matrix products (PyTorch calls
``linalg.householder_product``, and ``geqrf`` to assign without a base; minigrad has neither
in its public API). Complex weights, which PyTorch also accepts, do not exist in minigrad.
"""
from __future__ import annotations

from enum import Enum, auto

import numpy as np

from minigrad import linalg
from minigrad.creation import eye, randn, tensor, zeros_like
from minigrad.functional_ops import cat, where
from minigrad import dtypes
from minigrad.autograd.grad_mode import no_grad
from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.nn.modules.conv import ConvTranspose1d, ConvTranspose2d
from minigrad.nn.utils import parametrize
from minigrad._tensor import Tensor

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# -- weight_norm ---------------------------------------------------------------------------
def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of ``v`` over every dimension but ``dim``, kept as size-1 dimensions (PyTorch's
    ``norm_except_dim``; ``dim=-1`` means the norm of the whole tensor, a 0-d tensor)."""
    if dim == -1:
        return v.pow(2).sum().sqrt()
    dim = dim % v.ndim
    others = [d for d in range(v.ndim) if d != dim]
    return v.pow(2).sum(dim=others, keepdim=True).sqrt() if others else v.abs()


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """PyTorch's ``_weight_norm``: ``v * (g / ||v||)`` with the norm taken as ``_norm_except_dim``."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int = 0) -> Module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||``: ``original0`` is ``g`` (one length per
    slice along ``dim``; ``dim=None`` for one length for the whole tensor) and ``original1`` is
    ``v``. A checkpoint saved by the older ``nn.utils.weight_norm`` (``weight_g``/``weight_v``) loads."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                 error_msgs) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# -- spectral_norm -------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:  # a vector is only normalized: its spectral norm is its 2-norm
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.shape
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start from a good estimate, as PyTorch does

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        """``dim`` first, the rest flattened: the matrix whose largest singular value is taken."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.ndim) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat: Tensor, n_power_iterations: int) -> None:
        """Refine ``_u`` and ``_v`` (the top singular vectors) in place, outside the graph."""
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(weight_mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(weight_mat.mT.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()  # (the next step changes the buffers in place)
        sigma = u.dot(weight_mat.mv(v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        return value  # the scale is lost: any multiple of the weight is a right inverse


def spectral_norm(module: Module, name: str = "weight", n_power_iterations: int = 1, eps: float = 1e-12,
                  dim: int | None = None) -> Module:
    """Parametrize ``module.<name>`` as ``W / sigma(W)``; ``sigma`` comes from ``n_power_iterations``
    power-iteration steps at each read in training mode (the vectors ``_u``, ``_v`` are buffers,
    so they persist), and from the stored vectors in eval mode. ``dim`` (0, or 1 for a
    transposed convolution) is the output dimension."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module


# -- orthogonal ----------------------------------------------------------------------------
class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * np.finfo(dtypes.to_numpy_dtype(Q.dtype)).eps
    return (Q.mT @ Q).allclose(eye(k, dtype=Q.dtype), atol=eps)


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of A's QR decomposition with R's diagonal made positive (unique for a full-rank A)."""
    Q, R = linalg.qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _householder_product(A: Tensor, tau: Tensor) -> Tensor:
    """PyTorch's ``linalg.householder_product``: the first k columns of ``H_1 ... H_k`` with
    ``H_i = I - tau_i v_i v_i^T`` and ``v_i`` column i of A below the diagonal, with a 1 on it."""
    n, k = A.shape[-2], A.shape[-1]
    V = A.tril(-1) + eye(n, k, dtype=A.dtype)
    Q = eye(n, k, dtype=A.dtype).expand(*A.shape[:-2], n, k)
    for i in reversed(range(k)):
        v = V[..., :, i:i + 1]
        Q = Q - tau[..., i:i + 1].unsqueeze(-1) * (v @ (v.mT @ Q))
    return Q


def _geqrf(A: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's geqrf (PyTorch's ``torch.geqrf``): R above the diagonal, the Householder vectors
    below it, and their scales ``tau``. NumPy's ``qr(mode="raw")`` calls it; it has no gradient."""
    a = A.numpy()
    raw = [np.linalg.qr(matrix, mode="raw") for matrix in a.reshape(-1, *a.shape[-2:])]
    h = np.stack([reflectors.T for reflectors, _ in raw]).reshape(a.shape)  # (NumPy returns it transposed)
    tau = np.stack([scales for _, scales in raw]).reshape(*a.shape[:-2], -1)
    return tensor(h.astype(a.dtype)), tensor(tau.astype(a.dtype))


class _Orthogonal(Module):
    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *, use_trivialization: bool = True) -> None:
        super().__init__()
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)  # set by right_inverse

    def forward(self, X: Tensor) -> Tensor:
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mT  # skew-symmetric, so both maps give an orthogonal matrix
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = A.matrix_exp()
            else:
                Id = eye(n, dtype=A.dtype)
                Q = linalg.solve(Id - 0.5 * A, Id + 0.5 * A)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            if Q.shape != self.shape:
                raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                                 f"Got a tensor of shape {Q.shape}.")
            Q_init = Q
            n, k = Q.shape[-2], Q.shape[-1]
            transpose = n < k
            if transpose:
                Q = Q.mT
                n, k = k, n
            if not hasattr(self, "base"):
                if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                    raise NotImplementedError("It is not possible to assign to the matrix exponential "
                                              "or the Cayley parametrizations when use_trivialization=False.")
                A, tau = _geqrf(Q)  # the reflectors that make Q (the forward's Householder product)
                diagonal = A.diagonal(dim1=-2, dim2=-1)
                diagonal.copy_(diagonal.sign() * where(tau == 0.0, -1.0, 1.0))
                return A.mT if transpose else A
            if n == k:
                Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
            else:  # complete to a square orthogonal base with random columns
                N = randn(*(Q.shape[:-2] + (n, n - k)), dtype=Q.dtype)
                Q = _make_orthogonal(cat([Q, N], dim=-1))
            self.base = Q
            # forward(-I) is the identity for every map: the weight starts as base's first columns
            neg_Id = zeros_like(Q_init)
            neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
            return neg_Id


def orthogonal(module: Module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> Module:
    """Parametrize ``module.<name>`` (a matrix, or a batch of them) to have orthonormal columns
    (or rows, if it is wide). ``orthogonal_map``: ``"matrix_exp"`` (default for square),
    ``"cayley"`` or ``"householder"`` (default otherwise). With ``use_trivialization`` (default)
    the map is applied around a stored orthogonal ``base`` (buffer), which keeps the optimisation
    well conditioned; assigning to the weight then resets ``base``."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
