"""The backward engine: visit the graph in topological order, once per node.

Two steps, both iterative so that a graph 100,000 nodes deep needs no recursion:

1. ``topological_order``: count, for every node, how many edges lead into it
   from its consumers; then repeatedly take a node whose consumers have all
   run (Kahn's algorithm). Among ready nodes, the most recently created runs
   first, as in PyTorch: this keeps memory low and the order deterministic.
   (A graph that is one path, such as ``f(x)`` on a leaf, has one order: the
   path itself, found without counting.)
2. ``run_backward``: walk that order; each node gets the sum of the gradients
   its consumers sent it, runs its backward, and sends a gradient to each input.
   Unless ``retain_graph``, a node frees its saved tensors right after it runs.

Side concerns sit in helpers beside the loop, behind one check per node: a
node with hooks (``register_prehook``/``register_hook``), any node in anomaly
mode, and any node of a pass that computes only some gradients
(``autograd.grad``, ``backward(inputs=...)``: ``_plan``) runs through
``_run_instrumented``.
"""
from __future__ import annotations

import contextlib
import itertools
from typing import Callable, Iterator, Sequence

import numpy as np

from minigrad.autograd import anomaly_mode
from minigrad.autograd.anomaly_mode import _AnomalyMode
from minigrad.autograd.graph import Node
from minigrad.autograd.grad_mode import _GradMode


def topological_order(roots: Sequence[Node]) -> list[Node]:
    """Every node reachable from ``roots``, each after all of its consumers."""
    if len(roots) == 1:
        chain = _chain_order(roots[0])
        if chain is not None:
            return chain
    dependencies: dict[Node, int] = {}  # also the set of nodes reached through an edge
    root_set = set(roots)
    stack = list(root_set)
    while stack:
        for child, _ in stack.pop().next_functions:
            if child is None:
                continue
            if child in dependencies:
                dependencies[child] += 1
            else:
                dependencies[child] = 1
                if child not in root_set:
                    stack.append(child)

    ready = _ReadyQueue()
    for node in sorted((node for node in root_set if node not in dependencies), key=_newest_first):
        ready.push(node)
    order = []
    while ready.heap:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is None:
                continue
            dependencies[child] -= 1
            if dependencies[child] == 0:
                ready.push(child)
    return order


def _newest_first(node: Node) -> int:
    return -node._sequence_nr


class _ReadyQueue:
    """The nodes ready to run, newest first: PyTorch's ready queue, a C++ ``std::priority_queue``.

    All the leaves' accumulators share one sequence number (PyTorch's largest), so when several
    are ready at once their order is whatever that binary heap gives. To run them (and their
    tensor hooks) in PyTorch's order, this is the same heap, step for step (libstdc++'s
    ``push_heap`` and ``pop_heap``), rather than Python's ``heapq``, which breaks ties differently.
    """

    __slots__ = ("heap",)

    def __init__(self) -> None:
        self.heap: list[Node] = []

    def push(self, node: Node) -> None:
        heap = self.heap
        heap.append(node)
        if len(heap) > 1:
            self._sift_up(len(heap) - 1, node)

    def pop(self) -> Node:
        heap = self.heap
        last = heap.pop()
        n = len(heap)
        if not n:  # (the common case in a small graph: one node ready)
            return last
        top = heap[0]
        # the last node fills the hole the top left: the hole moves down to a leaf, then last moves up
        hole = child = 0
        while child < (n - 1) // 2:
            child = 2 * child + 2
            if heap[child]._sequence_nr < heap[child - 1]._sequence_nr:
                child -= 1
            heap[hole], hole = heap[child], child
        if n % 2 == 0 and child == (n - 2) // 2:
            child = 2 * child + 2
            heap[hole], hole = heap[child - 1], child - 1
        self._sift_up(hole, last)
        return top

    def _sift_up(self, hole: int, node: Node) -> None:
        heap, key = self.heap, node._sequence_nr
        while hole > 0:
            parent = (hole - 1) // 2
            if not heap[parent]._sequence_nr < key:
                break
            heap[hole], hole = heap[parent], parent
        heap[hole] = node


