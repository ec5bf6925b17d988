"""``as_strided``: a view of a tensor's memory with any sizes and strides (and ``as_strided_scatter``).

A tensor is a window on a block of memory, its *storage*: element ``x[i, j]`` lives at
``storage[offset + i * stride[0] + j * stride[1]]``. ``x.as_strided(size, stride, offset)``
opens another window on the same storage, so one can build views no other op gives: a
sliding window (``as_strided((n - k + 1, k), (1, 1))``), a diagonal, a repeat without copying
(a stride of 0). In minigrad the storage is the memory of the tensor's base (its own if it has
none), from the base's first element, as ``storage_offset()`` counts.

The gradient (PyTorch's ``as_strided_backward``): each element of the view adds its gradient to
its storage place, and each element of the input takes the gradient at its own place, shared
among the input's elements that are that one place. Storage places outside the input (a view
reaching beyond it) give it no gradient.

One difference from PyTorch: minigrad takes a view again from its base by replaying the steps
that made it, on gradients too, whose memory is not the base's; so an as_strided view records
no step, and writing into it in place while autograd records is refused (RuntimeError). Under
``no_grad`` the write goes into the shared memory, as in PyTorch. ``as_strided_scatter`` is out
of place, a copy and an ``index_put``, so its gradient needs no such view.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import integer, type_name
from minigrad.ops.layout import strided_view
from minigrad.ops.registry import tensor_method
from minigrad.ops.shape import view_of
from minigrad._tensor import Tensor, check_tensor


def _storage(t: Tensor) -> np.ndarray:
    """The memory of ``t``'s base (its own if it has none) as a 1-D array, from the base's first element."""
    root = (t if t._base is None else t._base)._data
    span = 1 + sum((n - 1) * step // root.itemsize for n, step in zip(root.shape, root.strides)) if root.size else 0
    return np.lib.stride_tricks.as_strided(root, (span,), (root.itemsize,), writeable=root.flags.writeable)


def _bounded(size: tuple, stride: tuple, offset: int, storage_size: int, itemsize: int) -> None:
    needed = offset + sum((n - 1) * step for n, step in zip(size, stride)) + 1 if all(size) else 0
    if needed > storage_size:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {offset}, and "
                           f"itemsize {itemsize} requiring a storage size of {needed * itemsize} are out of bounds "
                           f"for storage of size {storage_size * itemsize}")


def _positions(shape: tuple, strides: tuple, offset: int) -> np.ndarray:
    """The storage place of each element of a window: ``offset + Σ index·stride``."""
    places = np.full(shape, offset, dtype=np.int64)
    for d, (n, step) in enumerate(zip(shape, strides)):
        places += (np.arange(n, dtype=np.int64) * step).reshape((n,) + (1,) * (len(shape) - d - 1))
    return places


class AsStridedView(Function):
    """``x.as_strided(size, stride, offset)``: a view on ``x``'s storage (a step a view can be taken again with)."""

    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, a, size, stride, offset):
        storage = _storage(a)
        _bounded(size, stride, offset, storage.size, storage.itemsize)
        ctx.places = _positions(size, stride, offset), _positions(a.shape, a.stride(), a.storage_offset())
        ctx.storage_size = storage.size
        view = strided_view(storage[offset:] if storage.size else storage, size,
                            tuple(step * storage.itemsize for step in stride))
        # (no step to take it again: a view's steps are replayed on gradients too, whose memory is not the base's)
        return view_of(a, view)

    @staticmethod
    def backward(ctx, grad):
        view_places, input_places = ctx.places
        zeros = Tensor._wrap(np.zeros(ctx.storage_size, grad._data.dtype))
        storage_grad = zeros.index_add(0, Tensor._wrap(view_places.reshape(-1)), grad.reshape(-1))
        grad_input = storage_grad[Tensor._wrap(input_places)]
        sharing = np.bincount(input_places.reshape(-1), minlength=ctx.storage_size)[input_places]
        if (sharing > 1).any():  # (an input that is an expand(): its elements share the gradient of their place)
            grad_input = grad_input / Tensor._wrap(sharing.astype(grad._data.dtype))
        return grad_input, None, None, None


