"""Rearrangements PyTorch has beside permute, flip and cat: movedim, swapaxes, fliplr, flipud,
rot90, tile, repeat_interleave, the stacks (hstack, vstack, dstack, column_stack), meshgrid,
masked_select, take, nonzero, argwhere, reshape_as and unfold.

Values move, none is computed, so each gradient moves back: most are a permute, a flip, a
repeat, an expand or a cat in disguise and take those ops' derivatives. The rest:

    rot90(k)            undone by rot90(-k) in the same dims.
    masked_select, take each output is one input element: its gradient is added back at that
                        element (IndexAdd; the broadcast mask's copies are summed back).
    unfold              a view of overlapping windows: an element in several windows gets
                        the sum of their gradients (scatter_add of each window back in place).
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.autograd.function import Function
from minigrad.functional_ops import cat, write_out
from minigrad.ops.broadcast import broadcast_error, flag, integer, normalize_dims, sum_to, wrap_dim
from minigrad.ops.shape import view_of
from minigrad.ops.subscript import IndexAdd
from minigrad._tensor import Tensor, _sizes, check_tensor
from minigrad.ops.registry import tensor_method


def _dims(value) -> tuple:
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


# -- permutations and flips --------------------------------------------------------------------------
@tensor_method("movedim", "moveaxis", top_level=True, out=False)
def movedim(self, source, destination) -> Tensor:
    """The dims ``source`` moved to positions ``destination``; the others keep their order."""
    if isinstance(source, (tuple, list)) != isinstance(destination, (tuple, list)):
        raise TypeError(f"movedim(): argument 'source' and argument 'destination' must both be ints or both "
                        f"sequences of ints, got {type(source).__name__} and {type(destination).__name__}")
    source, destination = _dims(source), _dims(destination)
    if len(source) != len(destination):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({list(source)} dims) should "
                           f"contain the same number of dims as destination ({list(destination)} dims)")
    source, destination = normalize_dims(source, self.ndim), normalize_dims(destination, self.ndim)
    for name, dims in (("source", source), ("destination", destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({list(dims)})")
    order = [-1] * self.ndim
    for s, d in zip(source, destination):
        order[d] = s
    rest = iter(d for d in range(self.ndim) if d not in source)
    return self.permute(*(next(rest) if d == -1 else d for d in order))


@tensor_method("swapaxes", top_level=True, out=False)
def swapaxes(self, axis0: int, axis1: int) -> Tensor:
    return self.transpose(axis0, axis1)


@tensor_method("swapdims", top_level=True, out=False)
def swapdims(self, dim0: int, dim1: int) -> Tensor:
    return self.transpose(dim0, dim1)


@tensor_method(top_level=True, out=False)
def fliplr(self) -> Tensor:
    """Columns in reverse order (dim 1)."""
    if self.ndim < 2:
        raise RuntimeError(f"Input must be >= 2-d (got {self.ndim}-d): fliplr reverses dim 1")
    return self.flip(1)


@tensor_method(top_level=True, out=False)
def flipud(self) -> Tensor:
    """Rows in reverse order (dim 0)."""
    if self.ndim < 1:
        raise RuntimeError("Input must be >= 1-d (got a 0-d tensor): flipud reverses dim 0")
    return self.flip(0)


class Rot90(Function):
    node_name = "Rot90Backward0"

    @staticmethod
    def forward(ctx, a, k, dims):
        ctx.k, ctx.dims = k, dims
        return Tensor._wrap(np.array(np.rot90(a._data, k, dims), order="C"))

    @staticmethod
    def backward(ctx, grad):
        return Rot90.apply(grad, -ctx.k, ctx.dims), None, None


@tensor_method(top_level=True, out=False)
def rot90(self, k: int = 1, dims=(0, 1)) -> Tensor:
    """A quarter turn ``k`` times in the plane of ``dims``, from the first dim towards the second."""
    if not isinstance(dims, (tuple, list)):
        raise TypeError(f"rot90(): argument 'dims' (position 2) must be tuple of ints, not {type(dims).__name__}")
    k, dims = integer(k, "k"), _sizes((dims,), "dims")
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if self.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {self.ndim}")
    dims = (wrap_dim(dims[0], self.ndim), wrap_dim(dims[1], self.ndim))
    if dims[0] == dims[1]:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} and dim1 = {dims[1]}")
    return Rot90.apply(self, k % 4, dims)


# -- copies: tile, repeat_interleave ---------------------------------------------------------------------
@tensor_method(top_level=True, out=False)
def tile(self, *dims) -> Tensor:
    """``repeat`` that accepts fewer repeats than dims (leading ones are 1)."""
    dims = _sizes(dims, "dims")
    return self.repeat(*((1,) * (self.ndim - len(dims)) + tuple(dims)))


@tensor_method(top_level=True, out=False)
def repeat_interleave(self, repeats=None, dim=None, *, output_size=None) -> Tensor:
    """Each element repeated ``repeats`` times in place (``[a, b] -> [a, a, b, b]``), along ``dim``
    (of the flattened tensor by default); ``repeats`` may be a tensor of counts, one per element.
    ``repeat_interleave(counts)`` alone is ``arange(len(counts))`` repeated by ``counts``."""
    if repeats is None:  # torch.repeat_interleave(repeats): the indices
        if dim is not None or output_size is not None:
            raise TypeError("repeat_interleave(): argument 'repeats' must be a Tensor or an int when dim is given")
        if self._data.dtype.kind not in "iu":
            raise NotImplementedError(f"repeat_interleave: repeats must be integers, not {self.dtype}")
        if self.ndim > 1:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor of integers")
        counts = self._data.reshape(-1)
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        return Tensor._wrap(np.repeat(np.arange(counts.size, dtype=np.int64), counts))
    x, d = (self.reshape(-1), 0) if dim is None else (self, wrap_dim(dim, self.ndim))
    if x.ndim == 0:
        x = x.reshape(1)
    if isinstance(repeats, Tensor):
        counts = repeats._data
        if counts.dtype.kind not in "iu":
            raise NotImplementedError(f"repeat_interleave: repeats must be integers, not {repeats.dtype}")
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave: repeats must be 0-dim or 1-dim tensor of integers")
        if counts.size == 1:  # one count for every element
            counts = np.full(x.shape[d], counts.reshape(()), dtype=np.int64)
        if counts.size != x.shape[d]:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got repeats.size(0) = "
                               f"{counts.size} and input.size({d}) = {x.shape[d]}")
        if (counts < 0).any():
            raise RuntimeError("repeats can not be negative")
        picks = np.repeat(np.arange(counts.size, dtype=np.int64), counts)
        result = x.index_select(d, Tensor._wrap(picks))
    else:
        r = integer(repeats, "repeats")
        if r < 0:
            raise RuntimeError("repeats can not be negative")
        shape = list(x.shape)
        copies = x.unsqueeze(d + 1).expand(*shape[:d + 1], r, *shape[d + 1:])
        shape[d] *= r
        result = copies.reshape(*shape)
    if output_size is not None and result.shape[d] != output_size:
        raise RuntimeError(f"allocated size does not match required size: output_size={output_size}, "
                           f"but the repeats give {result.shape[d]}")
    return result


# -- stacks -------------------------------------------------------------------------------------------------
def _tensors(name: str, tensors, empty_is: type = RuntimeError) -> tuple:
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    if not tensors:  # (PyTorch's cat, and so concat, raise ValueError; the stacks RuntimeError)
        raise empty_is(f"{name} expects a non-empty TensorList")
    return tuple(tensors)


def _joined(name: str, pieces, dim: int, out: Tensor | None) -> Tensor:
    result = cat(list(pieces), dim)
    return result if out is None else write_out(name, result, out)


def hstack(tensors, *, out: Tensor | None = None) -> Tensor:
    """Side by side: vectors end to end (dim 0), anything else along dim 1."""
    pieces = [t.reshape(1) if t.ndim == 0 else t for t in _tensors("hstack", tensors)]
    return _joined("hstack", pieces, 0 if pieces and pieces[0].ndim == 1 else 1, out)


def vstack(tensors, *, out: Tensor | None = None) -> Tensor:
    """One under another along dim 0, a vector (or number) as a row."""
    pieces = [t.reshape(1, -1) if t.ndim < 2 else t for t in _tensors("vstack", tensors)]
    return _joined("vstack", pieces, 0, out)


def dstack(tensors, *, out: Tensor | None = None) -> Tensor:
    """Along dim 2 ("depth"): a vector (n) as (1, n, 1), a matrix (m, n) as (m, n, 1)."""
    def at_least_3d(t: Tensor) -> Tensor:
        return t.reshape(1, -1, 1) if t.ndim < 2 else t.unsqueeze(-1) if t.ndim == 2 else t
    return _joined("dstack", [at_least_3d(t) for t in _tensors("dstack", tensors)], 2, out)


def column_stack(tensors, *, out: Tensor | None = None) -> Tensor:
    """Vectors as columns, side by side with matrices' columns (dim 1)."""
    pieces = [t.reshape(-1, 1) if t.ndim < 2 else t for t in _tensors("column_stack", tensors)]
    return _joined("column_stack", pieces, 1, out)