def _chain_order(node: Node) -> list[Node] | None:
    """The order of a graph that is one path (each node leads to at most one other node), or None.

    A path has one topological order, itself: no dependency counts, no heap.
    (A custom Function on a leaf, ``y = f(x)``, is such a graph.)
    """
    order = [node]
    while True:
        following = None
        for child, _ in node.next_functions:
            if child is not None and child is not following:
                if following is not None:
                    return None  # it branches: the general algorithm decides the order
                following = child
        if following is None:
            return order
        order.append(following)
        node = following


_order_function: Callable[[Sequence[Node]], list[Node]] = topological_order
_observers: list[Callable] = []


class _GraphTask:
    """The backward pass now running, so code called from a node (checkpoint) can tell passes apart.

    ``run_backward`` makes one per pass and sets ``current`` itself, without a
    context manager: this is on the path of every backward. A pass given
    ``inputs`` also keeps here what decides which nodes run (``plan``), and the
    gradients it returns (``captured``, for the nodes in ``captures``).
    """

    # accumulates: False for autograd.grad and backward(inputs=...)
    __slots__ = ("id", "accumulates", "plan", "captures", "captured")
    current: "_GraphTask | None" = None
    _ids = itertools.count()


def current_graph_task_id() -> int:
    """An id for the backward pass now running, or -1 outside backward (as ``torch._C._current_graph_task_id``)."""
    return -1 if _GraphTask.current is None else _GraphTask.current.id


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


# PyTorch computes inf * 0 = nan and friends without a word; so does backward here. (The decorator
# sets NumPy's error state once per pass: cheaper than a ``with np.errstate(...)`` block.)
@np.errstate(all="ignore")
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
    for (node, output_nr), grad in zip(roots, root_grads):
        _add_to_buffer(buffers, node, output_nr, grad)
    order = _order_function(list(buffers))
    task = _GraphTask()
    task.id, task.accumulates, task.plan = next(_GraphTask._ids), not inputs, None
    if inputs:
        task.plan = _plan(order, {node for node, _ in inputs}, accumulate)
        if len(roots) == 1:
            task.plan.setdefault(roots[0][0], False)
        order = [node for node in order if node in task.plan]  # PyTorch does not visit the others
        task.captures = () if accumulate else {node for node, _ in inputs}
        task.captured = {}
    plain = not inputs and not _AnomalyMode.enabled  # then a node without hooks runs bare

    outer_task, _GraphTask.current = _GraphTask.current, task
    grad_was_enabled, _GradMode.enabled = _GradMode.enabled, bool(create_graph)  # create_graph records backward
    try:
        for node in order:
            grads = buffers.pop(node, None)
            if plain and node._node_hooks is None:
                if grads is None:  # as in PyTorch, still visited: its tensor hooks get None
                    grads = node._call_pre_hooks([None] * node._num_outputs)
                    if not node._custom and all(g is None for g in grads):
                        node._unpack_saved()  # no gradient in, none out: it computes nothing, but checks its saved
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
    finally:
        _GradMode.enabled, _GraphTask.current = grad_was_enabled, outer_task
    return [task.captured.get(edge) for edge in inputs] if inputs and not accumulate else []


def _plan(order: list[Node], targets: set, accumulate: bool) -> dict[Node, bool]:
    """For each node a pass given inputs visits, whether it runs: PyTorch's engine visits the input
    nodes and the nodes that lead to them, and runs those that lead to them (and, with
    ``accumulate``, the input nodes themselves)."""
    plan = dict.fromkeys(targets, accumulate)
    for node in reversed(order):  # each node after the nodes it leads to
        if any(child in plan for child, _ in node.next_functions):
            plan[node] = True
    return plan


def _capture(captured: dict, node: Node, grads: list) -> None:
    for output_nr, g in enumerate(grads):
        captured[(node, output_nr)] = g


