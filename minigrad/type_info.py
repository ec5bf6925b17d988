"""What a dtype can hold and how dtypes combine: finfo, iinfo, promote_types, result_type, can_cast.

finfo and iinfo describe minigrad's dtypes with NumPy's numbers (they are IEEE and two's
complement types, so the numbers are PyTorch's too); the other three ask ``minigrad/dtypes.py``,
where PyTorch's promotion rules live (an int tensor and a float number give the default float;
a 0-d tensor does not promote a dimensioned one of the same category). ``typename`` names the type
of any object as PyTorch does: a tensor by its legacy type ('minigrad.FloatTensor').
"""
from __future__ import annotations

import builtins
from numbers import Number

import numpy as np

from minigrad import dtypes
from minigrad._tensor import Tensor

# bool < integer < floating point: a cast may not go down this order
_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}


class finfo:
    """The numbers of a floating-point dtype (the default float if none): bits, eps, max, min, tiny,
    smallest_normal, resolution and dtype (its name)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type: dtypes.dtype | None = None) -> None:  # noqa: A002 (PyTorch's argument name)
        d = dtypes.get_default_dtype() if type is None else type
        if not isinstance(d, dtypes.dtype) or not d.is_floating_point:
            raise TypeError(f"finfo() requires a floating point input type, got {d!r}: use iinfo for integer types")
        if d is dtypes.bfloat16:  # (no NumPy type to ask: 8 exponent bits as float32, 7 fraction bits)
            self.bits, self.eps, self.max, self.min = 16, 2.0 ** -7, 3.3895313892515355e38, -3.3895313892515355e38
            self.tiny = self.smallest_normal = 2.0 ** -126
            self.resolution, self.dtype = 0.01, "bfloat16"
            return
        info = np.finfo(d.numpy)
        self.bits, self.eps, self.max, self.min = info.bits, float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution, self.dtype = 10.0 ** -info.precision, d.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """The numbers of an integer dtype: bits, max, min and dtype (its name)."""

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type: dtypes.dtype) -> None:  # noqa: A002
        if not isinstance(type, dtypes.dtype) or type.numpy.kind not in "iu":
            raise TypeError(f"iinfo() requires an integer input type, got {type!r}: use finfo for floating point types")
        info = np.iinfo(type.numpy)
        self.bits, self.min, self.max, self.dtype = info.bits, int(info.min), int(info.max), type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"


def _dtype(value, name: str) -> dtypes.dtype:
    if value in (builtins.float, builtins.int, builtins.bool):  # Python's types, as PyTorch reads them
        return dtypes.from_numpy_dtype(dtypes.to_numpy_dtype(value))
    if not isinstance(value, dtypes.dtype):
        raise TypeError(f"{name} must be a minigrad.dtype, not {type(value).__name__}")
    return value


def promote_types(type1: dtypes.dtype, type2: dtypes.dtype) -> dtypes.dtype:
    """The dtype of an op on two tensors of these dtypes (PyTorch's table: int32 and float32 give float32)."""
    a = np.empty(1, dtype=_dtype(type1, "type1").numpy)
    b = np.empty(1, dtype=_dtype(type2, "type2").numpy)
    return dtypes.from_numpy_dtype(dtypes.result_type(a, b))


def _operand(value, name: str):
    if isinstance(value, Tensor):
        return value._data
    if isinstance(value, (builtins.bool, Number)) and not isinstance(value, complex):
        return value
    raise TypeError(f"result_type(): argument '{name}' must be a Tensor or a number, not {type(value).__name__}")


def result_type(tensor1, tensor2) -> dtypes.dtype:
    """The dtype of an arithmetic op on these tensors or numbers, by PyTorch's promotion rules."""
    return dtypes.from_numpy_dtype(dtypes.result_type(_operand(tensor1, "tensor1"), _operand(tensor2, "tensor2")))


def can_cast(from_: dtypes.dtype, to: dtypes.dtype) -> bool:
    """Whether PyTorch's type promotion may cast ``from_`` to ``to``: not to a lower category
    (float to integer, integer or float to bool)."""
    return _CATEGORY[_dtype(from_, "from_").numpy.kind] <= _CATEGORY[_dtype(to, "to").numpy.kind]


def typename(obj: object, /) -> str:
    """The full name of ``obj``'s type: ``x.type()`` for a tensor ('minigrad.LongTensor'), else
    module and qualified name ('minigrad.nn.parameter.Parameter' for the class; builtins bare)."""
    if isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module, qualname = obj.__class__.__module__ or "", obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"
