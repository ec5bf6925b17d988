"""PyTorch's rules for the unusual calls of a Function: a first reading of the core skips this file.

``function.py`` records the common call in a few lines: tensors in, new float
tensors out. This file holds what PyTorch does in every other case, which
custom Functions meet and learners' tests check: keyword arguments, an input
returned as it is or changed in place (``mark_dirty``), outputs that get no
gradient, a gradient of the wrong kind or shape from a user's backward.
"""
from __future__ import annotations

import inspect
import warnings
from typing import NoReturn

from minigrad.core import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.core.broadcast import is_expandable_to, sum_to
from minigrad.core.extension import Extensions


class CheckedSavedTensor(_graph.SavedTensor):
    """``graph.SavedTensor`` with two of PyTorch's refusals: an inference tensor (made in inference_mode)
    is never saved, and an input saved with a history that ``detach_()`` then cut is not handed out."""

    __slots__ = ("had_history",)

    def __init__(self, tensor, output_nr: int | None) -> None:  # (SavedTensor.__init__'s lines, inlined: one per saved tensor)
        counter = tensor._counter or tensor._version_counter  # (the property makes one the first time)
        if counter.inference:
            raise RuntimeError("Inference tensors cannot be saved for backward. To work around you can make a "
                               "clone to get a normal tensor and use it in autograd.")
        self.output_nr, self.version_counter, self.saved_version, self.unpack_hook = output_nr, counter, counter.value, None
        self.had_history = output_nr is None and tensor._grad_fn is not None
        if Extensions.saved_tensor_hooks:  # the innermost saved_tensors_hooks block keeps what it packs
            Extensions.saved_tensor_hooks[-1].pack(self, tensor)
        elif output_nr is None:
            self.tensor = tensor
        else:
            self.tensor, self.data, self.requires_grad = None, tensor._data, tensor.requires_grad

    def unpack(self, node):
        if self.unpack_hook is None and self.tensor is not None and not self.had_history and (
                self.version_counter.value == self.saved_version):
            return self.tensor  # (the common case, SavedTensor.unpack's first lines, without the call)
        if self.had_history and self.unpack_hook is None and self.tensor._grad_fn is None and self.tensor._base is None:
            raise RuntimeError("Trying to use a saved tensor that has been detached in-place, i.e. with .detach_()."
                               "This is not supported anymore. If you need to use the tensor, use .detach() (out of "
                               "place) instead.")
        return super().unpack(node)


def _has_defaults(forward) -> bool:
    return any(p.default is not p.empty for p in inspect.signature(forward).parameters.values())


