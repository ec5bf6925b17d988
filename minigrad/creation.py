"""Making tensors: from data, filled with a constant, or random.

Random tensors come from the one generator of ``minigrad/random.py``, seeded by
``manual_seed``.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from minigrad import dtypes
from minigrad.device import resolve as resolve_device
from minigrad.random import generator as _generator_of
from minigrad.ops.broadcast import number, type_name
from minigrad._tensor import Size, Tensor, _sizes
from minigrad.ops.registry import tensor_method

def _new(array: np.ndarray, requires_grad: bool) -> Tensor:
    t = Tensor._wrap(array)
    if requires_grad:
        t.requires_grad_()
    return t


def _infer_dtype(data, array: np.ndarray) -> np.dtype:
    """PyTorch's choice: Python floats become float32; NumPy arrays keep their dtype."""
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        return dtypes.from_numpy_dtype(array.dtype).numpy
    if array.dtype.kind == "f":
        return dtypes.default_float.numpy
    if array.dtype.kind in "iu":
        return np.dtype(np.int64)
    if array.dtype.kind == "b":
        return np.dtype(np.bool_)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}: expected numbers, nested lists of numbers, or a NumPy array")


def _not_numbers(data, name: str, dtype_given: bool) -> Exception:
    """PyTorch's error for data that is not numbers: TypeError for a str, ValueError for a str in a
    list, and for anything else (None, a dict) RuntimeError, or TypeError when a dtype is given (each
    element is then converted to it, which refuses such a value); ragged lists are a ValueError."""
    if isinstance(data, str):
        return TypeError(f"{name}(): invalid data type 'str': a tensor holds numbers")
    found = _non_numbers(data)
    if not found:
        return ValueError("expected sequence of equal-length lists of numbers to make a tensor")
    if isinstance(found[0], str):
        return ValueError("too many dimensions 'str': a tensor holds numbers, not strings")
    if dtype_given:
        return TypeError(f"{name}(): must be real number, not {type(found[0]).__name__}: a tensor holds numbers "
                         "(a number, nested lists of numbers, or a NumPy array)")
    return RuntimeError(f"Could not infer dtype of {type(found[0]).__name__}: a tensor holds numbers "
                        "(a number, nested lists of numbers, or a NumPy array)")


