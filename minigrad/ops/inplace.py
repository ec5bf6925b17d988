"""In-place operations: how ``x.add_(y)``, ``x[i] = v`` and ``x.zero_()`` write into a tensor.

An in-place op runs its out-of-place ``Function`` on a snapshot of the old values
(so what that op saves for backward cannot change under it), writes the result
into the tensor's memory, bumps the version counter that saved tensors check, and
moves the tensor's history to the op's node. The common arithmetic (``add_``,
``sub_``, ``mul_``, ``div_``, ``+=`` ...) of a float tensor with a tensor of its
dtype or a Python number needs neither the snapshot nor a result: NumPy writes
straight into the tensor's memory (``_writing_into_self``), so ``t += g`` needs
no second buffer. On a view the new history goes to
the base, as PyTorch's ``CopySlices``, and every other view of that base is taken
again from it when next used (``_regenerate_view``). Writes that PyTorch refuses
(a leaf that requires grad, an ``expand()``, an input overlapping the output) are
refused here with its messages.
"""
from __future__ import annotations

import warnings

import numpy as np

from minigrad import dtypes
from minigrad.autograd.grad_mode import _GradMode, enable_grad, is_grad_enabled
from minigrad.ops import elementwise as _elementwise
from minigrad.ops import copies as _copies, subscript as _subscript, view_replay as _view_replay
from minigrad.ops.layout import repeats_memory
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _operand

# The in-place ops that write a number into every element: they may write into an expand(), as in PyTorch.
_FILLS_WITH_A_NUMBER = (_copies.Fill, _copies.Zero)


def _refuse_inference_update(self) -> None:
    """PyTorch's refusal to change an inference tensor (made in inference_mode) outside that mode."""
    if self._version_counter.inference and not _GradMode.inference:
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed.You can make a "
                           "clone to get a normal tensor before doing inplace update.")


@tensor_method()
def _inplace(self, op: type, *args) -> "Tensor":
    """Compute ``op(self, *args)`` out of place, write it into self, move self's history.

    The out-of-place op works on a snapshot of the old values carrying self's
    old history, so what it saved for backward can't be changed under it.
    On a view, the new history goes to the base (``_rebase_view``).
    """
    _refuse_inference_update(self)
    base = self._base
    recording = is_grad_enabled() and (
        self._requires_grad or (base is not None and base._requires_grad)
        or any(isinstance(a, Tensor) and a._requires_grad for a in args)
    )
    if recording:
        if base is not None:
            self._check_inplace_on_view()
            self._sync_view()  # a view whose base changed since: its history first
        elif self._requires_grad and self._grad_fn is None:
            raise RuntimeError(
                "a leaf Tensor that requires grad is being used in an in-place operation. "
                "Update parameters inside `with minigrad.no_grad():`, or use an out-of-place op."
            )
        into_self = _writing_into_self(self, op, args, recording)
        # (writing into self, the op saves nothing of self's old values: they need no snapshot)
        old = Tensor._wrap(self._data if into_self else self._data.copy())
        # A view's old values get a node of their own on the base (what the op saved of them, and
        # so a create_graph backward, needs their history); CopySlices runs the op's node and never
        # follows its edge to them, so backward never reaches the view's old node nor its hooks.
        source = (self if base is None or self._grad_fn is None
                  else _view_replay.AsStrided.apply(base, self._view_meta.steps))
        old._requires_grad, old._grad_fn, old._output_nr = source._requires_grad, source._grad_fn, source._output_nr
        result = (into_self or op).apply(old, *args)
    else:
        result = (_writing_into_self(self, op, args, recording) or op).apply(self, *args)
    if result.shape != self.shape:
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape {list(result.shape)}"
        )
    if not np.can_cast(result._data.dtype, self._data.dtype, "same_kind"):
        raise RuntimeError(
            f"result type {result.dtype} can't be cast to the desired output type {self.dtype}"
        )
    # PyTorch's overlap rules: a tensor whose elements repeat in memory (an expand()) may be
    # filled with a number (every alias gets it, recorded or not), and, when the write is not
    # recorded, advanced setitem on it only warns; other writes into it are refused. fill_ reads its 0-d value
    # first, so that value may alias self. A copy_ from exactly self's memory (same place, sizes,
    # strides, dtype) changes nothing: PyTorch returns before any check.
    written = (Ellipsis,)
    same_window = op is _copies.Copy and _same_window(self._data, args[1]._data)
    if (not same_window and 0 in self._data.strides and op not in _FILLS_WITH_A_NUMBER
            and repeats_memory(self._data)):
        if recording or op is not _subscript.IndexPut:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a "
                "single memory location. Please clone() the tensor before performing the operation."
            )
        warnings.warn(
            "Use of index_put_ on expanded tensors is deprecated. Please clone() the tensor before "
            "performing this operation. This also applies to advanced indexing e.g. tensor[indices] = tensor",
            UserWarning, stacklevel=3,
        )
        written = args[0]  # only the indexed elements: writing the others back would undo them
    masked_fill = op is _subscript.IndexPut and isinstance(args[1], Tensor) and _is_masked_fill(*args)
    if op is not _copies.FillTensor and not masked_fill and not same_window:  # (they read self's values first)
        region = _basic_part(self._data, args[0]) if op is _subscript.IndexPut else self._data
        for a in args:
            if isinstance(a, Tensor) and _overlaps(region, a._data, a is self,
                                                   exact_is_fine=op is not _subscript.IndexPut):
                raise RuntimeError(
                    "unsupported operation: some elements of the input tensor and the written-to tensor "
                    "refer to a single memory location. Please clone() the tensor before performing the operation."
                )
    if recording and base is not None:  # before the write: the op's other inputs are read as they were
        # the op's other inputs with an edge (a number too: PyTorch wraps it in a tensor)
        others = [a for a, meta in zip(args, result._grad_fn._input_meta[1:]) if meta is not None]
        new_base = self._copy_slices(result, 0, others)
    if result._data is not self._data:  # (else the op wrote into self's memory itself)
        self._data[written] = result._data[written]
    self._version_counter.value += 1
    if recording:
        # An op that saved its output (exp, sigmoid, sqrt, ...) saved `result`, whose values now
        # live in self: tie what it saved to self's version, so changing self again before
        # backward is caught, as in PyTorch.
        for saved in result._grad_fn._saved or ():
            if saved is not None and saved.version_counter is result._version_counter:
                saved.version_counter, saved.saved_version = self._version_counter, self._version_counter.value
        if base is not None:
            self._rebase_view(new_base)
        else:
            self._set_history(result._grad_fn, result._output_nr)
    return self


