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
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes, kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.ops.broadcast import broadcast_error, number, sum_to
from minigrad.ops.layout import like_first
from minigrad._tensor import Tensor, _argument, _operand, _tensor_argument
from minigrad.ops.registry import alias, binary_operator, tensor_method


def _array(x):
    return x._data if isinstance(x, Tensor) else x


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
            type(y) is np.ndarray and x.dtype == y.dtype or type(y) is float and x.dtype.kind == "f")
        result_dtype = x.dtype if same else dtypes.result_type(x, y)
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


def _computed_in(operand, dtype: np.dtype):
    """An operand (array or number) in the dtype the operation computes in."""
    if isinstance(operand, np.ndarray):
        return operand if operand.dtype == dtype else operand.astype(dtype)
    return dtype.type(operand)


def _float(a: Tensor) -> np.ndarray:
    """The input of a floating-point function: integer and bool tensors become the default float."""
    x = a._data
    return x if x.dtype.kind == "f" else x.astype(dtypes.default_float.numpy)


def _shape(x) -> tuple:
    return x._data.shape if isinstance(x, Tensor) else ()


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


def _zero_where(mask: np.ndarray, grad: Tensor) -> Tensor:
    """``grad`` with 0 where ``mask`` is True: PyTorch's ``where(mask, 0, grad)``, so an
    inf or NaN gradient at a masked-off element gives 0 (``grad * ~mask`` would give NaN).

    One expression for both kinds of backward: ``Where`` computes with NumPy and is
    recorded only when grad mode is on (``create_graph=True``).
    """
    return Where.apply(mask, 0.0, grad)


class Add(Function):
    node_name = "AddBackward0"
    _operands = (0, 1)  # a Python number operand gets an edge too, as in PyTorch

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = _shape(a), _shape(b)
        return _binary(np.add, a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(grad, ctx.shapes[1]) if need_b else None)


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
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(-grad, ctx.shapes[1]) if need_b else None)


class Mul(Function):
    node_name = "MulBackward0"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        need_a, need_b = ctx.needs_input_grad
        _save_operands(ctx, a, b, need_b, need_a)  # d(ab)/da = b and d(ab)/db = a
        return _binary(np.multiply, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        shape_a, shape_b = ctx.shapes
        return (sum_to(grad * b, shape_a) if need_a else None,
                sum_to(grad * a, shape_b) if need_b else None)


class Div(Function):
    node_name = "DivBackward0"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, ctx.needs_input_grad[1], True)  # a only for b's gradient
        x, y = _array(a), _array(b)
        want = dtypes.result_type(x, y)
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


class Exp(Function):
    node_name = "ExpBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(np.exp(_float(a)))
        ctx.save_for_backward(out)  # d/dx e^x = e^x: the output is all we need
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad * out


class Log(Function):
    node_name = "LogBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Tensor._wrap(np.log(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / a


