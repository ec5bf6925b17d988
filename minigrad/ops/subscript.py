"""Indexing: ``x[key]`` and ``x[key] = v``, ``select``, ``narrow``.

Basic indexing (ints, slices, None, Ellipsis) gives views (``Select``, ``Slice``, ``Alias``),
with PyTorch's nodes; advanced indexing (index tensors, masks) gives a copy (``Index``), whose
gradient adds into zeros at the same index (``IndexAdd``). ``IndexPut`` writes ``x[key] = v``, in
place (``ops/inplace.py``), and lays its result out in memory as PyTorch does.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad.ops.broadcast import integer, sum_to, wrap_dim
from minigrad.ops.elementwise import Where
from minigrad.ops.layout import strided_view
from minigrad._tensor import Tensor
from minigrad.ops.registry import tensor_method
from minigrad.ops.shape import Unsqueeze, _expand_strides, _view_strides, view_of


def normalize_index(key):
    """Turn tensors and lists inside an index into NumPy arrays, as NumPy indexing expects."""
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            k = k._data
            if k.dtype.kind == "f":
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            if k.ndim == 0 and k.dtype.kind in "iu":
                k = int(k)  # a 0-d integer tensor indexes like an int: a view
        elif isinstance(k, list):
            k = np.asarray(k)
            if k.size == 0:
                k = k.astype(np.int64)  # [] is an empty integer index (NumPy makes it float64)
        out.append(k)
    return tuple(out)


def check_step(entry) -> None:
    """NumPy reverses with step -1; PyTorch refuses, and so do we (the same code must run on both).
    Checked when the slice is reached, as PyTorch applies a key entry by entry."""
    if type(entry) is slice and entry.step is not None and entry.step <= 0:
        raise ValueError("step must be greater than zero: to reverse a tensor, use .flip(dim)")


def is_basic(key: tuple) -> bool:
    """Basic indexing (ints, slices, None, ...) gives a view; arrays and bools give a copy."""
    return all(
        k is None or k is Ellipsis or type(k) is slice or (isinstance(k, (int, np.integer)) and not isinstance(k, bool))
        for k in key
    )


def index(a: Tensor, key, for_write: bool = False) -> Tensor:
    """``a[key]``, as PyTorch computes it.

    Entry by entry, a chain of views (``sliced``): ``Select`` for an integer,
    ``Slice`` for a slice (skipped when it keeps the whole dimension, unless it
    is the whole key), ``Unsqueeze`` for None, ``Alias`` if nothing is left to
    do. Lists, arrays, tensors and bools are advanced indexing: after the
    views, one ``Index`` node takes them all, and its result is a copy.
    ``for_write``: the target of ``a[key] = value``, where PyTorch skips every
    whole-dimension slice and writes into ``a`` itself when nothing is left.
    """
    if type(key) is slice and not for_write:
        check_step(key)
        return Slice.apply(a, 0, key)
    out, advanced = sliced(a, normalize_index(key))
    if any(isinstance(k, np.ndarray) for k in advanced):
        return Index.apply(out, advanced)
    return Alias.apply(a) if out is a and not for_write else out


@tensor_method()
def __getitem__(self, key) -> Tensor:
    return index(self, key)


def sliced(a: Tensor, entries: tuple) -> tuple:
    """PyTorch's ``applySlicing``: the view that the basic entries of a key select (or ``a`` itself,
    when every slice keeps its whole dimension), and the key that is left for that view, with the
    index arrays where their dimensions now are. ``a[i, :, [0, 1]] = v`` writes ``[:, [0, 1]]`` into
    the view ``a[i]``; NumPy would read the integer as an index array too, and move the dimensions."""
    consumed = sum(_dims_consumed(k) for k in entries)
    if consumed > a.ndim:
        raise IndexError(f"too many indices for tensor of dimension {a.ndim}")
    at = next((i for i, k in enumerate(entries) if k is Ellipsis), None)  # not ``in``: arrays compare elementwise
    if at is not None:
        entries = entries[:at] + (slice(None),) * (a.ndim - consumed) + entries[at + 1:]
    out, dim, source_dim = a, 0, 0  # the next entry indexes dimension dim of out, source_dim of a
    advanced = []  # what is left for the view, one entry per entry of the key
    for k in entries:
        if k is None:
            out = Unsqueeze.apply(out, dim)
            advanced.append(slice(None))
            dim += 1
        elif type(k) is slice:
            check_step(k)
            if not _keeps_whole(k, a.shape[source_dim]):
                out = Slice.apply(out, dim, k)
            advanced.append(slice(None))
            dim, source_dim = dim + 1, source_dim + 1
        elif isinstance(k, (bool, np.bool_)):  # PyTorch: a new dimension, indexed by a one-element mask
            out = Unsqueeze.apply(out, dim)
            advanced.append(np.array([k]))
            dim += 1
        elif isinstance(k, (int, np.integer)):
            out = Select.apply(out, dim, int(k))
            source_dim += 1
        else:
            advanced.append(k)
            dim, source_dim = dim + _dims_consumed(k), source_dim + _dims_consumed(k)
    return out, tuple(advanced)


def _keeps_whole(k: slice, n: int) -> bool:
    """PyTorch's test for skipping a slice (``applySlice``): it starts at 0, steps by 1 and stops at
    or past the end, read as written (``x[-5:]`` or ``x[:-1]`` of an empty x is still a slice)."""
    return k.start in (None, 0) and k.step in (None, 1) and (k.stop is None or k.stop >= n)


def _dims_consumed(entry) -> int:
    """How many dimensions of the indexed tensor an index entry uses up."""
    if entry is None or entry is Ellipsis or isinstance(entry, (bool, np.bool_)):
        return 0
    if isinstance(entry, np.ndarray) and entry.dtype == np.bool_:
        return entry.ndim
    return 1


class _KeyView(Function):
    """A view ``a[key]`` for a basic key: its gradient goes back into zeros at ``key``."""

    @staticmethod
    def key(dim: int, entry) -> tuple:
        return (slice(None),) * dim + (entry,)

    @classmethod
    def _view(cls, ctx, a, key: tuple, args: tuple) -> Tensor:
        ctx.key, ctx.input_shape = key, a.shape
        return view_of(a, a._data[key + (Ellipsis,)], (cls, args))  # the Ellipsis keeps a 0-d result an array

    @staticmethod
    def backward(ctx, grad):
        return (IndexAdd.apply(grad, ctx.key, ctx.input_shape),) + (None,) * (len(ctx.needs_input_grad) - 1)


class Select(_KeyView):
    """``a.select(dim, i)``, ``a[i]``: removes dimension ``dim``."""

    node_name = "SelectBackward0"

    @staticmethod
    def forward(ctx, a, dim, i):
        size = a.shape[dim]
        if not -size <= i < size:
            raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
        return Select._view(ctx, a, Select.key(dim, i), (dim, i))


@tensor_method(top_level=True, out=False)
def select(self, dim: int, index: int) -> Tensor:
    return Select.apply(self, wrap_dim(dim, self.ndim), integer(index, "index"))


class Slice(_KeyView):
    """``a[start:stop:step]`` along ``dim``."""

    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, a, dim, entry):
        return Slice._view(ctx, a, Slice.key(dim, entry), (dim, entry))


@tensor_method(top_level=True, out=False)
def narrow(self, dim: int, start: int | Tensor, length: int) -> Tensor:
    """``length`` entries of dimension ``dim`` from ``start`` on: a view, as ``x[:, start:start + length]`` for dim 1."""
    return Slice.apply(self, *_narrowed(self, dim, start, length))  # always a node, as PyTorch's


def _narrowed(self: Tensor, dim: int, start: int | Tensor, length: int) -> tuple:
    """narrow's checks: the dimension and the slice of it."""
    if self.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = wrap_dim(dim, self.ndim)
    if isinstance(start, Tensor) and (start.ndim or start._data.dtype.kind not in "iu"):
        raise RuntimeError(f"start must be an 0-dim integral Tensor, not a {start.ndim}-dim {start.dtype} one: "
                           "pass an int or a 0-d integer tensor")
    size, start, length = self.shape[dim], integer(start, "start"), integer(length, "length")
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    start %= max(size, 1)
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    return dim, slice(start, start + length)