def _non_numbers(data) -> list:
    """The items of nested lists that are not numbers, in order (the first is the one reported)."""
    if isinstance(data, (list, tuple)):
        return [bad for item in data for bad in _non_numbers(item)]
    return [] if isinstance(data, (numbers.Number, np.generic, np.ndarray, Tensor)) else [data]


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, an array or a tensor)."""
    return _from_data(data, dtype, device, requires_grad, "new")  # (PyTorch's messages say new())


def _detached(data):
    """Nested lists with every tensor in them replaced by its values."""
    if isinstance(data, Tensor):
        if data._requires_grad and data._data.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return data._data
    if isinstance(data, (list, tuple)):
        return [_detached(item) for item in data]
    return data


def _from_data(data, dtype, device, requires_grad: bool, name: str) -> Tensor:
    """``tensor()`` and ``new_tensor()``: ``name`` is what their messages call them."""
    resolve_device(device)
    if isinstance(data, Tensor):
        warnings.warn(f"To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      f"sourceTensor.detach().clone().requires_grad_(True), rather than "
                      f"{'minigrad.tensor' if name == 'new' else 'tensor.new_tensor'}(sourceTensor).",
                      UserWarning, stacklevel=3)
        data = data._data
    elif isinstance(data, np.ndarray):
        _refuse_negative_strides(data)
    try:
        array = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists to make a tensor: {e}") from None
    except RuntimeError:  # (a tensor that requires grad in the lists: numpy() refuses it)
        warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                      "Consider using tensor.detach() first.", UserWarning, stacklevel=3)
        array = np.array(_detached(data))  # PyTorch copies the values
    if array.dtype == object or array.dtype.kind in "USV":
        raise _not_numbers(data, name, dtype is not None)
    if array.dtype.kind == "c" and dtype is not None and not isinstance(data, np.ndarray):
        # (PyTorch casts a complex array to the dtype, but refuses a complex number there)
        raise TypeError(f"{name}(): must be real number, not complex: minigrad has no complex dtypes")
    want = dtypes.to_numpy_dtype(dtype) if dtype is not None else _infer_dtype(data, array)
    if want.kind in "iub" and array.dtype.kind == "f" and not np.isfinite(array).all():
        raise RuntimeError(f"value cannot be converted to type {dtypes.from_numpy_dtype(want)} without overflow: "
                           f"the data holds inf or NaN")
    return _new(array.astype(want, copy=False) if array.dtype != want else array, requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """``data`` as a tensor, sharing memory and history where it can: a tensor of the requested dtype
    is returned itself (another dtype: ``data.to(dtype)``, still in the graph), a NumPy array of a
    dtype minigrad has shares its memory; anything else is copied, as ``tensor(data)``."""
    resolve_device(device)
    if isinstance(data, Tensor):
        return data if dtype is None else data.to(dtype)
    if isinstance(data, np.ndarray) and (dtype is None or dtypes.to_numpy_dtype(dtype) == data.dtype):
        return from_numpy(data)
    return tensor(data, dtype=dtype)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array`` (changes to one show in the other)."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type_name(array)}): minigrad.tensor(data) copies other data")
    dtypes.from_numpy_dtype(array.dtype)
    _refuse_negative_strides(array)
    return Tensor._wrap(array)


def _refuse_negative_strides(array: np.ndarray) -> None:
    """PyTorch's tensors have no negative strides, so it refuses an array with one (``a[::-1]``)
    even where it would copy: so does minigrad, so that such code fails here as it would there."""
    if any(stride < 0 for stride in array.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative strides are "
            "not currently supported. (You can probably work around this by making a copy of your array "
            "with array.copy().)"
        )


def _shape(size: tuple) -> tuple:
    shape = _sizes(size)  # (``zeros(2, 3)`` or ``zeros((2, 3))``; ``zeros(2.0)`` is a TypeError)
    if any(n < 0 for n in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(shape)}: {list(shape)}")
    return shape


def _dtype(dtype) -> np.dtype:
    return dtypes.default_float.numpy if dtype is None else dtypes.to_numpy_dtype(dtype)


def _fill_dtype(fill_value, dtype) -> np.dtype:
    """``full``'s dtype: given, or inferred from the fill value as PyTorch does (bool, int64, float)."""
    if dtype is not None:
        return dtypes.to_numpy_dtype(dtype)
    if isinstance(fill_value, (bool, np.bool_)):
        return np.dtype(np.bool_)
    if isinstance(fill_value, (int, np.integer)):
        return np.dtype(np.int64)
    return dtypes.default_float.numpy


def _like_dtype(t: Tensor, dtype) -> np.dtype:
    return t._data.dtype if dtype is None else dtypes.to_numpy_dtype(dtype)


