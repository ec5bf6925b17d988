"""A built-in op's plain call, recorded in a few attribute writes: a first reading of the core skips this file.

``Function.apply`` records every call, whatever it is: keyword arguments, views,
an input returned or changed in place, several outputs, and every check a custom
Function's backward needs. Most calls of the hottest built-in ops (``x * y``,
``x + y``, ``loss.sum()``) are none of those. For them the op computes its output
itself and ``record`` makes the node that ``apply`` would have made, field for
field (``tests/core/test_builtin.py`` compares every one), without the generic
work around it::

    if plain(a, b):
        out = ...  # forward's own computation, on the arrays
        if a._requires_grad or b._requires_grad:
            ctx = record(Mul, (a, b), out, (a._requires_grad, b._requires_grad), (b, a))

A call is plain when grad mode is on, anomaly mode is off and no tensor argument
is a view (``plain``); the op's output must be one new floating-point tensor.
"""
from __future__ import annotations

from minigrad.core import graph as _graph  # (_graph.Tensor: the registered tensor class)
from minigrad.core.extension import Extensions
from minigrad.core.function_rules import CheckedSavedTensor
from minigrad.core.grad_mode import _GradMode


def plain(*tensors) -> bool:
    """Whether a call on ``tensors`` may be recorded by ``record``: grad mode on, anomaly mode off, no view."""
    if not _GradMode.enabled or Extensions.anomaly is not None:
        return False
    for t in tensors:
        if t._base is not None:
            return False
    return True


def record(cls: type, args: tuple, out, needs_input_grad: tuple, to_save: tuple = ()):
    """Make ``out`` (a new float tensor) the output of a call of built-in op ``cls`` on ``args``, as
    ``Function.apply`` would: its ctx, with an edge and ``(shape, dtype)`` for each tensor in ``args``,
    None for the others, and ``to_save`` (inputs, ``out``, other new tensors, or None) saved for
    backward. ``args`` are the call's arguments with None in place of a tensor that gets no edge
    (``FunctionCtx._record``'s rule: a tensor operand, or without ``_operands`` a float tensor, gets
    one); a number as an operand takes ``apply``. Returns the ctx, for the attributes the op's
    forward sets on it (``ctx.shapes``, ...)."""
    node_cls = cls._backward_cls
    ctx = node_cls.__new__(node_cls)
    ctx.needs_input_grad = needs_input_grad
    Tensor, edges, input_meta = _graph.Tensor, [], []
    for a in args:
        if isinstance(a, Tensor):
            if not a._requires_grad:
                edges.append((None, 0))
            elif a._grad_fn is not None:
                edges.append((a._grad_fn, a._output_nr))
            else:
                edges.append(a._edge())
            input_meta.append((a._data.shape, a._data.dtype))
        else:
            input_meta.append(None)
    data = out._data
    ctx.next_functions, ctx._input_meta, ctx._output_meta = tuple(edges), tuple(input_meta), ((data.shape, data.dtype),)
    ctx._num_outputs, ctx._sequence_nr = 1, next(_graph._sequence_numbers)
    ctx._pre_hooks = ctx._retains_grad = ctx._node_hooks = ctx._metadata = None
    out._requires_grad, out._grad_fn = True, ctx  # (before saving: a saved output keeps its requires_grad)
    if to_save:
        ctx._saved = tuple([None if t is None else CheckedSavedTensor(t, 0 if t is out else None) for t in to_save])
    return ctx
