"""The rest of PyTorch's ``Tensor`` API, as a layer on the core's ``Tensor`` (``minigrad/core/tensor.py``).

The core's Tensor is what a tensor is to autograd: its data, its history, its
hooks. This layer gives it what PyTorch code also expects of a tensor: its dtype
as ``minigrad.float32``, printing, conversions, memory layout, the device, and
copying and pickling, plus the argument checks the op modules share. Views are
``minigrad/autograd/views.py``; every operation lives in ``minigrad/ops/`` as a
``Function`` beside its method (``ops/registry.py``).
"""
from __future__ import annotations

import operator
from numbers import Number

import numpy as np

from minigrad import dtypes, printing as _printing
from minigrad.autograd.views import _ViewMeta  # noqa: F401  (re-exported for the view ops)
from minigrad.core.tensor import Size, Tensor, _VersionCounter, extend_tensor  # noqa: F401
from minigrad.device import CPU as _CPU, device as _device_type
from minigrad.ops.broadcast import type_name as _type_name, wrap_dim as _wrap_dim


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a minigrad Tensor (a Parameter too)."""
    return isinstance(obj, Tensor)


@extend_tensor
class _TensorAPI:
    """Given to ``Tensor`` (``extend_tensor``)."""

    def __init__(self, data=(), requires_grad: bool = False) -> None:
        """Like ``torch.Tensor(data)``: always the default float dtype. Prefer ``minigrad.tensor``."""
        self._init(np.array(data, dtype=dtypes.default_float.numpy))
        if requires_grad:
            self.requires_grad_()

    def __deepcopy__(self, memo: dict) -> Tensor:
        """Copy a leaf: values, requires_grad and .grad, but none of the graph bookkeeping."""
        if self.grad_fn is not None:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                "protocol at the moment. Call .detach() first to copy a computed tensor."
            )
        if id(self) not in memo:
            new = type(self).__new__(type(self))
            new._init(self._data.copy())
            new._requires_grad = self._requires_grad
            if self._grad is not None:
                new._grad = self._grad.__deepcopy__(memo)
            memo[id(self)] = new
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        """Pickle the values and requires_grad only (never weakrefs, hooks or the graph)."""
        return (_rebuild_tensor, (type(self), self._data, self._requires_grad))

    # -- conversion and inspection ----------------------------------------------
    def size(self, dim: int | None = None):
        return self.shape if dim is None else self._data.shape[_wrap_dim(dim, self.ndim)]

    def nelement(self) -> int:  # PyTorch's older name for numel
        return self._data.size

    @property
    def dtype(self) -> dtypes.dtype:
        return dtypes.from_numpy_dtype(self._data.dtype)

    def element_size(self) -> int:
        """Bytes per element."""
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    def data_ptr(self) -> int:
        """The address of the first element: equal for tensors that share memory from the same start."""
        return self._data.__array_interface__["data"][0]

    def is_floating_point(self) -> bool:
        return self._data.dtype.kind == "f"

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch: views that refuse in-place ops in a graph

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data)

    def __repr__(self) -> str:  # (the layout, and set_printoptions, are in minigrad/printing.py)
        data = self._data
        extras = []
        if data.size == 0 and data.shape != (0,):
            extras.append(f"size={tuple(data.shape)}")
        shown_without = (dtypes.default_float.numpy,) if data.size == 0 else (  # (nothing to tell an empty one's by)
            dtypes.default_float.numpy, np.dtype(np.int64), np.dtype(np.bool_))
        if data.dtype not in shown_without:
            extras.append(f"dtype={self.dtype}")
        grad_fn = self.grad_fn
        if grad_fn is not None:
            extras.append(f"grad_fn=<{type(grad_fn).__name__}>")  # PyTorch: the class, without the C++ namespace
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return _printing.with_suffixes("tensor(" + _printing.array_text(data, indent=7), extras, indent=7)

    @property
    def data(self) -> "Tensor":
        """The values as a tensor outside the graph. Changes to it are NOT tracked: prefer detach()."""
        return Tensor._wrap(self._data)

    @data.setter
    def data(self, value: "Tensor") -> None:
        """Replace the values (any shape and dtype; ``value``'s history is not taken), with PyTorch's checks:
        a tensor only, and a floating-point one for a tensor that requires grad."""
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {_type_name(value)}: wrap it with "
                            "minigrad.tensor(...) first")
        if self._requires_grad and value._data.dtype.kind not in "fc":
            raise RuntimeError("data set to a tensor that requires gradients must be floating point or complex dtype")
        if value._data.dtype != self._data.dtype:
            # As PyTorch: a leaf's next graph gets a new accumulator, and a graph recorded before leads to the old
            # one, which still runs this tensor's hooks, even those registered later (PyTorch's reads them from the
            # tensor). register_hook tells only the live accumulator that there are hooks: tell the old one here.
            old = self._grad_accumulator and self._grad_accumulator()
            if old is not None:
                old._pre_hooks = ()
            self._grad_accumulator = None
        self._data = value._data

    def __format__(self, format_spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats its value, as in PyTorch; any other tensor takes only
        the empty spec (its ``str``)."""
        if self._data.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # -- dtype conversion (``to`` itself is in ops/copies.py: it records a ToCopy node) --
    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    def int(self) -> Tensor:
        return self.to(dtypes.int32)

    def bool(self) -> Tensor:
        return self.to(dtypes.bool_)

    def type_as(self, other: "Tensor") -> Tensor:
        return self.to(_tensor_argument("type_as", "other", 1, other).dtype)

    # -- memory layout ------------------------------------------------------------
    def stride(self, dim: int | None = None):
        """How many elements apart neighbours lie in memory, per dimension (NumPy counts bytes)."""
        strides = tuple(step // self._data.itemsize for step in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self) -> bool:
        """Whether the elements lie in memory row after row, as those of a new tensor of this shape do
        (dimensions of size 1 do not count). ``view`` needs it more often than not."""
        return self._data.flags.c_contiguous

    # -- device (the CPU only) and type -------------------------------------------------------------
    @property
    def device(self) -> _device_type:
        return _CPU

    @property
    def is_cuda(self) -> bool:
        return False

    def cpu(self) -> Tensor:
        return self

    def cuda(self, device=None, non_blocking: bool = False) -> Tensor:
        return self.to("cuda" if device is None else device)

    def type(self, dtype=None, non_blocking: bool = False):
        """With no argument, the type's name (``'minigrad.FloatTensor'``, where PyTorch says
        ``'torch.FloatTensor'``); with a dtype or such a name (either prefix), ``self.to(dtype)``."""
        if dtype is None:
            return "minigrad." + dtypes.TYPE_NAMES[self._data.dtype]
        if isinstance(dtype, str):
            return self.to(dtypes.from_type_name(dtype))
        if isinstance(getattr(dtype, "dtype", None), dtypes.dtype) and isinstance(dtype, type):  # minigrad.FloatTensor
            return self.to(dtype.dtype)
        if isinstance(dtype, type):  # a class is a valid kind of argument, but not a tensor type here
            raise ValueError(f"invalid type: {dtype.__name__!r} (pass a dtype such as minigrad.float64, or "
                             "'minigrad.DoubleTensor')")
        if not isinstance(dtype, (dtypes.dtype, np.dtype)):
            raise TypeError(f"type(): argument 'dtype' must be a dtype or a type name, not {_type_name(dtype)} "
                            "(pass a dtype such as minigrad.float64, or 'minigrad.DoubleTensor')")
        return self.to(dtype)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """``np.asarray(t)`` (and matplotlib's ``imshow(t)``): ``t.numpy()``, cast to ``dtype`` if given.

        Like ``numpy()``, it refuses a tensor that requires grad (PyTorch's rule): detach it first.
        """
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)


def _rebuild_tensor(cls: type, array: np.ndarray, requires_grad: bool) -> Tensor:
    t = cls.__new__(cls)
    t._init(array)
    t._requires_grad = requires_grad
    return t


def _operand(x):
    """The other operand of an operator: a Tensor or a Python number (arrays become tensors).

    Anything else, a list included, is NotImplemented, as in PyTorch (``x * [2.0]`` is a
    TypeError there): wrap it in ``minigrad.tensor(...)`` first."""
    if isinstance(x, (Tensor, int, float, bool, np.number, np.bool_)):
        return x
    if isinstance(x, np.ndarray):
        dtypes.from_numpy_dtype(x.dtype)  # refuse float16 and friends with a clear message
        return Tensor._wrap(x)
    return NotImplemented


def _argument(name: str, x):
    """``_operand(x)`` for a method (``x.mul(y)``, ``x.add_(y)``), which raises where an operator
    returns NotImplemented: PyTorch's TypeError (a NumPy array too: only the operators take one)."""
    operand = NotImplemented if isinstance(x, np.ndarray) else _operand(x)
    if operand is NotImplemented:
        raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not {type(x).__name__}")
    return operand


def _tensor_argument(fn: str, argument: str, position: int, x):
    """``x`` if it is a Tensor, else PyTorch's TypeError naming the method and the argument
    (``x.mm(2.0)`` would fail deep inside the op on ``2.0.ndim``)."""
    if not isinstance(x, Tensor):
        check_tensor(fn, argument, position, x)
    return x


def check_tensor(fn: str, argument: str, position: int, value, numbers: bool = False) -> None:
    """PyTorch's TypeError for an argument that is not a tensor (nor, with ``numbers``, a Python
    number): ``relu(): argument 'input' (position 1) must be Tensor, not numpy.ndarray``, plus the fix.

    The slow path behind a ``type(x) is not Tensor`` guard, which a Tensor subclass also takes.
    """
    if isinstance(value, Tensor) or numbers and isinstance(value, Number):
        return
    raise TypeError(f"{fn}(): argument '{argument}' (position {position}) must be Tensor, not {_described(value)}")


def _described(value) -> str:
    """The type of a value that should have been a tensor, and the fix when it holds data (as
    ``minigrad.exp(...)`` and the other top-level functions say it)."""
    fix = ": wrap it with minigrad.tensor(...) first" if isinstance(value, (list, tuple, np.ndarray)) else ""
    return _type_name(value) + fix




def _sizes(args: tuple, argument: str = "size") -> tuple:
    """Accept both ``t.reshape(2, 3)`` and ``t.reshape((2, 3))``; refuse what is not ints
    (``t.reshape("a")``, ``t.reshape(2.0, 3)``) with PyTorch's TypeError."""
    sizes = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)
    if all(type(size) is int for size in sizes):
        return sizes
    if args and isinstance(args[0], (bool, np.bool_)):  # (a bool inside a sequence is a size; alone, not)
        raise TypeError(f"argument '{argument}' must be tuple of ints, not bool")
    checked = []
    for i, size in enumerate(sizes):
        try:  # (a bool is a size, as in PyTorch: reshape(3, True) is reshape(3, 1))
            checked.append(operator.index(size))
        except TypeError:
            raise TypeError(f"argument '{argument}' must be tuple of ints, but found element of type "
                            f"{_type_name(size)} at pos {i}") from None
    return tuple(checked)


