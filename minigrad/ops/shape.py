"""Operations that move values around without computing new ones.

Their gradients move the incoming gradient back: a reshape is undone by a
reshape, a transpose by the inverse transpose, an index by adding into zeros
at the same index (``IndexAdd``). Results that share memory with their input
(NumPy views) are minigrad *views*: they share the input's version counter, so
an in-place change through either is seen by the checks on saved tensors, and
each records the step that made it (``view_of(..., step)``), so the view can be
taken again from its base when an in-place operation changes the base's
history (``CopySlices``, ``Tensor._regenerate_view``).
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled, no_grad
from minigrad.device import device as _device_type, resolve as _resolve_device
from minigrad.ops.broadcast import NOT_GIVEN, flag, integer, normalize_dims, number, sum_to, type_name, wrap_dim
from minigrad.ops.elementwise import Where
from minigrad.ops.layout import copy_keeping_layout, repeats_memory, strided_view
from minigrad._tensor import Tensor, _ViewMeta, _argument, _sizes, _tensor_argument
from minigrad.ops.registry import tensor_method


def view_of(base: Tensor, array: np.ndarray, step: tuple | None = None) -> Tensor:
    """Wrap ``array``, which shares memory with ``base``, as a view of it.

    ``step = (ViewFunction, args)`` says how to take this view again:
    ``ViewFunction.apply(base, *args)``. Without it, the view cannot be modified
    in place inside a graph, nor used after its base's history changed.
    """
    out = Tensor._wrap(array)
    # may_share_memory checks bounds only (exact overlap can cost far more than the op); an
    # empty result shares no memory but is still a view (a view op made it; PyTorch's empty
    # reshape is always a view too).
    if array.size == 0 or np.may_share_memory(array, base._data):
        out._version_counter = base._version_counter
        root = base._base
        if root is None:
            root, steps = base, (step,)
        else:
            steps = base._view_meta.steps
            steps = None if steps is None else steps + (step,)
        out._base = root
        out._view_meta = _ViewMeta(None if step is None else steps, out._version_counter.value)
    return out


def infer_shape(shape: tuple, numel: int) -> tuple:
    """Replace a single -1 in ``shape`` and check the element count."""
    shape = tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod([n for n in shape if n != -1])
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def _view_strides(a: np.ndarray, shape: tuple) -> tuple:
    """PyTorch's strides (in bytes) for ``a`` viewed as ``shape`` (``computeStride``), when NumPy's
    reshape of ``a`` is a view too. They differ from NumPy's only where the view has a size of 1
    or no elements; PyTorch's overlap checks compare these strides, so ours must be the same."""
    numel = a.size
    if a.ndim == 0 or (numel == 0 and a.shape != shape):  # as a new tensor of this shape would have
        strides, step = [0] * len(shape), a.itemsize
        for d in reversed(range(len(shape))):
            strides[d], step = step, step * max(shape[d], 1)
        return tuple(strides)
    if numel == 0:
        return a.strides
    strides, view_d, base = [0] * len(shape), len(shape) - 1, a.strides[-1]
    chunk = view_numel = 1  # elements of the input's current run of dimensions that step evenly
    for d in reversed(range(a.ndim)):
        chunk *= a.shape[d]
        if d == 0 or (a.shape[d - 1] != 1 and a.strides[d - 1] != chunk * base):  # the run ends here
            while view_d >= 0 and (view_numel < chunk or shape[view_d] == 1):
                strides[view_d] = view_numel * base
                view_numel *= shape[view_d]
                view_d -= 1
            if d > 0:
                base, chunk, view_numel = a.strides[d - 1], 1, 1
    return tuple(strides)


