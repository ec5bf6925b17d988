"""Fused multiply-adds: one call, one node, for the sums optimizers and layers write most.

    addcmul(x, t1, t2, value)      x + value·t1·t2
    addcdiv(x, t1, t2, value)      x + value·t1/t2        (Adam's step is p.addcdiv_(m, √v + ε, value=-lr))
    addmv(x, M, v, beta, alpha)    beta·x + alpha·(M @ v)
    addr(x, u, v, beta, alpha)     beta·x + alpha·(u ⊗ v)  (outer product)
    addbmm(x, B1, B2, beta, alpha) beta·x + alpha·Σᵢ B1[i] @ B2[i]
    baddbmm(x, B1, B2, beta, alpha) beta·x + alpha·(B1[i] @ B2[i] for each i)

Their derivatives are PyTorch's formulas, written with tensor ops so they differentiate again.
With P = A ∘ B the product, the gradient of ``beta·x + alpha·P`` is ``beta·grad`` for x
(summed back to its shape: x broadcasts), and ``alpha·`` the product's gradient for A and B
(matmul's: ``grad @ Bᵀ`` and ``Aᵀ @ grad``). ``beta = 0`` ignores x, its NaN and inf too.

The dtype rules are PyTorch's, which differ between them: addcmul, addcdiv and addr promote
their operands as ``+`` does (addcdiv refuses two integer operands: it once divided them as
integers); the matrix ones want one dtype for all three. In integer results beta, alpha and
value are truncated to integers, as PyTorch converts them to the tensor's type; addr, which
also takes bools (``beta·x or alpha·(u ⊗ v)``), refuses a float for an integer result and a
bool for a non-bool one.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, number, sum_to, wrap_dim
from minigrad.ops.matmul import Dot
from minigrad.ops.registry import alias, tensor_method
from minigrad._tensor import Tensor, check_tensor


def _promoted(*tensors: Tensor) -> np.dtype:
    """PyTorch's result dtype of several tensors: the dimensioned ones decide, a 0-d one only when
    it is of a higher category (bool < integer < float), as for two (``dtypes.result_type``)."""
    def combined(group):
        dtype = group[0]
        for other in group[1:]:
            dtype = dtypes.result_type(np.empty(0, dtype), np.empty(0, other))
        return dtype

    dimensioned = [t._data.dtype for t in tensors if t.ndim]
    zero_dim = [t._data.dtype for t in tensors if not t.ndim]
    if not dimensioned or not zero_dim:
        return combined(dimensioned or zero_dim)
    return dtypes.result_type(np.empty(0, combined(dimensioned)), np.empty((), combined(zero_dim)))


def _scalar(value, dtype: np.dtype):
    """``value`` (beta, alpha, value=) as PyTorch converts it to the result's type: truncated for integers."""
    return int(value) if dtype.kind in "iu" else value


def _scaled(grad: Tensor, factor) -> Tensor:
    """PyTorch's maybe_multiply: ``grad * factor``, or ``grad`` itself for a factor of 1."""
    return grad if factor == 1 else grad * factor


# -- addcmul, addcdiv --------------------------------------------------------------------------------
class Addcmul(Function):
    """``x + value * t1 * t2``, in the promoted dtype of the three."""

    node_name = "AddcmulBackward0"

    @staticmethod
    def forward(ctx, x, t1, t2, value):
        dtype = _promoted(x, t1, t2)
        if dtype == np.bool_:
            raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool': convert with .int() first")
        value = _scalar(value, dtype)
        need_x, need_1, need_2 = ctx.needs_input_grad[:3]
        ctx.save_for_backward(t1 if need_2 else None, t2 if need_1 else None)
        ctx.shapes, ctx.value = (x.shape, t1.shape, t2.shape), value
        a, b, c = (t._data.astype(dtype, copy=False) for t in (x, t1, t2))
        with np.errstate(all="ignore"):
            return Tensor._wrap(_broadcast_sum(a, (np.asarray(value, dtype) * b) * c))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        need_x, need_1, need_2 = ctx.needs_input_grad[:3]
        shape_x, shape_1, shape_2 = ctx.shapes
        return (sum_to(grad, shape_x) if need_x else None,
                sum_to(grad * (t2 * ctx.value), shape_1) if need_1 else None,
                sum_to(grad * (t1 * ctx.value), shape_2) if need_2 else None, None)


