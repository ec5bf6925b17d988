"""Elementwise operations and their derivatives.

Each op is a ``Function``: ``forward`` computes with NumPy on ``x._data``;
``backward`` is written with tensor operations, so that with
``create_graph=True`` the backward pass is itself recorded and can be
differentiated again. Binary ops accept a Python scalar on either side; its
gradient is ``None``, like any non-Tensor argument.

What forward saves depends on ``ctx.needs_input_grad``, as in PyTorch: ``x * w``
keeps ``w`` only if ``x`` needs a gradient and ``x`` only if ``w`` does. An
operand no needed gradient uses is not held by the graph, and changing it in
place afterwards is no error.

A few backward passes also have a fused Numba kernel (``minigrad.kernels``):
one pass over memory instead of three NumPy passes. Each such op has one
``*_backward`` helper below that holds both the kernel call (the fast path,
for an ordinary backward) and the same formula from tensor operations (its
differentiable twin, when grad mode is on during backward, i.e.
``create_graph=True``), and the two agree on every input, inf and NaN
included (``tests/kernels/test_twins.py``). Gradients that are zero where a mask is
off use ``where``, never ``grad * mask``: like PyTorch, an inf or NaN
gradient arriving at a masked-off element gives 0 there, not NaN.

This file holds the arithmetic: ``+ - * / **`` and negation, each Function followed by its Tensor
methods (ops/registry.py), ``maximum``, and ``add``/``sub`` with ``alpha``. Its neighbours hold
the rest, each Function next to its methods too, and every name is importable from here as
before: ``where.py`` (``Where`` and the operands' helpers), ``exp_log.py`` (exp, log, sqrt,
abs), ``activations.py`` (tanh, sigmoid, relu), ``clamp.py``, ``compare.py`` (``==`` ... and
their in-place forms).
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.core.builtin import plain, record
from minigrad.core.grad_mode import _GradMode
from minigrad.ops.broadcast import broadcast_error, number, sum_to
from minigrad.ops.layout import like_first
from minigrad._tensor import Tensor, _argument, _tensor_argument
from minigrad.ops.registry import alias, binary_operator, tensor_method
# The neighbours (they import nothing from this file); every name they took from it is importable here as before.
from minigrad.ops.where import Where, _array, _float, _shape, _zero_where  # noqa: F401
from minigrad.ops.exp_log import Abs, Exp, Log, Sqrt, _abs, abs_, exp, exp_, log, log_, sqrt, sqrt_  # noqa: F401
from minigrad.ops.activations import (  # noqa: F401
    Relu, Sigmoid, Tanh, ThresholdBackward, _relu_backward, _sigmoid_backward, _tanh_backward, relu, relu_, sigmoid,
    sigmoid_, tanh, tanh_,
)
from minigrad.ops.clamp import Clamp, ClampTensor, _bound, _tensor_bounds, clamp, clamp_  # noqa: F401
from minigrad.ops.compare import Comparison, compare, comparison, comparison_inplace  # noqa: F401


def _binary(numpy_fn, a, b, result_dtype=None) -> Tensor:
    """Apply ``numpy_fn`` with broadcasting and PyTorch's result dtype.

    As PyTorch, a floating-point result is computed in its own dtype: the operands are cast to it
    first (``int_tensor * 2.5`` multiplies in float32, where NumPy would in float64 then round)."""
    x = a._data if isinstance(a, Tensor) else a
    y = b._data if isinstance(b, Tensor) else b
    same = False
    if result_dtype is None:
        # (the common cases, two tensors of one dtype and a float tensor with a Python float,
        # keep the tensor's dtype: no promotion rules to work through)
        same = type(x) is np.ndarray and (
            type(y) is np.ndarray and x.dtype == y.dtype or (type(y) is float or type(y) is int) and x.dtype.kind == "f")
        result_dtype = x.dtype if same else dtypes.result_type(x, y)
        if type(y) is float and same:
            y = np.array(y, result_dtype)  # (the same product: NumPy casts a Python float to the array's float
            # dtype first, but finds that out more slowly than this line; a 0-d array is quicker than a scalar)
    if not same and result_dtype.kind == "f":
        x, y = _computed_in(x, result_dtype), _computed_in(y, result_dtype)
    try:
        out = numpy_fn(x, y)
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None
    if out.dtype != result_dtype:
        out = out.astype(result_dtype)
    if out.ndim > 1 and type(x) is np.ndarray and not x.flags.c_contiguous:  # (rare: a transposed operand)
        out = like_first(out, x)
    return Tensor._wrap(out)


def _grad_times(grad: Tensor, x) -> Tensor:
    """``grad * x`` in a backward: straight to ``_binary`` (what ``Mul`` computes, with its dtype and
    layout rules) when nothing records it, else the recorded tensor op (``create_graph``). Two arrays
    of one dtype, the first row-major, need none of those rules: NumPy's product is ``_binary``'s."""
    if _GradMode.enabled:
        return grad * x
    if isinstance(x, Tensor):
        g, y = grad._data, x._data
        if g.dtype == y.dtype and g.flags.c_contiguous:
            try:
                return Tensor._wrap(np.multiply(g, y))
            except ValueError:  # shapes that do not broadcast (a saved operand's .data replaced since):
                pass  # _binary raises PyTorch's error
    return _binary(np.multiply, grad, x)


def _computed_in(operand, dtype: np.dtype):
    """An operand (array or number) in the dtype the operation computes in."""
    if isinstance(operand, np.ndarray):
        return operand if operand.dtype == dtype else operand.astype(dtype)
    return dtype.type(operand)


def _save_operands(ctx, a, b, keep_a: bool, keep_b: bool, *also) -> None:
    """Save operand ``a`` if ``keep_a`` and ``b`` if ``keep_b`` (tensors, freed after
    backward), and ``also`` (e.g. the output); keep Python numbers on ctx (they cost nothing).
    Nothing, when no input needs a gradient: then the call is not recorded (no_grad, and every op
    a backward runs)."""
    if True not in ctx.needs_input_grad:
        return
    a_is_tensor, b_is_tensor = isinstance(a, Tensor), isinstance(b, Tensor)
    # (save_for_backward's checks are for user code: these are tensors or None by construction)
    ctx._to_save = (a if keep_a and a_is_tensor else None, b if keep_b and b_is_tensor else None, *also)
    ctx.scalars = (None if a_is_tensor else a, None if b_is_tensor else b)
    ctx.shapes = (a._data.shape if a_is_tensor else (), b._data.shape if b_is_tensor else ())


def _saved_operands(ctx) -> tuple:
    """The two operands again (saved tensors, the numbers kept on ctx, or None where
    nothing was saved), then whatever else was saved."""
    saved, (scalar_a, scalar_b) = ctx.saved_tensors, ctx.scalars
    a, b = saved[0], saved[1]
    return (scalar_a if a is None else a, scalar_b if b is None else b) + saved[2:]


def _is_bool(x) -> bool:
    return isinstance(x, (bool, np.bool_)) or (isinstance(x, Tensor) and x._data.dtype == np.bool_)


class Add(Function):
    node_name = "AddBackward0"
    _operands = (0, 1)  # a Python number operand gets an edge too, as in PyTorch

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = _shape(a), _shape(b)
        return _binary(np.add, a, b)

    @staticmethod
    def _unrecorded(a, b):  # (forward without a ctx: what apply runs when nothing records, core/function_rules.py)
        return _binary(np.add, a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(grad, ctx.shapes[1]) if need_b else None)


def _add(a, b):
    """``Add.apply(a, b)``; a plain call of two tensors is recorded directly (core/builtin.py)."""
    if not _GradMode.enabled:  # nothing records: Add._unrecorded, without the trip through apply
        return _binary(np.add, a, b)
    if isinstance(b, Tensor) and isinstance(a, Tensor) and plain(a, b):
        out = _binary(np.add, a, b)
        if a._requires_grad or b._requires_grad:
            if out._data.dtype.kind != "f":
                return Add.apply(a, b)
            ctx = record(Add, (a, b), out, (a._requires_grad, b._requires_grad))
            ctx.shapes = a._data.shape, b._data.shape
        return out
    return Add.apply(a, b)


# A number stays the second input (``2 * x`` is ``Mul(x, 2)``), as PyTorch orders the edges.
binary_operator("add", "add", _add, _add, ufunc=np.add)


class Rsub(Function):
    """``number - x``, as PyTorch's ``rsub``: its node has an edge for ``x`` only (post-hooks see one gradient)."""

    node_name = "RsubBackward1"

    @staticmethod
    def forward(ctx, a, number):
        return Sub.forward(ctx, number, a)

    @staticmethod
    def backward(ctx, grad):
        return -grad, None


