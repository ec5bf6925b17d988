"""The strict matrix products ``mm``, ``mv``, ``bmm``, and the transpose ``t``.

``matmul`` (``@``) accepts any ranks and broadcasts batch dimensions. ``mm``
(matrix @ matrix), ``mv`` (matrix @ vector) and ``bmm`` (batch @ batch, equal
batch sizes) accept exactly one case each and say so when given another, as in
PyTorch. Their arithmetic and derivatives are matmul's (``ops/matmul.py``).
"""
from __future__ import annotations

from minigrad.autograd.function import Function
from minigrad.ops.matmul import Bmm, Mm, Mv
from minigrad.ops.shape import view_of
from minigrad._tensor import Tensor, _tensor_argument
from minigrad.ops.registry import tensor_method


@tensor_method(top_level=True)
def mm(a: Tensor, mat2: Tensor) -> Tensor:
    """``a @ mat2`` for two matrices: (n, k) @ (k, m) -> (n, m)."""
    mat2 = _tensor_argument("mm", "mat2", 1, mat2)
    if a.ndim != 2:
        raise RuntimeError(f"self must be a matrix (mm takes 2-D tensors; got {a.ndim}-D): use matmul for other ranks")
    if mat2.ndim != 2:
        raise RuntimeError(f"mat2 must be a matrix (mm takes 2-D tensors; got {mat2.ndim}-D): use matmul for other ranks")
    return Mm.apply(a, mat2)


@tensor_method(top_level=True)
def mv(a: Tensor, vec: Tensor) -> Tensor:
    """``a @ vec`` for a matrix and a vector: (n, k) @ (k,) -> (n,)."""
    vec = _tensor_argument("mv", "vec", 1, vec)
    if a.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, {vec.ndim}")
    if a.shape[1] != vec.shape[0]:
        raise RuntimeError(
            f"size mismatch, got input ({a.shape[0]}), mat ({a.shape[0]}x{a.shape[1]}), vec ({vec.shape[0]})"
        )
    return Mv.apply(a, vec)


@tensor_method(top_level=True)
def bmm(a: Tensor, batch2: Tensor) -> Tensor:
    """A batch of matrix products: (B, n, k) @ (B, k, m) -> (B, n, m), without broadcasting."""
    batch2 = _tensor_argument("bmm", "mat2", 1, batch2)
    for name, t in (("batch1", a), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor (got {t.ndim}-D): use matmul to broadcast")
    if batch2.shape[:2] != (a.shape[0], a.shape[2]):
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{a.shape[0]}, {a.shape[2]}] "
            f"but got: [{batch2.shape[0]}, {batch2.shape[1]}]."
        )
    return Bmm.apply(a, batch2)


class T(Function):
    """``t()``: the transpose of a matrix; a vector or a 0-d tensor is returned as a view of itself."""

    node_name = "TBackward0"

    @staticmethod
    def forward(ctx, a):
        if a.ndim > 2:
            raise RuntimeError(
                f"t() expects a tensor with <= 2 dimensions, but self is {a.ndim}D: use transpose(dim0, dim1) or .mT"
            )
        return view_of(a, a._data.T, (T, ()))  # the step: how to take this view again from its base

    @staticmethod
    def backward(ctx, grad):
        return grad.t()


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method(top_level=True, out=False)
def t(self) -> Tensor:
    return T.apply(self)
