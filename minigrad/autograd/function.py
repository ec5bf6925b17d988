"""``Function``: an operation that knows its own derivative.

Subclass it with two static methods and call it through ``apply``::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad_output):
            y, = ctx.saved_tensors
            return grad_output * y

    y = Exp.apply(x)

``apply`` makes a fresh ``ctx`` for every call. That ``ctx`` is also the graph
node (its class is generated: ``ExpBackward``), which is why calls never share
state and why error messages name ``ExpBackward``. The older instance-style
API, where state lived on ``self``, is ``minigrad.autograd.StatefulFunction``.

As in PyTorch, ``forward`` may also return objects that are not tensors
(numbers, None, a tuple mixing them with tensors): they come back unchanged,
and backward gets None in their slots. Keyword arguments of ``apply`` are
matched to ``forward``'s parameters and treated as the positional arguments
they name (a tensor passed by keyword gets a gradient). ``mark_dirty`` bumps
the version counter, as PyTorch's ``apply`` does, which also covers writes
through NumPy (``x.detach().numpy()[...] = ...``) that minigrad cannot see.

The file reads top to bottom: ``Function`` and its ``apply``; ``FunctionCtx``,
first the methods ``forward`` and ``backward`` call, then what the engine
calls and how a call is recorded; last ``once_differentiable`` and the two
classes kept from PyTorch 0.x.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any, NoReturn

import numpy as np

from minigrad.autograd.anomaly_mode import _AnomalyMode, record_forward_traceback
from minigrad.autograd.grad_mode import _GradMode, is_grad_enabled, no_grad
from minigrad.autograd import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.autograd.graph import Node, SavedTensor
from minigrad.ops.broadcast import sum_to, type_name


class Function:
    """Base class of differentiable operations; see the module docstring."""

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` without recording; then, if grad mode is on and an input needs a
        gradient, record one node (the ctx) for the whole call.

        Otherwise nothing is recorded and the outputs come back as forward made
        them (a custom Function's, adjusted as PyTorch does: ``_unrecorded_outputs``).
        """
        if kwargs:
            args = _bind_keywords(cls, args, kwargs)
        grad_enabled = _GradMode.enabled
        if not (grad_enabled or cls._custom):  # a built-in op in no_grad mode (so every op a backward runs)
            return _apply_unrecorded(cls, args)
        Tensor = _graph.Tensor
        needs_input_grad = []  # (a loop, not a list comprehension: this is the path of every op)
        for a in args:
            if not isinstance(a, Tensor):
                needs_input_grad.append(False)
            elif a._base is None:
                needs_input_grad.append(a._requires_grad)
            else:
                # PyTorch collects a call's edges before its forward runs: a view whose memory changed
                # in place since its history was built is taken again (or refused) before forward's
                # own errors; and a view whose base got a history after it was taken requires grad too
                if grad_enabled:
                    a._sync_view()
                needs_input_grad.append(a._requires_grad or (grad_enabled and a._base._requires_grad))
        needs_input_grad = tuple(needs_input_grad)
        ctx = cls._backward_cls(needs_input_grad)
        _GradMode.enabled = False  # forward's own operations are not recorded
        try:
            if cls._forward_takes_ctx:
                outputs = cls.forward(ctx, *args)
            else:
                outputs = cls.forward(*args)
                cls.setup_context(ctx, args, outputs)
        finally:
            _GradMode.enabled = grad_enabled
        single = type(outputs) is not tuple
        if single:
            outputs = (outputs,)
        recording = grad_enabled and True in needs_input_grad
        if ctx._dirty:
            _mark_dirty_outputs(ctx, args, outputs, recording)
        if recording:
            outputs = ctx._record(args, outputs)
        elif cls._custom:
            outputs = _unrecorded_outputs(ctx, args, outputs, grad_enabled)
        return outputs[0] if single else outputs

    @staticmethod
    def forward(ctx: FunctionCtx, *args, **kwargs) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function: "
            "@staticmethod def forward(ctx, *args) returning the result."
        )

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function "
            "to use it with backward mode AD: @staticmethod def backward(ctx, *grad_outputs) returning "
            "one gradient per forward input."
        )

    vjp = backward  # PyTorch's other name for backward: a subclass defines one or the other

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple, output: Any) -> None:
        """Optional: override it, and ``forward(*args)`` takes no ctx and stays a pure
        function; this fills ctx from the inputs and the output instead."""
        raise NotImplementedError

    # -- how a subclass is set up -------------------------------------------------------------
    # For a built-in op whose arguments at these positions are its operands, Python numbers
    # included (PyTorch's arithmetic wraps a number in a 0-d tensor): exactly they get edges.
    _operands: tuple[int, ...] | None = None
    _forward_takes_ctx = True  # False when setup_context is overridden
    # A custom Function (one not defined in minigrad, or one that declares _custom = True): PyTorch
    # treats its node apart from its built-in ops' nodes, and minigrad checks everything its backward returns.
    _custom = False
    _all_gradients = False  # (graph.Node says what it means)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        node_name = cls.__dict__.get("node_name", cls.__name__ + "Backward")
        cls._forward_takes_ctx = cls.setup_context is Function.setup_context  # decided once, not per apply
        cls._custom = cls.__dict__.get("_custom", not cls.__module__.startswith("minigrad."))
        cls._backward_cls = type(node_name.rpartition("::")[2], (FunctionCtx,), {
            "_forward_cls": cls, "_node_name": node_name, "_user_backward": _pick_backward(cls),
            "_custom": cls._custom, "_operands": cls._operands, "_all_gradients": cls._all_gradients,
        })

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(
            f"{type(self).__name__} should not be instantiated. Methods on autograd functions are "
            "all static, so you should invoke them on the class itself.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method: call "
            f"{type(self).__name__}.apply(...) on the class, not on an instance. (For the old "
            "instance style, subclass minigrad.autograd.StatefulFunction.)"
        )


