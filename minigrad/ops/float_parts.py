"""A float's parts: its sign (copysign, signbit), its neighbours (nextafter), and its exponent
and mantissa (ldexp, frexp).

    copysign(a, b) = |a| with b's sign           d/da = copysign(a, b) / a (0 at a = 0), d/db = 0
    ldexp(a, e) = a · 2^e                        d/da = 2^e, d/de = a · 2^e · ln 2
    frexp(a) = (m, e) with a = m · 2^e, ½ ≤ |m| < 1 (m = 0 for a = 0)     dm/da = 2^-e

``signbit`` tells -0.0 from 0.0 (which ``< 0`` cannot); ``nextafter`` is the next float
from a towards b, a step of one ulp, so PyTorch passes the gradient to a as if it were a (0 where a
is b already, and 0 to b).
Integer and bool inputs give the default float (``signbit``: a bool).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes, return_types
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import sum_to
from minigrad.ops.elementwise import Where, _binary, _shape, _zero_where
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _argument, _tensor_argument


def _float_type(x, y) -> np.dtype:
    """PyTorch's result dtype for a float function of two operands: integers and bools give the default float."""
    want = dtypes.result_type(x, y)
    return want if want.kind == "f" else dtypes.default_float.numpy


def _values(x):
    return x._data if isinstance(x, Tensor) else x


class Copysign(Function):
    node_name = "CopysignBackward0"

    @staticmethod
    def forward(ctx, a, b):
        want = _float_type(a._data, _values(b))
        out = _binary(lambda x, y: np.copysign(x.astype(want), np.asarray(y).astype(want)), a, b, want)
        ctx.save_for_backward(a, out)
        ctx.shapes = a._data.shape, _shape(b)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, out = ctx.saved_tensors
        ratio = Where.apply(a._data == 0, 0.0, out / a)  # ±1, and NaN where a is NaN or infinite (inf / inf)
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad * ratio, ctx.shapes[0]) if need_a else None,
                Tensor._wrap(np.zeros(ctx.shapes[1], grad._data.dtype)) if need_b else None)


class CopysignScalar(Copysign):
    node_name = "CopysignBackward1"


class Nextafter(Function):
    node_name = "NextafterBackward0"

    @staticmethod
    def forward(ctx, a, b):
        want = dtypes.result_type(a._data, b._data)
        if want.kind != "f":
            raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{dtypes.scalar_type_name(want)}': "
                                      "convert the tensors with .float() first")
        ctx.save_for_backward(a, b)
        return _binary(lambda x, y: np.nextafter(x.astype(want), y.astype(want)), a, b, want)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        still = np.broadcast_to(a._data == b._data, grad.shape)  # (where a is b already, the result is b)
        return (sum_to(_zero_where(still, grad), a.shape) if need_a else None,
                Tensor._wrap(np.zeros(b.shape, grad._data.dtype)) if need_b else None)


class Ldexp(Function):
    node_name = "LdexpBackward0"

    @staticmethod
    def forward(ctx, a, e):
        if a._data.dtype.kind == "f" and e._data.dtype == np.bool_:  # (PyTorch's 2^e kernel, for a float a)
            raise NotImplementedError("\"ldexp_cpu_exp\" not implemented for 'Bool': convert the exponent with .long()")
        want = _float_type(a._data, e._data)
        out = _binary(lambda x, y: x.astype(want) * np.exp2(y.astype(want)), a, e, want)
        ctx.save_for_backward(e, out)  # (not a: changing it in place afterwards is allowed, as in PyTorch)
        ctx.shapes = a._data.shape, e._data.shape
        return out

    @staticmethod
    def backward(ctx, grad):
        e, out = ctx.saved_tensors
        need_a, need_e = ctx.needs_input_grad
        return (sum_to(grad * e.exp2(), ctx.shapes[0]) if need_a else None,
                sum_to(grad * out * math.log(2), ctx.shapes[1]) if need_e else None)


class Frexp(Function):
    node_name = "FrexpBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        if x.dtype.kind != "f":
            raise RuntimeError(f"frexp() only supports floating-point dtypes, not {a.dtype}: call .float() first")
        mantissa, exponent = np.frexp(x)
        exponent = Tensor._wrap(exponent.astype(np.int32))
        ctx.mark_non_differentiable(exponent)
        ctx.save_for_backward(exponent)
        return Tensor._wrap(mantissa), exponent

    @staticmethod
    def backward(ctx, grad, _grad_exponent):
        exponent, = ctx.saved_tensors  # (2^e in the default float, as PyTorch's exp2 of an int tensor)
        return grad / Tensor._wrap(np.exp2(exponent._data.astype(dtypes.default_float.numpy)))


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method(top_level=True)
def copysign(self, other) -> Tensor:
    other = _argument("copysign", other)
    return (Copysign if isinstance(other, Tensor) else CopysignScalar).apply(self, other)


@tensor_method()
def copysign_(self, other) -> Tensor:
    other = _argument("copysign_", other)
    return self._inplace(Copysign if isinstance(other, Tensor) else CopysignScalar, other)


@tensor_method(top_level=True)
def signbit(self) -> Tensor:
    """True where the sign bit is set: negative numbers, -0.0 and -inf (and a NaN with the bit set)."""
    x = self._data
    return Tensor._wrap(np.signbit(x) if x.dtype.kind == "f" else np.asarray(x < 0))


@tensor_method(top_level=True)
def nextafter(self, other: Tensor) -> Tensor:
    return Nextafter.apply(self, _tensor_argument("nextafter", "other", 1, other))


@tensor_method()
def nextafter_(self, other: Tensor) -> Tensor:
    return self._inplace(Nextafter, _tensor_argument("nextafter_", "other", 1, other))


@tensor_method(top_level=True)
def ldexp(self, other: Tensor) -> Tensor:
    return Ldexp.apply(self, _tensor_argument("ldexp", "other", 1, other))


@tensor_method(top_level=True)
def ldexp_(self, other: Tensor) -> Tensor:
    return self._inplace(Ldexp, _tensor_argument("ldexp_", "other", 1, other))


@tensor_method(top_level=True, out=False)
def frexp(self) -> return_types.frexp:
    """``(mantissa, exponent)`` with ``self = mantissa * 2 ** exponent`` and ``0.5 <= |mantissa| < 1``."""
    return return_types.frexp(*Frexp.apply(self))