def _check_sub(a, b) -> None:
    if _is_bool(a) or _is_bool(b):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


class Sub(Function):
    node_name = "SubBackward0"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        _check_sub(a, b)
        ctx.shapes = _shape(a), _shape(b)
        return _binary(np.subtract, a, b)

    @staticmethod
    def _unrecorded(a, b):
        _check_sub(a, b)
        return _binary(np.subtract, a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(-grad, ctx.shapes[1]) if need_b else None)


binary_operator("sub", "sub", Sub.apply,
                lambda self, other: Sub.apply(other, self) if isinstance(other, Tensor) else Rsub.apply(self, other))


class Mul(Function):
    node_name = "MulBackward0"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        _save_operands(ctx, a, b, need_b, need_a)  # d(ab)/da = b and d(ab)/db = a
        return _binary(np.multiply, a, b)

    @staticmethod
    def _unrecorded(a, b):
        return _binary(np.multiply, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        shape_a, shape_b = ctx.shapes
        return (sum_to(_grad_times(grad, b), shape_a) if need_a else None,
                sum_to(_grad_times(grad, a), shape_b) if need_b else None)


def _mul(a, b):
    """``Mul.apply(a, b)``; a plain call of two tensors is recorded directly (core/builtin.py)."""
    if not _GradMode.enabled:  # nothing records: Mul._unrecorded, without the trip through apply
        return _binary(np.multiply, a, b)
    if isinstance(b, Tensor) and isinstance(a, Tensor) and plain(a, b):
        out = _binary(np.multiply, a, b)
        need_a, need_b = a._requires_grad, b._requires_grad
        if need_a or need_b:
            if out._data.dtype.kind != "f":
                return Mul.apply(a, b)
            ctx = record(Mul, (a, b), out, (need_a, need_b), (a if need_b else None, b if need_a else None))
            ctx.scalars, ctx.shapes = (None, None), (a._data.shape, b._data.shape)
        return out
    return Mul.apply(a, b)


binary_operator("mul", "mul", _mul, _mul, ufunc=np.multiply)


@tensor_method("mul_", "__imul__")
def mul_(self, other) -> Tensor:
    return self._inplace(Mul, _argument("mul_", other))


class Div(Function):
    node_name = "DivBackward0"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, ctx.needs_input_grad[1], True)  # a only for b's gradient
        return Div._unrecorded(a, b)

    @staticmethod
    def _unrecorded(a, b):
        want = dtypes.result_type(_array(a), _array(b))
        if want.kind != "f":  # true division: integers give the default float
            want = dtypes.default_float.numpy
        with np.errstate(divide="ignore", invalid="ignore"):
            return _binary(np.true_divide, a, b, want)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        shape_a, shape_b = ctx.shapes
        # (a / b) / b, as PyTorch: a / (b * b) overflows where b * b does
        return (sum_to(grad / b, shape_a) if need_a else None,
                sum_to(-grad * (a / b / b), shape_b) if need_b else None)


