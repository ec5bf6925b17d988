"""The backward engine: visit the graph in topological order, once per node.

Two steps, both iterative so that a graph 100,000 nodes deep needs no recursion:

1. ``topological_order``: every node reachable from the output, newest first,
   as in PyTorch (a node is always newer than the nodes it sends gradients to,
   so sorting by creation order is a topological order); each leaf's
   accumulator runs right after its last consumer.
2. ``run_backward``: walk that order; each node gets the sum of the gradients
   its consumers sent it, runs its backward, and sends a gradient to each input.
   Unless ``retain_graph``, a node frees its saved tensors right after it runs.

Side concerns sit in helpers beside the loop, behind one check per node: a
node with hooks (``register_prehook``/``register_hook``), any node in anomaly
mode (``Extensions.anomaly``), and any node of a pass that computes only some
gradients (``autograd.grad``, ``backward(inputs=...)``: ``_plan``) runs through
``_run_instrumented``. Among accumulators ready at once, ``Extensions.ReadyQueue`` picks.
"""
from __future__ import annotations

import contextlib
from operator import attrgetter
from typing import Callable, Iterator, Sequence

from minigrad.core.extension import Extensions
from minigrad.core.grad_mode import _GradMode
from minigrad.core.graph import _ACCUMULATE_GRAD_SEQUENCE_NR as _ACCUMULATOR, Node
from minigrad.core.instrumented import (
    _by_ready_queue, _GraphTask, _NUMPY_IGNORES, _numpy_errors, _observers, _plan, _run_instrumented, _running)


def topological_order(roots: Sequence[Node]) -> list[Node]:
    """Every node reachable from ``roots``, each after all of its consumers, in PyTorch's order.

    PyTorch runs the newest ready node first. A node is always newer than the nodes that made
    its inputs, so the newest node not yet run is always ready: newest first is simply the
    nodes sorted by creation. The leaves' accumulators share the largest number, so each runs
    as soon as its last consumer has run. (If several become ready at once and their order can
    be seen, by hooks or an observer, PyTorch's ready queue decides it: ``instrumented.py``.)
    """
    several = len(roots) > 1
    roots = list(dict.fromkeys(roots)) if several else roots  # (each root once, in the order given)
    nodes, waiting = [], {}  # nodes: all but the accumulators; waiting: accumulator -> its edges not run yet
    seen, stack = set(roots), list(roots)
    while stack:
        node = stack.pop()
        if node._sequence_nr == _ACCUMULATOR:  # (a leaf as a root: leaf.backward())
            continue
        nodes.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            if child._sequence_nr == _ACCUMULATOR:
                waiting[child] = waiting.get(child, 0) + 1
            elif child._sequence_nr > node._sequence_nr:  # (a node made after its consumer: not by apply)
                return _by_ready_queue(roots)
            elif child not in seen:
                seen.add(child)
                stack.append(child)
    order = []  # first the roots that are accumulators no node leads to (leaf.backward())
    if several or roots[0]._sequence_nr == _ACCUMULATOR:
        order = [node for node in roots if node._sequence_nr == _ACCUMULATOR and node not in waiting]
        if len(order) > 1 and Extensions.ReadyQueue.ties_seen(order):
            return _by_ready_queue(roots)
    if len(nodes) > 1:
        nodes.sort(key=_sequence_nr, reverse=True)
    for node in nodes:
        order.append(node)
        ready = 0
        for child, _ in node.next_functions:
            if child in waiting:
                waiting[child] -= 1
                if not waiting[child]:
                    order.append(child)
                    ready += 1
        if ready > 1 and Extensions.ReadyQueue.ties_seen(order[-ready:]):
            return _by_ready_queue(roots)
    return order


_sequence_nr = attrgetter("_sequence_nr")
_order_function: Callable[[Sequence[Node]], list[Node]] = topological_order


@contextlib.contextmanager
def use_order(order_function: Callable[[Sequence[Node]], list[Node]]) -> Iterator[None]:
    """Let ``order_function(roots)`` decide the order of every backward in this block.

    This is how a learner's own topological sort drives the real engine.
    """
    global _order_function
    previous, _order_function = _order_function, order_function
    try:
        yield
    finally:
        _order_function = previous


@contextlib.contextmanager
def observe(callback: Callable[[Node, list, tuple], None]) -> Iterator[None]:
    """Call ``callback(node, grad_outputs, grad_inputs)`` right after each node runs in this block.

    This is how ``minigrad.viz.BackwardStepper`` shows the engine's real order.
    """
    _observers.append(callback)
    try:
        yield
    finally:
        _observers.remove(callback)


