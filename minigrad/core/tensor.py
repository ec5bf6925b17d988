"""``Tensor``: a NumPy array that remembers how it was computed.

A tensor holds its values in ``_data`` (a NumPy array) and, if it was computed
from tensors that require grad, the node that computed it in ``grad_fn``.
This file is what a tensor *is* to autograd: its data, its autograd state and
its hooks. It imports no operation: the primitive ops (``core/ops.py``) and the
library's layers give ``Tensor`` its methods (``tensor_method``).
"""
from __future__ import annotations

import math
import warnings
import weakref

import numpy as np

from minigrad.core import differentiate as _differentiate
from minigrad.core.extension import Extensions
from minigrad.core.grad_mode import _GradMode, is_grad_enabled
from minigrad.core.graph import AccumulateGrad, register_tensor_type


class Size(tuple):
    """A tensor's shape: a tuple that prints like ``torch.Size``."""

    def __repr__(self) -> str:
        return f"minigrad.Size({list(self)})"

    def numel(self) -> int:
        return math.prod(self)


class _VersionCounter:
    """How many times a tensor's values were changed in place. Views share one."""

    __slots__ = ("value", "inference")

    def __init__(self, inference: bool = False) -> None:
        self.value = 0
        self.inference = inference  # made in inference_mode: is_inference(), never saved for backward


class Tensor:
    """An n-dimensional array with automatic differentiation."""

    __slots__ = (
        "_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_counter",
        "_base", "_view_meta", "_hooks", "_grad_accumulator", "_post_accumulate_grad_hooks", "__weakref__",
    )
    __array_ufunc__ = None  # make `ndarray * tensor` call Tensor.__rmul__ instead of looping in NumPy

    def _init(self, array: np.ndarray) -> None:  # (make one with tensor(data), below)
        self._data = array
        self._requires_grad = False
        self._grad = None
        self._grad_fn = None  # (the grad_fn property brings a view's history up to date first)
        self._output_nr = 0
        self._counter = _VersionCounter(True) if _GradMode.inference else None  # (else made when first asked for)
        self._base = None  # for a view (the views layer): the tensor that owns the memory
        self._view_meta = None  # for a view: how to take it again from _base (Extensions.views)
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
        if not isinstance(requires_grad, (bool, np.bool_)):
            kind = type(requires_grad)
            name = kind.__name__ if kind.__module__.split(".")[0] in ("builtins", "minigrad") else (
                f"{kind.__module__}.{kind.__name__}")
            raise TypeError(f"argument 'requires_grad' must be bool, not {name}")
        if self._grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and getattr(self.dtype, "numpy", self.dtype).kind != "f":  # (dtype: a lazy placeholder's too)
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
        it) changed in place since gets its new history (``Extensions.views``).
        """
        if self._view_meta is not None:
            Extensions.views.sync(self)
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

    def _copy_grad(self, retained: bool = False) -> "Tensor":
        """A copy of this gradient, about to be stored in ``.grad``: never the incoming object
        (recorded under ``create_graph``)."""
        if is_grad_enabled() and self._requires_grad:
            return self * 1.0
        return Tensor._wrap(self._data.copy())

    def _edge(self) -> tuple:
        """Where this tensor's gradient goes: its producer, or its leaf accumulator."""
        if self._view_meta is not None:
            Extensions.views.sync(self)
        if self._grad_fn is not None:
            return (self._grad_fn, self._output_nr)
        accumulator = self._grad_accumulator and self._grad_accumulator()
        if accumulator is None:
            accumulator = AccumulateGrad(self)
            self._grad_accumulator = weakref.ref(accumulator)
        return (accumulator, 0)

    def backward(self, gradient=None, retain_graph: bool | None = None, create_graph: bool = False, inputs=None) -> None:
        """Accumulate the gradient of this tensor into the ``.grad`` of every leaf it depends on."""
        data = self._data
        if gradient is None and data.size == 1 and inputs is None and self._requires_grad:  # (loss.backward())
            gradient = _differentiate._ones(data)
        elif (type(gradient) is not Tensor or inputs is not None or not self._requires_grad
              or gradient._data.shape != data.shape or gradient._data.dtype != data.dtype):
            return _differentiate.backward(self, gradient, retain_graph, create_graph, inputs)  # (checks, then runs)
        _differentiate.run_backward([self._edge()], [gradient], create_graph if retain_graph is None else retain_graph,
                                    create_graph)

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

    @property
    def data(self) -> "Tensor":
        """The values as a tensor outside the graph. Changes to it are NOT tracked: prefer detach()."""
        return Tensor._wrap(self._data)

    @data.setter
    def data(self, value: "Tensor") -> None:  # (minigrad/_tensor.py adds PyTorch's checks)
        self._data = value._data if isinstance(value, Tensor) else np.asarray(value, dtype=self._data.dtype)

    @property
    def _version_counter(self) -> _VersionCounter:
        """How many times these values were changed in place; shared by views of the same memory."""
        if self._counter is None:
            self._counter = _VersionCounter()
        return self._counter

    @_version_counter.setter
    def _version_counter(self, counter: _VersionCounter) -> None:
        self._counter = counter

    @property
    def _version(self) -> int:
        return self._version_counter.value

    # -- the values ---------------------------------------------------------------
    def numpy(self, *, force: bool = False) -> np.ndarray:
        """The underlying array (shared memory); refused, as in PyTorch, for a tensor (or a view of
        one) that requires grad while grad mode is on, unless ``force=True`` (``detach().numpy()``)."""
        if not force and self.requires_grad and is_grad_enabled():
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

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def dim(self) -> int:
        return self._data.ndim

    def numel(self) -> int:
        return self._data.size

    @property
    def dtype(self):
        """The NumPy dtype here; ``minigrad.dtypes`` replaces it with PyTorch-style dtypes."""
        return self._data.dtype

    def __len__(self) -> int:
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return len(self._data)

    def __bool__(self) -> bool:
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is ambiguous (shape {list(self.shape)}): use .any() or .all()")
        return bool(self._data)

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        suffix = f", grad_fn=<{type(self._grad_fn).__name__}>" if self._grad_fn is not None else (
            ", requires_grad=True" if self._requires_grad else "")
        return f"tensor({np.array2string(self._data, separator=', ')}{suffix})"


def tensor(data, requires_grad: bool = False) -> Tensor:
    """A new tensor with a copy of ``data``: floats become float32, as PyTorch's default dtype."""
    array = np.array(data._data if isinstance(data, Tensor) else data)
    if array.dtype == np.float64 and not isinstance(data, (np.ndarray, Tensor)):
        array = array.astype(np.float32)
    out = Tensor._wrap(array)
    return out.requires_grad_() if requires_grad else out


def extend_tensor(mixin: type) -> type:
    """Give ``Tensor`` every attribute ``mixin`` defines (a layer's part of the Tensor API)."""
    for name, value in vars(mixin).items():
        if name not in ("__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__slots__"):
            setattr(Tensor, name, value)
    return mixin


register_tensor_type(Tensor)  # autograd wraps gradients in it (core/graph.py)
Extensions.Tensor = Tensor  # the op table extends it (tensor_method)