class NarrowCopy(_KeyView):
    """``narrow_copy``: narrow's entries as a new tensor."""

    node_name = "NarrowCopyBackward0"

    @staticmethod
    def forward(ctx, a, dim, entry):
        ctx.key, ctx.input_shape = NarrowCopy.key(dim, entry), a.shape
        return Tensor._wrap(a._data[ctx.key].copy())


@tensor_method(top_level=True)
def narrow_copy(self, dim: int, start: int, length: int) -> Tensor:
    """``narrow(dim, start, length)`` as a copy, not a view."""
    if self.ndim and integer(dim) >= self.ndim:  # (a negative dim out of range is narrow's IndexError)
        raise RuntimeError(f"narrow_copy(): dim {dim} is out of range for a {self.ndim}-D tensor: expected dim < "
                           f"{self.ndim}")
    return NarrowCopy.apply(self, *_narrowed(self, dim, integer(start, "start"), length))


class Alias(_KeyView):
    """``a[...]``: the same values as a new view."""

    node_name = "AliasBackward0"

    @staticmethod
    def forward(ctx, a):
        return Alias._view(ctx, a, (), ())

    @staticmethod
    def backward(ctx, grad):
        return grad


class Index(Function):
    """Advanced indexing: a copy. The index arrays are saved for backward (freed after it, as in PyTorch)."""

    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, key):
        ctx.input_shape = a.shape
        out, key = _gathered(a._data, key)
        _save_key(ctx, key)
        return Tensor._wrap(_index_layout(a._data, key, out))

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(grad, _saved_key(ctx), ctx.input_shape), None