class FunctionCtx(Node):
    """The ``ctx`` of one call of a Function, and that call's node in the graph.

    Its class is generated per Function (``ExpBackward``) and holds what is the
    same for every call: ``_forward_cls``, ``_user_backward``, ``_custom``,
    ``_operands``, ``_node_name``. What one call keeps is declared here, in
    ``__slots__``, and set in ``__init__``; forward may add attributes of its own
    (``ctx.shape = ...``).
    """

    __slots__ = (
        "needs_input_grad",  # one bool per forward argument: whether it needs a gradient
        "_to_save",  # what forward passed to save_for_backward, until the call is recorded
        "_saved",  # then packed as SavedTensors; None again once freed
        "_freed",  # release_variables ran: a second backward must fail
        "_dirty",  # inputs forward changed in place (mark_dirty)
        "_non_differentiable",  # outputs that get no gradient (mark_non_differentiable)
        "_materialize_grads",  # backward gets zeros (True) or None for outputs without a gradient
        # Set by _record, with the node's own state (Node.__init__): a call that records nothing
        # (no_grad, or no input needs a gradient) never becomes a node and pays for none of it.
        "_input_meta",  # per forward argument: (shape, dtype) if it has an edge, else None
        "_output_meta",  # per forward output: (shape, dtype) if it is a tensor, else None
        # Where each gradient slot's output sits among forward's outputs, when they differ: a
        # built-in op's non-differentiable outputs (max(dim)'s indices) get no slot, as in PyTorch.
        "_output_positions",
    )

    def __init__(self, needs_input_grad: tuple) -> None:
        self.needs_input_grad = needs_input_grad
        self._to_save = self._dirty = self._non_differentiable = ()
        self._saved = None
        self._freed = False
        self._materialize_grads = True

    # -- what forward may call -------------------------------------------------
    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for backward; read them back with ``saved_tensors``.

        Saved tensors are checked for in-place changes when read: the gradient
        would silently be wrong if a value it needs changed in between.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, _graph.Tensor):
                raise TypeError(
                    f"save_for_backward can only save variables, but argument {i} is of type "
                    f"{type(t).__name__}. Store non-tensor values as attributes: ctx.name = value"
                )
        self._to_save = tensors

    def mark_dirty(self, *tensors) -> None:
        """Declare inputs that forward modified in place (and returns)."""
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Declare outputs that have no gradient, such as argmax indices."""
        for t in tensors:
            if not isinstance(t, _graph.Tensor):
                raise TypeError(f"mark_non_differentiable only accepts variable arguments, but got {type(t).__name__}")
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """With False, backward gets None (not zeros) for outputs that got no gradient."""
        if not isinstance(value, bool):
            raise TypeError(f"set_materialize_grads expects a bool, but got {type(value).__name__}")
        self._materialize_grads = value

    # -- what backward may read ------------------------------------------------
    @property
    def saved_tensors(self) -> tuple:
        if self._freed:
            raise RuntimeError(
                "Trying to backward through the graph a second time (or directly access saved "
                "tensors after they have already been freed). Saved intermediate values of the "
                "graph are freed when you call .backward() or autograd.grad(). Specify "
                "retain_graph=True if you need to backward through the graph a second time or "
                "if you need to access saved tensors after calling backward."
            )
        if self._saved is None:  # still inside forward
            return self._to_save
        return tuple([None if s is None else s.unpack(self) for s in self._saved])

    @property
    def saved_variables(self) -> tuple:
        """The PyTorch 0.x name of ``saved_tensors`` (from when tensors were wrapped in Variables)."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    # -- what the engine calls ---------------------------------------------------
    def _unpack_saved(self) -> None:
        if self._freed or self._saved:
            self.saved_tensors  # raises if freed or changed in place since saved  # noqa: B018

    def release_variables(self) -> None:
        if self._saved:
            self._saved = None
            self._freed = True

    def _run_backward(self, grad_outputs: list) -> tuple:
        """Call the user's backward and check what it returned."""
        positions = self._output_positions
        if positions is not None:  # backward takes one gradient per forward output
            grad_outputs, slots = [None] * len(self._output_meta), grad_outputs
            for position, g in zip(positions, slots):
                grad_outputs[position] = g
        if self._materialize_grads and (len(grad_outputs) != 1 or grad_outputs[0] is None):
            grad_outputs = [  # zeros for tensor outputs without a gradient; non-tensor outputs get None
                _graph.Tensor._wrap(np.zeros(*meta)) if g is None and meta is not None else g
                for g, meta in zip(grad_outputs, self._output_meta)
            ]
        grads = self._user_backward(*grad_outputs)
        return self._validate_grads(grads if type(grads) is tuple else (grads,))

    def _validate_grads(self, grads: tuple) -> tuple:
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
        checked = []
        for i, g in enumerate(grads):  # (indexing, not zip: this loop runs for every node of every backward)
            meta = input_meta[i]
            if meta is None:  # an argument without an edge: not a tensor (or a built-in op's index or mask)
                if g is not None:
                    self._raise_bad_gradient(i, g)
                continue
            if g is not None:
                if not isinstance(g, _graph.Tensor):
                    self._raise_bad_gradient(i, g)
                if needs_input_grad[i]:
                    shape, dtype = meta
                    if g._data.shape != shape:
                        g = self._sum_to_input(i, g, shape)
                    if g._data.dtype != dtype:
                        g = g.to(dtype)
                elif not (self._custom or self._all_gradients):
                    g = None
            checked.append(g)
        return tuple(checked)

    def _raise_bad_gradient(self, i: int, g) -> NoReturn:
        if self._input_meta[i] is None:
            raise RuntimeError(
                f"function {self.name()} returned a gradient different than None at position {i + 1}, "
                "but the corresponding forward input was not a Tensor: return None for it"
            )
        hint = " (wrap NumPy results with minigrad.tensor(...))" if hasattr(g, "__array__") else ""
        raise RuntimeError(f"function {self.name()} returned {type(g).__name__} at position {i + 1}: expected Tensor or None{hint}")

    def _sum_to_input(self, i: int, g, shape: tuple):
        """A gradient of the broadcast shape is summed back, as PyTorch does; any other shape is an error."""
        if not _is_expandable_to(shape, g._data.shape):
            raise RuntimeError(
                f"Function {self.name()} returned an invalid gradient at index {i} - got "
                f"{list(g.shape)} but expected shape compatible with {list(shape)}"
            )
        return sum_to(g, shape)


    def _record(self, inputs: tuple, outputs: tuple) -> tuple:
        """Make this ctx the ``grad_fn`` of the outputs and pack what was saved.

        Edges and gradient slots are PyTorch's: an edge (``next_functions``) for
        each tensor argument, except a built-in op's index and mask tensors (in
        PyTorch only its differentiable arguments have one); a gradient slot for
        each output of a custom Function, but only for each differentiable output
        of a built-in op (``max(dim)``'s indices have none). Node hooks see them.
        """
        Node.__init__(self)  # now this call is a node of the graph
        Tensor = _graph.Tensor
        custom, operands = self._custom, self._operands
        edges, input_meta = [], []
        for i, a in enumerate(inputs):
            if isinstance(a, Tensor) and (custom or a._data.dtype.kind == "f" if operands is None else i in operands):
                if not a._requires_grad:
                    edges.append((None, 0))
                elif a._grad_fn is not None and a._view_meta is None:  # (what a._edge() gives, without the call)
                    edges.append((a._grad_fn, a._output_nr))
                else:
                    edges.append(a._edge())
                input_meta.append((a._data.shape, a._data.dtype))
            elif operands is not None and i in operands:  # a number as an operand: an edge to nowhere
                edges.append((None, 0))
                input_meta.append(((), None))
            else:
                input_meta.append(None)
        self.next_functions, self._input_meta = tuple(edges), tuple(input_meta)
        if _AnomalyMode.enabled:
            record_forward_traceback(self)

        # An output gets this node as grad_fn and its gradient slot; the cases that need more
        # (a view, an input returned or changed in place, an output without a gradient) go
        # through _connect_output.
        plain = not (self._dirty or self._non_differentiable)
        connected, output_meta = [], []
        slots = 0  # a built-in op's gradient slots so far (a custom Function's node has one per output)
        for i, out in enumerate(outputs):
            if not isinstance(out, Tensor):  # a number, None, ...: passed through, no gradient
                connected.append(out)
                output_meta.append(None)
                continue
            data = out._data
            output_meta.append((data.shape, data.dtype))
            if plain and data.dtype.kind == "f" and out._view_meta is None and _index_of(out, inputs) is None:
                out._requires_grad, out._grad_fn, out._output_nr = True, self, i if custom else slots
                slots += 1
            else:
                out = self._connect_output(i, out, inputs, i if custom else slots)
                slots += out._requires_grad
            connected.append(out)
        self._output_meta, self._num_outputs = tuple(output_meta), len(outputs) if custom else slots
        self._output_positions = None
        if slots != len(outputs) and not custom:
            self._output_positions = tuple([
                i for i, out in enumerate(connected) if isinstance(out, Tensor) and out._requires_grad])

        if self._to_save:
            saved = []
            for t in self._to_save:
                if t is not None:  # an output is saved with its gradient slot, anything else with None
                    output_nr = None
                    for out, connected_out in zip(outputs, connected):
                        if out is t:
                            output_nr = connected_out._output_nr
                            break
                    t = SavedTensor(t, output_nr)
                saved.append(t)
            self._saved, self._to_save = tuple(saved), ()
        return tuple(connected)

    def _connect_output(self, i: int, out, inputs: tuple, nr: int):
        """Output ``i`` of this call, wired to this node as gradient slot ``nr`` if it gets a gradient."""
        custom, dirty = self._custom, _index_of(out, self._dirty) is not None
        is_input = _index_of(out, inputs) is not None
        differentiable = out._data.dtype.kind == "f" and _index_of(out, self._non_differentiable) is None
        if custom and not differentiable:
            out = _without_gradient(out, is_input, dirty)
        elif is_input and not dirty:
            out = out._alias()  # an input returned as-is: a new tensor, so this node's backward runs
        meta = out._view_meta
        if meta is not None and not dirty and (meta.steps is None or meta.steps[-1][0] is not self._forward_cls):
            meta.steps, meta.custom = None, _unreplayable_view_message(i, self._forward_cls.__name__, custom)
        if not differentiable:
            if not custom:
                out._requires_grad = False
        elif dirty and out._base is not None:  # a view changed in place: its base gets the new history
            values = _graph.Tensor._wrap(out._data)
            values._requires_grad, values._grad_fn, values._output_nr = True, self, nr
            tensors = [a for a in inputs if isinstance(a, _graph.Tensor)]
            at = _index_of(out, tensors)
            out._rebase_view(out._copy_slices(values, at, tensors[:at] + tensors[at + 1:]))
        elif dirty:
            out._set_history(self, nr)  # retain_grad moves to the new version; hooks stay with the old one
        else:
            out._requires_grad, out._grad_fn, out._output_nr = True, self, nr
        return out


