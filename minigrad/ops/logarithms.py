"""Logarithms of sums, and products with a logarithm: logaddexp, logaddexp2 and xlogy.

    logaddexp(a, b) = ln(eᵃ + eᵇ)       d/da = 1 / (1 + e^(b - a))     (softmax of the pair)
    logaddexp2(a, b) = log₂(2ᵃ + 2ᵇ)    d/da = 1 / (1 + 2^(b - a))
    xlogy(x, y) = x ln y, and 0 where x = 0      d/dx = ln y,  d/dy = x / y

``logaddexp`` adds probabilities kept as logs: ``a + ln(1 + e^(b - a))`` with a the larger,
so eᵃ never overflows (``(a.exp() + b.exp()).log()`` is inf from a = 89 in float32).
``xlogy`` is the ``p log p`` of an entropy: 0 at p = 0 (where ``p * p.log()`` is 0·(-inf) =
NaN), but NaN where y is; its x-gradient is 0 where x = 0 and y <= 0, as in PyTorch.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import sum_to
from minigrad.ops.elementwise import Where, _binary, _save_operands, _saved_operands, _shape
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _argument, _tensor_argument


def _floating(name: str, a: Tensor, b: Tensor) -> np.dtype:
    want = dtypes.result_type(a._data, b._data)
    if want.kind != "f":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dtypes.scalar_type_name(want)}': "
                                  "convert the tensors with .float() first")
    return want


def _log_add(x: np.ndarray, y: np.ndarray, exp, log_base: float) -> np.ndarray:
    """``max + log(1 + base^-|x - y|) / ln(base)``, in x's dtype, as PyTorch's kernel computes it (the
    last multiply-add fused, rounded once), and ±inf where both are that infinity, where the formula
    would give NaN."""
    with np.errstate(invalid="ignore", over="ignore"):
        log = np.log1p(exp(-np.abs(x - y)))
        out = _fused_multiply_add(log, x.dtype.type(1 / log_base), np.maximum(x, y))
        return np.where(np.isinf(x) & (x == y), x, out)


def _fused_multiply_add(a: np.ndarray, b, c: np.ndarray) -> np.ndarray:
    """``a * b + c`` rounded once, as a CPU's fused multiply-add: for float32 in float64 (the product is
    exact there); for float64 with the product's rounding error recovered (Dekker's split) and added
    back with the sum's (Knuth's two-sum)."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * np.float64(b) + c).astype(np.float32)
    product = a * b
    a_high, a_low = _split(a)
    b_high, b_low = _split(np.float64(b))
    product_error = ((a_high * b_high - product) + a_high * b_low + a_low * b_high) + a_low * b_low
    total = product + c
    back = total - product
    sum_error = (product - (total - back)) + (c - back)
    fused = total + (sum_error + product_error)
    return np.where(np.isfinite(fused), fused, total)


def _split(x):
    """x = high + low exactly, each with half of float64's 53 bits (Veltkamp's split)."""
    t = 134217729.0 * x  # 2^27 + 1
    high = t - (t - x)
    return high, x - high


def _log_add_backward(ctx, grad, exp):
    """log(exp(a) + exp(b))'s derivatives 1 / (1 + exp(b - a)) and 1 / (1 + exp(a - b)), for either base."""
    a, b = ctx.saved_tensors
    need_a, need_b = ctx.needs_input_grad
    return (sum_to(grad / (1 + exp(b - a)), a.shape) if need_a else None,
            sum_to(grad / (1 + exp(a - b)), b.shape) if need_b else None)


class Logaddexp(Function):
    node_name = "LogaddexpBackward0"
    exp, log_base = staticmethod(np.exp), 1.0

    @classmethod
    def _forward(cls, ctx, a, b, name):
        want = _floating(name, a, b)
        ctx.save_for_backward(a, b)
        return _binary(lambda x, y: _log_add(x.astype(want), y.astype(want), cls.exp, cls.log_base), a, b, want)

    @staticmethod
    def forward(ctx, a, b):
        return Logaddexp._forward(ctx, a, b, "logaddexp")

    @staticmethod
    def backward(ctx, grad):
        return _log_add_backward(ctx, grad, Tensor.exp)


class Logaddexp2(Logaddexp):
    node_name = "Logaddexp2Backward0"
    exp, log_base = staticmethod(np.exp2), math.log(2)

    @staticmethod
    def forward(ctx, a, b):
        return Logaddexp2._forward(ctx, a, b, "logaddexp2")

    @staticmethod
    def backward(ctx, grad):
        return _log_add_backward(ctx, grad, Tensor.exp2)


def _xlogy(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isnan(y), np.nan, np.where(x == 0, 0.0, x * np.log(y)))


class Xlogy(Function):
    """Two tensors; a number on either side is its own overload and node, as in PyTorch."""

    node_name = "XlogyBackward0"
    _operands = (0, 1)

    @staticmethod
    def forward(ctx, a, b):
        _save_operands(ctx, a, b, True, True)  # (x's gradient reads x too: its mask at x = 0)
        want = dtypes.result_type(a._data if isinstance(a, Tensor) else a, b._data if isinstance(b, Tensor) else b)
        if want.kind != "f":
            want = dtypes.default_float.numpy
        return _binary(lambda x, y: _xlogy(np.asarray(x, want), np.asarray(y, want)), a, b, want)

    @staticmethod
    def backward(ctx, grad):
        a, b = _saved_operands(ctx)
        need_a, need_b = ctx.needs_input_grad
        shape_a, shape_b = ctx.shapes
        grad_a = grad_b = None
        if need_a:
            x, y = a._data, b._data if isinstance(b, Tensor) else b
            flat = np.logical_and(x == 0, np.asarray(y) <= 0)
            log_y = b.log() if isinstance(b, Tensor) else Tensor._wrap(np.asarray(_xlogy(1.0, b), grad._data.dtype))
            grad_a = sum_to(Where.apply(flat, 0.0, _xlogy_grad(grad, log_y, np.isnan(y))), shape_a)
        if need_b:
            grad_b = sum_to(grad * a / b, shape_b)
        return grad_a, grad_b


def _xlogy_grad(grad: Tensor, log_y: Tensor, y_is_nan) -> Tensor:
    """PyTorch's ``xlogy(grad, y)``: grad · ln y, 0 where grad is 0 (even at y <= 0), NaN where y is."""
    return Where.apply(grad._data == 0, Where.apply(y_is_nan, np.nan, 0.0), grad * log_y)


class XlogyScalarSelf(Xlogy):
    node_name = "XlogyBackward1"


class XlogyScalarOther(Xlogy):
    node_name = "XlogyBackward2"


def _xlogy_node(self, other) -> type:
    if not isinstance(self, Tensor):
        return XlogyScalarSelf
    return Xlogy if isinstance(other, Tensor) else XlogyScalarOther


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method(top_level=True)
def logaddexp(self, other: Tensor) -> Tensor:
    return Logaddexp.apply(self, _tensor_argument("logaddexp", "other", 1, other))


@tensor_method(top_level=True)
def logaddexp2(self, other: Tensor) -> Tensor:
    return Logaddexp2.apply(self, _tensor_argument("logaddexp2", "other", 1, other))


@tensor_method(top_level=True)
def xlogy(self, other) -> Tensor:
    """``self * log(other)``, 0 where self is 0 (and other is not NaN). Either may be a number."""
    other = _argument("xlogy", other)
    return _xlogy_node(self, other).apply(self, other)


@tensor_method(top_level=True)
def xlogy_(self, other) -> Tensor:
    other = _argument("xlogy_", other)
    return self._inplace(_xlogy_node(self, other), other)
