"""Shape helpers built from views: tensor_split and hsplit/vsplit/dsplit, split_with_sizes,
unflatten, ravel, atleast_1d/2d/3d and sum_to_size, and the layout queries ndimension,
storage_offset and new_empty_strided.

Each is a composition of ops minigrad already differentiates (``narrow``, ``reshape``,
``unsqueeze``, ``sum``), so the pieces are views with PyTorch's nodes (SliceBackward0,
ViewBackward0, ...) and their gradients come for free.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from minigrad import dtypes
from minigrad.ops.broadcast import integer, sum_to, type_name, wrap_dim
from minigrad.ops.layout import strided_view
from minigrad.ops.movement import split
from minigrad.ops.registry import tensor_method
from minigrad.ops.shape import infer_shape
from minigrad.ops.subscript import Slice
from minigrad._tensor import Tensor, _sizes


# -- tensor_split, hsplit, vsplit, dsplit, split_with_sizes ---------------------------------------
def _split_points(indices_or_sections, n: int) -> tuple:
    """The (start, stop) pairs of tensor_split's pieces of a dimension of size ``n``."""
    value = indices_or_sections
    if isinstance(value, Tensor):
        if value._data.dtype != np.int64:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got "
                               f"{value.dtype}: convert it with .long()")
        if value.ndim > 1:
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                               f"one-dimensional tensor, but got a tensor with {value.ndim} dims")
        value = int(value._data) if value.ndim == 0 else [int(i) for i in value._data]
    if isinstance(value, Sequence) and not isinstance(value, str):
        bounds = [0] + [integer(i, "indices") for i in value] + [n]
        return tuple(zip(bounds[:-1], bounds[1:]))
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"tensor_split(): argument 'indices_or_sections' must be int, tuple of ints or Tensor, "
                        f"not {type_name(value)}")
    sections = int(value)
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    small, bigger = divmod(n, sections)  # the first n % sections pieces get one element more
    starts = [i * small + min(i, bigger) for i in range(sections + 1)]
    return tuple(zip(starts[:-1], starts[1:]))


@tensor_method(top_level=True, out=False)
def tensor_split(self, indices_or_sections, dim: int = 0) -> tuple:
    """``sections`` pieces of near-equal size along ``dim`` (the first ones one longer), or the
    pieces between the given ``indices``: views, as ``x[start:stop]``."""
    if self.ndim == 0:
        _split_points(indices_or_sections, 1)  # (a wrong type is a TypeError first, as in PyTorch)
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = wrap_dim(dim, self.ndim)
    n = self.shape[d]
    return tuple(Slice.apply(self, d, slice(start, stop)) for start, stop in _split_points(indices_or_sections, n))


def _split_along(a: Tensor, name: str, dim: int, least: int, indices_or_sections) -> tuple:
    """hsplit, vsplit, dsplit: tensor_split along ``dim``, whose int form must divide the dimension."""
    if isinstance(indices_or_sections, Tensor) and indices_or_sections.ndim == 0 and \
            indices_or_sections._data.dtype.kind == "i":  # (a 0-d integer tensor is an int there, as in PyTorch)
        indices_or_sections = int(indices_or_sections._data)
    if isinstance(indices_or_sections, Tensor):
        raise TypeError(f"{name}() received an invalid combination of arguments: got a Tensor, but expected an int "
                        "(sections) or a tuple of ints (indices)")
    if a.ndim < least:
        raise RuntimeError(f"{name} requires a tensor with at least {least} dimension, but got a tensor with "
                           f"{a.ndim} dimensions!")
    if isinstance(indices_or_sections, (int, np.integer)) and not isinstance(indices_or_sections, bool):
        sections = int(indices_or_sections)
        if sections == 0 or a.shape[dim] % sections:
            raise RuntimeError(f"{name} attempted to split along dimension {dim}, but the size of the dimension "
                               f"{a.shape[dim]} is not divisible by the split_size {sections}!")
    return tensor_split(a, indices_or_sections, dim)


@tensor_method(top_level=True, out=False)
def hsplit(self, indices_or_sections) -> tuple:
    """tensor_split along the columns: dim 1, or dim 0 of a 1-D tensor."""
    return _split_along(self, "hsplit", 1 if self.ndim > 1 else 0, 1, indices_or_sections)


@tensor_method(top_level=True, out=False)
def vsplit(self, indices_or_sections) -> tuple:
    """tensor_split along the rows (dim 0) of a tensor of 2 or more dims."""
    return _split_along(self, "vsplit", 0, 2, indices_or_sections)


@tensor_method(top_level=True, out=False)
def dsplit(self, indices_or_sections) -> tuple:
    """tensor_split along the depth (dim 2) of a tensor of 3 or more dims."""
    return _split_along(self, "dsplit", 2, 3, indices_or_sections)


@tensor_method(top_level=True, out=False)
def split_with_sizes(self, split_sizes: Sequence[int], dim: int = 0) -> tuple:
    """Pieces of the listed sizes along ``dim``: ``split`` with a list."""
    if not isinstance(split_sizes, Sequence):
        raise TypeError(f"split_with_sizes(): argument 'split_sizes' must be tuple of ints, not "
                        f"{type_name(split_sizes)}")
    return split(self, list(split_sizes), dim)