def _is_expandable_to(shape: tuple, desired: tuple) -> bool:
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient can be summed back)."""
    if len(shape) > len(desired):
        return False
    return all(s == 1 or s == d for s, d in zip(reversed(shape), reversed(desired)))


def _pick_backward(cls: type):
    """The method the node calls: ``backward``, or ``vjp`` (its PyTorch alias), not both."""
    if cls.backward is not Function.backward and cls.vjp is not Function.vjp:
        def both(ctx, *grad_outputs):
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
                f"should only implement one of them (in {cls.__name__}, keep backward)."
            )
        return both
    return cls.vjp if cls.vjp is not Function.vjp else cls.backward


def _bind_keywords(cls: type, args: tuple, kwargs: dict) -> tuple:
    """Keyword arguments of ``apply`` as the positional arguments of ``forward`` they name (PyTorch 2)."""
    params = list(inspect.signature(cls.forward).parameters.values())
    if cls.setup_context is Function.setup_context:
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


def _apply_unrecorded(cls: type, args: tuple):
    """``apply`` of a built-in op with grad mode off: forward runs, nothing is recorded. Grad mode is
    already off, an in-place forward still bumps its version (``mark_dirty``), and a view it makes
    is marked as made in no_grad mode (PyTorch refuses to record in-place ops on such views)."""
    ctx = cls._backward_cls((False,) * len(args))
    if cls._forward_takes_ctx:
        outputs = cls.forward(ctx, *args)
    else:
        outputs = cls.forward(*args)
        cls.setup_context(ctx, args, outputs)
    if ctx._dirty:
        _mark_dirty_outputs(ctx, args, outputs if type(outputs) is tuple else (outputs,), False)
    for out in outputs if type(outputs) is tuple else (outputs,):
        if isinstance(out, _graph.Tensor) and out._view_meta is not None:
            out._view_meta.no_grad = True
    return outputs


def _mark_dirty_outputs(ctx: FunctionCtx, inputs: tuple, outputs: tuple, recording: bool) -> None:
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
            t._check_inplace_on_view()
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


def _unrecorded_outputs(ctx: FunctionCtx, inputs: tuple, outputs: tuple, grad_enabled: bool) -> tuple:
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
            meta = None if returned is out and is_input else returned._view_meta
            out = returned
            if meta is not None and not grad_enabled:
                meta.no_grad = True
            elif meta is not None:
                meta.steps, meta.no_grad, meta.custom = None, True, (
                    "A view was created in no_grad mode and {change} with grad mode enabled. This view was "
                    "created inside a custom Function (or because an input was returned as-is) and the autograd "
                    "logic to handle view+inplace would override the custom backward associated with the custom "
                    "Function, leading to incorrect gradients. This behavior is forbidden. You can fix this by "
                    "cloning the output of the custom Function."
                )
        result.append(out)
    return tuple(result)


def _without_gradient(out, is_input: bool, dirty: bool):
    """An output of a custom Function that gets no gradient, as PyTorch makes it (its
    ``custom_function.cpp``): an input comes back as a new tensor, a view of it if it
    requires no grad and was not changed in place, else a detached alias, so the input
    itself keeps its ``requires_grad`` and history; any other output requiring grad is
    detached in place, unless it is a view (which requires grad through its base)."""
    if not out.requires_grad:
        return out._alias() if is_input and not dirty else out
    if is_input:
        return out.detach()
    if out._base is None:
        out.detach_()
    return out


def _unreplayable_view_message(i: int, name: str, custom: bool) -> str:
    """Why an in-place op on this output (a view of an input), or on its base, cannot be recorded:
    PyTorch's texts, with ``{change}`` for which of the two happened (``_ViewMeta.reason``)."""
    if not custom:  # a built-in view op that returns several views (even when it returns just one)
        return (
            f"Output {i} of {name} is a view and {{change}}. This view is the output of a function that "
            "returns multiple views. Such functions do not allow the output views to be modified inplace. "
            "You should replace the inplace operation by an out-of-place one."
        )
    # A view made inside a custom forward: replaying the view op would skip this node's backward.
    return (
        f"Output {i} of {name} is a view and {{change}}. This view was created inside a custom Function "
        "(or because an input was returned as-is) and the autograd logic to handle view+inplace would "
        "override the custom backward associated with the custom Function, leading to incorrect "
        "gradients. This behavior is forbidden. You can fix this by cloning the output of the custom Function."
    )


