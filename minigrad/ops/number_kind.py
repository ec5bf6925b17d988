"""What kind of numbers a tensor holds (is_signed, is_complex, isreal, is_nonzero), and PyTorch's
complex-number API as it applies to real tensors (real, imag, angle, the conj and neg flags).

minigrad has no complex dtype, so every tensor is real: ``real`` is the tensor itself, ``imag``
is an error (PyTorch's, for a real tensor), ``resolve_conj`` and ``resolve_neg`` have no lazy
conjugation or negation to resolve, and ``angle`` is the argument of a real number, 0 or π
(NaN for NaN), flat, so its gradient is 0. A learner's code written for complex tensors runs
unchanged on real ones.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.registry import TOP_LEVEL, WITHOUT_OUT, tensor_method
from minigrad._tensor import Tensor


class Angle(Function):
    node_name = "AngleBackward0"

    @staticmethod
    def forward(ctx, a):
        x = a._data
        want = x.dtype if x.dtype.kind == "f" else dtypes.default_float.numpy
        return Tensor._wrap(np.where(np.isnan(x), x, np.where(x < 0, math.pi, 0.0)).astype(want, copy=False))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(np.zeros_like(grad._data))


@tensor_method(top_level=True)
def angle(self) -> Tensor:
    """The argument of each number in the complex plane: π for a negative real, else 0."""
    return Angle.apply(self)


@tensor_method(top_level=True, out=False)
def is_signed(self) -> bool:
    """Whether the dtype holds negative numbers (bool does not)."""
    return self._data.dtype.kind not in "bu"


@tensor_method(top_level=True, out=False)
def is_complex(self) -> bool:
    return False


@tensor_method(top_level=True, out=False)
def is_conj(self) -> bool:
    return False


@tensor_method(top_level=True, out=False)
def is_neg(self) -> bool:
    return False


@tensor_method(top_level=True, out=False)
def resolve_conj(self) -> Tensor:
    return self


@tensor_method(top_level=True, out=False)
def resolve_neg(self) -> Tensor:
    return self


@tensor_method(top_level=True, out=False)
def isreal(self) -> Tensor:
    """True for every element (a real tensor's imaginary parts are all 0)."""
    return Tensor._wrap(np.ones(self._data.shape, dtype=bool))


@tensor_method(top_level=True, out=False)
def is_nonzero(self) -> bool:
    """The truth of a one-element tensor (as ``bool(t)``)."""
    size = self._data.size
    if size != 1:
        raise RuntimeError(f"Boolean value of Tensor with {'no values' if size == 0 else 'more than one value'} "
                           f"is ambiguous (shape {list(self.shape)}): use .any() or .all()")
    return bool(self._data.reshape(()) != 0)


def _real(self) -> Tensor:
    return self


def _imag(self) -> Tensor:
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes: a real tensor's imaginary "
                       "part is zeros_like(x)")


# As in PyTorch: attributes of a tensor (``x.real``), functions at the top level (``minigrad.real(x)``).
tensor_method("real")(property(_real))
tensor_method("imag")(property(_imag))
TOP_LEVEL["real"], TOP_LEVEL["imag"] = _real, _imag
WITHOUT_OUT.update(("real", "imag"))
