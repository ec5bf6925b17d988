"""Tensors over memory that already exists: ``asarray`` and ``frombuffer``.

    a = np.zeros(3)
    t = minigrad.asarray(a)                  # shares a's memory: t.add_(1) changes a too
    raw = bytearray(8)
    u = minigrad.frombuffer(raw, dtype=minigrad.int32)   # two int32s over raw's bytes

``tensor(data)`` always copies; these copy only when they must (another dtype) or when asked
(``copy=True``), and ``copy=False`` is an error where sharing is impossible, as in PyTorch.
Where minigrad differs: a read-only buffer (``bytes``) is copied, with a warning, since a NumPy
array over it cannot be written; PyTorch shares it and lets writes through the tensor change an
immutable object.
"""
from __future__ import annotations

import warnings

import numpy as np

from minigrad import dtypes
from minigrad.creation import from_numpy, tensor as _copy_into_tensor
from minigrad.device import resolve as resolve_device
from minigrad.ops.broadcast import type_name
from minigrad._tensor import Tensor

__all__ = ["asarray", "frombuffer"]


def asarray(obj, *, dtype: dtypes.dtype | None = None, device=None, copy: bool | None = None,
            requires_grad: bool | None = None) -> Tensor:
    """``obj`` as a tensor, sharing its memory where it can.

    A tensor is returned itself (in its graph), a NumPy array or an object with the buffer
    protocol (bytearray, memoryview, array.array: read as ``dtype``, default the default float)
    shares memory; another ``dtype`` converts (still in the graph), ``copy=True`` clones. NumPy
    scalars (and 0-d arrays), numbers and sequences are copied, as ``tensor(obj)``. ``requires_grad`` (default:
    ``obj``'s) is set on the result, in place for a leaf, as in PyTorch; False detaches a tensor
    with history.
    """
    resolve_device(device)
    if copy is not None and type(copy) is not bool:
        raise TypeError(f"asarray(): argument 'copy' must be bool, not {type_name(copy)}")
    if isinstance(obj, np.generic) and copy is False:
        raise RuntimeError("can't alias NumPy scalars. Either remove copy=False or transform it in a ndarray.")
    if isinstance(obj, np.generic) or isinstance(obj, np.ndarray) and obj.ndim == 0:
        obj, copy = np.asarray(obj), True  # (PyTorch copies a 0-d array too, even with copy=False)
    if isinstance(obj, Tensor):
        result = obj
    elif isinstance(obj, np.ndarray):
        result = from_numpy(obj)
    elif _has_buffer(obj):
        result = frombuffer(obj, dtype=dtype or dtypes.get_default_dtype())
    else:
        if copy is False:
            raise ValueError("can't alias arbitrary sequence into a tensor: leave copy unset, or pass a tensor, "
                             "a NumPy array or a buffer")
        result = _copy_into_tensor(obj, dtype=dtype)
        if requires_grad:
            result.requires_grad_(True)
        return result
    if dtype is not None and dtype != result.dtype:
        if copy is False:
            raise ValueError(f"can't alias tensor with dtype '{dtypes.scalar_type_name(result._data.dtype)}' into "
                             f"dtype '{dtypes.scalar_type_name(dtypes.to_numpy_dtype(dtype))}': leave copy unset "
                             "to convert")
        result = result.to(dtype)
    elif copy:
        result = result.clone()
    if requires_grad is not None:
        if not result.is_leaf and not requires_grad:
            return result.detach()
        result.requires_grad_(requires_grad)
    return result


def _has_buffer(obj) -> bool:
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def frombuffer(buffer, *, dtype: dtypes.dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over ``buffer``'s bytes (anything with Python's buffer protocol), read as
    ``dtype`` from byte ``offset``: ``count`` elements, or (-1) all that remain."""
    for name, value in (("count", count), ("offset", offset)):
        if type(value) is not int:
            raise TypeError(f"frombuffer(): argument '{name}' must be int, not {type_name(value)}")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError(f"object does not implement Python buffer protocol ({type_name(buffer)}): pass bytes, "
                         "a bytearray, a memoryview or a NumPy array") from None
    if not view.contiguous:
        raise RuntimeError("could not retrieve buffer from object: its memory is not contiguous (a strided "
                           "memoryview); pass a contiguous one, or bytes(view)")
    length, itemsize = view.nbytes, dtypes.to_numpy_dtype(dtype).itemsize
    if length == 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than buffer length "
                         f"({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % itemsize:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} bytes) must be a "
                             f"multiple of element size ({itemsize})")
        count = (length - offset) // itemsize
    elif offset + count * itemsize > length:
        raise ValueError(f"requested buffer length ({count} * {itemsize} bytes) after offset ({offset} bytes) "
                         f"must not be greater than actual buffer length ({length} bytes)")
    array = np.frombuffer(view.cast("B"), dtype=dtypes.to_numpy_dtype(dtype), count=count, offset=offset)
    if not array.flags.writeable:
        warnings.warn("The given buffer is not writable (bytes?), so minigrad copies it: writes to the tensor "
                      "do not reach the buffer. Pass a bytearray to share memory.", UserWarning, stacklevel=2)
        array = array.copy()
    result = Tensor._wrap(array)
    if requires_grad:
        result.requires_grad_(True)
    return result