def _int_tuple(op: str, argument: str, position: int, value) -> tuple:
    """A tuple or list of ints (a Size too), as PyTorch's ``int[]`` arguments that take no lone int."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"{op}(): argument '{argument}' (position {position}) must be tuple of ints, not "
                        f"{type_name(value)}")
    return tuple(_sizes((value,), argument))


# -- unflatten, ravel, atleast_nd, sum_to_size ----------------------------------------------------
@tensor_method(top_level=True, out=False)
def unflatten(self, dim: int, sizes) -> Tensor:
    """Dimension ``dim`` as several of ``sizes`` (one may be -1): the inverse of ``flatten``."""
    d = wrap_dim(dim, self.ndim)
    sizes = _int_tuple("unflatten", "sizes", 2, () if sizes is None else sizes)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = self.shape[d] if self.ndim else 1
    try:
        middle = infer_shape(tuple(sizes), n)
    except RuntimeError:
        middle = None
    if middle is None or math.prod(middle) != n:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size of dim {d} "
                           f"({n}) in the input tensor")
    return self.reshape(self.shape[:d] + tuple(middle) + self.shape[d + 1:])


@tensor_method(top_level=True, out=False)
def ravel(self) -> Tensor:
    """The elements as a 1-D tensor: a view where the memory allows, else a copy."""
    return self.reshape(-1)


def _at_least(name: str, fn, tensors: tuple):
    """atleast_nd of one tensor, or a tuple of them (given as arguments or as one list)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_at_least(name, fn, (t,)) for t in tensors[0])
    if len(tensors) == 1:
        if not isinstance(tensors[0], Tensor):
            raise TypeError(f"{name}(): argument 'tensors' must be Tensor or a sequence of Tensors, not "
                            f"{type_name(tensors[0])}")
        return fn(tensors[0])
    return tuple(_at_least(name, fn, (t,)) for t in tensors)


def atleast_1d(*tensors):
    """Each tensor with at least one dimension: a 0-d one becomes shape (1,); others are returned as they are."""
    return _at_least("atleast_1d", lambda t: t.reshape(1) if t.ndim == 0 else t, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least two dimensions (a vector becomes a row)."""
    return _at_least("atleast_2d", lambda t: t.reshape(1, 1) if t.ndim == 0 else t.unsqueeze(0) if t.ndim == 1
                     else t, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least three dimensions: (n,) becomes (1, n, 1), (m, n) becomes (m, n, 1)."""
    def three(t: Tensor) -> Tensor:
        if t.ndim == 0:
            return t.reshape(1, 1, 1)
        if t.ndim == 1:
            return t.unsqueeze(0).unsqueeze(-1)
        return t.unsqueeze(-1) if t.ndim == 2 else t
    return _at_least("atleast_3d", three, tensors)


@tensor_method()
def sum_to_size(self, *size) -> Tensor:
    """The sum of this tensor down to ``size``, a shape it broadcasts from (the gradient of an expand)."""
    if not size:
        raise TypeError("sum_to_size() missing 1 required positional argument: 'size'")
    shape = tuple(_sizes(size, "size"))
    ok = len(shape) <= self.ndim and all(s in (1, n) for s, n in zip(reversed(shape), reversed(self.shape)))
    if not ok:
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size {{{list(self.shape)}}}.")
    return sum_to(self, shape) if shape else self.sum()  # (to (): always a sum, as PyTorch's)


# -- layout queries -------------------------------------------------------------------------------
@tensor_method()
def ndimension(self) -> int:
    """The number of dimensions: ``dim()``'s other name."""
    return self.ndim


@tensor_method()
def storage_offset(self) -> int:
    """How many elements into its base's memory this view starts (0 for a tensor that owns its memory)."""
    if self._base is None:
        return 0
    start = self._data.__array_interface__["data"][0]
    return (start - self._base._data.__array_interface__["data"][0]) // self._data.itemsize


@tensor_method()
def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor of ``size`` whose neighbours lie ``stride`` elements apart in memory."""
    size = _int_tuple("new_empty_strided", "size", 1, size)
    stride = _int_tuple("new_empty_strided", "stride", 2, stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(stride)} strides for {len(size)} sizes")
    np_dtype = dtypes.to_numpy_dtype(dtype) if dtype is not None else self._data.dtype
    length = 1 + sum((n - 1) * s for n, s in zip(size, stride)) if all(size) else 0
    memory = np.empty(length, dtype=np_dtype)
    out = Tensor._wrap(strided_view(memory, size, tuple(s * memory.itemsize for s in stride)))
    return out.requires_grad_(requires_grad) if requires_grad else out


@tensor_method(top_level=True, out=False)
def is_same_size(self, other: Tensor) -> bool:
    """Whether ``other`` has the same shape as ``self``."""
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size(): argument 'other' must be Tensor, not {type(other).__name__}")
    return self.shape == other.shape
