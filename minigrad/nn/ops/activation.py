"""GELU, SiLU, Softplus, LeakyReLU and erf as Functions: activations that need a function NumPy lacks, or care at the edges.

Most activations in ``functional`` are a few tensor operations, which
autograd differentiates to any order. These three are not:

- ``erf`` has no NumPy ufunc, so it needs a forward of its own; its
  derivative ``2/sqrt(pi) * exp(-x*x)`` is written with tensor operations,
  so it can be differentiated again.
- ``gelu`` (``x * Phi(x)``, exact) runs the Numba kernels of
  ``minigrad.kernels`` on an ordinary pass; under ``create_graph=True`` its
  backward is the same formula built from tensor operations (with ``erf``
  above), so both derivative formulas live here, side by side.
- ``gelu(approximate="tanh")`` and ``silu`` are one node each, as in PyTorch:
  their derivative is ``grad`` times one factor, where the product rule of
  the composite form would give ``inf - inf = NaN`` for an infinite ``grad``.
- ``softplus`` is ``log(1 + exp(beta*x)) / beta``, which overflows if written
  as it reads; the forward uses ``logaddexp`` and returns ``x`` itself above
  ``threshold``, as PyTorch does (its derivative there is exactly 1).
- ``leaky_relu``'s gradient ``grad`` or ``grad * slope`` does not depend on
  ``x`` in value, but under ``create_graph=True`` PyTorch records it as a node
  of ``x`` (with a zero derivative), so the gradient requires grad; written
  with ``where`` it would not.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.kernels.reference import _erf as _erf_array
from minigrad.ops.elementwise import Where
from minigrad.ops.layout import like_first
from minigrad._tensor import Tensor

_KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _check_float(x: Tensor, name: str) -> None:
    """These activations are defined for floats only, as in PyTorch: say so, and how to fix it."""
    if x._data.dtype.kind != "f":
        raise NotImplementedError(f'"{name}" not implemented for {x.dtype}: call .float() first')


class Erf(Function):
    """erf(x) = 2/sqrt(pi) * integral from 0 to x of exp(-t*t) dt."""

    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return Tensor._wrap(_erf_array(x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * ((x * x).neg().exp() * _TWO_OVER_SQRT_PI)


class Gelu(Function):
    """gelu(x) = x * Phi(x), Phi the standard normal CDF; d/dx = Phi(x) + x * phi(x)."""

    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x):
        _check_float(x, "gelu")
        ctx.save_for_backward(x)
        return Tensor._wrap(like_first(kernels.gelu_forward(x._data), x._data))  # (the kernel's result is row-major)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if not is_grad_enabled():  # an ordinary backward: the Numba kernel, no nodes
            return Tensor._wrap(kernels.gelu_backward(x._data, grad._data))
        # create_graph=True: the same formula from tensor operations, so it is recorded
        cdf = (Erf.apply(x * math.sqrt(0.5)) + 1) * 0.5
        pdf = (x * x * -0.5).exp() * _INV_SQRT_2PI
        return grad * (cdf + x * pdf)


class GeluTanh(Function):
    """gelu(x, approximate="tanh") = 0.5 x (1 + tanh(k (x + 0.044715 x^3))), k = sqrt(2/pi).

    One node, as PyTorch's ``GeluBackward0``: its derivative is one factor times
    ``grad`` (so an infinite upstream gradient stays infinite where the factor is
    finite), written with tensor operations so that it can be differentiated again.
    """

    node_name = "GeluBackward0"

    @staticmethod
    def forward(ctx, x):
        _check_float(x, "gelu")
        ctx.save_for_backward(x)
        data = x._data
        if data.dtype in _KERNEL_FLOATS:  # the kernel (float16 takes NumPy below, as it did)
            return Tensor._wrap(like_first(kernels.gelu_tanh_forward(data), data))
        inner = (data + data * data * data * 0.044715) * math.sqrt(2.0 / math.pi)
        return Tensor._wrap((data * 0.5 * (np.tanh(inner) + 1)).astype(data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        if not is_grad_enabled() and x._data.dtype in _KERNEL_FLOATS and grad._data.dtype == x._data.dtype:
            return Tensor._wrap(kernels.gelu_tanh_backward(x._data, grad._data))  # no nodes
        # create_graph=True: the same formula from tensor operations, so it is recorded
        k, kappa = math.sqrt(2.0 / math.pi), 0.044715
        t = ((x + x * x * x * kappa) * k).tanh()
        return grad * ((t + 1) * 0.5 + x * 0.5 * (1 - t * t) * ((x * x * (3 * kappa) + 1) * k))


class Silu(Function):
    """silu(x) = x * sigmoid(x); d/dx = s (1 + x (1 - s)) for s = sigmoid(x), one factor times grad (PyTorch's)."""

    node_name = "SiluBackward0"

    @staticmethod
    def forward(ctx, x):
        _check_float(x, "silu")
        ctx.save_for_backward(x)
        return Tensor._wrap(like_first(x._data * kernels.sigmoid_forward(x._data), x._data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        s = x.sigmoid()
        return grad * (s * (x * (1 - s) + 1))


class Softplus(Function):
    """softplus(x) = log(1 + exp(beta * x)) / beta, or x where beta * x > threshold."""

    node_name = "SoftplusBackward0"

    @staticmethod
    def forward(ctx, x, beta, threshold):
        _check_float(x, "softplus")
        ctx.save_for_backward(x)
        ctx.beta, ctx.threshold = beta, threshold
        data = x._data
        scaled = data * data.dtype.type(beta)
        with np.errstate(invalid="ignore"):  # (NaN stays NaN, quietly, as in PyTorch)
            smooth = np.logaddexp(scaled, data.dtype.type(0)) / data.dtype.type(beta)  # log(1 + e^z), no overflow
        return Tensor._wrap(np.where(scaled > threshold, data, smooth).astype(data.dtype, copy=False))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        scaled = x * ctx.beta
        linear = Tensor._wrap(scaled._data > ctx.threshold)  # PyTorch: the derivative is 1 above threshold
        return Where.apply(linear, grad, grad * scaled.sigmoid()), None, None


def _elu_backward(x: Tensor, grad: Tensor, alpha: float) -> Tensor:
    """grad * alpha * exp(x) where x <= 0, else grad (NaN takes the else): PyTorch's ``elu_backward``."""
    if not is_grad_enabled():
        d, g = x._data, grad._data
        with np.errstate(over="ignore"):
            slope = d.dtype.type(alpha) * np.exp(np.minimum(d, 0))  # exp of x > 0 is never used: no overflow
        return Tensor._wrap(np.where(d <= 0, g * slope, g))
    return EluBackward.apply(grad, x, alpha)


class Elu(Function):
    """x where x > 0, else alpha * (exp(x) - 1); the derivative at 0 is alpha, as in PyTorch."""

    node_name = "EluBackward0"

    @staticmethod
    def forward(ctx, x, alpha):
        _check_float(x, "elu")
        data = x._data
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        negative = np.expm1(np.minimum(data, 0)) * data.dtype.type(alpha)
        return Tensor._wrap(np.where(data <= 0, negative, data))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return _elu_backward(x, grad, ctx.alpha), None


class EluInplace(Elu):
    """``elu_``: the input is overwritten, so, as PyTorch's node, it saves the result and takes the
    derivative from it: 1 where out > 0, else out + alpha (alpha * exp(x) = out + alpha)."""

    node_name = "EluBackward1"

    @staticmethod
    def forward(ctx, x, alpha):
        out = Elu.forward(ctx, x, alpha)
        ctx.save_for_backward(out)  # (replaces the input Elu.forward saved)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        return Where.apply(out._data > 0, grad, grad * (out + ctx.alpha)), None


class EluBackward(Function):
    """elu's backward as a node, recorded under ``create_graph`` as PyTorch records it."""

    node_name = "EluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x, alpha):
        ctx.save_for_backward(grad, x)
        ctx.alpha = alpha
        return _elu_backward(x, grad, alpha)

    @staticmethod
    def backward(ctx, grad_grad):
        grad, x = ctx.saved_tensors
        negative = Tensor._wrap((x._data < 0).astype(x._data.dtype))
        # PyTorch's elu_double_backward: elu_backward(grad_grad * grad) where x < 0, else 0
        return _elu_backward(x, grad_grad, ctx.alpha), _elu_backward(x, grad_grad * grad, ctx.alpha) * negative, None


def _leaky_relu_backward(x: Tensor, grad: Tensor, slope: float) -> Tensor:
    """grad where x > 0, else grad * slope (NaN included): PyTorch's ``leaky_relu_backward``."""
    if not is_grad_enabled():
        g = grad._data
        return Tensor._wrap(np.where(x._data > 0, g, g * g.dtype.type(slope)))
    return LeakyReluBackward.apply(grad, x, slope)


class LeakyRelu(Function):
    """x where x > 0, else negative_slope * x (the derivative at 0 is negative_slope, as in PyTorch)."""

    node_name = "LeakyReluBackward0"

    @staticmethod
    def forward(ctx, x, negative_slope):
        _check_float(x, "leaky_relu")
        data = x._data
        ctx.save_for_backward(x)
        ctx.slope = negative_slope
        return Tensor._wrap(np.where(data > 0, data, data * data.dtype.type(negative_slope)))

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return _leaky_relu_backward(x, grad, ctx.slope), None


class LeakyReluInplace(LeakyRelu):
    """``leaky_relu_``: as PyTorch's node, it saves the result (the input is overwritten); the
    derivative is 1 where out > 0, else the slope, which only a positive slope makes readable."""

    node_name = "LeakyReluBackward1"

    @staticmethod
    def forward(ctx, x, negative_slope):
        out = LeakyRelu.forward(ctx, x, negative_slope)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        out, = ctx.saved_tensors
        if ctx.slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope which is not "
                "supported. This is caused by calling in-place forward function with a negative slope, please "
                "call out-of-place version instead."
            )
        return Where.apply(out._data > 0, grad, grad * ctx.slope), None


class LeakyReluBackward(Function):
    """leaky_relu's backward as a node, recorded under ``create_graph`` as PyTorch records it."""

    node_name = "LeakyReluBackwardBackward0"

    @staticmethod
    def forward(ctx, grad, x, slope):
        ctx.save_for_backward(x)
        ctx.slope = slope
        return _leaky_relu_backward(x, grad, slope)

    @staticmethod
    def backward(ctx, grad_grad):
        x, = ctx.saved_tensors
        return _leaky_relu_backward(x, grad_grad, ctx.slope), Tensor._wrap(np.zeros_like(x._data)), None
