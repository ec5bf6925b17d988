"""Running sums and products: cumsum, and prod (of all elements or along a dimension).

cumsum: ``out[i] = x[0] + ... + x[i]``, so ``x[j]`` reaches every ``out[i]`` with
``i >= j``: its gradient is the sum of the incoming gradient from ``j`` to the end,
a cumsum of the reversed gradient, reversed back.

prod: ``d(x₀x₁…xₙ)/dxᵢ`` is the product of all the *other* elements. Without a
zero in the input that is ``out / xᵢ``, and both backward passes use it, as PyTorch
does (so an inf element gives NaN there, as in PyTorch). With zeros, the plain
backward multiplies running products from the left and from the right
(``left[i] = x₀…xᵢ₋₁``, ``right[i] = xᵢ₊₁…xₙ``); under ``create_graph`` the gradient
must itself be differentiable, and each "product of the others" is a product of the
row with that element replaced by 1, built from tensor operations (n² values per
row, so only in that case). ``tests/kernels/test_twins.py`` checks that both passes agree
with each other and with PyTorch on zeros, inf and NaN.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.ops.broadcast import NOT_GIVEN, flag, wrap_dim
from minigrad._tensor import Tensor
from minigrad.ops.registry import tensor_method


def _integer_as_long(out: np.ndarray) -> np.ndarray:
    """PyTorch accumulates integers and booleans in int64."""
    return out.astype(np.int64) if out.dtype.kind in "biu" else out


class Cumsum(Function):
    node_name = "CumsumBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = wrap_dim(dim, a.ndim)
        if a.ndim == 0:
            return Tensor._wrap(_integer_as_long(a._data.copy()))
        return Tensor._wrap(np.asarray(_integer_as_long(np.cumsum(a._data, axis=ctx.dim)), order="C"))

    @staticmethod
    def backward(ctx, grad):
        if grad.ndim == 0:
            return grad, None
        d = ctx.dim
        return grad.flip(d).cumsum(d).flip(d), None


def _others_numpy(x: np.ndarray, dim: int) -> np.ndarray:
    """The product of all elements but one along ``dim``, for each element (zeros allowed), in O(n)."""
    n = x.shape[dim]
    if n == 0:
        return np.ones_like(x)
    ones = np.ones_like(np.take(x, [0], axis=dim))
    before = np.take(x, np.arange(n - 1), axis=dim)  # x₀ … xₙ₋₂
    after = np.take(np.flip(x, dim), np.arange(n - 1), axis=dim)  # xₙ₋₁ … x₁
    left = np.cumprod(np.concatenate([ones, before], axis=dim), axis=dim)
    right = np.flip(np.cumprod(np.concatenate([ones, after], axis=dim), axis=dim), dim)
    return left * right


def _others_tensor(x: Tensor, dim: int) -> Tensor:
    """The same with tensor operations (differentiable): the row with element i replaced by 1, multiplied."""
    moved = x.transpose(dim, -1)
    n = moved.shape[-1]
    rows = moved.unsqueeze(-2).expand(*moved.shape[:-1], n, n)
    diagonal = Tensor._wrap(np.eye(n, dtype=bool))
    return rows.masked_fill(diagonal, 1).prod(-1).transpose(dim, -1)


def _prod_grad(ctx, grad: Tensor, x: Tensor, out: Tensor) -> Tensor:
    """``grad`` (with the reduced dim kept) times the product of the other elements of each row.

    PyTorch's ``prod_backward``, case for case, so that inf and NaN come out where they
    do there: without a zero anywhere in ``x`` it is ``grad * (out / x)`` (an inf element
    gives NaN); with zeros, the products of the others (NumPy, or from tensor operations
    under ``create_graph``); and ``prod()`` of two zeros or more gives zeros in an
    ordinary backward without looking at ``grad`` (a shortcut PyTorch takes only when
    grad mode is off: an inf or NaN ``grad`` gives NaN under ``create_graph``).
    """
    zeros = int(np.count_nonzero(x._data == 0))
    if zeros == 0:
        return grad * (out / x)
    dim = ctx.dim
    if not is_grad_enabled():
        if dim is None and zeros > 1:
            return Tensor._wrap(np.zeros_like(x._data))
        others = _others_numpy(x._data, dim) if dim is not None else _others_numpy(x._data.reshape(-1), 0).reshape(x.shape)
        return grad * Tensor._wrap(others)
    if dim is None:
        return grad * _others_tensor(x.reshape(-1), 0).reshape(x.shape)
    return grad * _others_tensor(x, dim)


class ProdAll(Function):
    """The product of every element (1 for an empty tensor)."""

    node_name = "ProdBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.dim = None
        out = Tensor._wrap(np.asarray(_integer_as_long(np.prod(a._data))))
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if a.ndim == 0:  # the product of one element is the element: the gradient passes as it is
            return grad
        return _prod_grad(ctx, grad, a, out)


class Prod(Function):
    """The product along ``dim``."""

    node_name = "ProdBackward1"

    @staticmethod
    def forward(ctx, a, dim, keepdim=False):
        if a.ndim == 0:
            wrap_dim(dim, 0)
            ctx.dim = None
            out = Tensor._wrap(_integer_as_long(a._data.copy()))
        else:
            ctx.dim = wrap_dim(dim, a.ndim)
            out = Tensor._wrap(np.asarray(_integer_as_long(np.prod(a._data, axis=ctx.dim, keepdims=keepdim)), order="C"))
        ctx.keepdim = keepdim
        ctx.save_for_backward(a, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        if ctx.dim is None:  # 0-d input: the product of one element is the element
            return grad, None, None
        if not ctx.keepdim:
            grad, out = grad.unsqueeze(ctx.dim), out.unsqueeze(ctx.dim)
        return _prod_grad(ctx, grad, a, out), None, None


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------

@tensor_method(top_level=True)
def prod(self, dim: int = NOT_GIVEN, keepdim: bool = NOT_GIVEN, *, dtype=None) -> Tensor:
    """The product of all elements, or along ``dim``; ``dtype`` converts the input first."""
    if dim is None:
        raise TypeError("prod(): argument 'dim' must be int, not NoneType: x.prod() without a dim multiplies "
                        "every element")
    a = self if dtype is None else self.to(dtype=dtype)
    if dim is NOT_GIVEN:
        if keepdim is not NOT_GIVEN:
            raise TypeError(f"prod(): keepdim= needs a dim, as in x.prod(dim, keepdim={keepdim!r}); x.prod() "
                            "without a dim multiplies every element")
        return ProdAll.apply(a)
    return Prod.apply(a, dim, False if keepdim is NOT_GIVEN else flag(keepdim, "keepdim"))


@tensor_method(top_level=True)
def cumsum(self, dim: int, *, dtype=None) -> Tensor:
    return Cumsum.apply(self if dtype is None else self.to(dtype=dtype), dim)


def check_inplace_dtype(self: Tensor, dtype, name: str) -> None:
    """An in-place running sum or product keeps self's dtype: ``dtype=`` may only name it (and a bool
    tensor cannot hold a count)."""
    if dtype is not None and dtype != self.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {self.dtype} and output tensor dtype {dtype} "
                           f"should match: call {name}(dim) out of place with dtype= instead")
    if self._data.dtype == np.bool_:
        raise NotImplementedError(f'"{name}_out_cpu" not implemented for \'Bool\': convert with .long() first')


@tensor_method()
def cumsum_(self, dim: int, *, dtype=None) -> Tensor:
    check_inplace_dtype(self, dtype, "cumsum")
    return self._inplace(Cumsum, dim)