class Sqrt(Function):
    node_name = "SqrtBackward0"

    @staticmethod
    def forward(ctx, a):
        with np.errstate(invalid="ignore"):
            out = Tensor._wrap(np.sqrt(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return grad / (2 * out)


class Abs(Function):
    node_name = "AbsBackward0"

    @staticmethod
    def forward(ctx, a):
        if a._data.dtype == np.bool_:
            raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool': a bool has no sign")
        ctx.save_for_backward(a)
        return Tensor._wrap(np.abs(a._data))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        # PyTorch's grad * sgn(x): 0 at NaN, and a node under create_graph (its derivative
        # is 0, but the gradient requires grad whenever x does, as in PyTorch)
        return grad * a.sign()


def _tanh_backward(out: Tensor, grad: Tensor) -> Tensor:
    """grad * (1 - y*y) from the saved output y: the kernel, or its recorded twin."""
    if not is_grad_enabled():
        return Tensor._wrap(kernels.tanh_backward(out._data, grad._data))
    return grad * (1 - out * out)


class Tanh(Function):
    node_name = "TanhBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(np.tanh(_float(a)))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return _tanh_backward(out, grad)


def _sigmoid_backward(out: Tensor, grad: Tensor) -> Tensor:
    """grad * y * (1 - y) from the saved output y: the kernel, or its recorded twin."""
    if not is_grad_enabled():
        return Tensor._wrap(kernels.sigmoid_backward(out._data, grad._data))
    return grad * out * (1 - out)


class Sigmoid(Function):
    node_name = "SigmoidBackward0"

    @staticmethod
    def forward(ctx, a):
        x = _float(a)
        # exp(-|x|) never overflows: the two branches are the same function
        e = np.exp(-np.abs(x))
        out = Tensor._wrap(np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return _sigmoid_backward(out, grad)


def _relu_backward(out: Tensor, grad: Tensor) -> Tensor:
    """grad, and 0 where the output is <= 0: PyTorch's ``threshold_backward``.

    An inf or NaN gradient at a dead unit gives 0 (not NaN), and a NaN unit passes
    its gradient (NaN <= 0 is false). The kernel, or the same kernel recorded as a node.
    """
    if not is_grad_enabled():
        return Tensor._wrap(kernels.relu_backward(out._data, grad._data))
    return ThresholdBackward.apply(grad, out)


class ThresholdBackward(Function):
    """relu's backward as a node of its own, as PyTorch records it under ``create_graph``.

    Its result depends on the saved output (with a zero derivative), so it requires
    grad whenever that output does, even when the upstream gradient does not: as in
    PyTorch, ``x.grad`` of ``relu(x).sum().backward(create_graph=True)`` requires grad.
    """

    node_name = "ThresholdBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, out):
        ctx.save_for_backward(out)
        return Tensor._wrap(kernels.relu_backward(out._data, grad._data))

    @staticmethod
    def backward(ctx, grad_grad):
        out, = ctx.saved_tensors
        return _relu_backward(out, grad_grad), Tensor._wrap(np.zeros_like(out._data))


class Relu(Function):
    node_name = "ReluBackward0"

    @staticmethod
    def forward(ctx, a):
        out = Tensor._wrap(np.maximum(a._data, 0).astype(a._data.dtype, copy=False))
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return _relu_backward(out, grad)


class Clamp(Function):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None: pass min=, max= or both")
        ctx.save_for_backward(a)
        ctx.bounds = min, max
        want = a._data.dtype  # int_tensor.clamp(min=0.5) is float32, as in PyTorch
        for bound in (min, max):
            if bound is not None:
                want = dtypes.result_type(np.empty(0, want), bound)
        return Tensor._wrap(np.clip(a._data, min, max).astype(want, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        low, high = ctx.bounds
        outside = np.zeros(a.shape, dtype=bool)  # NaN is outside: its gradient is 0, as in PyTorch
        if low is not None:
            outside |= ~(a._data >= low)
        if high is not None:
            outside |= ~(a._data <= high)
        return _zero_where(outside, grad), None, None


class ClampTensor(Function):
    """``clamp`` with tensor bounds (either may be None), broadcast against the input, as PyTorch's
    ``clamp.Tensor``. The input's gradient passes where min <= x <= max; a bound gets it where it
    decided the value: min where x < min (and min < max), max where x > max (or max < min, since
    then max wins everywhere)."""

    node_name = "ClampBackward0"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of 'min' or 'max' must not be None: pass min=, max= or both")
        ctx.save_for_backward(a, min, max)
        x, out, want = a._data, a._data, a._data.dtype
        for bound, numpy_fn in ((min, np.maximum), (max, np.minimum)):
            if bound is not None:
                try:
                    out = numpy_fn(out, bound._data)
                except ValueError:
                    raise broadcast_error(np.shape(out), bound.shape) from None
                want = dtypes.result_type(np.empty((0,) * x.ndim, want), bound._data)
        return Tensor._wrap(out.astype(want, copy=False))

    @staticmethod
    def backward(ctx, grad):
        a, low, high = ctx.saved_tensors
        need_a, need_low, need_high = ctx.needs_input_grad
        x = a._data
        keep = np.ones(np.shape(grad._data), dtype=bool)  # where x itself is the result (NaN x: nowhere)
        if low is not None:
            keep &= x >= low._data
        if high is not None:
            keep &= x <= high._data
        grad_low = grad_high = None
        if need_low:
            decided = x < low._data
            if high is not None:
                decided = decided & (low._data < high._data)
            grad_low = sum_to(_zero_where(~np.broadcast_to(decided, keep.shape), grad), low.shape)
        if need_high:
            decided = x > high._data
            if low is not None:
                decided = decided | (high._data < low._data)
            grad_high = sum_to(_zero_where(~np.broadcast_to(decided, keep.shape), grad), high.shape)
        return (sum_to(_zero_where(~keep, grad), a.shape) if need_a else None), grad_low, grad_high


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


class Where(Function):
    node_name = "WhereBackward0"
    _operands = (1, 2)  # the condition has no edge

    @staticmethod
    def forward(ctx, condition, a, b):
        cond = np.asarray(_array(condition), dtype=bool)
        # Saved as PyTorch saves it: a second backward raises, and a condition tensor changed
        # in place before backward is a version-counter error instead of a wrong gradient.
        is_bool_tensor = isinstance(condition, Tensor) and condition._data is cond
        ctx.save_for_backward(condition if is_bool_tensor else Tensor._wrap(cond))
        ctx.shapes = _shape(a), _shape(b)
        x, y = _array(a), _array(b)
        try:
            out = np.where(cond, x, y)
        except ValueError:
            raise broadcast_error(cond.shape, np.broadcast_shapes(np.shape(x), np.shape(y))) from None
        return Tensor._wrap(out.astype(dtypes.result_type(x, y), copy=False))

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad[1:]
        cond = ctx.saved_tensors[0]._data
        return (None,
                sum_to(Where.apply(cond, grad, 0.0), ctx.shapes[0]) if need_a else None,
                sum_to(Where.apply(cond, 0.0, grad), ctx.shapes[1]) if need_b else None)


def compare(numpy_fn, a, b):
    """A comparison: a boolean tensor, outside the graph (it has no gradient)."""
    b = _operand(b)
    if b is NotImplemented:  # e.g. tensor == None: let Python answer False
        return NotImplemented
    x, y = _array(a), _array(b)
    try:
        return Tensor._wrap(np.asarray(numpy_fn(x, y)))
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
# A number stays the second input (``2 * x`` is ``Mul(x, 2)``), as PyTorch orders the edges.
binary_operator("add", "add", Add.apply, Add.apply)
binary_operator("sub", "sub", Sub.apply,
                lambda self, other: Sub.apply(other, self) if isinstance(other, Tensor) else Rsub.apply(self, other))
binary_operator("mul", "mul", Mul.apply, Mul.apply)
binary_operator("truediv", None, Div.apply,  # (x.div(y, rounding_mode=...): ops/rounding.py)
                lambda self, other: Div.apply(other, self) if isinstance(other, Tensor) else rtruediv(other, self))
binary_operator("pow", "pow", lambda self, other: (PowTensor if isinstance(other, Tensor) else Pow).apply(self, other),
                lambda self, other: PowScalarBase.apply(other, self), top_level=False)  # (functional_ops.pow: a number base too)


@tensor_method("__neg__", "neg", top_level=True)
def neg(self) -> Tensor:
    return Neg.apply(self)


def comparison(dunder: str, method: str, numpy_fn) -> None:
    """Declare the operator (``x == None`` is NotImplemented, so Python answers False) and the
    method form, which refuses a non-operand (``x.eq(None)``) with PyTorch's TypeError."""
    tensor_method(dunder)(lambda self, other: compare(numpy_fn, self, other))
    tensor_method(method, top_level=True)(
        lambda self, other: compare(numpy_fn, self, _argument(method, other)))


comparison("__eq__", "eq", np.equal)
comparison("__ne__", "ne", np.not_equal)
comparison("__lt__", "lt", np.less)
comparison("__le__", "le", np.less_equal)
comparison("__gt__", "gt", np.greater)
comparison("__ge__", "ge", np.greater_equal)


@tensor_method(top_level=True)
def exp(self) -> Tensor:
    return Exp.apply(self)


@tensor_method(top_level=True)
def log(self) -> Tensor:
    return Log.apply(self)


@tensor_method(top_level=True)
def sqrt(self) -> Tensor:
    return Sqrt.apply(self)


@tensor_method("abs", top_level=True)
def _abs(self) -> Tensor:
    return Abs.apply(self)


@tensor_method(top_level=True)
def tanh(self) -> Tensor:
    return Tanh.apply(self)


@tensor_method(top_level=True)
def sigmoid(self) -> Tensor:
    return Sigmoid.apply(self)


@tensor_method(top_level=True, out=False)
def relu(self) -> Tensor:
    return Relu.apply(self)


@tensor_method("clamp", "clip", top_level=True)
def clamp(self, min=None, max=None) -> Tensor:
    if _tensor_bounds(min, max):
        return ClampTensor.apply(self, min, max)
    return Clamp.apply(self, _bound(min, "min"), _bound(max, "max"))


def _bound(value, argument: str):
    """A clamp bound: None or a number (a 0-d tensor is one, as in PyTorch)."""
    return value if value is None else number(value, argument)


def _tensor_bounds(min, max) -> bool:
    """Whether the bounds take PyTorch's tensor overload: each a tensor or None, one of them a tensor
    that is not 0-d (a 0-d tensor beside a number counts as a number, as there)."""
    tensors = [b for b in (min, max) if isinstance(b, Tensor)]
    if not tensors:
        return False
    others = [(name, b) for name, b in (("min", min), ("max", max)) if b is not None and not isinstance(b, Tensor)]
    if not others:
        return True
    if all(t.ndim == 0 for t in tensors):
        return False
    name, value = others[0]
    raise TypeError(f"clamp(): argument '{name}' must be a Tensor or None when the other bound is a tensor, not "
                    f"{type(value).__name__}: wrap it with minigrad.tensor(...) (PyTorch has no mixed overload)")


@tensor_method()
def maximum(self, other: Tensor) -> Tensor:
    return Maximum.apply(self, _tensor_argument("maximum", "other", 1, other))


@tensor_method(top_level=True)
def reciprocal(self) -> Tensor:
    return Reciprocal.apply(self)


@tensor_method(top_level=True)
def exp_(self) -> Tensor:
    return self._inplace(Exp)


@tensor_method(top_level=True)
def log_(self) -> Tensor:
    return self._inplace(Log)


@tensor_method(top_level=True)
def sqrt_(self) -> Tensor:
    return self._inplace(Sqrt)


@tensor_method(top_level=True)
def abs_(self) -> Tensor:
    return self._inplace(Abs)


@tensor_method(top_level=True)
def neg_(self) -> Tensor:
    return self._inplace(Neg)


@tensor_method(top_level=True)
def tanh_(self) -> Tensor:
    return self._inplace(Tanh)


@tensor_method(top_level=True)
def sigmoid_(self) -> Tensor:
    return self._inplace(Sigmoid)


@tensor_method(top_level=True)
def relu_(self) -> Tensor:
    return self._inplace(Relu)


@tensor_method()
def pow_(self, exponent) -> Tensor:
    return self._inplace(Pow, _argument("pow_", exponent))


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


@tensor_method("mul_", "__imul__")
def mul_(self, other) -> Tensor:
    return self._inplace(Mul, _argument("mul_", other))


@tensor_method(top_level=True)
def clamp_(self, min=None, max=None) -> Tensor:
    if _tensor_bounds(min, max):
        return self._inplace(ClampTensor, min, max)
    return self._inplace(Clamp, _bound(min, "min"), _bound(max, "max"))


# -- PyTorch's other names, and the comparisons in place ------------------------------------------
alias("multiply", "mul", top_level=True)
alias("multiply_", "mul_")
alias("subtract", "sub", top_level=True)
alias("subtract_", "sub_")
alias("negative", "neg", top_level=True)
alias("negative_", "neg_", top_level=True)
alias("absolute", "abs", top_level=True)
alias("absolute_", "abs_")
alias("clip_", "clamp_", top_level=True)


@tensor_method("positive", "__pos__", top_level=True, out=False)
def positive(self) -> Tensor:
    """``+x``: x itself (not a copy), as in PyTorch; refused for a bool tensor, as ``-x`` is."""
    if self._data.dtype == np.bool_:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported: a bool tensor has no sign")
    return self


@tensor_method(top_level=True)
def reciprocal_(self) -> Tensor:
    return self._inplace(Reciprocal)


class Comparison(Function):
    """``x.eq_(y)`` and the other comparisons in place: the answer written as 1 or 0 in x's dtype.
    It is flat, so each gradient is 0 (a number ``y`` gets no edge: PyTorch's Scalar overload)."""

    node_name = "EqBackward1"

    @staticmethod
    def forward(ctx, a, b, numpy_fn):
        ctx.shapes = a._data.shape, _shape(b)
        return Tensor._wrap(compare(numpy_fn, a, b)._data.astype(a._data.dtype))

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad[:2]
        zeros = [Tensor._wrap(np.zeros(shape, grad._data.dtype)) if need else None
                 for shape, need in zip(ctx.shapes, (need_a, need_b))]
        return zeros[0], zeros[1], None


def comparison_inplace(method: str, numpy_fn, longer: str) -> None:
    """``x.<method>_(y)``, and PyTorch's longer name for it and for ``x.<method>(y)`` (``greater``)."""
    nodes = {tensor_other: type(f"{method.capitalize()}{'Tensor' if tensor_other else 'Scalar'}", (Comparison,), {
        "node_name": f"{method.capitalize()}Backward{int(tensor_other)}", "__module__": __name__})
        for tensor_other in (False, True)}

    def inplace(self, other) -> Tensor:
        other = _argument(method + "_", other)
        return self._inplace(nodes[isinstance(other, Tensor)], other, numpy_fn)

    tensor_method(method + "_")(inplace)
    if longer:
        alias(longer, method, top_level=True)
        alias(longer + "_", method + "_")


for _method, _numpy_fn, _longer in (("eq", np.equal, ""), ("ne", np.not_equal, "not_equal"),
                                    ("lt", np.less, "less"), ("le", np.less_equal, "less_equal"),
                                    ("gt", np.greater, "greater"), ("ge", np.greater_equal, "greater_equal")):
    comparison_inplace(_method, _numpy_fn, _longer)


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
