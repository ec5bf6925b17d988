"""Data types, and PyTorch's rules for mixing them.

A minigrad dtype is a thin name around a NumPy dtype. It exists so that
``x.dtype`` prints ``minigrad.float32`` (as PyTorch prints ``torch.float32``)
and so that type promotion follows PyTorch rather than NumPy: in PyTorch an
integer tensor times a float32 tensor is float32, in NumPy it is float64.
"""
from __future__ import annotations

import builtins

import numpy as np

from minigrad.device import DeviceUnavailableError


class dtype:
    """A tensor element type. Compare with ``==``; use ``.is_floating_point``."""

    __slots__ = ("name", "numpy")

    def __init__(self, name: str, numpy_type: type) -> None:
        self.name = name
        self.numpy = np.dtype(numpy_type)

    @property
    def is_floating_point(self) -> bool:
        return self.numpy.kind == "f"

    def __repr__(self) -> str:
        return f"minigrad.{self.name}"

    def __reduce__(self):  # pickle as the module-level singleton
        return (from_numpy_dtype, (self.numpy,))


float32 = dtype("float32", np.float32)
float64 = dtype("float64", np.float64)
int32 = dtype("int32", np.int32)
int64 = dtype("int64", np.int64)
bool_ = dtype("bool", np.bool_)
uint8 = dtype("uint8", np.uint8)  # (bytes: get_rng_state's state, images)
float16 = dtype("float16", np.float16)  # (NumPy's half: stored and computed in float16, as PyTorch's on the CPU)
float = float32  # PyTorch aliases: torch.float is float32, torch.double is float64, torch.half float16
double = float64
long = int64
half = float16


class _NoNumPyDtype(dtype):
    """A PyTorch dtype NumPy has no type for (bfloat16): it can be named (``{'bfloat16': minigrad.bfloat16}``,
    ``finfo``), but a tensor of it cannot be made: a TypeError says what to use instead."""

    __slots__ = ("instead",)

    def __init__(self, name: str, instead: str) -> None:
        self.name, self.instead = name, instead

    @property
    def numpy(self):
        raise TypeError(f"minigrad has no {self.name} tensors (NumPy, which holds minigrad's data, has no {self.name} "
                        f"type): {self.instead}")

    @property
    def is_floating_point(self) -> bool:
        return True

    def __reduce__(self):
        return self.name


bfloat16 = _NoNumPyDtype("bfloat16", "use minigrad.float32 (what minigrad computes in), or minigrad.float16 for "
                         "half the memory")

_BY_NUMPY = {d.numpy: d for d in (float32, float64, int32, int64, bool_, uint8, float16)}
_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 2}  # bool < integer < floating point
default_float = float32  # what float data and Python floats become; set_default_dtype changes it


def set_default_dtype(d: dtype) -> None:
    """Make ``d`` (float32 or float64) the dtype of float data and of ``zeros(3)``, ``randn(3)`` ..."""
    global default_float
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type (minigrad: float32 or float64)")
    default_float = d


def get_default_dtype() -> dtype:
    return default_float


def from_numpy_dtype(np_dtype: np.dtype) -> dtype:
    """The minigrad dtype for a NumPy dtype; float16 and the other sizes of integer are refused."""
    try:
        return _BY_NUMPY[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert NumPy array of type {np.dtype(np_dtype)}: minigrad supports "
            "float16, float32, float64, int32, int64, uint8 and bool"
        ) from None


def to_numpy_dtype(d) -> np.dtype:
    """Accept a minigrad dtype, a NumPy dtype or a Python type such as ``float``."""
    if isinstance(d, dtype):
        return d.numpy
    if d is builtins.float:  # a Python float is a double, so PyTorch reads the type as float64
        return float64.numpy
    if d is builtins.int:
        return int64.numpy
    if d is builtins.bool:
        return bool_.numpy
    return from_numpy_dtype(np.dtype(d)).numpy


def result_type(a, b) -> np.dtype:
    """The NumPy dtype of ``a op b`` under PyTorch's promotion rules.

    ``a`` and ``b`` are NumPy arrays (tensor operands) or Python scalars.
    A scalar only matters when it is of a higher category than the tensor:
    ``int_tensor * 2.5`` is float32 (the default float), not float64.
    """
    if type(b) is builtins.float and type(a) is np.ndarray and a.dtype.kind == "f":  # (x * 2.0: the common case)
        return a.dtype
    a_is_array, b_is_array = isinstance(a, np.ndarray), isinstance(b, np.ndarray)
    if a_is_array and b_is_array:
        ka, kb = _CATEGORY[a.dtype.kind], _CATEGORY[b.dtype.kind]
        if ka == kb:
            if (a.ndim == 0) != (b.ndim == 0):  # a 0-d tensor does not promote a dimensioned one
                return b.dtype if a.ndim == 0 else a.dtype
            return np.promote_types(a.dtype, b.dtype)
        return a.dtype if ka > kb else b.dtype
    if not (a_is_array or b_is_array):  # two Python numbers (where(c, 1, 0.5)): the higher category wins
        return result_type(np.asarray(a, dtype=_scalar_dtype(a)), b)
    array, scalar = (a, b) if a_is_array else (b, a)
    k_array = _CATEGORY[array.dtype.kind]
    if isinstance(scalar, (builtins.bool, np.bool_)):
        k_scalar = 0
    elif isinstance(scalar, (builtins.float, np.floating)):
        k_scalar = 2
    else:
        k_scalar = 1
    if k_scalar <= k_array:
        return array.dtype
    return default_float.numpy if k_scalar == 2 else np.dtype(np.int64)


def _scalar_dtype(x) -> np.dtype:
    """The dtype PyTorch gives a Python number on its own: bool, int64 or the default float."""
    if isinstance(x, (builtins.bool, np.bool_)):
        return bool_.numpy
    return default_float.numpy if isinstance(x, (builtins.float, np.floating)) else np.dtype(np.int64)


# Tensor.type(): PyTorch's legacy tensor-type names ('torch.FloatTensor'); minigrad says 'minigrad.FloatTensor'.
TYPE_NAMES = {float32.numpy: "FloatTensor", float64.numpy: "DoubleTensor", int32.numpy: "IntTensor",
              int64.numpy: "LongTensor", bool_.numpy: "BoolTensor", uint8.numpy: "ByteTensor",
              float16.numpy: "HalfTensor"}


def scalar_type_name(np_dtype) -> str:
    """PyTorch's word for a dtype in its error messages: Float, Double, Int, Long, Bool."""
    return TYPE_NAMES[np.dtype(np_dtype)].removesuffix("Tensor")


def from_type_name(name: str) -> dtype:
    """The dtype of 'minigrad.DoubleTensor' or 'torch.DoubleTensor' (so PyTorch code runs unchanged)."""
    prefix, _, kind = name.rpartition(".")
    if prefix in ("torch.cuda", "minigrad.cuda"):
        raise DeviceUnavailableError(f"minigrad runs on the CPU only: type('{name}') names a CUDA tensor type")
    for numpy_dtype, type_name in TYPE_NAMES.items():
        if prefix in ("torch", "minigrad") and kind == type_name:
            return _BY_NUMPY[numpy_dtype]
    raise ValueError(f"invalid type: '{name}' (expected e.g. 'minigrad.FloatTensor', 'minigrad.LongTensor')")