def concat(tensors, dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """``cat``, under NumPy's name."""
    return _joined("concat", _tensors("concat", tensors, ValueError), dim, out)


def concatenate(tensors, dim: int = 0, *, out: Tensor | None = None) -> Tensor:
    """``cat``, under NumPy's name."""
    return _joined("concatenate", _tensors("concatenate", tensors, ValueError), dim, out)


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids: output i holds input i's values along dim i, repeated along the others.

    ``indexing="xy"`` swaps the first two dims (x along columns, as in plotting). PyTorch
    defaults to "ij" with a warning that it will require the argument; so does minigrad."""
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        tensors = tuple(tensors[0])
    tensors = _tensors("meshgrid", tensors)
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: {indexing}')
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: {t.ndim}-D")
        if t._data.dtype != tensors[0]._data.dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype: convert them with .to(dtype)")
    position = list(range(len(tensors)))
    if indexing == "xy" and len(tensors) >= 2:
        position[0], position[1] = 1, 0
    shape = [0] * len(tensors)
    for t, p in zip(tensors, position):
        shape[p] = t.numel()
    grids = []
    for t, p in zip(tensors, position):
        view = [1] * len(tensors)
        view[p] = -1
        grids.append(t.reshape(*view).expand(*shape))
    return tuple(grids)


# -- picking elements: masked_select, take, nonzero ---------------------------------------------------------
class MaskedSelect(Function):
    node_name = "MaskedSelectBackward0"

    @staticmethod
    def forward(ctx, a, mask):
        try:
            shape = np.broadcast_shapes(a.shape, mask.shape)
        except ValueError:
            raise broadcast_error(tuple(a.shape), tuple(mask.shape)) from None
        ctx.key = np.nonzero(np.broadcast_to(mask._data, shape))
        ctx.shape, ctx.input_shape = shape, a.shape
        return Tensor._wrap(np.broadcast_to(a._data, shape)[ctx.key])

    @staticmethod
    def backward(ctx, grad):
        return sum_to(IndexAdd.apply(grad, ctx.key, ctx.shape), ctx.input_shape), None


@tensor_method(top_level=True)
def masked_select(self, mask: Tensor) -> Tensor:
    """The elements where ``mask`` (broadcast with the input) is True, as a 1-D tensor."""
    check_tensor("masked_select", "mask", 1, mask)
    if mask._data.dtype != np.bool_:
        raise RuntimeError(f"masked_select: expected BoolTensor for mask, got {mask.dtype}: compare first (x > 0)")
    return MaskedSelect.apply(self, mask)


class Take(Function):
    node_name = "TakeBackward0"

    @staticmethod
    def forward(ctx, a, index):
        flat, n = index._data, a.numel()
        if flat.size and (flat.min() < -n or flat.max() >= n):
            bad = int(flat.max() if flat.max() >= n else flat.min())
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} elements.")
        ctx.key, ctx.input_shape = (flat.reshape(-1) % max(n, 1),), a.shape
        return Tensor._wrap(a._data.reshape(-1)[ctx.key[0]].reshape(flat.shape))

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(grad.reshape(-1), ctx.key, (math.prod(ctx.input_shape),)) \
            .reshape(ctx.input_shape), None


@tensor_method(top_level=True)
def take(self, index: Tensor) -> Tensor:
    """The elements at ``index`` in the flattened input (negative counts from the end), in index's shape."""
    check_tensor("take", "index", 1, index)
    if index._data.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {index.dtype}")
    return Take.apply(self, index)


@tensor_method(top_level=True)
def nonzero(self, *, as_tuple: bool = False):
    """The indices of the nonzero elements: one row per element (n, ndim), or with ``as_tuple``
    one 1-D tensor per dim (what ``x[x.nonzero(as_tuple=True)]`` indexes with)."""
    x = self._data
    if flag(as_tuple, "as_tuple"):
        found = np.nonzero(x.reshape(1) if x.ndim == 0 else x)
        return tuple(Tensor._wrap(i.astype(np.int64)) for i in found)
    return Tensor._wrap(np.asarray(np.argwhere(x), dtype=np.int64, order="C"))


@tensor_method(top_level=True, out=False)
def argwhere(self) -> Tensor:
    return self.nonzero()


# -- views: reshape_as, unfold -------------------------------------------------------------------------------
@tensor_method()
def reshape_as(self, other: Tensor) -> Tensor:
    check_tensor("reshape_as", "other", 1, other)
    return self.reshape(other.shape)


class Unfold(Function):
    """``x.unfold(dim, size, step)``: the windows x[i*step : i*step + size] along ``dim``, as a new
    last dim; a view (the windows overlap when step < size)."""

    node_name = "UnfoldBackward0"

    @staticmethod
    def forward(ctx, a, dim, size, step):
        d = wrap_dim(dim, a.ndim)
        n = a.shape[d] if a.ndim else 1
        if size > n:
            raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
        if size < 0:
            raise RuntimeError(f"size is {size} but must be >= 0")
        if step <= 0:
            raise RuntimeError(f"step is {step} but must be > 0")
        ctx.args, ctx.input_shape = (d, size, step), a.shape
        x = a._data
        if a.ndim == 0:
            return view_of(a, x.reshape(1)[:size], (Unfold, ctx.args))
        shape = (*x.shape[:d], (n - size) // step + 1, *x.shape[d + 1:], size)
        strides = (*x.strides[:d], x.strides[d] * step, *x.strides[d + 1:], x.strides[d])
        windows = np.lib.stride_tricks.as_strided(x, shape, strides, writeable=x.flags.writeable)
        return view_of(a, windows, (Unfold, ctx.args))

    @staticmethod
    def backward(ctx, grad):
        d, size, step = ctx.args
        if not ctx.input_shape:
            return grad.sum().reshape(()), None, None, None
        windows = grad.shape[d]
        # window w's element j came from position w * step + j along d
        order = [*range(d + 1), grad.ndim - 1, *range(d + 1, grad.ndim - 1)]
        src = grad.permute(*order).reshape(*grad.shape[:d], windows * size, *grad.shape[d + 1:-1])
        at = (np.arange(windows)[:, None] * step + np.arange(size)).reshape(-1)
        at = at.reshape([-1 if i == d else 1 for i in range(src.ndim)])
        index = Tensor._wrap(np.ascontiguousarray(np.broadcast_to(at, src.shape), dtype=np.int64))
        zeros = Tensor._wrap(np.zeros(ctx.input_shape, dtype=grad._data.dtype))
        return zeros.scatter_add(d, index, src), None, None, None


@tensor_method()
def unfold(self, dimension: int, size: int, step: int) -> Tensor:
    return Unfold.apply(self, dimension, integer(size, "size"), integer(step, "step"))
