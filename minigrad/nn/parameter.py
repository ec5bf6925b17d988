"""``Parameter``: a tensor that a Module should train.

A Parameter is an ordinary leaf tensor with ``requires_grad=True``; its class
is the only difference. Assigning one to a Module attribute (``self.weight =
Parameter(...)``) is what registers it, so ``model.parameters()`` finds it
and an optimizer updates it. A plain tensor attribute is not registered.

``UninitializedParameter`` and ``UninitializedBuffer`` are the placeholders of lazy
layers (``nn.LazyLinear``...), which learn their shapes from their first input.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import dtypes
from minigrad.device import resolve
from minigrad._tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor registered by Modules: ``Parameter(data, requires_grad=True)``.

    Like ``torch.nn.Parameter`` it shares memory with ``data`` (no copy) and
    keeps its dtype. Operations on a Parameter give plain Tensors.
    """

    __slots__ = ()

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        if data is None:
            data = Tensor()
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(data) expects a Tensor, but got {type(data).__name__}: "
                "wrap it first, e.g. Parameter(minigrad.tensor(data))"
            )
        self._init(data._data)
        self._version_counter = data._version_counter  # shared memory, so a shared version
        if requires_grad:
            self.requires_grad_()

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()


_RAW_DATA = Tensor.__dict__["_data"]  # the slot itself, past the placeholders' refusing property


def _refuse(self: Tensor) -> None:
    raise ValueError(
        f"Attempted to use an uninitialized parameter. This error happens when you are using a `LazyModule` "
        f"or explicitly manipulating `minigrad.nn.parameter.{type(self).__name__}` objects. When using "
        "LazyModules Call `forward` with a dummy batch to initialize the parameters before calling minigrad functions")


class UninitializedTensorMixin:
    """A placeholder for a tensor whose shape is not known yet (a lazy layer's weight before its
    first input). Any computation with it raises ``ValueError``; its dtype, device, ``size()``
    and ``requires_grad`` can be read. ``materialize(shape)`` turns it, in place, into an
    ordinary tensor of that shape (the class it becomes: ``cls_to_become``)."""

    __slots__ = ()
    cls_to_become: type

    # every operation reads a tensor's values through _data: refusing it refuses them all
    _data = property(_refuse, _RAW_DATA.__set__)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Become a ``cls_to_become`` of ``shape`` (values uninitialized: a layer's init fills them)."""
        from_dtype = _RAW_DATA.__get__(self).dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
        resolve(device)  # (only the CPU exists)
        _RAW_DATA.__set__(self, np.empty(tuple(shape), dtype=from_dtype))
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually happens in "
            "`load_state_dict` when trying to load an uninitialized parameter into an initialized one. Call "
            "`forward` to initialize the parameters before accessing their attributes.")

    def size(self, dim: int | None = None):
        """``Size([0])``, as PyTorch's placeholder (its ``shape`` refuses)."""
        return Tensor._wrap(_RAW_DATA.__get__(self)).size(dim)

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy_dtype(_RAW_DATA.__get__(self).dtype)

    @property
    def data(self) -> Tensor:
        return Tensor._wrap(_RAW_DATA.__get__(self))

    @data.setter
    def data(self, value: Tensor) -> None:
        _RAW_DATA.__set__(self, value._data)

    def is_floating_point(self) -> bool:
        return _RAW_DATA.__get__(self).dtype.kind == "f"

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, protocol):
        return (type(self), (self.requires_grad,))


def is_lazy(param: Any) -> bool:
    """Whether ``param`` is a placeholder still waiting for its shape."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A ``Parameter`` whose shape a lazy layer learns from its first input (then ``materialize``)."""

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        resolve(device)
        self._init(np.empty(0, dtype=dtypes.to_numpy_dtype(dtype or dtypes.get_default_dtype())))
        self.requires_grad_(requires_grad)

    def __deepcopy__(self, memo: dict) -> "UninitializedParameter":
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, None, self.dtype)
        return memo[id(self)]


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape a lazy layer learns from its first input (then ``materialize``)."""

    __slots__ = ()
    cls_to_become = Tensor

    def __init__(self, requires_grad: bool = False, device=None, dtype=None) -> None:
        resolve(device)
        self._init(np.empty(0, dtype=dtypes.to_numpy_dtype(dtype or dtypes.get_default_dtype())))
        self.requires_grad_(requires_grad)