def _run_instrumented(node: Node, grads: list | None, task: _GraphTask) -> tuple | None:
    """Run one node the long way: its tensor hooks, then, in a pass given inputs, what ``task.plan``
    says (visit only, capture its gradient), its node hooks and, in anomaly mode, its NaN check
    and forward traceback. None if the node does not run."""
    plan = task.plan
    reached = grads is not None
    if not reached:  # as in PyTorch, still visited: its tensor hooks get None
        grads = [None] * node._num_outputs
    if plan is not None:
        if not plan[node]:  # visited only: its tensor hooks run, then its gradient is taken if asked for
            grads = node._call_pre_hooks(grads)
            if node in task.captures:
                _capture(task.captured, node, grads)
            return None
        if node in task.captures:
            _capture(task.captured, node, grads)  # before its tensor hooks, which run with the node
    grads = node._call_pre_hooks(grads)
    if not reached and not node._custom and all(g is None for g in grads):
        # No gradient in, none out: a built-in op's node computes nothing, but as in PyTorch it checks
        # its saved tensors and its node hooks are called, with None (a custom Function's node runs).
        node._unpack_saved()
        return _run_with_node_hooks(node, grads, plan, compute=False)
    if not _AnomalyMode.enabled:
        return _run_with_node_hooks(node, grads, plan)
    outer, _AnomalyMode.running_node = _AnomalyMode.running_node, node  # nodes recorded now have it as parent
    try:
        input_grads = _run_with_node_hooks(node, grads, plan)
        if _AnomalyMode.check_nan:
            anomaly_mode.check_nan(node, input_grads)
    except Exception:
        anomaly_mode.warn_forward_traceback(node)
        raise
    finally:
        _AnomalyMode.running_node = outer
    return input_grads


def _run_with_node_hooks(node: Node, grads: list, plan: dict | None, compute: bool = True) -> tuple:
    """Node pre-hooks, the node (unless not ``compute``: then no gradient comes out), node post-hooks:
    PyTorch's order (tensor hooks ran before).

    In a pass given inputs (``plan``), the gradients for edges to nodes it does
    not visit are dropped: before the post-hooks for most built-in ops' nodes
    (PyTorch's ops do not compute them), after them for a custom Function's
    node and a cat's or stack's (their backward did, and their post-hooks see them).
    """
    hooks = node._node_hooks
    if hooks is not None:
        for hook in tuple(hooks[0].values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(_checked_hook_result(hook, result, grads))
    input_grads = node._run_backward(grads) if compute else [None] * len(node.next_functions)
    sees_all = node._custom or node._all_gradients
    if plan is not None and not sees_all:
        input_grads = _visited_only(node, input_grads, plan)
    if hooks is not None:
        for hook in tuple(hooks[1].values()):
            result = hook(tuple(input_grads), tuple(grads))
            if result is not None:
                input_grads = _checked_hook_result(hook, result, input_grads)
    if plan is not None and sees_all:
        input_grads = _visited_only(node, input_grads, plan)
    return tuple(input_grads)


def _visited_only(node: Node, input_grads: Sequence, plan: dict) -> tuple:
    """``input_grads`` with None for every edge to a node the pass does not visit."""
    return tuple([g if child in plan else None for (child, _), g in zip(node.next_functions, input_grads)])


def _checked_hook_result(hook: Callable, result, original: Sequence) -> tuple:
    """A node hook must return a tuple as long as what it got, and cannot invent a gradient for a None slot."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{type(result).__name__}'")
    if len(result) != len(original):
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(
            f"hook '{name}' has returned an incorrect number of values (got {len(result)}, but expected {len(original)})"
        )
    for old, new in zip(original, result):
        if old is None and new is not None:
            raise RuntimeError("can't replace a None gradient with a non-None value")
    return result


def _add_to_buffer(buffers: dict, node: Node, output_nr: int, grad) -> None:
    """Sum gradients arriving at the same node output (a tensor used several times)."""
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * node._num_outputs
    slots[output_nr] = grad if slots[output_nr] is None else slots[output_nr] + grad
