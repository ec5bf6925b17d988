"""Elementwise operations and their derivatives.

Each op is a ``Function``: ``forward`` computes with NumPy on ``x._data``;
``backward`` is written with tensor operations, so that with
``create_graph=True`` the backward pass is itself recorded and can be
differentiated again. Binary ops accept a Python scalar on either side; its
gradient is ``None``, like any non-Tensor argument.

A few backward passes also have a fused Numba kernel (``minigrad.kernels``):
one pass over memory instead of three NumPy passes. They are used unless grad
mode is on during backward, which means ``create_graph=True`` asked for a
differentiable backward.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes, kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.ops.broadcast import broadcast_error, sum_to
from minigrad.tensor import Tensor


def _array(x):
    return x._data if isinstance(x, Tensor) else x


def _binary(numpy_fn, a, b, result_dtype=None) -> Tensor:
    """Apply ``numpy_fn`` with broadcasting and PyTorch's result dtype."""
    x, y = _array(a), _array(b)
    try:
        out = numpy_fn(x, y)
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None
    want = result_dtype or dtypes.result_type(x, y)
    return Tensor._wrap(out if out.dtype == want else np.asarray(out, dtype=want))


def _float(a: Tensor) -> np.ndarray:
    """The input of a floating-point function: integer and bool tensors become the default float."""
    x = a._data
    return x if x.dtype.kind == "f" else x.astype(dtypes.default_float.numpy)


def _shape(x) -> tuple:
    return x._data.shape if isinstance(x, Tensor) else ()


def _save_operands(ctx, a, b, *also) -> None:
    """Save the tensor operands (freed after backward), and ``also`` (e.g. the output);
    keep Python numbers on ctx."""
    a_is_tensor, b_is_tensor = isinstance(a, Tensor), isinstance(b, Tensor)
    ctx.save_for_backward(a if a_is_tensor else None, b if b_is_tensor else None, *also)
    ctx.scalars = (None if a_is_tensor else a, None if b_is_tensor else b)


def _saved_operands(ctx) -> tuple:
    """The two operands again (saved tensors, or the numbers kept on ctx), then whatever else was saved."""
    (a, b, *also), (scalar_a, scalar_b) = ctx.saved_tensors, ctx.scalars
    return (scalar_a if a is None else a, scalar_b if b is None else b, *also)


class Add(Function):
    node_name = "AddBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = _shape(a), _shape(b)
        return _binary(np.add, a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(grad, ctx.shapes[1]) if need_b else None)


class Sub(Function):
    node_name = "SubBackward0"

    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = _shape(a), _shape(b)
        return _binary(np.subtract, a, b)

    @staticmethod
    def backward(ctx, grad):
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad, ctx.shapes[0]) if need_a else None,
                sum_to(-grad, ctx.shapes[1]) if need_b else None)


class Mul(Function):
    node_name = "MulBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
        return _binary(np.multiply, a, b)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad * b, a._data.shape) if need_a else None,
                sum_to(grad * a, b._data.shape) if need_b else None)


class Div(Function):
    node_name = "DivBackward0"

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b)
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
        return (sum_to(grad / b, a._data.shape) if need_a else None,
                sum_to(-grad * a / (b * b), b._data.shape) if need_b else None)


class Pow(Function):
    node_name = "PowBackward0"

    @staticmethod
    def forward(ctx, a, b):
        with np.errstate(divide="ignore", invalid="ignore"):
            out = _binary(np.power, a, b)
        _save_operands(ctx, a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        grad_a = grad_b = None
        if need_a:
            grad_a = sum_to(grad * b * a ** (b - 1), a.shape)
        if need_b:
            log_a = a.log() if isinstance(a, Tensor) else float(np.log(a))
            grad_b = sum_to(grad * out * log_a, b.shape)
        return grad_a, grad_b


class Neg(Function):
    node_name = "NegBackward0"

    @staticmethod
    def forward(ctx, a):
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
        ctx.save_for_backward(a)
        return Tensor._wrap(np.abs(a._data))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * Tensor._wrap(np.sign(a._data))


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
        if not is_grad_enabled():
            return Tensor._wrap(kernels.tanh_backward(out._data, grad._data))
        return grad * (1 - out * out)


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
        if not is_grad_enabled():
            return Tensor._wrap(kernels.sigmoid_backward(out._data, grad._data))
        return grad * out * (1 - out)


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
        if not is_grad_enabled():
            return Tensor._wrap(kernels.relu_backward(out._data, grad._data))
        return grad * Tensor._wrap((out._data > 0).astype(out._data.dtype))


class Clamp(Function):
    node_name = "ClampBackward1"

    @staticmethod
    def forward(ctx, a, min=None, max=None):
        if min is None and max is None:
            raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
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
        inside = np.ones(a.shape, dtype=bool)
        if low is not None:
            inside &= a._data >= low
        if high is not None:
            inside &= a._data <= high
        return grad * Tensor._wrap(inside.astype(a._data.dtype)), None, None


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
        # Where a == b the gradient is shared equally, as in PyTorch.
        share_a = Tensor._wrap(np.where(x > y, 1.0, np.where(x == y, 0.5, 0.0)).astype(grad._data.dtype))
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad * share_a, a.shape) if need_a else None,
                sum_to(grad * (1 - share_a), b.shape) if need_b else None)


class Where(Function):
    node_name = "WhereBackward0"

    @staticmethod
    def forward(ctx, condition, a, b):
        cond = np.asarray(_array(condition), dtype=bool)
        ctx.cond = cond
        ctx.shapes = _shape(a), _shape(b)
        x, y = _array(a), _array(b)
        try:
            out = np.where(cond, x, y)
        except ValueError:
            raise broadcast_error(cond.shape, np.broadcast_shapes(np.shape(x), np.shape(y))) from None
        return Tensor._wrap(out.astype(dtypes.result_type(x, y), copy=False))

    @staticmethod
    def backward(ctx, grad):
        keep = Tensor._wrap(ctx.cond.astype(grad._data.dtype))
        need_a, need_b = ctx.needs_input_grad[1:]
        return (None,
                sum_to(grad * keep, ctx.shapes[0]) if need_a else None,
                sum_to(grad * (1 - keep), ctx.shapes[1]) if need_b else None)


def compare(numpy_fn, a, b):
    """A comparison: a boolean tensor, outside the graph (it has no gradient)."""
    from minigrad.tensor import _operand

    b = _operand(b)
    if b is NotImplemented:  # e.g. tensor == None: let Python answer False
        return NotImplemented
    x, y = _array(a), _array(b)
    try:
        return Tensor._wrap(np.asarray(numpy_fn(x, y)))
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None