def _into_self(op: type, ufunc, setup) -> type:
    """``op`` with a forward that writes its result into its first operand's memory and sets up
    ctx as ``op.forward`` does (``setup``): same node name, same backward."""
    def forward(ctx, a, b):
        setup(ctx, a, b)
        out = a._data
        if ufunc is np.true_divide:  # (as Div.forward: x / 0 is inf or nan without a warning)
            with np.errstate(divide="ignore", invalid="ignore"):
                ufunc(out, b._data if isinstance(b, Tensor) else b, out=out)
        else:
            ufunc(out, b._data if isinstance(b, Tensor) else b, out=out)
        return Tensor._wrap(out)

    return type(op.__name__ + "IntoSelf", (op,), {
        "__module__": __name__, "__qualname__": op.__name__ + "IntoSelf", "__doc__": _into_self.__doc__,
        "node_name": op.node_name, "forward": staticmethod(forward)})


def _shapes(ctx, a, b) -> None:
    ctx.shapes = _elementwise._shape(a), _elementwise._shape(b)


# The arithmetic that writes into self; what each forward keeps is the out-of-place op's
# (mul and div keep self's old values only when other needs a gradient: then they are not written here).
_INTO_SELF = {
    _elementwise.Add: _into_self(_elementwise.Add, np.add, _shapes),
    _elementwise.Sub: _into_self(_elementwise.Sub, np.subtract, _shapes),
    _elementwise.Mul: _into_self(_elementwise.Mul, np.multiply, lambda ctx, a, b: _elementwise._save_operands(
        ctx, a, b, ctx.needs_input_grad[1], ctx.needs_input_grad[0])),
    _elementwise.Div: _into_self(_elementwise.Div, np.true_divide, lambda ctx, a, b: _elementwise._save_operands(
        ctx, a, b, ctx.needs_input_grad[1], True)),
}
_INTO_SELF_OPS = frozenset(_INTO_SELF)


