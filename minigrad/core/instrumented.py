"""How one node runs the long way in backward: a first reading of the core skips this file.

``engine.py``'s loop runs a node bare unless it has node hooks, anomaly mode is
on, or the pass computes only some gradients (``autograd.grad``,
``backward(inputs=...)``). Then it comes here: its tensor hooks, then what the
pass's plan says (visit only, capture its gradient), its node pre-hooks, the
node, its post-hooks, and, in anomaly mode, the checks of ``Extensions.anomaly``.
Also the long way to the order (``_by_ready_queue``), for when several leaves'
accumulators are ready at once and ``Extensions.ReadyQueue`` says their order can be seen.
"""
from __future__ import annotations

import itertools
from typing import Callable, Sequence

import numpy as np

from minigrad.core.extension import Extensions
from minigrad.core.graph import Node


_observers: list[Callable] = []  # engine.observe's callbacks

try:  # NumPy 2 keeps its error state in a context variable: a pass sets it to "ignore", made once here
    from numpy._core._ufunc_config import _extobj_contextvar as _numpy_errors
    with np.errstate(all="ignore"):
        _NUMPY_IGNORES = _numpy_errors.get()
except ImportError:  # NumPy 1: np.seterr, which returns what reset needs
    class _numpy_errors:  # noqa: N801
        set, reset = staticmethod(np.seterr), staticmethod(lambda old: np.seterr(**old))
    _NUMPY_IGNORES = "ignore"


class _GraphTask:
    """A backward pass, so code called from a node (checkpoint) can tell passes apart.

    ``run_backward`` makes one per pass and sets ``_running[0]`` itself, without a
    context manager: this is on the path of every backward. A pass given
    ``inputs`` also keeps here what decides which nodes run (``plan``), and the
    gradients it returns (``captured``, for the nodes in ``captures``).
    """

    # accumulates: False for autograd.grad and backward(inputs=...); order: the nodes the pass visits
    __slots__ = ("id", "accumulates", "plan", "captures", "captured", "order")
    _ids = itertools.count()


# The pass now running, or None: a list's item, not a class attribute (Python would empty the caches
# of every lookup on a class each time one of its attributes is written, twice per pass).
_running: list = [None]


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
    plan, reached = task.plan, grads is not None
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
    if not node._custom and (not reached and all(g is None for g in grads) or plan is not None and node.next_functions
                             and not any(child in plan for child, _ in node.next_functions)):
        # No gradient in, or none of its edges leads on (a non-leaf of backward(inputs=...)): a built-in op's
        # node computes nothing, but as in PyTorch it checks its saved tensors and its node hooks are called,
        # with None (a custom Function's node runs).
        node._run_without_gradient()
        return _run_with_node_hooks(node, grads, plan, compute=False)
    if Extensions.anomaly is None:
        return _run_with_node_hooks(node, grads, plan)
    return Extensions.anomaly.run_node(node, lambda: _run_with_node_hooks(node, grads, plan))


def _run_with_node_hooks(node: Node, grads: list, plan: dict | None, compute: bool = True) -> tuple:
    """Node pre-hooks, the node (unless not ``compute``: then no gradient comes out), node post-hooks:
    PyTorch's order (tensor hooks ran before).

    In a pass given inputs (``plan``), the gradients for edges to nodes it does
    not visit are dropped: before the post-hooks for most built-in ops' nodes
    (PyTorch's ops do not compute them), after them for a custom Function's
    node and a cat's or stack's (their backward did, and their post-hooks see them),
    unless no edge of the cat or stack leads on (then it computed none).
    """
    hooks = node._node_hooks
    if hooks is not None:
        for hook in tuple(hooks[0].values()):
            result = hook(tuple(grads))
            if result is not None:
                grads = list(_checked_hook_result(hook, result, grads))
    input_grads = node._run_backward(grads) if compute else [None] * len(node.next_functions)
    # (a cat's or stack's backward computes every gradient once one is needed: none, if no edge leads on)
    sees_all = node._custom or node._all_gradients and plan is not None and any(
        child in plan for child, _ in node.next_functions)
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


def _by_ready_queue(roots: Sequence[Node]) -> list[Node]:
    """The same order, as PyTorch's engine finds it: count each node's consumers, then repeatedly
    run the newest node whose consumers have all run (Kahn's algorithm), ties by ``ReadyQueue``."""
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
    ready = Extensions.ReadyQueue()
    for node in sorted((node for node in root_set if node not in dependencies), key=_newest_first):
        ready.push(node)
    order = []
    while ready.heap:
        node = ready.pop()
        order.append(node)
        for child, _ in node.next_functions:
            if child is not None:
                dependencies[child] -= 1
                if dependencies[child] == 0:
                    ready.push(child)
    return order


def _newest_first(node: Node) -> int:
    return -node._sequence_nr
