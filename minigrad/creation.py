"""Making tensors: from data, filled with a constant, or random.

Random tensors come from one generator seeded by ``manual_seed``, so a lesson
that calls ``minigrad.manual_seed(0)`` shows every learner the same numbers
(not the same numbers as PyTorch, which uses a different generator).
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.tensor import Tensor

_generator = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    """Reseed the generator behind randn, rand, randint, dropout and init."""
    global _generator
    _generator = np.random.default_rng(seed)


def generator() -> np.random.Generator:
    """The generator that minigrad's random functions draw from."""
    return _generator


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


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """A new tensor holding a copy of ``data`` (a number, nested lists, an array or a tensor)."""
    if isinstance(data, Tensor):
        data = data._data
    try:
        array = np.array(data)
    except ValueError as e:
        raise ValueError(f"expected sequence of equal-length lists to make a tensor: {e}") from None
    if array.dtype == object:
        raise ValueError("expected sequence of equal-length lists of numbers to make a tensor")
    want = dtypes.to_numpy_dtype(dtype) if dtype is not None else _infer_dtype(data, array)
    return _new(array.astype(want, copy=False) if array.dtype != want else array, requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``array`` (changes to one show in the other)."""
    dtypes.from_numpy_dtype(array.dtype)
    return Tensor._wrap(array)


def _shape(size: tuple) -> tuple:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def _dtype(dtype) -> np.dtype:
    return dtypes.default_float.numpy if dtype is None else dtypes.to_numpy_dtype(dtype)


def zeros(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(np.zeros(_shape(size), dtype=_dtype(dtype)), requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(np.ones(_shape(size), dtype=_dtype(dtype)), requires_grad)


def full(size, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    if dtype is None and isinstance(fill_value, (bool, np.bool_)):
        dtype = dtypes.bool_
    elif dtype is None:
        dtype = dtypes.int64 if isinstance(fill_value, (int, np.integer)) else None
    return _new(np.full(tuple(size), fill_value, dtype=_dtype(dtype)), requires_grad)


def eye(n: int, m: int | None = None, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(np.eye(n, m, dtype=_dtype(dtype)), requires_grad)


def zeros_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(np.zeros(t.shape, dtype=t._data.dtype if dtype is None else _dtype(dtype)), requires_grad)


def ones_like(t: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(np.ones(t.shape, dtype=t._data.dtype if dtype is None else _dtype(dtype)), requires_grad)


def randn(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(_generator.standard_normal(_shape(size)).astype(_dtype(dtype)), requires_grad)


def rand(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(_generator.random(_shape(size)).astype(_dtype(dtype)), requires_grad)


def randint(low: int, high: int | None = None, size: tuple = (), dtype=None) -> Tensor:
    if high is None:
        low, high = 0, low
    return Tensor._wrap(_generator.integers(low, high, size=tuple(size)).astype(dtypes.to_numpy_dtype(dtype or dtypes.int64)))


def randperm(n: int) -> Tensor:
    return Tensor._wrap(_generator.permutation(n).astype(np.int64))


def arange(start, end=None, step=1, dtype=None, requires_grad: bool = False) -> Tensor:
    if end is None:
        start, end = 0, start
    if dtype is None:
        is_float = any(isinstance(v, float) for v in (start, end, step))
        dtype = dtypes.default_float if is_float else dtypes.int64
    return _new(np.arange(start, end, step).astype(dtypes.to_numpy_dtype(dtype)), requires_grad)


def linspace(start: float, end: float, steps: int, dtype=None, requires_grad: bool = False) -> Tensor:
    return _new(np.linspace(start, end, steps).astype(_dtype(dtype)), requires_grad)
