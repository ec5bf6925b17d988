"""Operations that move values around without computing new ones.

Their gradients move the incoming gradient back: a reshape is undone by a
reshape, a transpose by the inverse transpose, an index by adding into zeros
at the same index (``IndexAdd``). Results that share memory with their input
(NumPy views) are minigrad *views*: they share the input's version counter, so
an in-place change through either is seen by the checks on saved tensors.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import normalize_dims, sum_to, wrap_dim
from minigrad.tensor import Tensor


def view_of(base: Tensor, array: np.ndarray) -> Tensor:
    """Wrap ``array``, which shares memory with ``base``, as a view of it."""
    out = Tensor._wrap(array)
    if np.may_share_memory(array, base._data):  # bounds only: exact overlap can cost far more than the op
        out._version_counter = base._version_counter
        out._base = base if base._base is None else base._base
        out._base_grad_fn = out._base.grad_fn
    return out


def infer_shape(shape: tuple, numel: int) -> tuple:
    """Replace a single -1 in ``shape`` and check the element count."""
    shape = tuple(int(n) for n in shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
    if -1 in shape:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = tuple(numel // known if n == -1 else n for n in shape)
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


class Reshape(Function):
    """``reshape`` (copies if it must) and ``view`` (never copies)."""

    node_name = "ViewBackward0"

    @staticmethod
    def forward(ctx, a, shape, must_view=False):
        ctx.input_shape = a.shape
        shape = infer_shape(shape, a.numel())
        if must_view:
            # reshape(copy=False) needs NumPy 2.1; a result that does not share the input's
            # memory is a copy, which view() must refuse, on every supported NumPy.
            out = a._data.reshape(shape)
            if out.size == 0 or np.may_share_memory(out, a._data):
                return view_of(a, out)
            raise RuntimeError(
                "view size is not compatible with input tensor's size and stride (at least one "
                "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
            )
        return view_of(a, a._data.reshape(shape))

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
        return view_of(a, a._data.transpose(dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.permute(*ctx.inverse), None


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim)
        return view_of(a, np.swapaxes(a._data, *ctx.dims)) if a.ndim else view_of(a, a._data)

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


class Squeeze(Function):
    node_name = "SqueezeBackward1"

    @staticmethod
    def forward(ctx, a, dim=None):
        ctx.input_shape = a.shape
        dims = normalize_dims(dim, a.ndim)
        dims = tuple(d for d in dims if a.shape[d] == 1)  # PyTorch ignores dims that aren't 1
        return view_of(a, a._data.squeeze(axis=dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.reshape(ctx.input_shape), None


class Unsqueeze(Function):
    node_name = "UnsqueezeBackward0"

    @staticmethod
    def forward(ctx, a, dim):
        ctx.dim = wrap_dim(dim, a.ndim + 1)
        return view_of(a, np.expand_dims(a._data, ctx.dim))

    @staticmethod
    def backward(ctx, grad):
        return grad.squeeze(ctx.dim), None


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
        return view_of(a, np.broadcast_to(a._data, shape))

    @staticmethod
    def backward(ctx, grad):
        return sum_to(grad, ctx.input_shape), None


class Cat(Function):
    node_name = "CatBackward0"

    @staticmethod
    def forward(ctx, dim, *tensors):
        if not tensors:
            raise ValueError("torch.cat(): expected a non-empty list of Tensors")
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
        return Tensor._wrap(out.astype(_promote_all(tensors), copy=False))

    @staticmethod
    def backward(ctx, grad):
        grads, start = [], 0
        for size in ctx.sizes:
            index = (slice(None),) * ctx.dim + (slice(start, start + size),)
            grads.append(grad[index])
            start += size
        return (None, *grads)


def _promote_all(tensors) -> np.dtype:
    """The dtype PyTorch gives a result made of all ``tensors``."""
    dtype = tensors[0]._data.dtype
    for t in tensors[1:]:
        dtype = dtypes.result_type(np.empty(0, dtype), t._data)
    return dtype


class Stack(Function):
    node_name = "StackBackward0"

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
        return Tensor._wrap(out.astype(_promote_all(tensors), copy=False))

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
        elif isinstance(k, list):
            k = np.asarray(k)
            if k.size == 0:
                k = k.astype(np.int64)  # [] is an empty integer index (NumPy makes it float64)
        elif isinstance(k, slice) and k.step is not None and k.step <= 0:
            # NumPy reverses with step -1; PyTorch refuses, and so do we (the same code must run on both).
            raise ValueError("step must be greater than zero: to reverse a tensor, use .flip(dim)")
        out.append(k)
    return tuple(out)


def _is_basic(key: tuple) -> bool:
    """Basic indexing (ints, slices, None, ...) gives a view; arrays give a copy."""
    return all(k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) for k in key)


class Index(Function):
    node_name = "IndexBackward0"

    @staticmethod
    def forward(ctx, a, key):
        ctx.key, ctx.input_shape = key, a.shape
        out = a._data[key]
        return view_of(a, out) if _is_basic(key) else Tensor._wrap(np.asarray(out))

    @staticmethod
    def backward(ctx, grad):
        return IndexAdd.apply(grad, ctx.key, ctx.input_shape), None


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
        np.add.at(out, key, values._data)
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        return grad[ctx.key], None, None


class IndexPut(Function):
    """``a[key] = value`` computed out of place: the in-place form writes it back."""

    node_name = "IndexPutBackward0"

    @staticmethod
    def forward(ctx, a, key, value):
        ctx.key = key
        ctx.value_shape = value.shape if isinstance(value, Tensor) else ()
        out = a._data.copy()
        out[key] = value._data if isinstance(value, Tensor) else value
        return Tensor._wrap(out)

    @staticmethod
    def backward(ctx, grad):
        need_a, _, need_value = ctx.needs_input_grad
        grad_a = grad_value = None
        if need_a:
            keep = np.ones(grad.shape, dtype=grad._data.dtype)
            keep[ctx.key] = 0  # overwritten elements don't reach the output
            grad_a = grad * Tensor._wrap(keep)
        if need_value:
            grad_value = sum_to(grad[ctx.key], ctx.value_shape)
        return grad_a, None, grad_value


class ToCopy(Function):
    node_name = "ToCopyBackward0"

    @staticmethod
    def forward(ctx, a, numpy_dtype):
        ctx.input_dtype = a._data.dtype
        return Tensor._wrap(a._data.astype(numpy_dtype))

    @staticmethod
    def backward(ctx, grad):
        return grad.to(ctx.input_dtype), None


class Clone(Function):
    node_name = "CloneBackward0"

    @staticmethod
    def forward(ctx, a):
        return Tensor._wrap(a._data.copy())

    @staticmethod
    def backward(ctx, grad):
        return grad


class CopyGrad(Clone):
    """The copy a leaf's ``.grad`` starts as under ``create_graph`` (PyTorch's node name)."""

    node_name = "torch::autograd::CopyBackwards"


class Fill(Function):
    """The out-of-place form of ``fill_`` / ``zero_``: the old values get a zero gradient.

    Zeros, not None, as in PyTorch: the nodes below still run (and a freed one
    still raises), and a leaf's ``.grad`` becomes zeros rather than staying None.
    """

    node_name = "FillBackward0"

    @staticmethod
    def forward(ctx, a, value):
        return Tensor._wrap(np.full_like(a._data, value))

    @staticmethod
    def backward(ctx, grad):
        return Tensor._wrap(np.zeros_like(grad._data)), None
