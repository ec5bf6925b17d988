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

The functions live in this package by family: ``inverses.py`` (det, inv, solve, pinv, lstsq),
``factorizations.py`` (qr, eigh, svd, cholesky), ``matrix_functions.py`` (matrix_exp,
matrix_power, multi_dot, cross, vecdot), ``norms.py``, ``compositions.py`` (the ``*_ex`` forms,
cond, tensorinv, ...) and ``_common.py`` (``LinAlgError``, the checks); every name is here, at
PyTorch's path.
"""
from __future__ import annotations

# The single-file module's imports, kept so that every name it had is still here
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

from minigrad.linalg._common import LinAlgError, _matrices, _wrap, _diag_embed, _eye_like
from minigrad.linalg.inverses import (
    Det, det, Slogdet, _slogdet, slogdet, logdet, Inv, inv, inverse, _is_vector_rhs, Solve, solve, solve_triangular,
    _cutoff, _pinv_backward, Pinv, pinv, pinverse, Lstsq, lstsq,
)
from minigrad.linalg.factorizations import (
    _qr_backward, Qr, qr, _qr, Eigh, _uplo, eigh, eigvalsh, Svd, svd, svdvals, _svd, Cholesky, CholeskyLegacy, cholesky,
    _cholesky,
)
from minigrad.linalg.matrix_functions import (
    _expm, MatrixExp, matrix_exp, matrix_power, multi_dot, cross, vecdot, matmul,
)
from minigrad.linalg.norms import vector_norm, matrix_norm, norm, matrix_rank
from minigrad.linalg.compositions import (
    _zero_pivot, _not_positive_definite, _infos, _ex, inv_ex, cholesky_ex, solve_ex, diagonal, vander, cond, tensorinv,
    tensorsolve,
)