def _gathered(src: np.ndarray, key: tuple) -> tuple:
    """``(src[key], key)``. As PyTorch, an empty result checks no index against its dimension's size
    (its kernel visits no element): ``x[[5], 2:2]`` of a (1, 3) tensor is (1, 0), where NumPy raises.
    Then the key's integer arrays are clipped into range (so backward can use it too); an index into a
    dimension of size 0, or a key that still fails, raises NumPy's IndexError as before."""
    try:
        return src[key], key
    except IndexError:
        dim, clipped = 0, []
        for k in key:
            if isinstance(k, np.ndarray) and k.dtype.kind in "iu":
                if dim >= src.ndim or src.shape[dim] == 0:
                    raise
                k = np.clip(k, -src.shape[dim], src.shape[dim] - 1)
            clipped.append(k)
            dim += 0 if k is None else k.ndim if isinstance(k, np.ndarray) and k.dtype == bool else 1
        try:
            out = src[tuple(clipped)]
        except IndexError:
            out = None
        if out is None or out.size:
            raise
        return out, tuple(clipped)


def _index_layout(src: np.ndarray, key: tuple, out: np.ndarray) -> np.ndarray:
    """``out`` (NumPy's ``src[key]``) laid out in memory as PyTorch lays out its index result.

    PyTorch's TensorIterator allocates it from its operands: ``src`` with the indexed dimensions
    replaced by the index's (stride 0) and each index tensor (a mask's ``nonzero()`` columns) with
    1s for the other dimensions. Row-major if they all are, their layout if they all share one,
    else the order their strides sort the dimensions into (ties: the smaller size first), the
    strides of size-1 dimensions included. PyTorch's overlap check compares those (``v[None] = v``).
    """
    arrays = [d for d, k in enumerate(key) if isinstance(k, np.ndarray)]
    if (arrays[-1] - arrays[0] + 1 == len(arrays) and all(key[d].ndim == 1 or key[d].dtype == np.bool_ for d in arrays)
            and src.strides == tuple(st * src.itemsize for st in _contiguous_strides(src.shape))):
        return _restrided(out, _contiguous_strides(out.shape))  # the common case: lists or masks side by side
    indices = []  # per dimension of src: its index array, or None where the key keeps it whole
    for k in key:
        if not isinstance(k, np.ndarray):
            indices.append(None)
        elif k.dtype != np.bool_:
            indices.append(k)
        elif k.ndim == 0:  # (PyTorch indexes a new dimension: rare; NumPy's layout is kept)
            return out
        else:
            indices.extend(np.ascontiguousarray(column) for column in np.nonzero(k))
    indices += [None] * (src.ndim - len(indices))
    at = [d for d, i in enumerate(indices) if i is not None]
    shape = np.broadcast_shapes(*[i.shape for i in indices if i is not None])
    indices = [i if i is None or i.shape == shape else strided_view(i, shape, _expand_strides(i, shape))
               for i in indices]
    sizes, strides = list(src.shape), [st // src.itemsize for st in src.strides]
    if at[-1] - at[0] + 1 != len(at):  # not side by side: the indexed dimensions go first
        order = at + [d for d, i in enumerate(indices) if i is None]
        sizes, strides, indices = [sizes[d] for d in order], [strides[d] for d in order], [indices[d] for d in order]
        at = list(range(len(at)))
    before, after = at[0], len(indices) - 1 - at[-1]
    full = out.shape
    operands = [(full, tuple(strides[:before]) + (0,) * len(shape) + tuple(strides[len(strides) - after:]))]
    padded = (1,) * before + shape + (1,) * after
    operands += [(padded, tuple(st // i.itemsize for st in _view_strides(i, padded))) for i in indices if i is not None]
    if all(size == full for size, _ in operands):
        if all(_row_major(full, st) for _, st in operands):
            return _restrided(out, _contiguous_strides(full))
        if len({st for _, st in operands}) == 1 and _dense(full, operands[0][1]):
            return _restrided(out, operands[0][1])
    # a size-1 dimension of an operand broadcast to more counts as stride 0, which orders nothing
    operands = [tuple(0 if n == 1 and full[d] != 1 else st[d] for d, n in enumerate(size)) for size, st in operands]
    perm = list(range(len(full) - 1, -1, -1))  # fastest first: an insertion sort, as TensorIterator's
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            swap = _goes_after(operands, full, perm[d0], perm[d1])
            if swap:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif swap is False:
                break
    return _restrided(out, _new_strides(full, perm, row_major=perm == sorted(perm, reverse=True)))


def _goes_after(operands: list, sizes: tuple, d0: int, d1: int) -> bool | None:
    """Whether dimension d0 goes after d1 in memory, by the first operand that tells (a stride of
    0 tells nothing; equal strides put the larger size after); None if none does."""
    for strides in operands:
        if strides[d0] and strides[d1]:
            if strides[d0] != strides[d1]:
                return strides[d0] > strides[d1]
            if sizes[d0] > sizes[d1]:
                return True
    return None


def _row_major(shape: tuple, strides: tuple) -> bool:
    """PyTorch's is_contiguous(): sizes of 1 do not count, nor does anything without elements."""
    step = 1
    for n, st in zip(reversed(shape), reversed(strides)):
        if n == 0:
            return True
        if n != 1:
            if st != step:
                return False
            step *= n
    return True


def _dense(shape: tuple, strides: tuple) -> bool:
    """No gaps and no repeats in memory: some order of the dimensions of more than 1 is row-major."""
    step = 1
    for st, n in sorted((st, n) for n, st in zip(shape, strides) if n > 1):
        if st != step:
            return False
        step *= n
    return True


def _contiguous_strides(shape: tuple) -> tuple:
    """PyTorch's strides, in elements, of a new row-major tensor."""
    return _new_strides(shape, range(len(shape) - 1, -1, -1), row_major=True)


def _new_strides(shape: tuple, fastest_first, row_major: bool) -> tuple:
    """The strides of a new tensor whose dimensions lie in memory in this order: a size 0 counts
    as 1 in a row-major one (PyTorch's empty()), as 0 in the others (TensorIterator's)."""
    strides, step = [0] * len(shape), 1
    for d in fastest_first:
        strides[d], step = step, step * (max(shape[d], 1) if row_major else shape[d])
    return tuple(strides)


def _restrided(out: np.ndarray, strides: tuple) -> np.ndarray:
    """``out``'s values in memory with these strides (in elements): ``out`` itself if it has them, its
    memory seen with them if it is row-major in both (they differ only where a size is 1)."""
    strides = tuple(st * out.itemsize for st in strides)
    if out.strides == strides:
        return out
    if out.flags.c_contiguous and _row_major(out.shape, [st // out.itemsize for st in strides]):
        return strided_view(out, out.shape, strides)
    laid = strided_view(np.empty(max(out.size, 1), out.dtype), out.shape, strides)
    laid[...] = out
    return laid


def _save_key(ctx, key: tuple) -> None:
    """Save the arrays of an advanced key with ``save_for_backward``: a second backward then
    fails once they are freed, as PyTorch's IndexBackward0 / IndexPutBackward0 do."""
    ctx.key = tuple(None if isinstance(k, np.ndarray) else k for k in key)
    ctx.array_positions = tuple(i for i, k in enumerate(key) if isinstance(k, np.ndarray))
    ctx.save_for_backward(*(Tensor._wrap(key[i]) for i in ctx.array_positions))


def _saved_key(ctx) -> tuple:
    key = list(ctx.key)
    for i, t in zip(ctx.array_positions, ctx.saved_tensors):
        key[i] = t._data
    return tuple(key)


def saved_index(indices: Tensor) -> np.ndarray:
    """The array of an indices output saved for backward. PyTorch keeps that output itself (it has no
    history), so a ``.data`` given to it since is what backward scatters with, and a float one is refused."""
    if indices._data.dtype.kind != "i" or indices._data.dtype.itemsize < 4:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    return indices._data


class IndexAdd(Function):
    """Zeros of ``shape`` with ``values`` added at ``key`` (repeated indices add up).

    It is the backward of indexing, and indexing is its backward: together they
    differentiate each other to any order.
    """

    node_name = "IndexAddBackward0"

    @staticmethod
    def forward(ctx, values, key, shape):
        ctx.key = key
        out = np.zeros(shape, dtype=values._data.dtype)
        if is_basic(key):
            out[key] = values._data  # no repeats: plain assignment (np.add.at is far slower)
        else:
            np.add.at(out, key, values._data)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.key], None, None


class IndexPut(Function):
    """``a[key] = value`` computed out of place: the in-place form writes it back."""

    node_name = "IndexPutBackward0"
    _operands = (0, 2)  # a number value gets an edge too (to nowhere), as PyTorch wraps it in a tensor; the key none

    @staticmethod
    def forward(ctx, a, key, value):
        _save_key(ctx, key)
        ctx.value_shape = value.shape if isinstance(value, Tensor) else ()
        out = a._data.copy()
        try:
            out[key] = value._data if isinstance(value, Tensor) else value
        except ValueError:
            raise RuntimeError(
                f"shape mismatch: value tensor of shape {list(ctx.value_shape)} cannot be broadcast to "
                f"indexing result of shape {list(out[key].shape)}"
            ) from None
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        need_a, _, need_value = ctx.needs_input_grad
        key = _saved_key(ctx)
        grad_a = grad_value = None
        if need_a:
            keep = np.ones(grad.shape, dtype=bool)
            keep[key] = False  # overwritten elements don't reach the output: exactly 0 there, as PyTorch's
            grad_a = Where.apply(keep, grad, 0.0)  # index_put of zeros (grad * 0 would give -0.0 and NaN)
        if need_value:
            grad_value = sum_to(grad[key], ctx.value_shape)
        return grad_a, None, grad_value
