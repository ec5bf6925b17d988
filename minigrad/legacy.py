"""PyTorch's legacy names, which old tutorials and scripts still use.

    x = minigrad.autograd.Variable(minigrad.ones(2), requires_grad=True)   # a Tensor that requires grad
    y = minigrad.FloatTensor([1, 2])        # float32 data;  minigrad.FloatTensor(2, 3): a 2x3 tensor
    isinstance(y, minigrad.FloatTensor)     # True: a float32 tensor (LongTensor: int64 ...)

Since PyTorch 0.4 a ``Variable`` is a Tensor: ``Variable(t)`` returns ``t`` detached, with
``requires_grad`` as asked, and every tensor is an instance of ``Variable``. The typed classes
(``FloatTensor``, ``LongTensor`` ...) are not subclasses of Tensor: calling one makes a tensor
of its dtype (from data, or of a size, uninitialised in PyTorch and zeros here, as
``minigrad.empty``), and ``isinstance(t, FloatTensor)`` asks whether ``t`` is float32.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from minigrad import dtypes
from minigrad.creation import _shape, tensor, zeros
from minigrad.device import resolve as resolve_device
from minigrad.ops.broadcast import type_name
from minigrad._tensor import Size, Tensor

inf, nan, pi, e = math.inf, math.nan, math.pi, math.e  # (torch.inf ...: Python floats, as PyTorch's)


class VariableMeta(type):
    """``isinstance(t, Variable)`` is True for every tensor, as in PyTorch."""

    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """The legacy ``Variable(data, requires_grad=False)``: ``data`` detached (the same memory), with
    ``requires_grad`` set; ``Variable()`` is an empty tensor. ``volatile`` was removed in PyTorch 0.4:
    it warns and changes nothing (use ``with minigrad.no_grad():``)."""

    def __new__(cls, data=None, requires_grad: bool = False, volatile: bool = False, _grad_fn=None):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with minigrad.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        if _grad_fn is not None:
            raise TypeError(f"_grad_fn has to be a Function object or None, but got {type_name(_grad_fn)} "
                            "(a Variable takes no history: build one by calling operations)")
        if data is None:
            return zeros(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type_name(data)} "
                            "(minigrad.tensor(data) makes one)")
        out = data.detach()
        if requires_grad:
            out.requires_grad_()
        return out


class tensortype(type):
    """The type of ``minigrad.FloatTensor`` and its siblings (PyTorch's ``torch.tensortype``)."""

    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, Tensor) and other.dtype == cls.dtype

    def __call__(cls, *args, device=None, **kwargs):
        """``FloatTensor()``, ``FloatTensor(2, 3)`` or ``FloatTensor(Size)`` (zeros of that size),
        ``FloatTensor(data)`` (a copy of nested lists or an array, converted to the dtype) or
        ``FloatTensor(t)`` (``t`` itself as a new view, if it has this dtype)."""
        resolve_device(device)
        name = cls.__name__
        if kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument {next(iter(kwargs))!r}: the legacy "
                            f"constructor takes data or sizes, and device= (use minigrad.tensor(data, "
                            f"dtype={cls.dtype}, requires_grad=...) for more)")
        if not args:
            return zeros(0, dtype=cls.dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            other = args[0]
            if other.dtype != cls.dtype:
                raise TypeError(f"expected {cls.dtype} (got {other.dtype}): {name}(t) takes a tensor of its own "
                                f"dtype; convert with t.to({cls.dtype})")
            return other[...]
        if len(args) == 1 and not isinstance(args[0], (Size, numbers.Integral)):
            data = args[0]
            if not isinstance(data, (list, tuple, np.ndarray)):
                raise TypeError(f"new(): data must be a sequence (got {type_name(data)}): pass a list of numbers, "
                                f"or sizes as ints")
            return tensor(data, dtype=cls.dtype)
        for i, size in enumerate(args[0] if isinstance(args[0], Size) else args):
            if not isinstance(size, numbers.Integral) or isinstance(size, bool):
                raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {type_name(size)}\"")
        return zeros(_shape(args), dtype=cls.dtype)

    def __repr__(cls) -> str:
        return f"<class 'minigrad.{cls.__name__}'>"


def _legacy_type(name: str, dtype: dtypes.dtype) -> tensortype:
    return tensortype(name, (), {"dtype": dtype, "is_cuda": False, "is_sparse": False, "__module__": "minigrad",
                                 "__doc__": f"The legacy constructor of {dtype} tensors, and ``isinstance`` test."})


FloatTensor = _legacy_type("FloatTensor", dtypes.float32)
DoubleTensor = _legacy_type("DoubleTensor", dtypes.float64)
LongTensor = _legacy_type("LongTensor", dtypes.int64)
IntTensor = _legacy_type("IntTensor", dtypes.int32)
BoolTensor = _legacy_type("BoolTensor", dtypes.bool_)
ByteTensor = _legacy_type("ByteTensor", dtypes.uint8)
HalfTensor = _legacy_type("HalfTensor", dtypes.float16)