def run_backward(
    roots: Sequence[tuple[Node, int]],
    root_grads: Sequence,
    retain_graph: bool,
    create_graph: bool,
    inputs: Sequence[tuple[Node, int]] = (),
    accumulate: bool = True,
) -> list:
    """Propagate ``root_grads`` from the ``roots`` edges down to the leaves.

    With ``inputs`` (edges), only the nodes that lead to one of them run, and
    the others are not even visited (their hooks are not called), as in
    PyTorch. With ``accumulate`` (``backward(inputs=...)``) the input nodes run
    too: a leaf's AccumulateGrad fills its ``.grad``, a non-leaf's
    ``retain_grad`` fills its. Without (``autograd.grad``), the gradients that
    reach those edges are returned, and an input's node runs only if it leads
    to another input; the gradient is taken after the node's tensor hooks if
    the node does not run, before them if it does (the hooks then run with it).
    A single root is always visited: its tensor hooks run even if it leads to
    no input (PyTorch starts from it; several roots hang from a dummy node).
    That selection is made before the loop (``_plan``) and applied by
    ``_run_instrumented``, which also runs the nodes with hooks and anomaly mode.
    """
    buffers: dict[Node, list] = {}
    if len(roots) == 1:  # (loss.backward(): one root, nothing to sum)
        (node, output_nr), = roots
        buffers[node] = [None] * node._num_outputs
        buffers[node][output_nr] = root_grads[0]
    else:
        for (node, output_nr), grad in zip(roots, root_grads):
            _add_to_buffer(buffers, node, output_nr, grad)
    order = _order_function(list(buffers))
    task = _GraphTask()
    task.id, task.accumulates, task.plan, task.order = next(_GraphTask._ids), not inputs, None, order
    if inputs:
        task.plan = _plan(order, {node for node, _ in inputs}, accumulate)
        if len(roots) == 1:
            task.plan.setdefault(roots[0][0], False)
        order = [node for node in order if node in task.plan]  # PyTorch does not visit the others
        task.captures = () if accumulate else {node for node, _ in inputs}
        task.captured = {}
    plain = not inputs and Extensions.anomaly is None  # then a node without hooks runs bare

    outer_task, _running[0] = _running[0], task
    numpy_errors = _numpy_errors.set(_NUMPY_IGNORES)  # PyTorch computes inf * 0 = nan without a word: so does backward
    grad_was_enabled, _GradMode.enabled = _GradMode.enabled, bool(create_graph)  # create_graph records backward
    try:
        for node in order:
            grads = buffers.pop(node, None)
            if plain and node._node_hooks is None:
                if grads is None:  # as in PyTorch, still visited: its tensor hooks get None
                    grads = node._call_pre_hooks([None] * node._num_outputs)
                    if not node._custom and all(g is None for g in grads):
                        node._run_without_gradient()  # no gradient in, none out: it computes nothing, but checks its saved
                        grads = None
                elif node._pre_hooks is not None or node._retains_grad is not None:
                    grads = node._call_pre_hooks(grads)
                input_grads = (None,) * len(node.next_functions) if grads is None else node._run_backward(grads)
            else:
                input_grads = _run_instrumented(node, grads, task)
                if input_grads is None:
                    continue
            if _observers:
                for callback in _observers:
                    callback(node, grads, input_grads)
            if not retain_graph:
                node.release_variables()
            edges = node.next_functions
            for i, grad in enumerate(input_grads):  # (_add_to_buffer, without the call)
                if grad is not None:
                    child, output_nr = edges[i]
                    if child is not None:
                        slots = buffers.get(child)
                        if slots is None:
                            slots = buffers[child] = [None] * child._num_outputs
                        slots[output_nr] = grad if slots[output_nr] is None else slots[output_nr] + grad
            input_grads = grad = None  # (only the buffers hold a gradient between nodes: AccumulateGrad may take it)
    finally:
        _GradMode.enabled, _running[0] = grad_was_enabled, outer_task
        _numpy_errors.reset(numpy_errors)
    return [task.captured.get(edge) for edge in inputs] if inputs and not accumulate else []


def _add_to_buffer(buffers: dict, node: Node, output_nr: int, grad) -> None:
    """Sum gradients arriving at the same node output (a tensor used several times)."""
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node._num_outputs
    slots[output_nr] = grad if slots[output_nr] is None else slots[output_nr] + grad
