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
state and why error messages name ``ExpBackward``.

As in PyTorch, ``forward`` may also return objects that are not tensors
(numbers, None, a tuple mixing them with tensors): they come back unchanged,
and backward gets None in their slots. Keyword arguments of ``apply`` are
matched to ``forward``'s parameters and treated as the positional arguments
they name (a tensor passed by keyword gets a gradient). ``mark_dirty`` bumps
the version counter, as PyTorch's ``apply`` does, which also covers writes
through NumPy (``x.detach().numpy()[...] = ...``) that minigrad cannot see.

The file reads top to bottom: ``Function`` and its ``apply``; ``FunctionCtx``,
first the methods ``forward`` and ``backward`` call, then what the engine
calls and how a call is recorded. Views (``Extensions.views``) and anomaly
mode (``Extensions.anomaly``) plug in from the layers above, each behind one check.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.core.extension import Extensions
from minigrad.core.function_rules import (
    CheckedSavedTensor, _apply_unrecorded, _bind_keywords, _has_defaults, _index_of, _mark_dirty_outputs,
    _pick_backward, _unrecorded_outputs, connect_output,
    validate_grads,
)
from minigrad.core.grad_mode import _GradMode
from minigrad.core.graph import Node


class Function:
    """Base class of differentiable operations; see the module docstring."""

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` without recording; then, if grad mode is on and an input needs a
        gradient, record one node (the ctx) for the whole call.

        Otherwise nothing is recorded and the outputs come back as forward made
        them (a custom Function's, adjusted as PyTorch does: ``_unrecorded_outputs``).
        """
        if kwargs or cls._binds_defaults:
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
                    Extensions.views.sync(a)
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
    _binds_defaults = False  # then True if forward has defaults: setup_context sees them (PyTorch's apply)
    # A custom Function (one not defined in minigrad, or one that declares _custom = True): PyTorch
    # treats its node apart from its built-in ops' nodes, and minigrad checks everything its backward returns.
    _custom = False
    _all_gradients = False  # (graph.Node says what it means)

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        node_name = cls.__dict__.get("node_name", cls.__name__ + "Backward")
        cls._forward_takes_ctx = cls.setup_context is Function.setup_context  # decided once, not per apply
        cls._binds_defaults = not cls._forward_takes_ctx and _has_defaults(cls.forward)
        cls._custom = cls.__dict__.get("_custom", not cls.__module__.startswith("minigrad."))
        cls._backward_cls = type(node_name.rpartition("::")[2], (FunctionCtx,), {
            "_forward_cls": cls, "_node_name": node_name, "_user_backward": _pick_backward(cls, Function),
            "_custom": cls._custom, "_operands": cls._operands, "_all_gradients": cls._all_gradients,
        })


class FunctionCtx(Node):
    """The ``ctx`` of one call of a Function, and that call's node in the graph.

    Its class is generated per Function (``ExpBackward``) and holds what is the
    same for every call: ``_forward_cls``, ``_user_backward``, ``_custom``,
    ``_operands``, ``_node_name``. What one call keeps is declared here: in
    ``__slots__``, or as a class default that the call's own value replaces;
    forward may add attributes of its own (``ctx.shape = ...``).
    """

    __slots__ = (
        "needs_input_grad",  # one bool per forward argument: whether it needs a gradient
        # Set by _record, with the node's own state (Node.__init__): a call that records nothing
        # (no_grad, or no input needs a gradient) never becomes a node and pays for none of it.
        "_input_meta",  # per forward argument: (shape, dtype) if it has an edge, else None
        "_output_meta",  # per forward output: (shape, dtype) if it is a tensor, else None
    )
    # What a call keeps only if it uses it: class defaults, which the call's own values shadow.
    _to_save = ()  # what forward passed to save_for_backward, until the call is recorded
    _saved = None  # then packed as SavedTensors; None again once freed
    _freed = False  # release_variables ran: a second backward must fail
    _dirty = ()  # inputs forward changed in place (mark_dirty)
    _non_differentiable = ()  # outputs that get no gradient (mark_non_differentiable)
    _materialize_grads = True  # backward gets zeros (True) or None for outputs without a gradient
    # Where each gradient slot's output sits among forward's outputs, when they differ: a
    # built-in op's non-differentiable outputs (max(dim)'s indices) get no slot, as in PyTorch.
    _output_positions = None

    def __init__(self, needs_input_grad: tuple) -> None:
        self.needs_input_grad = needs_input_grad

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
        unpacked = []  # (a loop, not a list comprehension: one call fewer)
        for s in self._saved:
            unpacked.append(None if s is None else s.unpack(self))
        return tuple(unpacked)

    # -- what the engine calls ---------------------------------------------------
    def _run_without_gradient(self) -> None:
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
        return validate_grads(self, grads if type(grads) is tuple else (grads,))  # (function_rules.py)

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
        if Extensions.anomaly is not None:
            Extensions.anomaly.record_forward_traceback(self)

        # An output gets this node as grad_fn and its gradient slot; the cases that need more
        # (a view, an input returned or changed in place, an output without a gradient) go
        # through _connect_output.
        plain = not (self._dirty or self._non_differentiable)
        connected, output_meta = list(outputs), []
        slots = 0  # a built-in op's gradient slots so far (a custom Function's node has one per output)
        for i, out in enumerate(outputs):
            if not isinstance(out, Tensor):  # a number, None, ...: passed through, no gradient
                output_meta.append(None)
                continue
            data = out._data
            output_meta.append((data.shape, data.dtype))
            if plain and data.dtype.kind == "f" and out._view_meta is None and _index_of(out, inputs) is None:
                out._requires_grad, out._grad_fn, out._output_nr = True, self, i if custom else slots
                slots += 1
            else:
                connected[i] = connect_output(self, i, out, inputs, i if custom else slots)
                slots += connected[i]._requires_grad
        self._output_meta, self._num_outputs = tuple(output_meta), len(outputs) if custom else slots
        if slots != len(outputs) and not custom:
            self._output_positions = tuple([
                i for i, out in enumerate(connected) if isinstance(out, Tensor) and out._requires_grad])

        if self._to_save:
            saved = []
            for t in self._to_save:
                if t is not None:  # an output with a gradient is saved with its slot, anything else with None
                    output_nr = None
                    for out, connected_out in zip(outputs, connected):
                        if out is t and connected_out._requires_grad:  # (one without is kept as it is, as PyTorch's leaf)
                            output_nr = connected_out._output_nr
                            break
                    t = CheckedSavedTensor(t, output_nr)
                saved.append(t)
            self._saved, self._to_save = tuple(saved), ()
        return tuple(connected)