class Reshape(Function):
    """``reshape`` (copies if it must) and ``view`` (never copies)."""

    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape, must_view=False):
        ctx.input_shape = a.shape
        shape = infer_shape(shape, a.numel())
        out = a._data.reshape(shape)
        if out.size == 0 or (1 in shape and np.may_share_memory(out, a._data)):
            strides = _view_strides(a._data, shape)
            out = out if out.strides == strides else strided_view(a._data, shape, strides)
        elif must_view and not np.may_share_memory(out, a._data):
            # (reshape(copy=False) needs NumPy 2.1: a result that does not share the input's
            # memory is a copy, which view() must refuse, on every supported NumPy)
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        return view_of(a, out, (Reshape, (shape, True) if must_view else (shape,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None, None


class Permute(Function):
    node_name = "PermuteBackward0"

    @staticmethod
    def forward(ctx, a, dims):
        dims = normalize_dims(dims, a.ndim)
        if len(dims) != a.ndim or len(set(dims)) != a.ndim:
            raise RuntimeError(
                f"permute(): the dims {list(dims)} must list each of the tensor's {a.ndim} "
                "dimensions exactly once"
            )
        ctx.inverse = tuple(np.argsort(dims))
        return view_of(a, a._data.transpose(dims), (Permute, (dims,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(*ctx.inverse), None


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim)
        return view_of(a, np.swapaxes(a._data, *ctx.dims) if a.ndim else a._data[...], (Transpose, ctx.dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


class Squeeze(Function):
    """``x.squeeze(dim)``: dimensions of size 1 removed (a dim that is not 1 is ignored, as in PyTorch)."""

    node_name = "SqueezeBackward1"

    @staticmethod
    def forward(ctx, a, dim=None):
        ctx.input_shape = a.shape
        dims = normalize_dims(dim, a.ndim)
        dims = tuple(d for d in dims if a.shape[d] == 1)
        return view_of(a, a._data.squeeze(axis=dims), (squeeze_node(dim), (dim,)))

    @staticmethod
    def backward(ctx, grad):
        # nothing squeezed: PyTorch's unsqueeze_to hands back grad itself
        return (grad if grad.shape == ctx.input_shape else grad.reshape(ctx.input_shape)), None


class SqueezeAll(Squeeze):
    """``x.squeeze()``, every size-1 dimension: PyTorch names its node apart."""

    node_name = "SqueezeBackward0"


class SqueezeDims(Squeeze):
    """``x.squeeze((0, 2))``, a tuple of dims: PyTorch names its node apart."""

    node_name = "SqueezeBackward2"


def squeeze_node(dim) -> type:
    """The node for each of PyTorch's three squeeze overloads (no dim, one dim, a tuple of dims)."""
    return SqueezeAll if dim is None else Squeeze if isinstance(dim, (int, np.integer)) else SqueezeDims


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = d = wrap_dim(dim, a.ndim + 1)
        # PyTorch's stride for the new dimension (its overlap checks compare strides): the next
        # dimension's size times its stride, one element at the end (NumPy may put anything there).
        data = a._data
        new = data.itemsize if d == data.ndim else data.shape[d] * data.strides[d]
        view = strided_view(data, data.shape[:d] + (1,) + data.shape[d:], data.strides[:d] + (new,) + data.strides[d:])
        return view_of(a, view, (Unsqueeze, (d,)))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


def _expand_strides(a: np.ndarray, shape: tuple) -> tuple:
    """PyTorch's strides for ``a`` expanded to ``shape`` (``inferExpandGeometry``): 0 where a size is
    repeated; a new leading size-1 dimension gets the next size times its stride (0 from a 0-d
    tensor), where NumPy puts 0. Its overlap checks compare these strides, so ours must be the same."""
    lead = len(shape) - a.ndim
    strides = [0] * len(shape)
    for i in reversed(range(len(shape))):
        if i >= lead:
            strides[i] = a.strides[i - lead] if a.shape[i - lead] == shape[i] else 0
        elif shape[i] == 1 and i + 1 < len(shape):
            strides[i] = shape[i + 1] * strides[i + 1]
    return tuple(strides)


class Expand(Function):
    node_name = "ExpandBackward0"

    @staticmethod
    def forward(ctx, a, sizes):
        ctx.input_shape = a.shape
        if len(sizes) < a.ndim:
            raise RuntimeError(
                f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
                f"the number of dimensions in the tensor ({a.ndim})"
            )
        lead = len(sizes) - a.ndim
        shape = tuple(a.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes))
        for i in range(a.ndim):
            if a.shape[i] != 1 and a.shape[i] != shape[lead + i]:
                raise RuntimeError(
                    f"The expanded size of the tensor ({shape[lead + i]}) must match the existing size "
                    f"({a.shape[i]}) at non-singleton dimension {lead + i}.  Target sizes: {list(sizes)}.  "
                    f"Tensor sizes: {list(a.shape)}"
                )
        # Writable, unlike np.broadcast_to's result: PyTorch lets one element of an expanded tensor
        # be written, and fill_ write all of it; Tensor._inplace refuses the other repeated writes.
        strides = _expand_strides(a._data, shape)
        return view_of(a, strided_view(a._data, shape, strides), (Expand, (shape,)))

    @staticmethod
    def backward(ctx, grad):
        if ctx.input_shape == ():  # PyTorch's sum_to always sums to a 0-d shape: a new tensor, never grad itself
            return grad.sum(), None
        return sum_to(grad, ctx.input_shape), None


class Cat(Function):
    node_name = "CatBackward0"
    _all_gradients = True  # (node post-hooks see the gradient of an input that needs none, as PyTorch's)

    @staticmethod
    def forward(ctx, dim, *tensors):
        if not tensors:
            raise ValueError("cat(): expected a non-empty list of Tensors: pass at least one tensor")
        first = tensors[0]
        d = wrap_dim(dim, first.ndim)
        for i, t in enumerate(tensors[1:], start=1):
            if t.ndim != first.ndim:
                raise RuntimeError(
                    f"Tensors must have same number of dimensions: got {first.ndim} and {t.ndim} (tensor number {i})"
                )
            for k in range(t.ndim):
                if k != d and t.shape[k] != first.shape[k]:
                    raise RuntimeError(
                        f"Sizes of tensors must match except in dimension {d}. Expected size "
                        f"{first.shape[k]} but got size {t.shape[k]} for tensor number {i} in the list."
                    )
        ctx.dim, ctx.sizes = d, [t.shape[d] for t in tensors]
        out = np.concatenate([t._data for t in tensors], axis=d)
        # PyTorch's result is new contiguous memory (NumPy may follow its inputs' layout instead)
        return Tensor._wrap(np.asarray(out, dtype=_promote_all(tensors), order="C"))

    @staticmethod
    def backward(ctx, grad):
        grads, start = [], 0
        for size in ctx.sizes:
            index = (slice(None),) * ctx.dim + (slice(start, start + size),)
            grads.append(grad[index])
            start += size
        return (None, *grads)


def _promote_all(tensors) -> np.dtype:
    """The dtype PyTorch gives ``cat`` or ``stack`` of all ``tensors``.

    Every input counts as a dimensioned tensor (cat refuses 0-d inputs; stack
    unsqueezes them first), so a 0-d float64 promotes a float32: the rule that a
    0-d tensor does not promote a dimensioned one (``dtypes.result_type``) has no
    dimensioned operand to apply to here.
    """
    dtype = tensors[0]._data.dtype
    for t in tensors[1:]:
        dtype = dtypes.result_type(np.empty(0, dtype), np.empty(0, t._data.dtype))
    return dtype


class Stack(Function):
    node_name = "StackBackward0"
    _all_gradients = True  # (node post-hooks see the gradient of an input that needs none, as PyTorch's)

    @staticmethod
    def forward(ctx, dim, *tensors):
        if not tensors:
            raise RuntimeError("stack expects a non-empty TensorList")
        for i, t in enumerate(tensors):
            if t.shape != tensors[0].shape:
                raise RuntimeError(
                    f"stack expects each tensor to be equal size, but got {list(tensors[0].shape)} at "
                    f"entry 0 and {list(t.shape)} at entry {i}"
                )
        ctx.dim = wrap_dim(dim, tensors[0].ndim + 1)
        out = np.stack([t._data for t in tensors], axis=ctx.dim)
        return Tensor._wrap(np.asarray(out, dtype=_promote_all(tensors), order="C"))  # contiguous, as cat's

    @staticmethod
    def backward(ctx, grad):
        return (None, *(grad.select(ctx.dim, i) for i in range(grad.shape[ctx.dim])))


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


class Slice(_KeyView):
    """``a[start:stop:step]`` along ``dim``."""

    node_name = "SliceBackward0"

    @staticmethod
    def forward(ctx, a, dim, entry):
        return Slice._view(ctx, a, Slice.key(dim, entry), (dim, entry))


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
        _save_key(ctx, key)
        return Tensor._wrap(_index_layout(a._data, key, a._data[key]))

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(grad, _saved_key(ctx), ctx.input_shape), None


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


class Copy(IndexPut):
    """``a.copy_(src)``: ``a[...] = src`` (PyTorch's node name)."""

    node_name = "torch::autograd::CopyBackwards"

    @staticmethod
    def backward(ctx, grad):
        need_a, _, need_value = ctx.needs_input_grad
        # every element was overwritten: PyTorch's zeros_like(grad), a constant even under create_graph
        grad_a = Tensor._wrap(np.zeros_like(grad._data)) if need_a else None
        # the value's is the gradient itself (PyTorch's grad.to(src's options)): no view of it
        grad_value = sum_to(grad, ctx.value_shape) if need_value else None
        return grad_a, None, grad_value


def replay(t: Tensor, steps: tuple, on_gradient: bool = False) -> Tensor:
    """Take a view again: apply the view ``steps`` (``_ViewMeta.steps``) to ``t``.

    On a gradient, whose memory layout may differ from the base's, ``view``
    steps become ``reshape`` (same values, a copy only where it must).
    """
    for op, args in steps:
        if on_gradient and op is Reshape:
            args = args[:1]
        t = op.apply(t, *args)
    return t


def _memory_order(a: np.ndarray) -> tuple:
    """The dimensions of ``a`` from the largest stride to the smallest."""
    return tuple(sorted(range(a.ndim), key=lambda d: -abs(a.strides[d])))


def _laid_out(memory: np.ndarray, shape: tuple, order: tuple) -> np.ndarray:
    """``memory`` (1-d, a new array) seen as ``shape`` laid out in ``order``, as the base was."""
    return memory.reshape([shape[d] for d in order]).transpose(np.argsort(order))


def _filled_with_region(shape: tuple, order: tuple, dtype, steps: tuple, fill) -> tuple:
    """A new array of ``shape`` (laid out in ``order``, as the base was) filled with ``fill``,
    and the view ``steps`` select in it: where a view's region lies in its base."""
    full = _laid_out(np.full(math.prod(shape), fill, dtype), shape, order)
    with no_grad():
        region = replay(Tensor._wrap(full), steps)._data
    if region.size and not np.may_share_memory(region, full):
        raise RuntimeError(f"the view steps {steps} copy instead of viewing; please report this as a minigrad bug")
    return full, region


class AsStrided(Function):
    """A view taken again from its base in one step (PyTorch's name for the node it then gets).

    After an in-place change of the base, a view's history is rebuilt with this
    node: its gradient goes into zeros of the base's shape, at the view's region.
    """

    node_name = "AsStridedBackward0"

    @staticmethod
    def forward(ctx, base, steps):
        ctx.steps, ctx.shape, ctx.order = steps, base.shape, _memory_order(base._data)
        return Tensor._wrap(replay(base, steps)._data)

    @staticmethod
    def backward(ctx, grad):
        if grad._data.size == 0:
            # PyTorch's as_strided_backward: a view with no elements gives new row-major zeros, a
            # constant (so a leaf's .grad from it does not require grad, even under create_graph)
            return Tensor._wrap(np.zeros(ctx.shape, grad._data.dtype)), None
        return AsStridedScatter.apply(grad, ctx.steps, ctx.shape, ctx.order), None


class AsStridedScatter(Function):
    """Zeros of the base's shape with ``grad`` at the view's region: AsStrided's backward (and the reverse)."""

    node_name = "AsStridedScatterBackward0"

    @staticmethod
    def forward(ctx, grad, steps, shape, order):
        ctx.steps = steps
        full, region = _filled_with_region(shape, order, grad._data.dtype, steps, 0)
        if repeats_memory(region):
            # An expand() among the steps: several elements of the view are one element of the
            # base, and their gradients add up (an assignment would keep only the last of them).
            # So replay the steps on each element's position in memory and add at those positions.
            memory = np.zeros(full.size, full.dtype)
            with no_grad():
                positions = replay(Tensor._wrap(_laid_out(np.arange(full.size), shape, order)), steps)._data
            np.add.at(memory, positions.reshape(-1), grad._data.reshape(-1))
            full = _laid_out(memory, shape, order)
        else:
            region[...] = grad._data
        return Tensor._wrap(full)

    @staticmethod
    def backward(ctx, grad):
        return replay(grad, ctx.steps, on_gradient=True), None, None, None


class CopySlices(Function):
    """The base's history after an in-place operation on one of its views (PyTorch's name).

    It owns the in-place op's node ``fn`` (the node of ``values``, what the op
    wrote into the view). Its edges are PyTorch's: the base's old history, then
    ``fn``'s other inputs (``others``); ``fn``'s edge to the view's old values
    is never followed. In backward ``fn`` runs on the view's region of the
    gradient: its gradient for the view (input ``view_input``) replaces that
    region of the base's gradient, its other gradients go to the other edges.
    """

    node_name = "torch::autograd::CopySlices"

    @staticmethod
    def forward(ctx, base, written, steps, view_input, *others):
        # PyTorch's CopySlices drops fn when released, so a second backward through it always
        # fails; holding ``values`` (fn's output) as a saved tensor does that here. (It comes in
        # a tuple: as an argument it would be an edge.)
        (values,) = written
        ctx.save_for_backward(values)
        ctx.fn, ctx.output_nr, ctx.view_input = values._grad_fn, values._output_nr, view_input
        ctx.steps, ctx.order = steps, _memory_order(base._data)
        return Tensor._wrap(base._data)  # the in-place op already wrote ``values`` into the base's memory

    @staticmethod
    def backward(ctx, grad):
        ctx.saved_tensors  # raises after a backward without retain_graph, as in PyTorch
        fn = ctx.fn
        grads = [None] * fn._num_outputs
        grads[ctx.output_nr] = replay(grad, ctx.steps, on_gradient=True)
        results = list(fn._run_backward(grads))
        of_view = results.pop(ctx.view_input)
        grad_base = None
        if of_view is None and not ctx.needs_input_grad[0]:
            return (None, None, None, None, *results)
        outside, region = _filled_with_region(grad.shape, ctx.order, bool, ctx.steps, True)
        if of_view is not None and repeats_memory(region):
            # PyTorch copies the view's gradient into that region of the base's: impossible for an expand()
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a single "
                "memory location. Please clone() the tensor before performing the operation."
            )
        if ctx.needs_input_grad[0]:
            region[...] = False
            grad_base = Where.apply(outside, grad, 0.0)  # exactly 0 in the view's region, even for inf
            if of_view is not None:
                grad_base = grad_base + AsStridedScatter.apply(of_view, ctx.steps, grad.shape, ctx.order)
        return (grad_base, None, None, None, *results)  # (the arguments that are not tensors get None)


class ToCopy(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, numpy_dtype):
        ctx.input_dtype = a._data.dtype
        return Tensor._wrap(copy_keeping_layout(a._data, numpy_dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.input_dtype), None


class Contiguous(Function):
    """``x.contiguous()`` of a tensor that is not: a row-major copy (PyTorch's node is a clone's)."""

    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(np.asarray(a._data, order="C"))

    @staticmethod
    def backward(ctx, grad):
        return grad


class Clone(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(copy_keeping_layout(a._data))

    @staticmethod
    def backward(ctx, grad):
        return grad


class CopyGrad(Clone):
    """The copy a leaf's ``.grad`` starts as under ``create_graph`` (PyTorch's node name)."""

    node_name = "torch::autograd::CopyBackwards"


class Fill(Function):
    """The out-of-place form of ``fill_(number)``: the old values get a zero gradient.

    Zeros, not None, as in PyTorch: the nodes below still run (and a freed one
    still raises), and a leaf's ``.grad`` becomes zeros rather than staying None.
    """

    node_name = "FillBackward2"

    @staticmethod
    def forward(ctx, a, value):
        return Tensor._wrap(np.full_like(a._data, value))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(np.zeros_like(grad._data)), None


class Zero(Fill):
    """``zero_``: PyTorch names its node apart from fill_'s."""

    node_name = "ZeroBackward0"


class FillTensor(Function):
    """``fill_(value)`` with a 0-d tensor: every element is that value, so its gradient is the sum."""

    node_name = "FillBackward3"

    @staticmethod
    def forward(ctx, a, value):
        return Tensor._wrap(np.full_like(a._data, value._data))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(np.zeros_like(grad._data)), grad.sum() if ctx.needs_input_grad[1] else None


# -- Tensor methods (ops/registry.py) ------------------------------------------------------------
@tensor_method(top_level=True, out=False)
def reshape(self, *shape) -> Tensor:
    return Reshape.apply(self, _sizes(shape))


@tensor_method()
def view(self, *shape) -> Tensor:
    return Reshape.apply(self, _sizes(shape), True)


@tensor_method()
def view_as(self, other: Tensor) -> Tensor:
    return self.view(_tensor_argument("view_as", "other", 1, other).shape)


@tensor_method(top_level=True, out=False)
def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    if self.ndim == 0:
        return self.reshape(1)
    start, end = wrap_dim(start_dim, self.ndim), wrap_dim(end_dim, self.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = self.shape
    merged = math.prod(shape[start:end + 1])  # not -1: ambiguous with 0 elements
    return self.reshape(shape[:start] + (merged,) + shape[end + 1:]) if start < end else self


@tensor_method(top_level=True, out=False)
def transpose(self, dim0: int, dim1: int) -> Tensor:
    return Transpose.apply(self, dim0, dim1)


@tensor_method(top_level=True, out=False)
def permute(self, *dims) -> Tensor:
    return Permute.apply(self, _sizes(dims))


@tensor_method("T")
@property
def T(self) -> Tensor:
    return self.permute(*reversed(range(self.ndim)))


@tensor_method("mT")
@property
def mT(self) -> Tensor:
    return self.transpose(-2, -1)


@tensor_method(top_level=True, out=False)
def squeeze(self, dim: int | tuple = NOT_GIVEN) -> Tensor:
    """Dimensions of size 1 removed: every one, or those of ``dim`` (an int or a tuple)."""
    if dim is None:
        raise TypeError("squeeze(): argument 'dim' must be int or tuple of ints, not NoneType: x.squeeze() "
                        "without a dim removes every dimension of size 1")
    dim = None if dim is NOT_GIVEN else dim
    return squeeze_node(dim).apply(self, dim)


@tensor_method(top_level=True, out=False)
def unsqueeze(self, dim: int) -> Tensor:
    return Unsqueeze.apply(self, dim)


@tensor_method()
def expand(self, *sizes) -> Tensor:
    return Expand.apply(self, _sizes(sizes))


@tensor_method()
def expand_as(self, other: Tensor) -> Tensor:
    return self.expand(_tensor_argument("expand_as", "other", 1, other).shape)


@tensor_method(top_level=True, out=False)
def broadcast_to(self, size) -> Tensor:
    return self.expand(size)


@tensor_method(top_level=True, out=False)
def select(self, dim: int, index: int) -> Tensor:
    return Select.apply(self, wrap_dim(dim, self.ndim), integer(index, "index"))


@tensor_method(top_level=True, out=False)
def narrow(self, dim: int, start: int | Tensor, length: int) -> Tensor:
    """``length`` entries of dimension ``dim`` from ``start`` on: a view, as ``x[:, start:start + length]`` for dim 1."""
    return Slice.apply(self, *_narrowed(self, dim, start, length))  # always a node, as PyTorch's


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


@tensor_method(top_level=True, out=False)
def clone(self) -> Tensor:
    return Clone.apply(self)


@tensor_method()
def contiguous(self) -> Tensor:
    """This tensor if it is contiguous, else a contiguous copy (recorded, as PyTorch's clone)."""
    return self if self._data.flags.c_contiguous else Contiguous.apply(self)


@tensor_method()
def __getitem__(self, key) -> Tensor:
    return index(self, key)


def _is_dtype(value) -> bool:
    """A minigrad dtype, a Python type PyTorch takes as one (float, int, bool), or a NumPy dtype."""
    return (isinstance(value, (dtypes.dtype, np.dtype)) or value is float or value is int or value is bool
            or isinstance(value, type) and issubclass(value, np.generic))


@tensor_method()
def to(self, *args, dtype=None, device=None, non_blocking: bool = False, copy: bool = False) -> Tensor:
    """This tensor in another dtype, as a copy that gradients flow through (cast back to this dtype).

    As in PyTorch, the first argument picks the overload: ``to(device, dtype=None)`` (a str, a
    ``minigrad.device``, None, or an int, which names an accelerator), ``to(dtype)``, or ``to(other)``
    (other's dtype; a Python float or bool stands for a 0-d tensor of it, float64 or bool), each
    followed by ``non_blocking`` and ``copy``; or keywords. The device can only be the CPU (see
    ``minigrad.device``). Returns ``self`` when nothing changes, unless ``copy=True``.
    """
    flags = list(args[1:])
    if args:
        first = args[0]
        if first is None or isinstance(first, (str, _device_type, int, np.integer)) and not isinstance(first, bool):
            device = int(first) if isinstance(first, np.integer) else first
            if flags:
                dtype = flags.pop(0)
                if dtype is not None and not _is_dtype(dtype):
                    raise TypeError(f"to(): after the device comes the dtype, not {type_name(dtype)}: "
                                    f"x.to('cpu', minigrad.float64, non_blocking, copy)")
        elif _is_dtype(first):
            dtype = first
        elif isinstance(first, Tensor):
            dtype = first.dtype
        elif isinstance(first, (float, np.floating, bool)):
            dtype = dtypes.bool_ if isinstance(first, bool) else dtypes.float64
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got ({type_name(first)}): "
                            "pass a dtype (minigrad.float64), a device ('cpu') or a tensor whose dtype to take")
    if len(flags) > 2:
        raise TypeError(f"to() received {len(args)} positional arguments: after the dtype, the device and dtype, "
                        "or the tensor come only non_blocking and copy")
    non_blocking, copy = flags + [non_blocking, copy][len(flags):]
    flag(non_blocking, "non_blocking")
    flag(copy, "copy")
    if dtype is not None and not _is_dtype(dtype):
        raise TypeError(f"to(): argument 'dtype' must be minigrad.dtype, not {type_name(dtype)}")
    _resolve_device(device)
    target = self._data.dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
    if target == self._data.dtype and not copy:
        return self
    return ToCopy.apply(self, target)


@tensor_method(top_level=True)
def fill_(self, value) -> Tensor:
    if isinstance(value, Tensor):  # differentiable in the value (FillBackward3)
        if value.ndim:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return self._inplace(FillTensor, value)
    return self._inplace(Fill, number(value, "value"))


@tensor_method(top_level=True)
def zero_(self) -> Tensor:
    return self._inplace(Zero, 0)


@tensor_method()
def copy_(self, src: Tensor) -> Tensor:
    src = _argument("copy_", src)  # a number too, as in PyTorch: every element becomes it
    return self._inplace(Copy, (Ellipsis,), src if isinstance(src, Tensor) else Tensor._wrap(np.asarray(src)))


@tensor_method()
def _copy_grad(self, retained: bool = False) -> Tensor:
    """A copy of this gradient, about to be stored in ``.grad``: never the incoming object.

    Under ``create_graph`` the copy is recorded (PyTorch names that node
    ``CopyBackwards`` for a leaf's ``.grad``, ``CloneBackward0`` for a retained one).
    """
    if is_grad_enabled() and self._requires_grad:
        return (Clone if retained else CopyGrad).apply(self)
    return Tensor._wrap(self._data.copy())