def _index_of(t, tensors: tuple) -> int | None:
    """The position of ``t`` in ``tensors``, or None: by identity (``in`` would call Tensor.__eq__)."""
    for i, o in enumerate(tensors):
        if o is t:
            return i
    return None


def once_differentiable(backward):
    """Decorate a backward that uses NumPy, so it cannot be differentiated again.

    It runs without recording, and if the caller asked for ``create_graph`` its
    results carry a node that raises as soon as a second backward reaches it.
    """

    @functools.wraps(backward)
    def wrapper(ctx, *grad_outputs):
        with no_grad():
            grads = backward(ctx, *grad_outputs)
        if not is_grad_enabled() or not any(g is not None and g._requires_grad for g in grad_outputs):
            return grads
        single = not isinstance(grads, tuple)
        grads = (grads,) if single else grads
        # The results were computed without recording; route them through a node
        # that raises, so a second differentiation fails loudly instead of giving zeros.
        grads = tuple(None if g is None else _DelayedError.apply(g.detach().requires_grad_(), ctx.name()) for g in grads)
        return grads[0] if single else grads

    return wrapper


class _DelayedError(Function):
    node_name = "DelayedError"

    @staticmethod
    def forward(ctx, grad, name):
        ctx.fn_name = name
        return grad._alias()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(
            f"trying to differentiate twice a function that was marked with @once_differentiable "
            f"({ctx.fn_name}): its backward is not built from differentiable operations. "
            "Write backward with tensor operations to support create_graph=True."
        )