@tensor_method(top_level=True)
def addcmul(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``self + value * tensor1 * tensor2``, all three broadcast together."""
    t1, t2, value = _pointwise_arguments("addcmul", tensor1, tensor2, value)
    return Addcmul.apply(self, t1, t2, value)


@tensor_method()
def addcmul_(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    t1, t2, value = _pointwise_arguments("addcmul_", tensor1, tensor2, value)
    return self._inplace(Addcmul, t1, t2, value)


class Addcdiv(Function):
    """``x + value * t1 / t2``, in the promoted dtype of the three."""

    node_name = "AddcdivBackward0"

    @staticmethod
    def forward(ctx, x, t1, t2, value):
        if t1._data.dtype.kind != "f" and t2._data.dtype.kind != "f":
            raise RuntimeError("Integer division with addcdiv is no longer supported: convert tensor1 or tensor2 "
                               "with .float() for a true division, or use (tensor1 // tensor2) for the old one")
        dtype = _promoted(x, t1, t2)
        ctx.save_for_backward(t1, t2)
        ctx.shapes, ctx.value = (x.shape, t1.shape, t2.shape), value
        a, b, c = (t._data.astype(dtype, copy=False) for t in (x, t1, t2))
        with np.errstate(all="ignore"):
            return Tensor._wrap(_broadcast_sum(a, (np.asarray(value, dtype) * b) / c))

    @staticmethod
    def backward(ctx, grad):
        t1, t2 = ctx.saved_tensors
        need_x, need_1, need_2 = ctx.needs_input_grad[:3]
        shape_x, shape_1, shape_2 = ctx.shapes
        return (sum_to(grad, shape_x) if need_x else None,
                sum_to(grad * (ctx.value / t2), shape_1) if need_1 else None,
                sum_to(-grad * (ctx.value * t1 / (t2 * t2)), shape_2) if need_2 else None, None)


@tensor_method(top_level=True)
def addcdiv(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    """``self + value * tensor1 / tensor2``, all three broadcast together (a true division)."""
    t1, t2, value = _pointwise_arguments("addcdiv", tensor1, tensor2, value)
    return Addcdiv.apply(self, t1, t2, value)


@tensor_method()
def addcdiv_(self, tensor1: Tensor, tensor2: Tensor, *, value=1) -> Tensor:
    t1, t2, value = _pointwise_arguments("addcdiv_", tensor1, tensor2, value)
    return self._inplace(Addcdiv, t1, t2, value)


def _broadcast_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise broadcast_error(a.shape, b.shape) from None
    return np.array(np.broadcast_to(a + b, shape))


def _pointwise_arguments(name: str, tensor1, tensor2, value) -> tuple:
    check_tensor(name, "tensor1", 1, tensor1)
    check_tensor(name, "tensor2", 2, tensor2)
    try:  # (the factors' shapes are checked first, as in PyTorch)
        np.broadcast_shapes(tensor1.shape, tensor2.shape)
    except ValueError:
        raise broadcast_error(tensor1.shape, tensor2.shape) from None
    return tensor1, tensor2, number(value, "value")


# -- beta * x + alpha * a product: addmv, addr, addbmm, baddbmm -----------------------------------------
class _AddProduct(Function):
    """``beta * x + alpha * product(a, b)``; a subclass says which product and its two gradients."""

    @staticmethod
    def product(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    @staticmethod
    def product_grads(grad: Tensor, a: Tensor, b: Tensor) -> tuple:
        """The gradients of ``product(a, b)`` for a and b (either saved tensor may be None if unneeded)."""
        raise NotImplementedError

    @classmethod
    def forward(cls, ctx, x, a, b, beta, alpha, dtype):
        need_x, need_a, need_b = ctx.needs_input_grad[:3]
        ctx.save_for_backward(a if need_b else None, b if need_a else None)
        ctx.shape, ctx.beta, ctx.alpha, ctx.product_grads = x.shape, beta, alpha, cls.product_grads
        data_a, data_b = a._data.astype(dtype, copy=False), b._data.astype(dtype, copy=False)
        with np.errstate(all="ignore"):
            if dtype == np.bool_:  # (addr of bools: "and" for the products, "or" for the sum)
                out = bool(alpha) & cls.product(data_a, data_b)
                out = out | (bool(beta) & x._data) if beta else out
            else:
                product = cls.product(data_a, data_b)
                out = product if alpha == 1 else np.asarray(alpha, dtype) * product
                if beta != 0:  # beta = 0: x is ignored, its NaN and inf too
                    data_x = x._data.astype(dtype, copy=False)
                    out = out + (data_x if beta == 1 else np.asarray(beta, dtype) * data_x)
        return Tensor._wrap(np.array(np.broadcast_to(out, np.broadcast_shapes(np.shape(out), x.shape)), dtype))

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_x, need_a, need_b = ctx.needs_input_grad[:3]
        grad_x = sum_to(_scaled(grad, ctx.beta), ctx.shape) if need_x else None
        grad_a = grad_b = None
        if need_a or need_b:
            grad_a, grad_b = ctx.product_grads(_scaled(grad, ctx.alpha), a, b)
        return grad_x, grad_a if need_a else None, grad_b if need_b else None, None, None, None


class Addmv(_AddProduct):
    node_name = "AddmvBackward0"

    @staticmethod
    def product(a, b):
        return a @ b

    @staticmethod
    def product_grads(grad, mat, vec):
        return (grad.outer(vec) if vec is not None else None,
                mat.t().mv(grad) if mat is not None else None)


@tensor_method(top_level=True)
def addmv(self, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * (mat @ vec)``, ``self`` broadcast to the product's length."""
    return Addmv.apply(*_addmv(self, mat, vec, beta, alpha))


@tensor_method(top_level=True)
def addmv_(self, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self._inplace(Addmv, *_addmv(self, mat, vec, beta, alpha)[1:])


class Addr(_AddProduct):
    node_name = "AddrBackward0"

    @staticmethod
    def product(a, b):
        return np.multiply.outer(a, b)

    @staticmethod
    def product_grads(grad, vec1, vec2):
        return (grad.mv(vec2) if vec2 is not None else None,
                grad.t().mv(vec1) if vec1 is not None else None)


@tensor_method(top_level=True)
def addr(self, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * outer(vec1, vec2)``, ``self`` broadcast to the product's shape."""
    return Addr.apply(*_addr(self, vec1, vec2, beta, alpha))


@tensor_method()
def addr_(self, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self._inplace(Addr, *_addr(self, vec1, vec2, beta, alpha)[1:])


class Baddbmm(_AddProduct):
    node_name = "BaddbmmBackward0"

    @staticmethod
    def product(a, b):
        return np.matmul(a, b)

    @staticmethod
    def product_grads(grad, batch1, batch2):
        return (grad.bmm(batch2.transpose(1, 2)) if batch2 is not None else None,
                batch1.transpose(1, 2).bmm(grad) if batch1 is not None else None)


@tensor_method(top_level=True)
def baddbmm(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * (batch1 @ batch2)``: one addmm per batch element."""
    return Baddbmm.apply(*_baddbmm(self, batch1, batch2, beta, alpha))


@tensor_method()
def baddbmm_(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self._inplace(Baddbmm, *_baddbmm(self, batch1, batch2, beta, alpha)[1:])


class Addbmm(_AddProduct):
    node_name = "AddbmmBackward0"

    @staticmethod
    def product(a, b):
        return np.matmul(a, b).sum(0, dtype=a.dtype) if len(a) else np.zeros((a.shape[1], b.shape[2]), a.dtype)

    @staticmethod
    def product_grads(grad, batch1, batch2):
        reference = batch1 if batch1 is not None else batch2
        expanded = grad.unsqueeze(0).expand(reference.shape[0], *grad.shape)
        return (expanded.bmm(batch2.transpose(1, 2)) if batch2 is not None else None,
                batch1.transpose(1, 2).bmm(expanded) if batch1 is not None else None)


@tensor_method(top_level=True)
def addbmm(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """``beta * self + alpha * (the sum of batch1[i] @ batch2[i])``."""
    return Addbmm.apply(*_addbmm(self, batch1, batch2, beta, alpha))


@tensor_method()
def addbmm_(self, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self._inplace(Addbmm, *_addbmm(self, batch1, batch2, beta, alpha)[1:])


def _same_dtypes(name: str, x: Tensor, a: Tensor, b: Tensor) -> np.dtype:
    """addmv, addbmm and baddbmm compute in one dtype: PyTorch refuses a mix, and bools."""
    if not x._data.dtype == a._data.dtype == b._data.dtype:
        names = ", ".join(dtypes.scalar_type_name(t._data.dtype) for t in (x, a, b))
        raise RuntimeError(f"{name} input tensors must have the same dtype, but got {names}: convert them "
                           "with .to(dtype)")
    if x._data.dtype == np.bool_:
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool': convert the tensors with .int() first")
    return x._data.dtype


def _addr_dtype(x: Tensor, vec1: Tensor, vec2: Tensor, beta, alpha) -> np.dtype:
    """addr promotes its operands; a bool result takes bool-like beta and alpha, an integer one no floats."""
    dtype = _promoted(x, vec1, vec2)
    for name, s in (("beta", beta), ("alpha", alpha)):
        if isinstance(s, (bool, np.bool_)) and dtype != np.bool_:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results: pass {name}={int(s)}")
        if isinstance(s, (float, np.floating)) and dtype.kind in "biu":
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a floating point "
                               f"number: pass an int, or convert the tensors with .float()")
    return dtype


def _expandable(name: str, x: Tensor, shape: tuple) -> None:
    """x must broadcast to the product's shape (PyTorch expands it)."""
    try:
        if np.broadcast_shapes(x.shape, shape) == shape:
            return
    except ValueError:
        pass
    raise RuntimeError(f"{name}: the expanded size of the input {list(x.shape)} must match the product's "
                       f"size {list(shape)}: The expanded size of the tensor must match the existing size")


def _scalars(beta, alpha) -> tuple:
    return number(beta, "beta"), number(alpha, "alpha")


def _addmv(self: Tensor, mat, vec, beta, alpha) -> tuple:
    check_tensor("addmv", "mat", 1, mat)
    check_tensor("addmv", "vec", 2, vec)
    beta, alpha = _scalars(beta, alpha)
    if mat.ndim != 2 or vec.ndim != 1 or self.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {self.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({self.shape[0] if self.ndim else 1}), "
                           f"mat ({mat.shape[0]}x{mat.shape[1]}), vec ({vec.shape[0]})")
    dtype = _same_dtypes("addmv", self, mat, vec)
    _expandable("addmv", self, (mat.shape[0],))
    return self, mat, vec, _scalar(beta, dtype), _scalar(alpha, dtype), dtype


def _addr(self: Tensor, vec1, vec2, beta, alpha) -> tuple:
    check_tensor("addr", "vec1", 1, vec1)
    check_tensor("addr", "vec2", 2, vec2)
    beta, alpha = _scalars(beta, alpha)
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    dtype = _addr_dtype(self, vec1, vec2, beta, alpha)
    _expandable("addr", self, (vec1.shape[0], vec2.shape[0]))
    return self, vec1, vec2, beta, alpha, dtype


def _batches(name: str, self: Tensor, batch1, batch2, beta, alpha, result_dims: tuple) -> tuple:
    """The checks addbmm and baddbmm share, in PyTorch's order: the input is expanded to the result's
    shape (dimension ``d`` of ``batch1`` or ``batch2`` for each ``(which, d)``) before the ranks are checked."""
    check_tensor(name, "batch1", 1, batch1)
    check_tensor(name, "batch2", 2, batch2)
    beta, alpha = _scalars(beta, alpha)
    batches = (batch1, batch2)
    _expandable(name, self, tuple(batches[i].shape[wrap_dim(d, batches[i].ndim)] for i, d in result_dims))
    for argument, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{argument} must be a 3D tensor, got {t.ndim}-D: use matmul to broadcast")
    return beta, alpha


def _addbmm(self: Tensor, batch1, batch2, beta, alpha) -> tuple:
    beta, alpha = _batches("addbmm", self, batch1, batch2, beta, alpha, ((0, 1), (1, 2)))
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {batch1.shape[0]} and "
                           f"{batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x{batch1.shape[2]} and "
                           f"{batch2.shape[1]}x{batch2.shape[2]})")
    dtype = _same_dtypes("addbmm", self, batch1, batch2)
    if batch1.shape[0] == 0 and dtype.kind in "iu" and isinstance(beta, float) and beta != 0:
        # (no batches: PyTorch returns self.mul_(beta), which refuses a float for integers)
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{dtypes.scalar_type_name(dtype)}: pass an integer beta")
    return self, batch1, batch2, _scalar(beta, dtype), _scalar(alpha, dtype), dtype


def _baddbmm(self: Tensor, batch1, batch2, beta, alpha) -> tuple:
    beta, alpha = _batches("baddbmm", self, batch1, batch2, beta, alpha, ((0, 0), (0, 1), (1, 2)))
    expected = (batch1.shape[0], batch1.shape[2])
    if batch2.shape[:2] != expected:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: {list(expected)} "
                           f"but got: {list(batch2.shape[:2])}.")
    dtype = _same_dtypes("baddbmm", self, batch1, batch2)
    return self, batch1, batch2, _scalar(beta, dtype), _scalar(alpha, dtype), dtype


# -- vdot, ger ----------------------------------------------------------------------------------------
class Vdot(Dot):
    """``vdot``: for complex numbers the first vector conjugated; for minigrad's real ones, ``dot``."""

    node_name = "VdotBackward0"


@tensor_method(top_level=True)
def vdot(self, other: Tensor) -> Tensor:
    """The sum of the products of two vectors of the same length (conjugating ``self``: a no-op for reals)."""
    check_tensor("vdot", "other", 1, other)
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
    if self._data.dtype != other._data.dtype:
        raise RuntimeError(f"expected both vectors to have same dtype, but found "
                           f"{dtypes.scalar_type_name(self._data.dtype)} and "
                           f"{dtypes.scalar_type_name(other._data.dtype)}: convert one with .to(dtype)")
    if self.shape[0] != other.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{self.shape[0]}] and src [{other.shape[0]}] "
                           f"to have the same number of elements, but got {self.shape[0]} and {other.shape[0]} "
                           "elements respectively")
    return Vdot.apply(self, other)


alias("ger", "outer", top_level=True)  # (PyTorch's older name; the outer product)
