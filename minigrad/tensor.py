"""``Tensor``: a NumPy array that remembers how it was computed.

A tensor holds its values in ``_data`` (a NumPy array) and, if it was computed
from tensors that require grad, the node that computed it in ``grad_fn``.
Every operation lives in ``minigrad/ops/`` as a ``Function``; the methods here
only forward to them, so each derivative is written down exactly once.
"""
from __future__ import annotations

import warnings
import weakref
from collections import OrderedDict

import numpy as np

from minigrad import dtypes
from minigrad.device import CPU as _CPU, device as _device_type, resolve as _resolve_device
from minigrad.autograd import differentiate as _differentiate
from minigrad.autograd.graph import AccumulateGrad, add_hook
from minigrad.autograd.grad_mode import enable_grad as _enable_grad
from minigrad.autograd.grad_mode import is_grad_enabled


class Size(tuple):
    """A tensor's shape: a tuple that prints like ``torch.Size``."""

    def __repr__(self) -> str:
        return f"minigrad.Size({list(self)})"

    def numel(self) -> int:
        return int(np.prod(self, dtype=np.int64))


class _VersionCounter:
    """How many times a tensor's values were changed in place. Views share one."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0


def _method(name: str, operator):
    """The method form of a binary operator (``x.mul(y)`` for ``x * y``): the same, but an operand
    that is neither a Tensor nor a number is a TypeError instead of NotImplemented."""
    def method(self, other):
        return operator(self, _argument(name, other))

    method.__name__ = method.__qualname__ = name
    return method


class Tensor:
    """An n-dimensional array with automatic differentiation."""

    __slots__ = (
        "_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_version_counter",
        "_base", "_view_meta", "_hooks", "_grad_accumulator", "__weakref__",
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
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> "Tensor":
        """Ask for gradients of this leaf to be accumulated into ``.grad``."""
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
        self._grad = copy_grad(grad, retained=True) if self._grad is None else self._grad + grad

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
            if node is not None:  # (on a leaf, AccumulateGrad reads the tensor's own dict)
                node._pre_hooks = (node._pre_hooks or ()) + ((self._output_nr, hooks),)
        return add_hook(hooks, hook)

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
            self._regenerate_view()

    def _view_needs_grad(self) -> bool:
        """For a view that does not require grad itself, of a base that does: it counts as requiring
        grad (PyTorch's rule; a view taken under no_grad then has no edge), with its history up to date."""
        self._sync_view()
        return True

    def _regenerate_view(self) -> None:
        """Re-take this view from its base, whose history changed since (an in-place op on the
        base or on another view of it). As in PyTorch, the view's new grad_fn is one
        ``AsStridedBackward0`` node on the base's current history."""
        meta, base = self._view_meta, self._base
        if meta.custom is not None:  # (a custom Function's view, made in no_grad mode or not)
            raise RuntimeError(meta.reason(indirect=True))
        if meta.no_grad:  # (PyTorch's text says "with grad mode enabled" even when it was not)
            raise RuntimeError(
                "A view was created in no_grad mode and its base or another view of its base has been "
                "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
                "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
                "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
                "or both outside (if you want the inplace to be tracked)."
            )
        if meta.steps is None:
            raise RuntimeError(meta.reason(indirect=True))
        with _enable_grad():
            view = _shape.AsStrided.apply(base, meta.steps)
        meta.version = self._version_counter.value  # (first: _set_history's retain_grad looks at the view again)
        self._set_history(view._grad_fn, view._output_nr)

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

    def _copy_slices(self, values: "Tensor", view_input: int, others: list) -> "Tensor":
        """The base with this view's region replaced by ``values``, which an in-place op on this
        view wrote (PyTorch's CopySlices): the op's node took the view as its tensor input
        number ``view_input`` and ``others`` as its other tensor inputs."""
        return _shape.CopySlices.apply(self._base, (values,), self._view_meta.steps, view_input, *others)

    def _rebase_view(self, new_base: "Tensor") -> None:
        """After an in-place op wrote into this view: the base's new history is ``new_base``'s
        (``_copy_slices``), and the view is taken again from it."""
        self._base._set_history(new_base._grad_fn, new_base._output_nr)
        self._regenerate_view()

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
        return self.shape if dim is None else self._data.shape[dim]

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
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

    def __repr__(self) -> str:
        data = self._data
        if data.dtype.kind == "f":
            body = np.array2string(data, separator=", ", prefix="tensor(",
                                   formatter={"float_kind": _float_formatter(data)})
        elif data.dtype == np.bool_:  # PyTorch pads to the widest value present: [True, True], [ True, False]
            width = 5 if data.size and not data.all() else 4
            body = np.array2string(data, separator=", ", prefix="tensor(",
                                   formatter={"bool": lambda v: f"{v!s:>{width}}"})
        else:
            body = np.array2string(data, separator=", ", prefix="tensor(")
        body = body.replace(", ..., ", ",  ..., ")  # PyTorch's 1-D summary: ' ...' is one more element
        extras = []
        if data.size == 0 and data.shape != (0,):
            extras.append(f"size={tuple(data.shape)}")
        if data.dtype not in (dtypes.default_float.numpy, np.dtype(np.int64), np.dtype(np.bool_)):
            extras.append(f"dtype={self.dtype}")
        grad_fn = self.grad_fn
        if grad_fn is not None:
            extras.append(f"grad_fn=<{type(grad_fn).__name__}>")  # PyTorch: the class, without the C++ namespace
        elif self._requires_grad:
            extras.append("requires_grad=True")
        return "tensor(" + ", ".join([body] + extras) + ")"

    # -- dtype conversion -------------------------------------------------------
    def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False) -> "Tensor":
        """This tensor in another dtype, as a copy that gradients flow through (cast back to this dtype).

        As in PyTorch: ``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)`` (other's
        dtype) or keywords. The device can only be the CPU (see ``minigrad.device``). Returns
        ``self`` when nothing changes, unless ``copy=True``.
        """
        flags = []  # to(dtype, non_blocking, copy) positionally
        for arg in args:
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            elif isinstance(arg, (str, _device_type)):
                device = arg
            elif isinstance(arg, bool):
                flags.append(arg)
            else:
                dtype = arg
        if len(flags) == 2:
            copy = flags[1]
        _resolve_device(device)
        target = self._data.dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
        if target == self._data.dtype and not copy:
            return self
        return _shape.ToCopy.apply(self, target)

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
        return self.to(other.dtype)

    # -- arithmetic (operators broadcast; Python numbers and NumPy arrays are accepted) ----
    def __add__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _ew.Add.apply(self, other)

    def __radd__(self, other):
        other = _operand(other)  # self first, as in PyTorch: the number's edge comes second
        return NotImplemented if other is NotImplemented else _ew.Add.apply(self, other)

    def __sub__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _ew.Sub.apply(self, other)

    def __rsub__(self, other):
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        return _ew.Sub.apply(other, self) if isinstance(other, Tensor) else _ew.Rsub.apply(self, other)

    def __mod__(self, other):
        return self.remainder(other)

    def __rmod__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _rounding.NotDifferentiable.apply(
            other, self, np.remainder, "remainder")

    def __floordiv__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _rounding.NotDifferentiable.apply(
            self, other, np.floor_divide, "floor_divide")

    def __rfloordiv__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _rounding.NotDifferentiable.apply(
            other, self, np.floor_divide, "floor_divide")

    def remainder(self, other) -> "Tensor":
        other = _argument("remainder", other)
        return (_rounding.Remainder if isinstance(other, Tensor) else _rounding.RemainderScalar).apply(self, other)

    def fmod(self, other) -> "Tensor":
        other = _argument("fmod", other)
        return (_rounding.Fmod if isinstance(other, Tensor) else _rounding.FmodScalar).apply(self, other)

    def floor_divide(self, other) -> "Tensor":
        return self.__floordiv__(other)

    def floor(self) -> "Tensor":
        return _rounding.Floor.apply(self)

    def ceil(self) -> "Tensor":
        return _rounding.Ceil.apply(self)

    def trunc(self) -> "Tensor":
        return _rounding.Trunc.apply(self)

    def round(self, decimals: int | None = None) -> "Tensor":
        return _rounding.Round.apply(self, 0) if decimals is None else _rounding.RoundDecimals.apply(self, decimals)

    def frac(self) -> "Tensor":
        return _rounding.Frac.apply(self)

    def __mul__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _ew.Mul.apply(self, other)

    def __rmul__(self, other):
        other = _operand(other)  # self first, as in PyTorch: the number's edge comes second
        return NotImplemented if other is NotImplemented else _ew.Mul.apply(self, other)

    def __truediv__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _ew.Div.apply(self, other)

    def __rtruediv__(self, other):
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        return _ew.Div.apply(other, self) if isinstance(other, Tensor) else _ew.rtruediv(other, self)

    def __pow__(self, other):
        other = _operand(other)
        if other is NotImplemented:
            return NotImplemented
        return (_ew.PowTensor if isinstance(other, Tensor) else _ew.Pow).apply(self, other)

    def __rpow__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _ew.PowScalarBase.apply(other, self)

    def __matmul__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _linalg.matmul(self, other)

    def __rmatmul__(self, other):
        other = _operand(other)
        return NotImplemented if other is NotImplemented else _linalg.matmul(other, self)

    def __neg__(self) -> "Tensor":
        return _ew.Neg.apply(self)

    def __pos__(self) -> "Tensor":
        return self

    add = _method("add", __add__)
    sub = _method("sub", __sub__)
    mul = _method("mul", __mul__)
    div = _method("div", __truediv__)
    pow = _method("pow", __pow__)
    matmul = _method("matmul", __matmul__)
    neg = __neg__

    # -- comparisons: boolean results outside the graph ---------------------------
    def __eq__(self, other):  # type: ignore[override]
        return _ew.compare(np.equal, self, other)

    def __ne__(self, other):  # type: ignore[override]
        return _ew.compare(np.not_equal, self, other)

    def __lt__(self, other):
        return _ew.compare(np.less, self, other)

    def __le__(self, other):
        return _ew.compare(np.less_equal, self, other)

    def __gt__(self, other):
        return _ew.compare(np.greater, self, other)

    def __ge__(self, other):
        return _ew.compare(np.greater_equal, self, other)

    eq, ne, lt, le, gt, ge = __eq__, __ne__, __lt__, __le__, __gt__, __ge__

    def all(self, dim=None, keepdim: bool = False) -> "Tensor":
        """Whether every element (along ``dim``) is nonzero: a bool tensor, no gradient."""
        return _red.logical_reduce(np.all, self, dim, keepdim)

    def any(self, dim=None, keepdim: bool = False) -> "Tensor":
        """Whether some element (along ``dim``) is nonzero: a bool tensor, no gradient."""
        return _red.logical_reduce(np.any, self, dim, keepdim)

    # -- elementwise functions ------------------------------------------------------
    def exp(self) -> "Tensor":
        return _ew.Exp.apply(self)

    def log(self) -> "Tensor":
        return _ew.Log.apply(self)

    def sqrt(self) -> "Tensor":
        return _ew.Sqrt.apply(self)

    def abs(self) -> "Tensor":
        return _ew.Abs.apply(self)

    def tanh(self) -> "Tensor":
        return _ew.Tanh.apply(self)

    def sigmoid(self) -> "Tensor":
        return _ew.Sigmoid.apply(self)

    def relu(self) -> "Tensor":
        return _ew.Relu.apply(self)

    def clamp(self, min=None, max=None) -> "Tensor":
        return _ew.Clamp.apply(self, min, max)

    clip = clamp

    def maximum(self, other: "Tensor") -> "Tensor":
        return _ew.Maximum.apply(self, _argument("maximum", other))

    def softmax(self, dim: int, dtype=None) -> "Tensor":
        return _softmax.Softmax.apply(self if dtype is None else self.to(dtype), dim)

    def log_softmax(self, dim: int, dtype=None) -> "Tensor":
        return _softmax.LogSoftmax.apply(self if dtype is None else self.to(dtype), dim)

    # -- reductions -----------------------------------------------------------------
    def sum(self, dim=None, keepdim: bool = False) -> "Tensor":
        return (_red.SumAll if dim is None else _red.Sum).apply(self, dim, keepdim)

    def mean(self, dim=None, keepdim: bool = False) -> "Tensor":
        return (_red.MeanAll if dim is None else _red.Mean).apply(self, dim, keepdim)

    def max(self, dim=None, keepdim: bool = False):
        return _red.max(self, dim, keepdim)

    def min(self, dim=None, keepdim: bool = False):
        return _red.max(self, dim, keepdim, largest=False)

    def argmax(self, dim=None, keepdim: bool = False) -> "Tensor":
        return _red.argmax(self, dim, keepdim)

    def argmin(self, dim=None, keepdim: bool = False) -> "Tensor":
        return _red.argmax(self, dim, keepdim, largest=False)

    # -- shape ----------------------------------------------------------------------
    def reshape(self, *shape) -> "Tensor":
        return _shape.Reshape.apply(self, _sizes(shape))

    def view(self, *shape) -> "Tensor":
        return _shape.Reshape.apply(self, _sizes(shape), True)

    def view_as(self, other: "Tensor") -> "Tensor":
        return self.view(other.shape)

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> "Tensor":
        if self.ndim == 0:
            return self.reshape(1)
        start, end = _wrap_dim(start_dim, self.ndim), _wrap_dim(end_dim, self.ndim)
        shape = self.shape
        merged = int(np.prod(shape[start:end + 1], dtype=np.int64))  # not -1: ambiguous with 0 elements
        return self.reshape(shape[:start] + (merged,) + shape[end + 1:]) if start < end else self

    def transpose(self, dim0: int, dim1: int) -> "Tensor":
        return _shape.Transpose.apply(self, dim0, dim1)

    def permute(self, *dims) -> "Tensor":
        return _shape.Permute.apply(self, _sizes(dims))

    @property
    def T(self) -> "Tensor":
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> "Tensor":
        return self.transpose(-2, -1)

    def squeeze(self, dim=None) -> "Tensor":
        return _shape.squeeze_node(dim).apply(self, dim)

    def unsqueeze(self, dim: int) -> "Tensor":
        return _shape.Unsqueeze.apply(self, dim)

    def expand(self, *sizes) -> "Tensor":
        return _shape.Expand.apply(self, _sizes(sizes))

    def expand_as(self, other: "Tensor") -> "Tensor":
        return self.expand(other.shape)

    def broadcast_to(self, size) -> "Tensor":
        return self.expand(size)

    def select(self, dim: int, index: int) -> "Tensor":
        return _shape.Select.apply(self, _wrap_dim(dim, self.ndim), index)

    def narrow(self, dim: int, start, length: int) -> "Tensor":
        """``length`` entries of dimension ``dim`` from ``start`` on: a view, as ``x[:, start:start + length]`` for dim 1."""
        dim = _wrap_dim(dim, self.ndim)
        size, start = self.shape[dim], int(start)
        if not -size <= start <= size:
            raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
        if length < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
        start %= max(size, 1)
        if start + length > size:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
        return _shape.Slice.apply(self, dim, slice(start, start + length))  # always a node, as PyTorch's

    def clone(self) -> "Tensor":
        return _shape.Clone.apply(self)

    def stride(self, dim: int | None = None):
        """How many elements apart neighbours lie in memory, per dimension (NumPy counts bytes)."""
        strides = tuple(step // self._data.itemsize for step in self._data.strides)
        return strides if dim is None else strides[_wrap_dim(dim, self.ndim)]

    def is_contiguous(self) -> bool:
        """Whether the elements lie in memory row after row, as those of a new tensor of this shape do
        (dimensions of size 1 do not count). ``view`` needs it more often than not."""
        return self._data.flags.c_contiguous

    def contiguous(self) -> "Tensor":
        """This tensor if it is contiguous, else a contiguous copy (recorded, as PyTorch's clone)."""
        return self if self._data.flags.c_contiguous else _shape.Contiguous.apply(self)

    def __getitem__(self, key) -> "Tensor":
        return _shape.index(self, key)

    # -- in-place operations ----------------------------------------------------------
    def _inplace(self, op: type, *args) -> "Tensor":
        """Compute ``op(self, *args)`` out of place, write it into self, move self's history.

        The out-of-place op works on a snapshot of the old values carrying self's
        old history, so what it saved for backward can't be changed under it.
        On a view, the new history goes to the base (``_rebase_view``).
        """
        base = self._base
        recording = is_grad_enabled() and (
            self._requires_grad or (base is not None and base._requires_grad)
            or any(isinstance(a, Tensor) and a._requires_grad for a in args)
        )
        if recording:
            if base is not None:
                self._check_inplace_on_view()
                self._sync_view()  # a view whose base changed since: its history first
            elif self._requires_grad and self._grad_fn is None:
                raise RuntimeError(
                    "a leaf Tensor that requires grad is being used in an in-place operation. "
                    "Update parameters inside `with minigrad.no_grad():`, or use an out-of-place op."
                )
            old = Tensor._wrap(self._data.copy())
            # A view's old values get a node of their own on the base (what the op saved of them, and
            # so a create_graph backward, needs their history); CopySlices runs the op's node and never
            # follows its edge to them, so backward never reaches the view's old node nor its hooks.
            source = self if base is None or self._grad_fn is None else _shape.AsStrided.apply(base, self._view_meta.steps)
            old._requires_grad, old._grad_fn, old._output_nr = source._requires_grad, source._grad_fn, source._output_nr
            result = op.apply(old, *args)
        else:
            result = op.apply(self, *args)
        if result.shape != self.shape:
            raise RuntimeError(
                f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
            )
        if not np.can_cast(result._data.dtype, self._data.dtype, "same_kind"):
            raise RuntimeError(
                f"result type {result.dtype} can't be cast to the desired output type {self.dtype}"
            )
        # PyTorch's overlap rules: a tensor whose elements repeat in memory (an expand()) may be
        # filled with a number (every alias gets it, recorded or not), and, when the write is not
        # recorded, advanced setitem on it only warns; other writes into it are refused. fill_ reads its 0-d value
        # first, so that value may alias self. A copy_ from exactly self's memory (same place, sizes,
        # strides, dtype) changes nothing: PyTorch returns before any check.
        written = (Ellipsis,)
        same_window = op is _shape.Copy and _same_window(self._data, args[1]._data)
        if (not same_window and 0 in self._data.strides and self._data.size and op not in _FILLS_WITH_A_NUMBER
                and _repeats_memory(self._data)):
            if recording or op is not _shape.IndexPut:
                raise RuntimeError(
                    "unsupported operation: more than one element of the written-to tensor refers to a "
                    "single memory location. Please clone() the tensor before performing the operation."
                )
            warnings.warn(
                "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
                "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor",
                UserWarning, stacklevel=3,
            )
            written = args[0]  # only the indexed elements: writing the others back would undo them
        masked_fill = op is _shape.IndexPut and isinstance(args[1], Tensor) and _is_masked_fill(*args)
        if op is not _shape.FillTensor and not masked_fill and not same_window:  # (they read self's values first)
            region = _basic_part(self._data, args[0]) if op is _shape.IndexPut else self._data
            for a in args:
                if isinstance(a, Tensor) and _overlaps(region, a._data, exact_is_fine=op is not _shape.IndexPut):
                    raise RuntimeError(
                        "unsupported operation: some elements of the input tensor and the written-to tensor "
                        "refer to a single memory location. Please clone() the tensor before performing the operation."
                    )
        if recording and base is not None:  # before the write: the op's other inputs are read as they were
            new_base = self._copy_slices(result, 0, [a for a in args if isinstance(a, Tensor)])
        self._data[written] = result._data[written]
        self._version_counter.value += 1
        if recording:
            # An op that saved its output (exp, sigmoid, sqrt, ...) saved `result`, whose values now
            # live in self: tie what it saved to self's version, so changing self again before
            # backward is caught, as in PyTorch.
            for saved in result._grad_fn._saved or ():
                if saved is not None and saved.version_counter is result._version_counter:
                    saved.version_counter, saved.saved_version = self._version_counter, self._version_counter.value
            if base is not None:
                self._rebase_view(new_base)
            else:
                self._set_history(result._grad_fn, result._output_nr)
        return self

    def add_(self, other, alpha=1) -> "Tensor":
        return self._inplace(_ew.Add, _argument("add_", other) * alpha if alpha != 1 else _argument("add_", other))

    def sub_(self, other, alpha=1) -> "Tensor":
        return self._inplace(_ew.Sub, _argument("sub_", other) * alpha if alpha != 1 else _argument("sub_", other))

    def mul_(self, other) -> "Tensor":
        return self._inplace(_ew.Mul, _argument("mul_", other))

    def div_(self, other) -> "Tensor":
        return self._inplace(_ew.Div, _argument("div_", other))

    def clamp_(self, min=None, max=None) -> "Tensor":
        return self._inplace(_ew.Clamp, min, max)

    def fill_(self, value) -> "Tensor":
        if isinstance(value, Tensor):  # differentiable in the value (FillBackward3)
            if value.ndim:
                raise RuntimeError(
                    f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
                )
            return self._inplace(_shape.FillTensor, value)
        return self._inplace(_shape.Fill, value)

    def zero_(self) -> "Tensor":
        return self._inplace(_shape.Zero, 0)

    def copy_(self, src: "Tensor") -> "Tensor":
        return self._inplace(_shape.Copy, (Ellipsis,), _argument("copy_", src))

    def __setitem__(self, key, value) -> None:
        """``self[key] = value``, as PyTorch does it.

        For basic keys, into the view ``self[key]`` (or into self, when the key
        keeps every dimension whole), PyTorch's ``copy_to``: a value of the
        target's shape is copied, a number or another 0-d tensor fills it, any
        other value is viewed without its leading 1s and expanded to the target's
        shape, then copied (so ``x[None] = x`` copies x onto itself, which is
        allowed). Other keys are an ``index_put_``, which refuses a value of
        another dtype.
        """
        index = _shape.normalize_index(key)
        value = _operand(value)
        if _shape.is_basic(index):
            target = _shape.index(self, key, for_write=True)
            if not isinstance(value, Tensor):
                value = Tensor._wrap(np.asarray(value, dtype=self._data.dtype))
            if value.shape == target.shape:
                target.copy_(value)
            elif value.ndim == 0:
                target.fill_(value)
            else:
                ones = next((i for i, n in enumerate(value.shape) if n != 1), value.ndim)
                target.copy_(value.reshape(value.shape[ones:]).expand(target.shape))
        else:
            # PyTorch's order: the basic entries select a view first (a CopySlices target, unless
            # it is self), then index_put_ writes the index arrays' part of it
            target, index = _shape.sliced(self, index)
            if isinstance(value, Tensor) and value._data.dtype != self._data.dtype and _same_dtype_needed(index, value):
                raise RuntimeError(
                    "Index put requires the source and destination dtypes match, got "
                    f"{_scalar_type(self)} for the destination and {_scalar_type(value)} for the source."
                    f" Convert the value first: value.to({self.dtype})."
                )
            if isinstance(value, Tensor) and value.ndim and value.shape[0] == 1:
                # PyTorch views the value without its leading 1s first: then it is another tensor
                # (an empty one overlaps nothing), where the same tensor is always a full overlap.
                ones = next((i for i, n in enumerate(value.shape) if n != 1), value.ndim)
                value = value.reshape(value.shape[ones:])
            target._inplace(_shape.IndexPut, index, value)

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    # == Ops from issue 10 §4 and devices (§3); each forwards to its Function in ops/ ===============
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
        if not isinstance(dtype, (dtypes.dtype, np.dtype)):
            raise ValueError(f"invalid type: {dtype!r} (pass a dtype such as minigrad.float64, or 'minigrad.DoubleTensor')")
        return self.to(dtype)

    # -- new tensors with this tensor's dtype ------------------------------------------------------
    def new_tensor(self, data, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        return _creation.tensor(data, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        return _creation.zeros(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        return _creation.ones(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        return _creation.empty(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    def new_full(self, size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> "Tensor":
        return _creation.full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)

    # -- elementwise math --------------------------------------------------------------------------
    def sin(self) -> "Tensor":
        return _unary.Sin.apply(self)

    def cos(self) -> "Tensor":
        return _unary.Cos.apply(self)

    def tan(self) -> "Tensor":
        return _unary.Tan.apply(self)

    def sinh(self) -> "Tensor":
        return _unary.Sinh.apply(self)

    def cosh(self) -> "Tensor":
        return _unary.Cosh.apply(self)

    def log1p(self) -> "Tensor":
        return _unary.Log1p.apply(self)

    def expm1(self) -> "Tensor":
        return _unary.Expm1.apply(self)

    def rsqrt(self) -> "Tensor":
        return _unary.Rsqrt.apply(self)

    def reciprocal(self) -> "Tensor":
        return _ew.Reciprocal.apply(self)

    def sign(self) -> "Tensor":
        return _unary.Sign.apply(self)

    def sin_(self) -> "Tensor":
        return self._inplace(_unary.Sin)

    def cos_(self) -> "Tensor":
        return self._inplace(_unary.Cos)

    def tan_(self) -> "Tensor":
        return self._inplace(_unary.Tan)

    def sinh_(self) -> "Tensor":
        return self._inplace(_unary.Sinh)

    def cosh_(self) -> "Tensor":
        return self._inplace(_unary.Cosh)

    def log1p_(self) -> "Tensor":
        return self._inplace(_unary.Log1p)

    def expm1_(self) -> "Tensor":
        return self._inplace(_unary.Expm1)

    def sign_(self) -> "Tensor":
        return self._inplace(_unary.Sign)

    def exp_(self) -> "Tensor":
        return self._inplace(_ew.Exp)

    def log_(self) -> "Tensor":
        return self._inplace(_ew.Log)

    def sqrt_(self) -> "Tensor":
        return self._inplace(_ew.Sqrt)

    def abs_(self) -> "Tensor":
        return self._inplace(_ew.Abs)

    def neg_(self) -> "Tensor":
        return self._inplace(_ew.Neg)

    def tanh_(self) -> "Tensor":
        return self._inplace(_ew.Tanh)

    def sigmoid_(self) -> "Tensor":
        return self._inplace(_ew.Sigmoid)

    def relu_(self) -> "Tensor":
        return self._inplace(_ew.Relu)

    def pow_(self, exponent) -> "Tensor":
        return self._inplace(_ew.Pow, _argument("pow_", exponent))

    # -- matrix products ---------------------------------------------------------------------------
    def mm(self, mat2: "Tensor") -> "Tensor":
        return _matrix.mm(self, mat2)

    def mv(self, vec: "Tensor") -> "Tensor":
        return _matrix.mv(self, vec)

    def bmm(self, batch2: "Tensor") -> "Tensor":
        return _matrix.bmm(self, batch2)

    def t(self) -> "Tensor":
        return _matrix.T.apply(self)

    # -- reductions and scans ----------------------------------------------------------------------
    def prod(self, dim=None, keepdim: bool = False, *, dtype=None) -> "Tensor":
        """The product of all elements, or along ``dim``; ``dtype`` converts the input first."""
        a = self if dtype is None else self.to(dtype)
        return _scan.ProdAll.apply(a) if dim is None else _scan.Prod.apply(a, dim, keepdim)

    def cumsum(self, dim: int, *, dtype=None) -> "Tensor":
        return _scan.Cumsum.apply(self if dtype is None else self.to(dtype), dim)

    def norm(self, p="fro", dim=None, keepdim: bool = False) -> "Tensor":
        return _stats.norm(self, p, dim, keepdim)

    def var(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> "Tensor":
        return _stats.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim=None, unbiased=None, keepdim: bool = False, *, correction=None) -> "Tensor":
        return _stats.std(self, dim, unbiased, keepdim, correction=correction)

    def logsumexp(self, dim, keepdim: bool = False) -> "Tensor":
        return _stats.Logsumexp.apply(self, dim, keepdim)

    # -- pieces, copies and rearrangements ---------------------------------------------------------
    def chunk(self, chunks: int, dim: int = 0) -> tuple:
        return _movement.chunk(self, chunks, dim)

    def split(self, split_size, dim: int = 0) -> tuple:
        return _movement.split(self, split_size, dim)

    def unbind(self, dim: int = 0) -> tuple:
        return _movement.unbind(self, dim)

    def repeat(self, *repeats) -> "Tensor":
        return _movement.Repeat.apply(self, _sizes(repeats))

    def flip(self, *args, dims=None) -> "Tensor":
        """``x.flip(0, 1)``, ``x.flip((0, 1))`` or ``x.flip(dims=[0, 1])``."""
        return _movement.Flip.apply(self, _sizes(args) if dims is None else tuple(dims))

    def roll(self, shifts, dims=None) -> "Tensor":
        return _movement.Roll.apply(self, shifts, dims)

    def tril(self, diagonal: int = 0) -> "Tensor":
        return _movement.Tril.apply(self, diagonal)

    def triu(self, diagonal: int = 0) -> "Tensor":
        return _movement.Triu.apply(self, diagonal)

    def tril_(self, diagonal: int = 0) -> "Tensor":
        return self._inplace(_movement.Tril, diagonal)

    def triu_(self, diagonal: int = 0) -> "Tensor":
        return self._inplace(_movement.Triu, diagonal)

    # -- indexing with index tensors ---------------------------------------------------------------
    def gather(self, dim: int, index: "Tensor") -> "Tensor":
        return _indexing.Gather.apply(self, dim, index)

    def scatter_add(self, dim: int, index: "Tensor", src: "Tensor") -> "Tensor":
        return _indexing.ScatterAdd.apply(self, dim, index, src)

    def scatter_add_(self, dim: int, index: "Tensor", src: "Tensor") -> "Tensor":
        return self._inplace(_indexing.ScatterAdd, dim, index, src)

    def index_select(self, dim: int, index: "Tensor") -> "Tensor":
        return _indexing.IndexSelect.apply(self, dim, index)

    def masked_fill(self, mask: "Tensor", value) -> "Tensor":
        return _indexing.masked_fill_function(value).apply(self, mask, value)

    def masked_fill_(self, mask: "Tensor", value) -> "Tensor":
        return self._inplace(_indexing.masked_fill_function(value), mask, value)

    # -- sorting -----------------------------------------------------------------------------------
    def sort(self, *args, **kwargs):
        """``sort(dim=-1, descending=False)``, or ``sort(*, stable, dim=-1, descending=False)``, as PyTorch's."""
        return _sorting.sort(self, *args, **kwargs)

    def argsort(self, *args, **kwargs) -> "Tensor":
        return _sorting.argsort(self, *args, **kwargs)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
        return _sorting.topk(self, k, dim, largest, sorted)

    # -- comparing whole tensors (no gradient) -----------------------------------------------------
    def isclose(self, other: "Tensor", rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> "Tensor":
        return _compare.isclose(self, other, rtol, atol, equal_nan)

    def allclose(self, other: "Tensor", rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        return _compare.allclose(self, other, rtol, atol, equal_nan)

    def equal(self, other: "Tensor") -> bool:
        return _compare.equal(self, other)

    def __array__(self, dtype=None, copy=None) -> np.ndarray:
        """``np.asarray(t)`` (and matplotlib's ``imshow(t)``): ``t.numpy()``, cast to ``dtype`` if given.

        Like ``numpy()``, it refuses a tensor that requires grad (PyTorch's rule): detach it first.
        """
        array = self.numpy()
        return array if dtype is None else array.astype(dtype, copy=False)
    # == end of the issue 10 block ==================================================================


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


def copy_grad(grad: Tensor, retained: bool = False) -> Tensor:
    """A copy of a gradient about to be stored in ``.grad``: never the incoming object.

    Under ``create_graph`` the copy is recorded (PyTorch names that node
    ``CopyBackwards`` for a leaf's ``.grad``, ``CloneBackward0`` for a retained one).
    """
    if is_grad_enabled() and grad._requires_grad:
        return (_shape.Clone if retained else _shape.CopyGrad).apply(grad)
    return Tensor._wrap(grad._data.copy())


def _rebuild_tensor(cls: type, array: np.ndarray, requires_grad: bool) -> Tensor:
    t = cls.__new__(cls)
    t._init(array)
    t._requires_grad = requires_grad
    return t


def _same_window(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are the same elements of the same memory, in the same order and dtype."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _basic_part(data: np.ndarray, index: tuple) -> np.ndarray:
    """What the basic entries of an advanced ``index`` select in ``data`` (the dimensions that index
    arrays index kept whole): PyTorch's setitem takes that view first and ``index_put_``s into it,
    so that view, not the whole tensor, is what the value must not overlap."""
    key = []
    for k in index:
        if isinstance(k, np.ndarray):
            key.extend([slice(None)] * (k.ndim if k.dtype == np.bool_ else 1))
        else:
            key.append(None if isinstance(k, (bool, np.bool_)) else k)
    part = data[tuple(key)]
    # whole slices select nothing: then, as in PyTorch, the part is the tensor itself (a full overlap)
    return data if _same_window(part, data) else part


def _overlaps(written: np.ndarray, read: np.ndarray, exact_is_fine: bool) -> bool:
    """PyTorch's overlap check for an in-place write (``get_overlap_status``).

    Only dense operands are compared (PyTorch gives up on the others, and so
    do we); they overlap when their byte ranges meet. Exactly the same
    elements with the same strides (``x.add_(x)``, ``x[:] = x``) is fine for
    most ops, not for advanced setitem (``exact_is_fine=False``). Strides of
    size-1 dimensions count too, as in PyTorch: the view ops that make them
    follow PyTorch's conventions (``np.expand_dims``, ``shape._expand_strides``).
    """
    if written is read:  # the same tensor: a full overlap, even with no elements
        return not exact_is_fine
    if not written.size or not read.size or not np.may_share_memory(written, read):
        return False
    if not (_dense(written) and _dense(read)):
        return False
    exact = (
        written.__array_interface__["data"][0] == read.__array_interface__["data"][0]
        and written.shape == read.shape
        and written.strides == read.strides
    )
    return not (exact and exact_is_fine)


def _same_dtype_needed(index: tuple, value: Tensor) -> bool:
    """Whether PyTorch's setitem with this key is an ``index_put_``, which wants the value in the
    target's dtype: a key with an index tensor or list, except a lone bool mask with a one-element
    value (that is ``masked_fill_``, which casts the value, as basic keys do)."""
    return any(isinstance(k, np.ndarray) for k in index) and not _is_masked_fill(index, value)


def _is_masked_fill(index: tuple, value: Tensor) -> bool:
    """A lone bool mask and a one-element value: PyTorch's setitem is then ``masked_fill_``."""
    return len(index) == 1 and isinstance(index[0], np.ndarray) and index[0].dtype == np.bool_ and value._data.size == 1


def _scalar_type(t: Tensor) -> str:
    """PyTorch's short name of a tensor's dtype in messages: Float, Double, Long, Int, Bool."""
    return dtypes.TYPE_NAMES[t._data.dtype].removesuffix("Tensor")


def _dense(a: np.ndarray) -> bool:
    """Whether the elements of ``a`` fill a block of memory without gaps or repeats, in some order."""
    dims = sorted((st, n) for n, st in zip(a.shape, a.strides) if n != 1)
    expected = a.itemsize
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True


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


def _float_formatter(data: np.ndarray):
    """PyTorch's float printing: the style and the column width come from the nonzero finite
    values only. Whole numbers print as "1.", others with 4 decimals, in scientific notation
    when the values span more than 1000x or pass 1e8 (or, for fractions, go below 1e-4)."""
    values = data[np.isfinite(data) & (data != 0)].astype(np.float64)
    size = np.abs(values)
    whole = bool(np.all(values == np.ceil(values)))
    sci = values.size > 0 and bool(size.max() / size.min() > 1000 or size.max() > 1e8
                                   or (not whole and size.min() < 1e-4))

    def text(v: float) -> str:
        if sci:
            return f"{v:.4e}"
        if whole:
            return f"{v:.0f}" + ("" if np.isnan(v) or np.isinf(v) else ".")
        return f"{v:.4f}"
    width = max([1] + [len(text(v)) for v in values])
    return lambda v: text(float(v)).rjust(width)


def _sizes(args: tuple) -> tuple:
    """Accept both ``t.reshape(2, 3)`` and ``t.reshape((2, 3))``."""
    return tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list)) else tuple(args)


from minigrad.ops import elementwise as _ew  # noqa: E402  (the ops need Tensor defined first)
from minigrad.ops import linalg as _linalg  # noqa: E402
from minigrad.ops import reduction as _red  # noqa: E402
from minigrad.ops import rounding as _rounding  # noqa: E402
from minigrad.ops import shape as _shape  # noqa: E402
from minigrad.ops import softmax as _softmax  # noqa: E402
from minigrad.ops.broadcast import wrap_dim as _wrap_dim  # noqa: E402
from minigrad.ops.layout import repeats_memory as _repeats_memory  # noqa: E402
from minigrad import creation as _creation  # noqa: E402
from minigrad.ops import compare as _compare  # noqa: E402
from minigrad.ops import indexing as _indexing  # noqa: E402
from minigrad.ops import matrix as _matrix  # noqa: E402
from minigrad.ops import movement as _movement  # noqa: E402
from minigrad.ops import scan as _scan  # noqa: E402
from minigrad.ops import sorting as _sorting  # noqa: E402
from minigrad.ops import stats as _stats  # noqa: E402
from minigrad.ops import unary as _unary  # noqa: E402

# The in-place ops that write a number into every element: they may write into an expand(), as in PyTorch.
_FILLS_WITH_A_NUMBER = (_shape.Fill, _shape.Zero)
