"""``Tensor``: a NumPy array that remembers how it was computed.

A tensor holds its values in ``_data`` (a NumPy array) and, if it was computed
from tensors that require grad, the node that computed it in ``grad_fn``.
This file is what a tensor *is*: its data, its autograd state, its hooks and
views. It imports no operation: every operation lives in ``minigrad/ops/`` as a
``Function``, and the module that defines it also gives ``Tensor`` its method
(``ops/registry.py``), so each op, and each derivative, is written down once.
"""
from __future__ import annotations

import math
import operator
import warnings
import weakref
from collections import OrderedDict
from numbers import Number

import numpy as np

from minigrad import dtypes, printing as _printing
from minigrad.device import CPU as _CPU, device as _device_type
from minigrad.autograd import differentiate as _differentiate
from minigrad.autograd.graph import AccumulateGrad, add_hook, register_tensor_type
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.ops.broadcast import flag as _flag, type_name as _type_name, wrap_dim as _wrap_dim


class Size(tuple):
    """A tensor's shape: a tuple that prints like ``torch.Size``."""

    def __repr__(self) -> str:
        return f"minigrad.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)


class _VersionCounter:
    """How many times a tensor's values were changed in place. Views share one."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


def is_tensor(obj) -> bool:
    """Whether ``obj`` is a minigrad Tensor (a Parameter too)."""
    return isinstance(obj, Tensor)


class Tensor:
    """An n-dimensional array with automatic differentiation."""

    __slots__ = (
        "_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_counter",
        "_base", "_view_meta", "_hooks", "_grad_accumulator", "_post_accumulate_grad_hooks", "__weakref__",
    )
    __array_ufunc__ = None  # make `ndarray * tensor` call Tensor.__rmul__ instead of looping in NumPy

    def __init__(self, data=(), requires_grad: bool = False) -> None:
        """Like ``torch.Tensor(data)``: always the default float dtype. Prefer ``minigrad.tensor``."""
        self._init(np.array(data, dtype=dtypes.default_float.numpy))
        if requires_grad:
            self.requires_grad_()

    def _init(self, array: np.ndarray) -> None:
        self._data = array
        self._requires_grad = False
        self._grad = None
        self._grad_fn = None  # (the grad_fn property brings a view's history up to date first)
        self._output_nr = 0
        self._version_counter = _VersionCounter()
        self._base = None  # for a view: the tensor that owns the memory (never itself a view)
        self._view_meta = None  # for a view: a _ViewMeta (how to take the view again from _base)
        self._hooks = None
        self._grad_accumulator = None
        self._post_accumulate_grad_hooks = None  # a leaf's: called once .grad holds a new sum

    @classmethod
    def _wrap(cls, array: np.ndarray) -> "Tensor":
        """A tensor around an existing array, without copying or checking (for ops)."""
        t = cls.__new__(cls)
        # NumPy returns a scalar, not a 0-d array, from ufuncs on 0-d arrays.
        t._init(array if type(array) is np.ndarray else np.asarray(array))
        return t

    # -- autograd state ---------------------------------------------------------
    @property
    def requires_grad(self) -> bool:
        # As PyTorch's views: one requires grad when its base does (even one taken under no_grad),
        # and reading the flag never brings a stale view's history up to date (so it never raises).
        return self._requires_grad or (self._base is not None and self._base._requires_grad)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        if not isinstance(value, (bool, np.bool_)):  # (PyTorch's setter raises RuntimeError, its method TypeError)
            raise RuntimeError("requires_grad must be a bool")
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Ask for gradients of this leaf to be accumulated into ``.grad``."""
        requires_grad = _flag(requires_grad, "requires_grad")
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError(
                f"Only Tensors of floating point and complex dtype can require gradients "
                f"(this tensor is {self.dtype}): create it with dtype=minigrad.float32, or call .float()"
            )
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def is_leaf(self) -> bool:
        """True for tensors that no recorded operation produced."""
        return self.grad_fn is None

    @property
    def grad_fn(self):
        """The node that produced this tensor (None for a leaf).

        As in PyTorch, reading it is when a view whose base (or another view of
        it) changed in place since gets its new history (``_sync_view``).
        """
        if self._view_meta is not None:
            self._sync_view()
        return self._grad_fn

    @property
    def output_nr(self) -> int:
        """Which output of ``grad_fn`` this tensor is (0 for a leaf): its edge is ``(grad_fn, output_nr)``."""
        return self._output_nr

    @property
    def grad(self) -> "Tensor | None":
        # (the stored grad_fn: as in PyTorch, reading .grad does not bring a view's history up to date)
        if self._grad is None and self._grad_fn is not None and not self._retains_grad:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its "
                ".grad attribute won't be populated during autograd.backward(). If you indeed want "
                "the gradient for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self._grad

    @grad.setter
    def grad(self, value: "Tensor | None") -> None:
        if value is not None and value.shape != self.shape:
            raise RuntimeError(f"assigned grad has data of a different size: {value.shape} vs the tensor's {self.shape}")
        self._grad = value

    @property
    def retains_grad(self) -> bool:
        """True for a non-leaf whose ``.grad`` backward fills (``retain_grad()`` was called)."""
        return self._retains_grad

    @property
    def _retains_grad(self) -> bool:
        node = self._grad_fn
        return node is not None and self._output_nr in (node._retains_grad or ())

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` during backward.

        It follows the tensor through in-place operations (``_set_history``
        moves it), so ``.grad`` is the gradient of the current values.
        """
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._retains_grad:  # already kept: PyTorch returns before reading (and checking) the history
            return
        node = self.grad_fn
        if node is not None:
            if node._retains_grad is None:
                node._retains_grad = {}
            node._retains_grad[self._output_nr] = weakref.ref(self)

    def _accumulate_retained(self, grad: "Tensor") -> None:
        """PyTorch's retain_grad rule: a copy first (recorded under create_graph), then out-of-place sums."""
        self._grad = grad._copy_grad(retained=True) if self._grad is None else self._grad + grad

    def _set_history(self, grad_fn, output_nr: int) -> None:
        """Give this tensor a new producer after an in-place change.

        Also when a view is taken again from its base (``_regenerate_view``).
        Hooks registered so far stay with the old node (they belong to the old
        values) and the next ``register_hook`` starts a new dict on the new one;
        ``retain_grad()`` moves to the new node, as in PyTorch.
        """
        old = self._grad_fn
        retained = old is not None and old._retains_grad and old._retains_grad.get(self._output_nr)
        if retained and retained() is self:
            del old._retains_grad[self._output_nr]
        self._requires_grad, self._grad_fn, self._output_nr = grad_fn is not None, grad_fn, output_nr
        self._hooks = None
        if retained and retained() is self:
            self.retain_grad()

    def register_hook(self, hook) -> "RemovableHandle":
        """Call ``hook(grad)`` with this tensor's full gradient; a returned tensor replaces it.

        On a non-leaf the hook belongs to the current version. As in PyTorch,
        the tensor keeps one dict of hooks, attached to its ``grad_fn`` by the
        first ``register_hook``; an in-place operation gives the tensor a new
        node and a fresh dict, and the old hooks keep firing at the old node,
        with the gradient of the values before it. (A view whose base changed
        gets its new node only when its history is next looked at: its
        ``grad_fn``, an operation on it; hooks registered before that still
        join the old dict, as in PyTorch.)
        """
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        hooks = self._hooks
        if hooks is None:
            hooks = self._hooks = OrderedDict()
            node = self.grad_fn
            if node is not None:
                node._pre_hooks = (node._pre_hooks or ()) + ((self._output_nr, hooks),)
            else:  # a leaf: its AccumulateGrad reads the tensor's own dict, once told there is one
                accumulator = self._grad_accumulator and self._grad_accumulator()
                if accumulator is not None:
                    accumulator._pre_hooks = ()
        return add_hook(hooks, hook)

    def register_post_accumulate_grad_hook(self, hook) -> "RemovableHandle":
        """Call ``hook(tensor)`` on this leaf each time backward has added into its ``.grad``: for
        example, to take an optimizer step per parameter during backward, and free that ``.grad``
        early. The hook returns None (it acts on ``tensor.grad``; it cannot replace it)."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
        if self._post_accumulate_grad_hooks is None:
            self._post_accumulate_grad_hooks = OrderedDict()
        return add_hook(self._post_accumulate_grad_hooks, hook)

    def _edge(self) -> tuple:
        """Where this tensor's gradient goes: its producer, or its leaf accumulator."""
        if self._view_meta is not None:
            self._sync_view()
        if self._grad_fn is not None:
            return (self._grad_fn, self._output_nr)
        accumulator = self._grad_accumulator and self._grad_accumulator()
        if accumulator is None:
            accumulator = AccumulateGrad(self)
            self._grad_accumulator = weakref.ref(accumulator)
        return (accumulator, 0)

    def backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False, inputs=None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of every leaf it depends on."""
        _differentiate.backward(self, gradient, retain_graph, create_graph, inputs)

    def detach(self) -> "Tensor":
        """The same values (shared memory and version), cut from the graph."""
        out = Tensor._wrap(self._data)
        out._version_counter = self._version_counter
        return out

    def detach_(self) -> "Tensor":
        """Cut this tensor from the graph in place (a view cannot be: its history is its base's)."""
        if self._base is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self._grad_fn, self._requires_grad = None, False
        return self

    def _alias(self) -> "Tensor":
        """A new tensor object viewing the same memory, for outputs that must be distinct.

        It is a view that cannot be replayed: a custom Function's output (see
        ``_ViewMeta.steps``).
        """
        out = self.detach()
        out._base = self if self._base is None else self._base
        out._view_meta = _ViewMeta(None, out._version_counter.value)
        return out

    # -- views: taken again from the base when the base's history changes ----------------------
    def _sync_view(self) -> None:
        """PyTorch's rule for a view's history: it is stale once the memory it shares changed
        version since the history was built (an in-place op on the view, its base or another view
        of it, recorded or not); then it is taken again from the base, or refused for a view that
        cannot be. A view with no history, of a base that requires no grad, has nothing to update."""
        if self._view_meta.version != self._version_counter.value and (
            self._grad_fn is not None or self._base._requires_grad
        ):
            self._regenerate_view()  # (in ops/inplace.py: it takes the view again with an op)

    def _check_inplace_on_view(self) -> None:
        """PyTorch's refusals for a recorded in-place operation on a view."""
        meta, base = self._view_meta, self._base
        if meta.steps is None:
            raise RuntimeError(meta.reason(indirect=False))
        if base._requires_grad and base._grad_fn is None:
            raise RuntimeError(
                "a view of a leaf Tensor that requires grad is being used in an in-place operation. "
                "Update the leaf inside `with minigrad.no_grad():`, or clone it first."
            )
        if meta.no_grad:
            raise RuntimeError(
                "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
                "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
                "your code by moving both the view and the inplace either both inside the no_grad block "
                "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
                "to be tracked)."
            )

    def __deepcopy__(self, memo: dict) -> "Tensor":
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

    @property
    def data(self) -> "Tensor":
        """The values as a tensor outside the graph. Changes to it are NOT tracked: prefer detach()."""
        return Tensor._wrap(self._data)

    @data.setter
    def data(self, value: "Tensor") -> None:
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value, dtype=self._data.dtype)

    @property
    def _version(self) -> int:
        return self._version_counter.value

    # -- conversion and inspection ----------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying array (shared memory); refused, as in PyTorch, for a tensor (or a view of
        one) that requires grad while grad mode is on, unless ``force=True`` (``detach().numpy()``)."""
        if not force and (self._requires_grad or (self._base is not None and self._base._requires_grad)) and is_grad_enabled():
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._data.size} elements cannot be converted to Scalar: "
                "index one element first, or reduce with .sum() / .mean()"
            )
        return self._data.item()

    def tolist(self):
        return self._data.tolist()

    @property
    def shape(self) -> Size:
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self._data.shape[_wrap_dim(dim, self.ndim)]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    nelement = numel  # PyTorch's older name

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

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))  # as PyTorch: views that refuse in-place ops in a graph

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous (shape {list(self.shape)}): use .any() or .all()")
        return bool(self._data)

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if self._data.dtype.kind not in "iu" or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self._data)

    __hash__ = object.__hash__

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

    def __format__(self, format_spec: str) -> str:
        """``f"{loss:.4f}"``: a 0-d tensor formats its value, as in PyTorch; any other tensor takes only
        the empty spec (its ``str``)."""
        if self._data.ndim == 0:
            return self.item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # -- dtype conversion (``to`` itself is in ops/shape.py: it records a ToCopy node) --
    def float(self) -> "Tensor":
        return self.to(dtypes.float32)

    def double(self) -> "Tensor":
        return self.to(dtypes.float64)

    def long(self) -> "Tensor":
        return self.to(dtypes.int64)

    def int(self) -> "Tensor":
        return self.to(dtypes.int32)

    def bool(self) -> "Tensor":
        return self.to(dtypes.bool_)

    def type_as(self, other: "Tensor") -> "Tensor":
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

    def cpu(self) -> "Tensor":
        return self

    def cuda(self, device=None, non_blocking: bool = False) -> "Tensor":
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


class _ViewMeta:
    """What a view keeps about how it was taken from its base (``Tensor._base``).

    ``steps`` are the view operations from the base to the view, as
    ``(Function, args)`` pairs: replaying them on the base gives the view again,
    with the base's current history (``Tensor._regenerate_view``). None for a
    view that cannot be replayed: an output of a custom Function or of an op
    that returns several views (``custom`` then holds PyTorch's message why, with
    ``{change}`` for what happened). ``version`` is the shared version counter's
    value when the view's history was built: once the counter moved on, the
    history is stale (``Tensor._sync_view``). ``no_grad``: made in no_grad mode.
    """

    __slots__ = ("steps", "version", "no_grad", "custom")

    def __init__(self, steps: tuple | None, version: int) -> None:
        self.steps, self.version, self.no_grad, self.custom = steps, version, False, None

    def reason(self, indirect: bool) -> str:
        """PyTorch's refusal of a view that cannot be replayed: modified in place itself, or
        (``indirect``) used after its base or another view of its base was."""
        change = "its base or another view of its base has been modified inplace" if indirect else "is being modified inplace"
        return (self.custom or (
            "This view was made by an operation that returns several views (like split or unbind) or by "
            "a custom Function, and {change}; such a view cannot be taken again from its base. You can fix "
            "this by cloning it (.clone()) first."
        )).format(change=change)


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


register_tensor_type(Tensor)  # autograd wraps gradients in it (autograd/graph.py)
