"""Operations that change a tensor's shape without computing new values: reshape/view, permute,
transpose, squeeze/unsqueeze, expand, and cat and stack.

Their gradients move the incoming gradient back: a reshape is undone by a
reshape, a transpose by the inverse transpose, an index by adding into zeros
at the same index (``IndexAdd``). Results that share memory with their input
(NumPy views) are minigrad *views*: they share the input's version counter, so
an in-place change through either is seen by the checks on saved tensors, and
each records the step that made it (``view_of(..., step)``), so the view can be
taken again from its base when an in-place operation changes the base's
history (``CopySlices``, ``Tensor._regenerate_view``).

Indexing (``x[key]``, ``x[key] = v``) is in ``subscript.py``, the copies (``clone``, ``to``, ``copy_``,
``fill_``) in ``copies.py``, and how a view is taken again from its base (``CopySlices``) in
``view_replay.py``.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.core.grad_mode import _GradMode
from minigrad.ops.broadcast import NOT_GIVEN, normalize_dims, sum_to, wrap_dim
from minigrad.ops.layout import strided_view
from minigrad._tensor import Tensor, _ViewMeta, _sizes, _tensor_argument
from minigrad.ops.registry import tensor_method


def view_of(base: Tensor, array: np.ndarray, step: tuple | None = None, shares: bool = False) -> Tensor:
    """Wrap ``array``, which shares memory with ``base``, as a view of it.

    ``step = (ViewFunction, args)`` says how to take this view again:
    ``ViewFunction.apply(base, *args)``. Without it, the view cannot be modified
    in place inside a graph, nor used after its base's history changed.
    ``shares``: the caller knows ``array`` is a view of ``base``'s memory (no check).
    """
    out = Tensor._wrap(array)
    # may_share_memory checks bounds only (exact overlap can cost far more than the op); an
    # empty result shares no memory but is still a view (a view op made it; PyTorch's empty
    # reshape is always a view too).
    if shares or array.size == 0 or np.may_share_memory(array, base._data):
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


@tensor_method(top_level=True, out=False)
def permute(self, *dims) -> Tensor:
    return Permute.apply(self, _sizes(dims))


class Transpose(Function):
    node_name = "TransposeBackward0"

    @staticmethod
    def forward(ctx, a, dim0, dim1):
        ctx.dims = wrap_dim(dim0, a.ndim), wrap_dim(dim1, a.ndim)
        return view_of(a, np.swapaxes(a._data, *ctx.dims) if a.ndim else a._data[...], (Transpose, ctx.dims))

    @staticmethod
    def backward(ctx, grad):
        return grad.transpose(*ctx.dims), None, None


@tensor_method(top_level=True, out=False)
def transpose(self, dim0: int, dim1: int) -> Tensor:
    return Transpose.apply(self, dim0, dim1)


@tensor_method("T")
@property
def T(self) -> Tensor:
    return self.permute(*reversed(range(self.ndim)))


@tensor_method("mT")
@property
def mT(self) -> Tensor:
    return self.transpose(-2, -1)


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


@tensor_method(top_level=True, out=False)
def squeeze(self, dim: int | tuple = NOT_GIVEN) -> Tensor:
    """Dimensions of size 1 removed: every one, or those of ``dim`` (an int or a tuple)."""
    if dim is None:
        raise TypeError("squeeze(): argument 'dim' must be int or tuple of ints, not NoneType: x.squeeze() "
                        "without a dim removes every dimension of size 1")
    dim = None if dim is NOT_GIVEN else dim
    return squeeze_node(dim).apply(self, dim)


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


@tensor_method(top_level=True, out=False)
def unsqueeze(self, dim: int) -> Tensor:
    return Unsqueeze.apply(self, dim)


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
        shape = tuple(a.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes)) if (
            -1 in sizes) else tuple(sizes)
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


def expanded(grad: Tensor, shape: tuple) -> Tensor:
    """``grad.expand(shape)`` in a backward, whose shapes fit by construction: when nothing records it
    (no ``create_graph``), the very view ``Expand`` makes, without the trip through ``apply`` or
    ``view_of``'s memory check (a strided view of the gradient shares its memory)."""
    if _GradMode.enabled:
        return Expand.apply(grad, shape)
    data = grad._data
    strides = _expand_strides(data, shape) if data.ndim else (0,) * len(shape)  # (a 0-d gradient: every stride 0)
    out = view_of(grad, strided_view(data, shape, strides), (Expand, (shape,)), shares=True)
    out._view_meta.no_grad = True  # (as _apply_unrecorded marks a view made in no_grad mode)
    return out


@tensor_method()
def expand(self, *sizes) -> Tensor:
    return Expand.apply(self, _sizes(sizes))


@tensor_method()
def expand_as(self, other: Tensor) -> Tensor:
    return self.expand(_tensor_argument("expand_as", "other", 1, other).shape)


@tensor_method(top_level=True, out=False)
def broadcast_to(self, size) -> Tensor:
    return self.expand(size)


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