class DivScalar(Div):
    """PyTorch's ``div.Scalar`` overload, which its own C++ code records when it divides by a number
    (as cross_entropy's mean over probability targets does); Python's ``x / 2`` is ``DivBackward0``."""

    node_name = "DivBackward1"


class Reciprocal(Function):
    """``1 / a``. PyTorch computes ``number / tensor`` as ``reciprocal(tensor) * number``:
    the saved value is this private result, so changing the tensor afterwards is allowed."""

    node_name = "ReciprocalBackward0"

    @staticmethod
    def forward(ctx, a):
        with np.errstate(divide="ignore"):
            out = Tensor._wrap(np.reciprocal(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return -grad * (out * out)


def rtruediv(number, a: Tensor) -> Tensor:
    """``number / a`` as PyTorch computes it: ``reciprocal(a) * number`` (two nodes)."""
    return Mul.apply(Reciprocal.apply(a), number)


binary_operator("truediv", None, Div.apply,  # (x.div(y, rounding_mode=...): ops/rounding.py)
                lambda self, other: Div.apply(other, self) if isinstance(other, Tensor) else rtruediv(other, self))


@tensor_method(top_level=True)
def reciprocal(self) -> Tensor:
    return Reciprocal.apply(self)


@tensor_method(top_level=True)
def reciprocal_(self) -> Tensor:
    return self._inplace(Reciprocal)


class Pow(Function):
    """``a ** b``. Both gradients need both operands; the output is saved whenever the
    exponent is a tensor, as PyTorch does (so changing it in place raises there too)."""

    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, b):
        if isinstance(a, Tensor) and isinstance(b, Tensor) and a._data.dtype == b._data.dtype == np.bool_:
            raise NotImplementedError("\"pow\" not implemented for 'Bool': convert with .int() or .float() first")
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _binary(np.power, a, b)
        _save_operands(ctx, a, b, True, True, out if isinstance(b, Tensor) else None)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        shape_a, shape_b = ctx.shapes
        grad_a = grad_b = None
        if need_a:  # b * a^(b-1), and 0 where b == 0 (not 0 * 0^-1 = NaN), as PyTorch
            if isinstance(b, Tensor):
                grad_a = sum_to(_zero_where(b._data == 0, grad * (b * a ** (b - 1))), shape_a)
            elif b == 0:
                grad_a = Tensor._wrap(np.zeros(shape_a, grad._data.dtype))
            else:
                grad_a = grad * (b * a ** (b - 1))
        if need_b:  # a^b * log(a), and 0 where a == 0 and b >= 0 (not 0 * -inf = NaN)
            if isinstance(a, Tensor):
                zero_base, log_a = np.logical_and(a._data == 0, b._data >= 0), a.log()
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    zero_base, log_a = np.logical_and(a == 0, b._data >= 0), float(np.log(a))
            grad_b = sum_to(grad * _zero_where(zero_base, out * log_a), shape_b)
        return grad_a, grad_b


class PowTensor(Pow):
    """``tensor ** tensor``: PyTorch names this case's node PowBackward1."""

    node_name = "PowBackward1"


class PowScalarBase(Pow):
    """``number ** tensor``: PowBackward2 in PyTorch."""

    node_name = "PowBackward2"


binary_operator("pow", "pow", lambda self, other: (PowTensor if isinstance(other, Tensor) else Pow).apply(self, other),
                lambda self, other: PowScalarBase.apply(other, self), top_level=False)  # (functional_ops.pow: a number base too)


@tensor_method()
def pow_(self, exponent) -> Tensor:
    return self._inplace(Pow, _argument("pow_", exponent))


@tensor_method(top_level=True)
def float_power(self, exponent) -> Tensor:
    """``self ** exponent`` in float64, whatever the dtypes (PyTorch's name; either may be a number)."""
    base = self.double() if isinstance(self, Tensor) else float(self)
    exponent = _argument("float_power", exponent)
    return base ** (exponent.double() if isinstance(exponent, Tensor) else float(exponent))


@tensor_method()
def float_power_(self, exponent) -> Tensor:
    if self._data.dtype != np.float64:
        raise RuntimeError(f"the base given to float_power_ has dtype {dtypes.scalar_type_name(self._data.dtype)} "
                           "but the operation's result requires dtype Double: call .double() first")
    exponent = _argument("float_power_", exponent)
    return self.pow_(exponent.double() if isinstance(exponent, Tensor) else float(exponent))


class Neg(Function):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype == np.bool_:
            raise RuntimeError(
                "Negation, the `-` operator, on a bool tensor is not supported. If you are "
                "trying to invert a mask, use the `~` or `logical_not()` operator instead."
            )
        return Tensor._wrap(-a._data)

    @staticmethod
    def backward(ctx, grad):
        return -grad


@tensor_method("__neg__", "neg", top_level=True)
def neg(self) -> Tensor:
    return Neg.apply(self)


@tensor_method(top_level=True)
def neg_(self) -> Tensor:
    return self._inplace(Neg)


@tensor_method("positive", "__pos__", top_level=True, out=False)
def positive(self) -> Tensor:
    """``+x``: x itself (not a copy), as in PyTorch; refused for a bool tensor, as ``-x`` is."""
    if self._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported: a bool tensor has no sign")
    return self


class Maximum(Function):
    node_name = "MaximumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return _binary(np.maximum, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        x, y = a._data, b._data
        # As PyTorch: ties share the gradient equally, the smaller operand gets 0, and
        # where either is NaN (no order) both get the whole gradient.
        shared = Where.apply(x == y, grad / 2, grad)
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(_zero_where(x < y, shared), a.shape) if need_a else None,
                sum_to(_zero_where(x > y, shared), b.shape) if need_b else None)