def _writing_into_self(self, op: type, args: tuple, recording: bool) -> type | None:
    """The version of ``op`` that writes into self's memory, when it gives exactly what computing
    out of place and copying gives (else None, and ``_inplace`` takes the long way, which also
    raises every error): a float self, writable, with no repeated memory (an expand()); other a
    Python number, or a tensor of self's dtype that broadcasts to self's shape and shares no memory
    with it; and, while recording, mul and div only when other needs no gradient (its gradient
    needs self's old values, which PyTorch keeps a copy of too)."""
    if op not in _INTO_SELF_OPS or len(args) != 1:
        return None
    data, other = self._data, args[0]
    if data.dtype.kind != "f" or not data.flags.writeable or (0 in data.strides and repeats_memory(data)):
        return None
    if isinstance(other, Tensor):
        b = other._data
        if b.dtype != data.dtype or other is self or np.may_share_memory(data, b):
            return None
        if b.shape != data.shape:
            if b.ndim > data.ndim or any(m != 1 and m != n for m, n in zip(b.shape[::-1], data.shape[::-1])):
                return None
        if recording and op in (_elementwise.Mul, _elementwise.Div) and (
                other._requires_grad or other._base is not None and other._base._requires_grad):
            return None
    elif type(other) is not float and not (type(other) is int and -2 ** 53 <= other <= 2 ** 53):
        return None
    return _INTO_SELF[op]


@tensor_method()
def __setitem__(self, key, value) -> None:
    """``self[key] = value``, as PyTorch does it.

    For basic keys, into the view ``self[key]`` (or into self, when the key
    keeps every dimension whole), PyTorch's ``copy_to``: a value of the
    target's shape is copied, a number or another 0-d tensor fills it, any
    other value is viewed without its leading 1s and expanded to the target's
    shape, then copied (so ``x[None] = x`` copies x onto itself, which is
    allowed). Other keys are an ``index_put_``, which refuses a value of
    another dtype.
    """
    index = _subscript.normalize_index(key)
    value = _operand(value)
    if _subscript.is_basic(index):
        target = _subscript.index(self, key, for_write=True)
        if not isinstance(value, Tensor):
            value = Tensor._wrap(np.asarray(value, dtype=self._data.dtype))
        if value.shape == target.shape:
            target.copy_(value)
        elif value.ndim == 0:
            target.fill_(value)
        else:
            ones = next((i for i, n in enumerate(value.shape) if n != 1), value.ndim)
            target.copy_(value.reshape(value.shape[ones:]).expand(target.shape))
    else:
        # PyTorch's order: the basic entries select a view first (a CopySlices target, unless
        # it is self), then index_put_ writes the index arrays' part of it
        target, index = _subscript.sliced(self, index)
        if isinstance(value, Tensor) and value._data.dtype != self._data.dtype and _same_dtype_needed(index, value):
            raise RuntimeError(
                "Index put requires the source and destination dtypes match, got "
                f"{dtypes.scalar_type_name(self._data.dtype)} for the destination and "
                f"{dtypes.scalar_type_name(value._data.dtype)} for the source."
                f" Convert the value first: value.to({self.dtype})."
            )
        if isinstance(value, Tensor) and value.ndim and value.shape[0] == 1:
            # PyTorch views the value without its leading 1s first: then it is another tensor
            # (an empty one overlaps nothing), where the same tensor is always a full overlap.
            ones = next((i for i, n in enumerate(value.shape) if n != 1), value.ndim)
            value = value.reshape(value.shape[ones:])
        target._inplace(_subscript.IndexPut, index, value)


@tensor_method()
def _regenerate_view(self) -> None:
    """Re-take this view from its base, whose history changed since (an in-place op on the
    base or on another view of it). As in PyTorch, the view's new grad_fn is one
    ``AsStridedBackward0`` node on the base's current history."""
    meta, base = self._view_meta, self._base
    if meta.custom is not None:  # (a custom Function's view, made in no_grad mode or not)
        raise RuntimeError(meta.reason(indirect=True))
    if meta.no_grad:  # (PyTorch's text says "with grad mode enabled" even when it was not)
        raise RuntimeError(
            "A view was created in no_grad mode and its base or another view of its base has been "
            "modified inplace with grad mode enabled. Given that this use case is ambiguous and "
            "error-prone, it is forbidden. You can clarify your code by moving both the view and the "
            "inplace either both inside the no_grad block (if you don't want the inplace to be tracked) "
            "or both outside (if you want the inplace to be tracked)."
        )
    if meta.steps is None:
        raise RuntimeError(meta.reason(indirect=True))
    with enable_grad():
        view = _view_replay.AsStrided.apply(base, meta.steps)
    meta.version = self._version_counter.value  # (first: _set_history's retain_grad looks at the view again)
    self._set_history(view._grad_fn, view._output_nr)