def _bind_keywords(cls: type, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments of ``apply`` as the positional arguments of ``forward`` they name (PyTorch 2);
    with ``setup_context``, forward's defaults too (PyTorch binds them, so setup_context sees them)."""
    if cls._binds_defaults:
        bound = inspect.signature(cls.forward).bind(*args, **kwargs)
        bound.apply_defaults()
        return bound.args
    params = list(inspect.signature(cls.forward).parameters.values())
    if cls._forward_takes_ctx:
        params = params[1:]  # ctx
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    args = list(args)
    for name in positional[len(args):]:
        if not kwargs:
            break
        if name not in kwargs:
            raise TypeError(f"{cls.__name__}.apply() missing argument '{name}': pass it before the keyword arguments that follow it")
        args.append(kwargs.pop(name))
    if kwargs:
        raise TypeError(f"forward() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return tuple(args)


def raise_bad_gradient(self, i: int, g) -> NoReturn:
    """A user's backward returned something that is not a gradient for input ``i``."""
    if self._input_meta[i] is None:
        raise RuntimeError(
            f"function {self.name()} returned a gradient different than None at position {i + 1}, "
            "but the corresponding forward input was not a Tensor: return None for it"
        )
    hint = " (wrap NumPy results with minigrad.tensor(...))" if hasattr(g, "__array__") else ""
    raise RuntimeError(f"function {self.name()} returned {type(g).__name__} at position {i + 1}: expected Tensor or None{hint}")



def sum_to_input(self, i: int, g, shape: tuple):
    """A gradient of the broadcast shape is summed back, as PyTorch does; any other shape is an error."""
    if not is_expandable_to(shape, g._data.shape):
        raise RuntimeError(
            f"Function {self.name()} returned an invalid gradient at index {i} - got "
            f"{list(g.shape)} but expected shape compatible with {list(shape)}"
        )
    return sum_to(g, shape)




def connect_output(self, i: int, out, inputs: tuple, nr: int):
    """Output ``i`` of this call, wired to this node as gradient slot ``nr`` if it gets a gradient."""
    custom, dirty = self._custom, _index_of(out, self._dirty) is not None
    is_input = _index_of(out, inputs) is not None
    differentiable = out._data.dtype.kind == "f" and _index_of(out, self._non_differentiable) is None
    if custom and not differentiable:
        out = _without_gradient(out, is_input, dirty)
    elif is_input and not dirty:
        out = _alias(out)  # an input returned as-is: a new tensor, so this node's backward runs
    if out._view_meta is not None and not dirty:
        Extensions.views.connect_output(self, i, out)
        if custom and all(out._base is not getattr(t, "_base", None) and out._base is not t for t in inputs):
            out._view_meta.version = out._version_counter.value  # a view of forward's temporary: fresh history
    if not differentiable:
        if not custom:
            out._requires_grad = False
    elif dirty and out._base is not None:  # a view changed in place: its base gets the new history
        Extensions.views.rebase(self, out, inputs, nr)
    elif dirty:
        out._set_history(self, nr)  # retain_grad moves to the new version; hooks stay with the old one
    else:
        out._requires_grad, out._grad_fn, out._output_nr = True, self, nr
    return out




def _mark_dirty_outputs(ctx, inputs: tuple, outputs: tuple, recording: bool) -> None:
    """Inputs that forward modified in place, checked as PyTorch does: they must be returned, and a
    recorded in-place change must be one autograd can represent (PyTorch checks only those that
    get a gradient: a float tensor not marked non-differentiable). Their version goes up."""
    dirty = []
    for t in ctx._dirty:
        if _index_of(t, outputs) is None:
            raise RuntimeError(
                "Some elements marked as dirty during the forward method were not returned as output. "
                "The inputs that are modified inplace must all be outputs of the Function."
            )
        if _index_of(t, inputs) is None:
            warnings.warn(
                "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that have "
                "been mutated should be passed to ctx.mark_dirty().", UserWarning, stacklevel=3,
            )
            continue  # then it is an ordinary output
        recorded = recording and t._data.dtype.kind == "f" and _index_of(t, ctx._non_differentiable) is None
        if recorded and t._base is not None:
            if sum(isinstance(o, _graph.Tensor) for o in outputs) > 1:
                raise RuntimeError(
                    "If your Function modifies inplace an input that is a view of another Tensor, your "
                    "Function cannot return more than one Tensor. This is not supported by the current "
                    "autograd engine. You should either make sure the input is not a view (using .clone() "
                    "for example) or make your Function only return one Tensor (potentially splitting it "
                    "into two Functions: one doing the inplace that returns a single Tensor and a second "
                    "one that does the other operations)."
                )
            Extensions.views.check_inplace(t)
        elif recorded and t._requires_grad and t.grad_fn is None:
            raise RuntimeError(
                "a leaf Tensor that requires grad has been used in an in-place operation: modify a "
                "copy (.clone()), or apply the Function under minigrad.no_grad()."
            )
        t._version_counter.value += 1  # as PyTorch's apply; it also counts writes made through NumPy
        if recorded:
            t._grad = None  # PyTorch's custom Functions drop a retained .grad here (its built-in in-place ops keep it)
        dirty.append(t)
    ctx._dirty = tuple(dirty)


def _unrecorded_outputs(ctx, inputs: tuple, outputs: tuple, grad_enabled: bool) -> tuple:
    """The outputs of a custom Function call that recorded nothing (grad mode off, or no input
    requires grad), as PyTorch makes them: each gets no gradient (``_without_gradient``), and a
    view among them is refused in-place changes that would need a history: it counts as made in
    no_grad mode, and with grad mode on, as made by a custom Function."""
    Tensor = _graph.Tensor
    result = []
    for out in outputs:
        if isinstance(out, Tensor):
            is_input = _index_of(out, inputs) is not None
            returned = _without_gradient(out, is_input, _index_of(out, ctx._dirty) is not None)
            # an input changed in place and returned as it is stays the view it was (PyTorch leaves it alone)
            if returned._view_meta is not None and not (returned is out and is_input):
                # (an input changed in place and returned as it is stays the view it was, as in PyTorch)
                Extensions.views.unrecorded_output(returned, grad_enabled)
            out = returned
        result.append(out)
    return tuple(result)


def _without_gradient(out, is_input: bool, dirty: bool):
    """An output of a custom Function that gets no gradient, as PyTorch makes it (its
    ``custom_function.cpp``): an input comes back as a new tensor, a view of it if it
    requires no grad and was not changed in place, else a detached alias, so the input
    itself keeps its ``requires_grad`` and history; any other output requiring grad is
    detached in place, unless it is a view (which requires grad through its base)."""
    if not out.requires_grad:
        return _alias(out) if is_input and not dirty else out
    if is_input:
        return out.detach()
    if out._base is None:
        out.detach_()
    return out


def _index_of(t, tensors: tuple) -> int | None:
    """The position of ``t`` in ``tensors``, or None: by identity (``in`` would call Tensor.__eq__)."""
    for i, o in enumerate(tensors):
        if o is t:
            return i
    return None




def _alias(t):
    """A new tensor object on the same memory, for an output that must be a distinct tensor (a view
    that cannot be taken again from its base, where the views layer is installed)."""
    return t.detach() if Extensions.views is None else Extensions.views.alias(t)


def _pick_backward(cls: type, Function: type):
    """The method the node calls: ``backward``, or ``vjp`` (its PyTorch alias), not both."""
    if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
        def both(ctx, *grad_outputs):
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                f"should only implement one of them (in {cls.__name__}, keep backward)."
            )
        return both
    return cls.vjp if cls.vjp is not Function.vjp else cls.backward


def _apply_unrecorded(cls: type, args: tuple):
    """``apply`` of a built-in op with grad mode off: forward runs, nothing is recorded. Grad mode is
    already off, an in-place forward still bumps its version (``mark_dirty``), and a view it makes
    is marked as made in no_grad mode (PyTorch refuses to record in-place ops on such views).

    An op whose class itself (not a parent: an in-place subclass must run its own forward) defines
    ``_unrecorded(*args)``, forward's result computed without a ctx, runs just that."""
    unrecorded = cls.__dict__.get("_unrecorded")
    if unrecorded is not None:
        return unrecorded(*args)
    ctx = cls._backward_cls((False,) * len(args))
    if cls._forward_takes_ctx:
        outputs = cls.forward(ctx, *args)
    else:
        outputs = cls.forward(*args)
        cls.setup_context(ctx, args, outputs)
    if ctx._dirty:
        _mark_dirty_outputs(ctx, args, outputs if type(outputs) is tuple else (outputs,), False)
    for out in outputs if type(outputs) is tuple else (outputs,):
        view_meta = getattr(out, "_view_meta", None)  # (only the views layer makes tensors with _view_meta)
        if view_meta is not None:
            view_meta.no_grad = True
    return outputs


def validate_grads(self, grads: tuple) -> tuple:
    """One gradient per edge (``next_functions``), each a Tensor of its input's shape and dtype (or None).

    As in PyTorch, only the gradients of inputs that need one are checked
    and fitted to their input: the others follow no edge, and a custom
    backward's value for them still reaches the node's post-hooks (a
    built-in op's is dropped: PyTorch's ops do not compute it).
    """
    input_meta, needs_input_grad = self._input_meta, self.needs_input_grad
    n_inputs = len(input_meta)
    if len(grads) != n_inputs:
        if len(grads) > n_inputs and all(g is None for g in grads[n_inputs:]):
            grads = grads[:n_inputs]
        else:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients (expected {n_inputs}, "
                f"got {len(grads)}): backward must return one gradient per forward input, "
                "with None for inputs that are not tensors or need no gradient"
            )
    checked, Tensor = [], _graph.Tensor
    for i, g in enumerate(grads):  # (indexing, not zip: this loop runs for every node of every backward)
        meta = input_meta[i]
        if meta is None:  # an argument without an edge: not a tensor (or a built-in op's index or mask)
            if g is not None:
                raise_bad_gradient(self, i, g)
            continue
        if g is not None:
            if not isinstance(g, Tensor):
                raise_bad_gradient(self, i, g)
            if needs_input_grad[i]:
                shape, dtype = meta
                if g._data.shape != shape:
                    g = sum_to_input(self, i, g, shape)
                if g._data.dtype is not dtype and g._data.dtype != dtype:  # (NumPy's dtypes are mostly one object)
                    g = g.to(dtype)
            elif not (self._custom or self._all_gradients):
                g = None
        checked.append(g)
    return tuple(checked)
