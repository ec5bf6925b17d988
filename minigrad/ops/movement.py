"""Operations that cut, copy or rearrange values: split/chunk/unbind, repeat, flip, roll, tril/triu.

Each gradient undoes the movement: the pieces of a split are concatenated back
(``cat``), unbound slices are stacked back, the copies made by ``repeat`` are
summed, ``flip`` and ``roll`` are undone by flipping and rolling back, and
``tril``/``triu`` keep the gradient of the triangle they kept. The pieces of a
split are views of the input, as in PyTorch; the other results are new tensors.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import integer, normalize_dims, type_name, wrap_dim
from minigrad.ops.layout import copy_keeping_layout
from minigrad.ops.shape import Cat, Stack, view_of
from minigrad._tensor import Tensor, _sizes
from minigrad.ops.registry import tensor_method


# -- split, chunk, unbind ---------------------------------------------------------------------
class SplitWithSizes(Function):
    """Pieces of ``sizes`` along ``dim``; backward concatenates their gradients."""

    node_name = "SplitWithSizesBackward0"

    @staticmethod
    def forward(ctx, a, sizes, dim):
        ctx.dim = dim
        pieces, start = [], 0
        for size in sizes:
            index = (slice(None),) * dim + (slice(start, start + size),)
            pieces.append(view_of(a, a._data[index]))
            start += size
        return tuple(pieces)

    @staticmethod
    def backward(ctx, *grads):
        return Cat.apply(ctx.dim, *grads), None, None


class Split(SplitWithSizes):
    """``split(int)`` and ``chunk``: PyTorch names this node apart from the list form."""

    node_name = "SplitBackward0"


@tensor_method(top_level=True)
def split(a: Tensor, split_size, dim: int = 0) -> tuple:
    """Pieces of ``split_size`` along ``dim`` (the last may be smaller), or of the listed sizes."""
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if isinstance(split_size, (list, tuple)):
        sizes = list(_sizes((split_size,), "split_size"))
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's size at "
                f"dimension {d}), but got split_sizes={sizes}"
            )
        return SplitWithSizes.apply(a, sizes, d)
    # (a one-element tensor, float too, is int()-ed, as torch.Tensor.split does; any other value that is
    # not a Python int, a NumPy integer too, is refused, as there)
    size = int(split_size) if isinstance(split_size, Tensor) and split_size.numel() == 1 else split_size
    if not isinstance(size, int) or isinstance(size, bool):
        hint = ": int(split_size) makes a Python int of it" if isinstance(size, np.integer) else ""
        raise TypeError(f"split(): argument 'split_size' must be int or a list of ints, not {type_name(size)}{hint}")
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = max(math.ceil(n / size), 1) if size else 1
    return Split.apply(a, [min(size, n - i * size) for i in range(count)], d)


@tensor_method(top_level=True)
def chunk(a: Tensor, chunks: int, dim: int = 0) -> tuple:
    """At most ``chunks`` pieces of equal size along ``dim`` (the last may be smaller)."""
    chunks = integer(chunks, "chunks")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    if a.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if n == 0:  # PyTorch gives ``chunks`` empty pieces
        return SplitWithSizes.apply(a, [0] * chunks, d)
    return split(a, math.ceil(n / chunks), d)


class UnsafeSplitWithSizes(SplitWithSizes):
    """``unsafe_split_with_sizes``: the pieces share the input's memory but are not its views
    (PyTorch's "unsafe": writing into a piece changes the input unseen by autograd)."""

    node_name = "UnsafeSplitWithSizesBackward0"

    @staticmethod
    def forward(ctx, a, sizes, dim):
        ctx.dim = dim
        starts = np.cumsum([0, *sizes[:-1]])
        return tuple(Tensor._wrap(a._data[(slice(None),) * dim + (slice(start, start + size),)])
                     for start, size in zip(starts, sizes))


class UnsafeSplit(UnsafeSplitWithSizes):
    node_name = "UnsafeSplitBackward0"


def _unsafe(node: type, a: Tensor, pieces: tuple, dim: int) -> tuple:
    """``pieces`` (split's, of ``a.detach()``: its checks and sizes) again from ``a``, not as views."""
    d = wrap_dim(dim, a.ndim)
    return node.apply(a, [p.shape[d] for p in pieces], d)


@tensor_method(top_level=True, out=False)
def unsafe_split(a: Tensor, split_size: int, dim: int = 0) -> tuple:
    if isinstance(split_size, (list, tuple)):
        raise TypeError(f"unsafe_split(): argument 'split_size' (position 1) must be int, not "
                        f"{type_name(split_size)}: use unsafe_split_with_sizes for a list of sizes")
    return _unsafe(UnsafeSplit, a, split(a.detach(), integer(split_size, "split_size"), dim), dim)


@tensor_method(top_level=True, out=False)
def unsafe_chunk(a: Tensor, chunks: int, dim: int = 0) -> tuple:
    return _unsafe(UnsafeSplit, a, chunk(a.detach(), chunks, dim), dim)


@tensor_method(top_level=True, out=False)
def unsafe_split_with_sizes(a: Tensor, split_sizes, dim: int = 0) -> tuple:
    return _unsafe(UnsafeSplitWithSizes, a, a.detach().split_with_sizes(split_sizes, dim), dim)


class Unbind(Function):
    """The slices along ``dim``, without that dimension; backward stacks their gradients."""

    node_name = "UnbindBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = dim
        # a slice then squeeze, not an integer index: NumPy turns x[i] of a 1-D array into a copy
        lead = (slice(None),) * dim
        return tuple(view_of(a, a._data[lead + (slice(i, i + 1),)].squeeze(dim)) for i in range(a.shape[dim]))

    @staticmethod
    def backward(ctx, *grads):
        return Stack.apply(ctx.dim, *grads), None


@tensor_method(top_level=True)
def unbind(a: Tensor, dim: int = 0) -> tuple:
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    return () if a.shape[d] == 0 else Unbind.apply(a, d)


# -- repeat, flip, roll -----------------------------------------------------------------------
class Repeat(Function):
    """Tile the tensor ``repeats`` times along each dimension (leading 1s are added to its shape)."""

    node_name = "RepeatBackward0"

    @staticmethod
    def forward(ctx, a, repeats):
        repeats = tuple(int(r) for r in repeats)
        if len(repeats) < a.ndim:
            raise RuntimeError(
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                f"tensor (repeats {list(repeats)} for a {a.ndim}-D tensor)"
            )
        for r in repeats:
            if r < 0:
                raise RuntimeError(f"Trying to create tensor with negative dimension {r}: {list(repeats)}")
        ctx.input_shape, ctx.repeats = a.shape, repeats
        ctx.padded = (1,) * (len(repeats) - a.ndim) + tuple(a.shape)
        return Tensor._wrap(np.tile(a._data.reshape(ctx.padded), repeats))

    @staticmethod
    def backward(ctx, grad):
        # Output dim i holds repeats[i] copies of a block of padded[i]: split it in two and sum the copies.
        pairs = [n for pair in zip(ctx.repeats, ctx.padded) for n in pair]
        copies = tuple(range(0, len(pairs), 2))
        return grad.reshape(pairs).sum(copies).reshape(ctx.input_shape), None


class Flip(Function):
    node_name = "FlipBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        ctx.dims = normalize_dims(dims, a.ndim)
        if len(set(ctx.dims)) != len(ctx.dims):
            repeated = next(d for d in ctx.dims if ctx.dims.count(d) > 1)
            raise RuntimeError(f"dim {repeated} appears multiple times in the list of dims")
        return Tensor._wrap(copy_keeping_layout(np.flip(a._data, ctx.dims)))

    @staticmethod
    def backward(ctx, grad):
        return grad.flip(ctx.dims), None


class Roll(Function):
    """Shift values along ``dims``; those pushed off the end come back at the start."""

    node_name = "RollBackward0"

    @staticmethod
    def forward(ctx, a, shifts, dims=None):
        shifts = _sizes((shifts,), "shifts")
        if dims is None:
            if len(shifts) != 1:
                raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
            ctx.shifts, ctx.dims = shifts, None
            return Tensor._wrap(np.asarray(np.roll(a._data, shifts[0]), order="C"))  # over the flattened tensor
        dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
        if a.ndim == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions: roll a 0-d tensor without dims")
        ctx.shifts, ctx.dims = shifts, normalize_dims(dims, a.ndim)
        return Tensor._wrap(np.asarray(np.roll(a._data, shifts, ctx.dims), order="C"))

    @staticmethod
    def backward(ctx, grad):
        return grad.roll(tuple(-s for s in ctx.shifts), ctx.dims), None, None


# -- triangles ----------------------------------------------------------------------------------
class Tril(Function):
    """The lower triangle of the last two dimensions (on and below diagonal ``diagonal``); zeros elsewhere."""

    node_name = "TrilBackward0"

    @staticmethod
    def forward(ctx, a, diagonal=0):
        if a.ndim < 2:
            raise RuntimeError(f"tril: input tensor must have at least 2 dimensions (got {a.ndim}-D)")
        ctx.diagonal = diagonal = integer(diagonal, "diagonal")
        return Tensor._wrap(np.asarray(np.tril(a._data, diagonal), order="C"))

    @staticmethod
    def backward(ctx, grad):
        return grad.tril(ctx.diagonal), None


class Triu(Function):
    """The upper triangle of the last two dimensions (on and above diagonal ``diagonal``); zeros elsewhere."""

    node_name = "TriuBackward0"

    @staticmethod
    def forward(ctx, a, diagonal=0):
        if a.ndim < 2:
            raise RuntimeError(f"triu: input tensor must have at least 2 dimensions (got {a.ndim}-D)")
        ctx.diagonal = diagonal = integer(diagonal, "diagonal")
        return Tensor._wrap(np.asarray(np.triu(a._data, diagonal), order="C"))

    @staticmethod
    def backward(ctx, grad):
        return grad.triu(ctx.diagonal), None


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method()
def repeat(self, *repeats) -> Tensor:
    return Repeat.apply(self, _sizes(repeats))


@tensor_method(top_level=True, out=False)
def flip(self, *args, dims=None) -> Tensor:
    """``x.flip(0, 1)``, ``x.flip((0, 1))`` or ``x.flip(dims=[0, 1])``."""
    return Flip.apply(self, _sizes(args) if dims is None else tuple(dims))


@tensor_method(top_level=True, out=False)
def roll(self, shifts, dims=None) -> Tensor:
    return Roll.apply(self, shifts, dims)


@tensor_method(top_level=True)
def tril(self, diagonal: int = 0) -> Tensor:
    return Tril.apply(self, diagonal)


@tensor_method(top_level=True)
def triu(self, diagonal: int = 0) -> Tensor:
    return Triu.apply(self, diagonal)


@tensor_method()
def tril_(self, diagonal: int = 0) -> Tensor:
    return self._inplace(Tril, diagonal)


@tensor_method()
def triu_(self, diagonal: int = 0) -> Tensor:
    return self._inplace(Triu, diagonal)
