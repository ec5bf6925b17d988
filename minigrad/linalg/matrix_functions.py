"""Functions of a matrix and products: matrix_exp, matrix_power, multi_dot, cross, vecdot, matmul.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.function import Function
from minigrad.functional_ops import cat
from minigrad.ops.broadcast import integer
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.linalg._common import _eye_like, _matrices, _wrap
from minigrad.linalg.inverses import inv


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


matmul = Tensor.matmul