def _geometry(name: str, size, stride, storage_offset) -> tuple:
    """size and stride as tuples of ints of one length, and the offset: PyTorch's checks."""
    def ints(argument: str, position: int, value) -> tuple:
        if isinstance(value, Tensor) or not isinstance(value, (tuple, list)):
            raise TypeError(f"{name}(): argument '{argument}' (position {position}) must be tuple of ints, "
                            f"not {type_name(value)}")
        return tuple(integer(n, argument) for n in value)

    size, stride = ints("size", 1, size), ints("stride", 2, stride)
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: {len(size)} sizes, {len(stride)} strides")
    if any(step < 0 for step in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and strides={list(stride)}")
    offset = None if storage_offset is None else integer(storage_offset, "storage_offset")
    if offset is not None and offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    return size, stride, offset


@tensor_method(top_level=True, out=False)
def as_strided(self, size, stride, storage_offset: int | None = None) -> Tensor:
    """A view of this tensor's storage: element ``[i, j, ...]`` is ``storage[storage_offset + i·stride[0] +
    j·stride[1] + ...]`` (``storage_offset`` defaults to this tensor's). Elements may repeat (a stride of 0)."""
    size, stride, offset = _geometry("as_strided", size, stride, storage_offset)
    return AsStridedView.apply(self, size, stride, self.storage_offset() if offset is None else offset)


@tensor_method(top_level=True, out=False)
def as_strided_scatter(self, src: Tensor, size, stride, storage_offset: int | None = None) -> Tensor:
    """A copy of this tensor with ``src`` written where ``copy.as_strided(size, stride, storage_offset)``
    looks (the copy owns its memory, its dimensions in this tensor's memory order: its storage offset is 0)."""
    check_tensor("as_strided_scatter", "src", 1, src)
    size, stride, offset = _geometry("as_strided_scatter", size, stride, storage_offset)
    if tuple(src.shape) != size:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = {list(src.shape)}, "
                           f"slice size = {list(size)}")
    # A copy laid out as PyTorch's clone lays it out (dims in self's memory order, no gaps): its storage.
    order = self.dim_order()
    out = self.permute(*order).clone().permute(*np.argsort(order).tolist())
    places = _positions(out.shape, out.stride(), 0)
    span = int(places.max()) + 1 if places.size else 0
    _bounded(size, stride, offset or 0, span, out._data.itemsize)
    element = np.zeros(span, np.int64)  # which element of out (row-major) is at each place
    element[places.reshape(-1)] = np.arange(places.size)
    targets = Tensor._wrap(element[_positions(size, stride, offset or 0)].reshape(-1))
    return out.reshape(-1).index_put((targets,), src.reshape(-1)).reshape(out.shape)


# -- in-place shape changes: squeeze_, unsqueeze_, t_, transpose_ -------------------------------------
def _reshape_in_place(self: Tensor, name: str, view: Tensor) -> Tensor:
    """Make ``self`` the view ``view`` of itself (its shape and strides change, its memory does not).

    minigrad's views replay the steps that made them from their base's shape (the module's docstring),
    where PyTorch's replay strides and an offset; a tensor in a graph whose shape changed in place would
    leave its own views replaying the wrong steps, so a tensor that takes part in autograd (requires grad,
    or is a view of one that does) is refused with NotImplementedError: use the out-of-place op. The
    other tensors change as PyTorch's do (a view stays a view of its base, its replay steps extended)."""
    base = self._base
    if self._requires_grad or (base is not None and base._requires_grad):
        if self._requires_grad and self._grad_fn is None and base is None:
            raise RuntimeError("a leaf Tensor that requires grad is being used in an in-place operation. "
                               f"Use the out-of-place x.{name.rstrip('_')}(...) instead.")
        raise NotImplementedError(
            f"{name}(): minigrad cannot change the shape in place of a tensor that takes part in autograd (its "
            f"views are replayed from its shape, not from strides as in PyTorch): write "
            f"x = x.{name.rstrip('_')}(...) instead (the README's known differences)")
    self._data = view._data
    if base is not None:
        self._view_meta = view._view_meta
    self._version_counter.value += 1  # (PyTorch counts a metadata change as a write)
    return self


_ALL = object()


@tensor_method()
def squeeze_(self, dim=_ALL) -> Tensor:
    """``squeeze`` in place (see ``_reshape_in_place`` for the tensors it refuses)."""
    if dim is None:  # (PyTorch's squeeze_ has no None overload, unlike squeeze)
        raise TypeError("squeeze_(): argument 'dim' must be an int or a tuple of ints, not NoneType "
                        "(leave it out to squeeze every dimension of size 1)")
    return _reshape_in_place(self, "squeeze_", self.squeeze() if dim is _ALL else self.squeeze(dim))


@tensor_method()
def unsqueeze_(self, dim: int) -> Tensor:
    """``unsqueeze`` in place (see ``_reshape_in_place`` for the tensors it refuses)."""
    return _reshape_in_place(self, "unsqueeze_", self.unsqueeze(dim))


@tensor_method()
def transpose_(self, dim0: int, dim1: int) -> Tensor:
    """``transpose`` in place (see ``_reshape_in_place`` for the tensors it refuses)."""
    return _reshape_in_place(self, "transpose_", self.transpose(dim0, dim1))


@tensor_method()
def t_(self) -> Tensor:
    """``t`` in place (see ``_reshape_in_place`` for the tensors it refuses)."""
    return _reshape_in_place(self, "t_", self.t())