@tensor_method()
def _copy_slices(self, values: "Tensor", view_input: int, others: list) -> "Tensor":
    """The base with this view's region replaced by ``values``, which an in-place op on this
    view wrote (PyTorch's CopySlices): the op's node has an edge for the view (its edge number
    ``view_input``) and one for each of ``others``, and CopySlices takes those. A number's or an
    integer tensor's edge goes nowhere: a float stand-in that needs no gradient gets the same."""
    others = [a if isinstance(a, Tensor) and a._data.dtype.kind == "f" else Tensor._wrap(np.zeros(()))
              for a in others]
    return _view_replay.CopySlices.apply(self._base, (values,), self._view_meta.steps, view_input, *others)


@tensor_method()
def _rebase_view(self, new_base: "Tensor") -> None:
    """After an in-place op wrote into this view: the base's new history is ``new_base``'s
    (``_copy_slices``), and the view is taken again from it."""
    self._base._set_history(new_base._grad_fn, new_base._output_nr)
    self._regenerate_view()


def _same_window(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a`` and ``b`` are the same elements of the same memory, in the same order and dtype."""
    return (a.shape == b.shape and a.strides == b.strides and a.dtype == b.dtype
            and a.__array_interface__["data"][0] == b.__array_interface__["data"][0])


def _basic_part(data: np.ndarray, index: tuple) -> np.ndarray:
    """What the basic entries of an advanced ``index`` select in ``data`` (the dimensions that index
    arrays index kept whole): PyTorch's setitem takes that view first and ``index_put_``s into it,
    so that view, not the whole tensor, is what the value must not overlap."""
    key = []
    for k in index:
        if isinstance(k, np.ndarray):
            key.extend([slice(None)] * (k.ndim if k.dtype == np.bool_ else 1))
        else:
            key.append(None if isinstance(k, (bool, np.bool_)) else k)
    part = data[tuple(key)]
    # whole slices select nothing: then, as in PyTorch, the part is the tensor itself (a full overlap)
    return data if _same_window(part, data) else part


def _overlaps(written: np.ndarray, read: np.ndarray, same_tensor: bool, exact_is_fine: bool) -> bool:
    """PyTorch's overlap check for an in-place write (``get_overlap_status``).

    Only dense operands are compared (PyTorch gives up on the others, and so
    do we); they overlap when their byte ranges meet. Exactly the same
    elements with the same strides (``x.add_(x)``, ``x[:] = x``) is fine for
    most ops, not for advanced setitem (``exact_is_fine=False``). Strides of
    size-1 dimensions count too, as in PyTorch: the view ops that make them
    follow PyTorch's conventions (``np.expand_dims``, ``shape._expand_strides``).
    """
    if same_tensor:  # a full overlap, even with no elements (another tensor on the same memory, such as
        return not exact_is_fine  # its detach(), overlaps only where there are elements, as in PyTorch)
    if not written.size or not read.size or not np.may_share_memory(written, read):
        return False
    if not (_dense(written) and _dense(read)):
        return False
    exact = (
        written.__array_interface__["data"][0] == read.__array_interface__["data"][0]
        and written.shape == read.shape
        and written.strides == read.strides
    )
    return not (exact and exact_is_fine)


def _same_dtype_needed(index: tuple, value: Tensor) -> bool:
    """Whether PyTorch's setitem with this key is an ``index_put_``, which wants the value in the
    target's dtype: a key with an index tensor or list, except a lone bool mask with a one-element
    value (that is ``masked_fill_``, which casts the value, as basic keys do)."""
    return any(isinstance(k, np.ndarray) for k in index) and not _is_masked_fill(index, value)


def _is_masked_fill(index: tuple, value: Tensor) -> bool:
    """A lone bool mask and a one-element value: PyTorch's setitem is then ``masked_fill_``."""
    return len(index) == 1 and isinstance(index[0], np.ndarray) and index[0].dtype == np.bool_ and value._data.size == 1


def _dense(a: np.ndarray) -> bool:
    """Whether the elements of ``a`` fill a block of memory without gaps or repeats, in some order."""
    dims = sorted((st, n) for n, st in zip(a.shape, a.strides) if n != 1)
    expected = a.itemsize
    for st, n in dims:
        if st != expected:
            return False
        expected *= n
    return True
