"""Inverse trigonometric and hyperbolic functions: asin, acos, atan, asinh, acosh, atanh, atan2.

Each derivative comes from differentiating ``f(f⁻¹(x)) = x``:

    asin'(x) = 1 / √(1 - x²)      acos'(x) = -1 / √(1 - x²)     atan'(x) = 1 / (1 + x²)
    asinh'(x) = 1 / √(x² + 1)     acosh'(x) = 1 / √(x² - 1)     atanh'(x) = 1 / (1 - x²)

``atan2(y, x)`` is the angle of the point (x, y), in (-π, π]: unlike ``atan(y / x)`` it
knows the quadrant. Its gradient is ``(x, -y) / (x² + y²)`` (with respect to y and x), and 0
at the origin, where the angle has no derivative, as in PyTorch.
Outside a domain (asin(2), acosh(0.5)) the value is NaN, as in PyTorch. Integer and bool
inputs give the default float. NumPy names them arcsin ... arctan2; PyTorch has both spellings.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, sum_to
from minigrad.ops.elementwise import Where, _float
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _tensor_argument


def _unary(name: str, numpy_fn, derivative):
    """A Function computing ``numpy_fn`` whose backward is ``grad * derivative(input)``."""

    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Tensor._wrap(numpy_fn(_float(a)))

    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * derivative(a)

    return type(name, (Function,), {"node_name": f"{name}Backward0", "forward": staticmethod(forward),
                                    "backward": staticmethod(backward), "__module__": __name__})


Asin = _unary("Asin", np.arcsin, lambda x: (1 - x * x).rsqrt())
Acos = _unary("Acos", np.arccos, lambda x: -(1 - x * x).rsqrt())
Atan = _unary("Atan", np.arctan, lambda x: 1 / (x * x + 1))
Asinh = _unary("Asinh", np.arcsinh, lambda x: (x * x + 1).rsqrt())
Acosh = _unary("Acosh", np.arccosh, lambda x: (x * x - 1).rsqrt())
Atanh = _unary("Atanh", np.arctanh, lambda x: 1 / (1 - x * x))


class Atan2(Function):
    node_name = "Atan2Backward0"

    @staticmethod
    def forward(ctx, a, b):
        x, y = a._data, b._data
        want = dtypes.result_type(x, y)
        want = want if want.kind == "f" else dtypes.default_float.numpy
        try:
            out = np.arctan2(x.astype(want, copy=False), y.astype(want, copy=False))
        except ValueError:
            raise broadcast_error(x.shape, y.shape) from None
        ctx.save_for_backward(a, b)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        recip = (a * a + b * b).reciprocal()
        recip = Where.apply(np.isinf(recip._data), 0.0, recip)  # the origin: 0, as PyTorch
        return (sum_to(grad * b * recip, a.shape) if need_a else None,
                sum_to(grad * -a * recip, b.shape) if need_b else None)


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method("asin", "arcsin", top_level=True)
def asin(self) -> Tensor:
    return Asin.apply(self)


@tensor_method("acos", "arccos", top_level=True)
def acos(self) -> Tensor:
    return Acos.apply(self)


@tensor_method("atan", "arctan", top_level=True)
def atan(self) -> Tensor:
    return Atan.apply(self)


@tensor_method("asinh", "arcsinh", top_level=True)
def asinh(self) -> Tensor:
    return Asinh.apply(self)


@tensor_method("acosh", "arccosh", top_level=True)
def acosh(self) -> Tensor:
    return Acosh.apply(self)


@tensor_method("atanh", "arctanh", top_level=True)
def atanh(self) -> Tensor:
    return Atanh.apply(self)


@tensor_method("atan2", "arctan2", top_level=True)
def atan2(self, other: Tensor) -> Tensor:
    return Atan2.apply(self, _tensor_argument("atan2", "other", 1, other))


@tensor_method("asin_", "arcsin_", top_level=True)
def asin_(self) -> Tensor:
    return self._inplace(Asin)


@tensor_method("acos_", "arccos_", top_level=True)
def acos_(self) -> Tensor:
    return self._inplace(Acos)


@tensor_method("atan_", "arctan_", top_level=True)
def atan_(self) -> Tensor:
    return self._inplace(Atan)


# PyTorch 2.13 has no derivative for these three in-place forms (its backward raises
# NotImplementedError); minigrad differentiates them as their out-of-place forms.
@tensor_method("asinh_", "arcsinh_", top_level=True)
def asinh_(self) -> Tensor:
    return self._inplace(Asinh)


@tensor_method("acosh_", "arccosh_", top_level=True)
def acosh_(self) -> Tensor:
    return self._inplace(Acosh)


@tensor_method("atanh_", "arctanh_", top_level=True)
def atanh_(self) -> Tensor:
    return self._inplace(Atanh)


@tensor_method("atan2_", "arctan2_")
def atan2_(self, other: Tensor) -> Tensor:
    return self._inplace(Atan2, _tensor_argument("atan2_", "other", 1, other))