def _random(draw, shape: tuple, dtype: np.dtype, name: str) -> np.ndarray:
    """``draw(shape)`` in ``dtype``; PyTorch has no random floats of an integer dtype."""
    if dtype.kind != "f":
        raise NotImplementedError(
            f"\"{name}\" not implemented for '{dtypes.from_numpy_dtype(dtype)}': random values need a "
            "floating-point dtype (pass dtype=minigrad.float32)"
        )
    return draw(shape).astype(dtype)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    return _new(np.zeros(_shape(size), dtype=_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    return _new(np.ones(_shape(size), dtype=_dtype(dtype)), requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Uninitialised in PyTorch; zeros here, so that a forgotten fill never shows old memory."""
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not {type(size).__name__}")
    fill_value = number(fill_value, "fill_value")
    return _new(np.full(_shape((size,)), fill_value, dtype=_fill_dtype(fill_value, dtype)), requires_grad)


def eye(n: int, m: int | None = None, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    for name, k in (("n", n), ("m", m)):
        if k is not None and k < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {k}")
    return _new(np.eye(n, m, dtype=_dtype(dtype)), requires_grad)


def zeros_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    return _new(np.zeros(t.shape, dtype=_like_dtype(t, dtype)), requires_grad)


def ones_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    return _new(np.ones(t.shape, dtype=_like_dtype(t, dtype)), requires_grad)


def empty_like(t: Tensor, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros_like(t, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(t: Tensor, fill_value, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``t``'s shape and (unless given) dtype, filled with ``fill_value`` (cast: 3.7 in an int tensor is 3)."""
    resolve_device(device)
    return _new(np.full(t.shape, fill_value).astype(_like_dtype(t, dtype)), requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    draw = _generator_of(generator).standard_normal
    return _new(_random(draw, _shape(size), _dtype(dtype), "normal_kernel_cpu"), requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    draw = _generator_of(generator).random
    return _new(_random(draw, _shape(size), _dtype(dtype), "check_uniform_bounds"), requires_grad)


def randn_like(t: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return randn(t.shape, generator=generator, dtype=_like_dtype(t, dtype), device=device, requires_grad=requires_grad)


def rand_like(t: Tensor, *, generator=None, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return rand(t.shape, generator=generator, dtype=_like_dtype(t, dtype), device=device, requires_grad=requires_grad)


def randint(low: int, high: int | None = None, size: tuple = (), *, generator=None, dtype=None, device=None) -> Tensor:
    """Integers in [low, high); ``randint(high, size)`` starts at 0, as in PyTorch."""
    resolve_device(device)
    if isinstance(high, (tuple, list)):  # randint(10, (3,))
        high, size = None, high
    if high is None:
        low, high = 0, low
    values = _generator_of(generator).integers(low, high, size=tuple(size))
    return Tensor._wrap(values.astype(dtypes.to_numpy_dtype(dtype or dtypes.int64)))


def randperm(n: int, *, generator=None, dtype=None, device=None) -> Tensor:
    resolve_device(device)
    return Tensor._wrap(_generator_of(generator).permutation(n).astype(dtypes.to_numpy_dtype(dtype or dtypes.int64)))


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:  # NumPy gives an empty array
        raise RuntimeError(f"upper bound and lower bound inconsistent with step sign: arange({start}, {end}, {step})")
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.default_float if is_float else dtypes.int64
    return _new(np.arange(start, end, step).astype(dtypes.to_numpy_dtype(dtype)), requires_grad)


def linspace(start: float, end: float, steps: int, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    resolve_device(device)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    want = _dtype(dtype)
    values = np.linspace(start, end, steps)
    if want.kind in "iu":  # PyTorch truncates toward zero, as a cast does
        values = np.trunc(values)
    return _new(values.astype(want), requires_grad)


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method()
def uniform_(self, low: float = 0.0, high: float = 1.0, *, generator=None) -> Tensor:
    """Fill in place with values drawn uniformly from [low, high) (PyTorch names them ``from``
    and ``to``; ``from`` is a Python keyword, so pass them by position)."""
    low, high = number(low, "from"), number(high, "to")
    if low > high:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={low} > to={high}")
    return self.copy_(Tensor._wrap(_generator_of(generator).uniform(low, high, self._data.shape)))


@tensor_method()
def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill in place with values drawn from N(mean, std**2)."""
    mean, std = number(mean, "mean"), number(std, "std")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return self.copy_(Tensor._wrap(_generator_of(generator).normal(mean, std, self._data.shape)))


@tensor_method()
def new_tensor(self, data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new tensor of ``data``, in this tensor's dtype unless ``dtype`` is given."""
    return _from_data(data, dtype or self.dtype, device, requires_grad, "new_tensor")


@tensor_method()
def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@tensor_method()
def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return ones(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@tensor_method()
def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return empty(*size, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@tensor_method()
def new_full(self, size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full(size, fill_value, dtype=dtype or self.dtype, device=device, requires_grad=requires_grad)


@tensor_method()
def new(self, *args, device=None) -> Tensor:
    """PyTorch's legacy constructor, always in this tensor's dtype: ``x.new(2, 3)`` or
    ``x.new(size)`` (uninitialised, as ``new_empty``), ``x.new(data)`` for a list or tuple (as
    ``new_tensor``), ``x.new(other)`` (other's memory, for an ``other`` of this dtype),
    ``x.new()`` (no elements). New code says which it means: ``new_empty``, ``new_tensor``."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        other = args[0]
        if other._data.dtype != self._data.dtype:
            raise TypeError(f"new(): expected a tensor of dtype {self.dtype}, got {other.dtype}: "
                            f"convert it with .to({self.dtype})")
        resolve_device(device)
        return Tensor._wrap(other._data)
    if len(args) == 1 and isinstance(args[0], (list, tuple, np.ndarray)) and not isinstance(args[0], Size):
        return new_tensor(self, args[0], device=device)
    if len(args) == 1 and isinstance(args[0], Size) or all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in args):
        return new_empty(self, *(args or (0,)), device=device)
    raise TypeError(f"new(): data must be a sequence (got {type_name(args[0])}); for a shape, pass ints: x.new(2, 3)")