@tensor_method()
def maximum(self, other: Tensor) -> Tensor:
    return Maximum.apply(self, _tensor_argument("maximum", "other", 1, other))


def _checked_alpha(name: str, self, other, alpha):
    """``(other, alpha)`` for add/sub and add_/sub_ (``self`` is a number in ``minigrad.add(2, x)``),
    with PyTorch's checks of alpha against the result's dtype: a bool alpha only for a bool result,
    a float one not for an integer or bool result."""
    other, alpha = _argument(name, other), number(alpha, "alpha")
    float_self = isinstance(self, Tensor) and self._data.dtype.kind == "f"
    if isinstance(alpha, bool) or not float_self and isinstance(alpha, (float, np.floating)):
        result = dtypes.result_type(_array(self), _array(other))
        if isinstance(alpha, bool) and result.kind != "b":
            raise RuntimeError(f"Boolean alpha only supported for Boolean results: {name}() with a "
                               f"{dtypes.from_numpy_dtype(result)} result takes a number as alpha, e.g. alpha={int(alpha)}")
        if result.kind in "biu" and not isinstance(alpha, bool):
            raise RuntimeError(f"For integral input tensors, argument alpha must not be a floating point number: "
                               f"{name}() with a {dtypes.from_numpy_dtype(result)} result takes an integer alpha")
    return other, alpha


