"""Integer arithmetic: bitwise and, or, xor and not, the shifts (``&``, ``|``, ``^``, ``~``,
``<<``, ``>>``), gcd and lcm.

They work on the bits of integers (and bools, for the logic), so a float tensor is PyTorch's
NotImplementedError, and they have no gradient. Two rules differ from NumPy's: a shift by a
negative amount or by the width of the type or more gives 0 (a right shift of a negative
number gives -1, its sign), where C (and NumPy before 2.0) leave the result undefined; and lcm is never
negative, as gcd is not.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.ops.broadcast import broadcast_error
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _argument, _operand, _tensor_argument


def _apply(kernel: str, numpy_fn, a, b, bools: bool = True, into: Tensor | None = None) -> Tensor:
    """``numpy_fn(a, b)`` in PyTorch's result dtype, which must be an integer one (or, with ``bools``,
    bool): else PyTorch's NotImplementedError. ``into``: the tensor an in-place form writes to, whose
    dtype must hold the result (checked first, as PyTorch does)."""
    x = a._data if isinstance(a, Tensor) else a
    y = b._data if isinstance(b, Tensor) else b
    want = dtypes.result_type(x, y)
    if into is not None:  # (PyTorch's order: the shape, then the dtype, then the kernel)
        try:
            shape = np.broadcast_shapes(np.shape(x), np.shape(y))
        except ValueError:
            raise broadcast_error(np.shape(x), np.shape(y)) from None
        if shape != into._data.shape:
            raise RuntimeError(f"output with shape {list(into.shape)} doesn't match the broadcast shape {list(shape)}")
        if not np.can_cast(want, into._data.dtype, "same_kind"):
            raise RuntimeError(f"result type {dtypes.from_numpy_dtype(want)} can't be cast to the desired output "
                               f"type {into.dtype}")
    if want.kind not in ("iub" if bools else "iu"):
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{dtypes.scalar_type_name(want)}\': '
                                  "convert the tensors with .long() (or .bool()) first")
    try:
        out = numpy_fn(np.asarray(x, want), np.asarray(y, want))
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None
    return Tensor._wrap(np.asarray(out, want))


def _left_shift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    inside = (y >= 0) & (y < bits)
    return np.where(inside, np.left_shift(x, np.where(inside, y, 0)), 0)


def _right_shift(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    bits = x.dtype.itemsize * 8
    inside = (y >= 0) & (y < bits)
    return np.right_shift(x, np.where(inside, y, bits - 1))  # (bits - 1: 0, or -1 for a negative x)


def _lcm(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    return np.abs(np.lcm(x, y))


# name: (NumPy function, PyTorch's kernel name in its error, whether bools are allowed, operator)
_BINARY = {
    "bitwise_and": (np.bitwise_and, "bitwise_and", True, "and"),
    "bitwise_or": (np.bitwise_or, "bitwise_or", True, "or"),
    "bitwise_xor": (np.bitwise_xor, "bitwise_xor", True, "xor"),
    "bitwise_left_shift": (_left_shift, "lshift", False, "lshift"),
    "bitwise_right_shift": (_right_shift, "rshift", False, "rshift"),
}


def _declare(name: str, numpy_fn, kernel: str, bools: bool, dunder: str) -> None:
    """``x.<name>(y)``, ``minigrad.<name>(x, y)``, ``x.<name>_(y)``, and ``x op y``, ``y op x``, ``x op= y``."""
    def method(self, other) -> Tensor:
        return _apply(kernel, numpy_fn, self, _argument(name, other), bools)

    def inplace(self, other) -> Tensor:
        return _write(self, _apply(kernel, numpy_fn, self, _argument(name + "_", other), bools, into=self))

    def operator(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _apply(kernel, numpy_fn, self, other, bools)

    def reflected(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _apply(kernel, numpy_fn, other, self, bools)

    def augmented(self, other):
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        return _write(self, _apply(kernel, numpy_fn, self, other, bools, into=self))

    tensor_method(name, top_level=True)(method)
    tensor_method(name + "_")(inplace)
    tensor_method(f"__{dunder}__")(operator)
    tensor_method(f"__r{dunder}__")(reflected)
    tensor_method(f"__i{dunder}__")(augmented)


def _write(self: Tensor, out: Tensor) -> Tensor:
    """Write an integer result into ``self`` (no graph: these ops are only defined on integers and
    bools, which never require grad)."""
    self._data[...] = out._data
    self._version_counter.value += 1
    return self


for _name, _spec in _BINARY.items():
    _declare(_name, *_spec)


@tensor_method(top_level=True)
def bitwise_not(self) -> Tensor:
    x = self._data
    if x.dtype.kind not in "iub":
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{dtypes.scalar_type_name(x.dtype)}\': '
                                  "use logical_not() for a float mask")
    return Tensor._wrap(np.invert(x))


@tensor_method()
def __invert__(self) -> Tensor:
    if self._data.dtype.kind not in "iub":  # (the operator's error is a TypeError in PyTorch)
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors: "
                        "use logical_not() for a float mask")
    return bitwise_not(self)


@tensor_method()
def bitwise_not_(self) -> Tensor:
    return _write(self, bitwise_not(self))


def _gcd_or_lcm(name: str, numpy_fn, self: Tensor, other: Tensor, into: Tensor | None = None) -> Tensor:
    other = _tensor_argument(name, "other", 1, other)
    return _apply(name.rstrip("_"), numpy_fn, self, other, bools=False, into=into)


@tensor_method(top_level=True)
def gcd(self, other: Tensor) -> Tensor:
    """The greatest common divisor, elementwise (never negative; gcd(0, 0) = 0)."""
    return _gcd_or_lcm("gcd", np.gcd, self, other)


@tensor_method(top_level=True)
def lcm(self, other: Tensor) -> Tensor:
    """The least common multiple, elementwise (never negative; 0 if either is 0)."""
    return _gcd_or_lcm("lcm", _lcm, self, other)


@tensor_method(top_level=True)
def gcd_(self, other: Tensor) -> Tensor:
    return _write(self, _gcd_or_lcm("gcd_", np.gcd, self, other, into=self))


@tensor_method(top_level=True)
def lcm_(self, other: Tensor) -> Tensor:
    return _write(self, _gcd_or_lcm("lcm_", _lcm, self, other, into=self))