# -- Kept from PyTorch 0.x: both still live in torch.autograd.function ---------------------


class InplaceFunction(Function):
    """A ``Function`` whose constructor stores an ``inplace`` flag; PyTorch keeps it only for old code.

    In PyTorch 0.x a Function was an instance made per call (``Dropout(p, inplace=True)(x)``),
    and this class held the flag. ``apply`` never calls the constructor, so
    today the flag is an argument of ``forward``, and an in-place forward
    declares what it changed with ``ctx.mark_dirty``::

        class Scale(InplaceFunction):
            @staticmethod
            def forward(ctx, x, inplace=False):
                if inplace:
                    ctx.mark_dirty(x)
                    return x.mul_(2)
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2, None

    As with any Function, instantiating it warns and calling an instance raises.
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """The PyTorch 0.x instance-style Function whose inputs and outputs may be nested tuples and lists.

    Write ``forward_extended(self, *nested_inputs)`` and
    ``backward_extended(self, *nested_grad_outputs)``, and call an instance
    once: ``out = PairSum()((a, b), [c])``. The call flattens the tensors out
    of the nesting, runs one node on the flat list, and rebuilds the nesting
    for the outputs (and, in backward, for the gradients); backward returns
    gradients nested like the inputs (None for no gradient).
    ``self.save_for_backward`` takes nested structures too, and
    ``self.saved_tensors`` gives them back nested the same way.

    PyTorch 2.x still ships this class, but calling an instance there fails
    (``AttributeError``: the ``_do_forward`` it relies on was removed);
    minigrad keeps it working, as a flatten/unflatten example. Leaves must be
    tensors or None, as in PyTorch (anything else is a ``ValueError``).
    """

    _used = False
    _ctx: FunctionCtx | None = None  # this call's node, set only while forward or backward runs

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # One Function per subclass, so the node is named after it: PairSumBackward.
        cls._function = type(cls.__name__, (_NestedIOCall,), {})

    def __init__(self) -> None:
        """Instances are the point of this class, so unlike Function it does not warn."""

    def __call__(self, *nested_input):
        if self._used:
            raise RuntimeError(
                f"this {type(self).__name__} instance was already called once: create a new instance per "
                f"call, {type(self).__name__}()(...), since its state belongs to that call's node."
            )
        self._used = True
        self._nested_input = nested_input
        flat_output = self._function.apply(self, *_iter_tensors(nested_input))
        return _unflatten(flat_output, self._nested_output)

    def forward_extended(self, *nested_input):
        raise NotImplementedError("subclasses of NestedIOFunction must implement forward_extended(self, *inputs)")

    def backward_extended(self, *nested_grad_output):
        raise NotImplementedError("subclasses of NestedIOFunction must implement backward_extended(self, *grad_outputs)")

    def save_for_backward(self, *nested) -> None:
        self._to_save_nested = _structure(nested)
        self._ctx.save_for_backward(*_iter_tensors(nested))

    @property
    def saved_tensors(self) -> tuple:
        return _unflatten(self._ctx.saved_tensors, self._to_save_nested)

    def mark_dirty(self, *args, **kwargs) -> None:
        self._ctx.mark_dirty(*_iter_tensors((args, kwargs)))

    def mark_non_differentiable(self, *args, **kwargs) -> None:
        self._ctx.mark_non_differentiable(*_iter_tensors((args, kwargs)))


class _NestedIOCall(Function):
    """Runs a NestedIOFunction instance as one node over its flattened tensors."""

    @staticmethod
    def forward(ctx, instance: NestedIOFunction, *flat_input):
        ctx.instance, instance._ctx = instance, ctx
        try:
            result = instance.forward_extended(*instance._nested_input)
        finally:
            instance._ctx = None
        del instance._nested_input
        # Keep the nesting, not the output tensors: they point to this node,
        # which points to the instance, and that would be a reference cycle.
        instance._nested_output = _structure(result)
        return tuple(_iter_tensors(result))

    @staticmethod
    def backward(ctx, *flat_grads):
        instance = ctx.instance
        instance._ctx = ctx
        try:
            result = instance.backward_extended(*_unflatten(flat_grads, instance._nested_output))
        finally:
            instance._ctx = None
        return (None, *_iter_tensors(result, allow_none=True))


def _iter_tensors(obj, allow_none: bool = False):
    """The tensors of a nesting of tuples, lists and dicts, depth first (with its Nones if ``allow_none``)."""
    if isinstance(obj, _graph.Tensor):
        yield obj
    elif obj is None:
        if allow_none:
            yield None
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _iter_tensors(item, allow_none)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _iter_tensors(item, allow_none)
    else:
        name = type_name(obj)
        raise ValueError(
            f"Auto nesting doesn't know how to process an input object of type {name}. "
            "Accepted types: Tensors, or lists/tuples of them"
        )


def _structure(obj):
    """The nesting of ``obj`` with each tensor replaced by a placeholder (0): what ``_unflatten`` needs."""
    if isinstance(obj, (list, tuple)):
        return type(obj)(_structure(item) for item in obj)
    return None if obj is None else 0


def _unflatten(flat: tuple, structure):
    """Rebuild ``structure``'s nesting of lists and tuples, taking its leaves from ``flat`` in order."""
    leaves = iter(flat)

    def build(proto):
        if proto is None:
            return None
        if isinstance(proto, (list, tuple)):
            return type(proto)(build(item) for item in proto)
        return next(leaves)

    return build(structure)