def _with_alpha(numpy_fn, alpha):
    """``numpy_fn(x, alpha * y)`` in the dtype ``_binary`` gives it (alpha does not promote: True + 2 * True
    is True). PyTorch fuses ``x + alpha * y`` (one rounding, a fused multiply-add): for float32 and float16
    float64 gives that exactly (a product of two float32 fits in float64's 53 bits)."""
    def combine(x, y):
        dtype = np.result_type(x, y)
        if dtype.kind == "f" and dtype.itemsize < 8:
            return numpy_fn(np.asarray(x, np.float64), np.asarray(y, np.float64) * np.float64(dtype.type(alpha)))
        return numpy_fn(x, np.asarray(y * alpha, dtype))
    return combine


class AddAlpha(Function):
    """``x.add(y, alpha=a)``: ``x + a * y`` as one node, PyTorch's AddBackward0 with its alpha."""

    node_name = "AddBackward0"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.shapes, ctx.alpha = (_shape(a), _shape(b)), alpha
        return _binary(_with_alpha(np.add, alpha), a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad[:2]
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(grad * ctx.alpha, ctx.shapes[1]) if need_b else None, None)


class SubAlpha(AddAlpha):
    """``x.sub(y, alpha=a)``: ``x - a * y`` as one node (PyTorch's SubBackward0)."""

    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b, alpha):
        ctx.shapes, ctx.alpha = (_shape(a), _shape(b)), -alpha
        return _binary(_with_alpha(np.subtract, alpha), a, b)


# x.add(y, alpha=2) is x + 2 * y, as PyTorch's alpha (keyword-only, as there), recorded as one node.
@tensor_method("add", top_level=True)
def add(self, other, *, alpha=1) -> Tensor:
    other, alpha = _checked_alpha("add", self, other, alpha)
    return Add.apply(self, other) if alpha == 1 else AddAlpha.apply(self, other, alpha)


@tensor_method("sub", top_level=True)
def sub(self, other, *, alpha=1) -> Tensor:
    number(alpha, "alpha")  # (its type first, as PyTorch's argument parser checks it)
    _check_sub(self, other)  # before alpha makes a bool operand a number
    other, alpha = _checked_alpha("sub", self, other, alpha)
    return Sub.apply(self, other) if alpha == 1 else SubAlpha.apply(self, other, alpha)


@tensor_method("add_", "__iadd__")
def add_(self, other, alpha=1) -> Tensor:
    other, alpha = _checked_alpha("add_", self, other, alpha)
    return self._inplace(Add, other) if alpha == 1 else self._inplace(AddAlpha, other, alpha)


@tensor_method("sub_", "__isub__")
def sub_(self, other, alpha=1) -> Tensor:
    number(alpha, "alpha")
    _check_sub(self, other)  # before alpha makes a bool operand a number
    other, alpha = _checked_alpha("sub_", self, other, alpha)
    return self._inplace(Sub, other) if alpha == 1 else self._inplace(SubAlpha, other, alpha)


# -- PyTorch's other names ----------------------------------------------------------------------
alias("multiply", "mul", top_level=True)
alias("multiply_", "mul_")
alias("subtract", "sub", top_level=True)
alias("subtract_", "sub_")
alias("negative", "neg", top_level=True)
alias("negative_", "neg_", top_level=True)

