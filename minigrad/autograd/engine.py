"""The backward engine, as ``torch.autograd`` runs it: the core's engine (``minigrad/core/engine.py``)
with PyTorch's own ready queue, so that nodes ready at the same time (the leaves'
accumulators, which share one sequence number) run, and call their hooks, in PyTorch's order;
and what code running inside a pass may ask of it (``current_graph_task_id``,
``will_engine_execute_node``).
"""
from __future__ import annotations

from minigrad.core.engine import (  # noqa: F401
    _add_to_buffer, _by_ready_queue, _GraphTask, _plan, _run_instrumented, observe, run_backward, topological_order,
    use_order,
)
from minigrad.core.graph import AccumulateGrad, Node
from minigrad.core.instrumented import _observers, _running


class _ReadyQueue:
    """The nodes ready to run, newest first: PyTorch's ready queue, a C++ ``std::priority_queue``.

    All the leaves' accumulators share one sequence number (PyTorch's largest), so when several
    are ready at once their order is whatever that binary heap gives. To run them (and their
    tensor hooks) in PyTorch's order, this is the same heap, step for step (libstdc++'s
    ``push_heap`` and ``pop_heap``), rather than Python's ``heapq``, which breaks ties differently.
    """

    __slots__ = ("heap",)

    @staticmethod
    def ties_seen(accumulators: list[Node]) -> bool:
        """Whether the order of accumulators ready at the same time can be seen (hooks, an
        observer): then the engine runs this queue instead of its sort."""
        if _observers:
            return True
        for n in accumulators:
            if n._pre_hooks is not None or n._node_hooks is not None or n.variable._post_accumulate_grad_hooks:
                return True
        return False

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


def current_graph_task_id() -> int:
    """An id for the backward pass now running, or -1 outside backward (as ``torch._C._current_graph_task_id``)."""
    return -1 if _running[0] is None else _running[0].id


def will_engine_execute_node(node: Node) -> bool:
    """Whether the pass now running runs (or, in ``autograd.grad``, captures at) ``node``
    (``torch._C._will_engine_execute_node``: ``register_multi_grad_hook`` counts with it)."""
    task = _running[0]
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the backward pass")
    if task.plan is not None and task.captures and isinstance(node, AccumulateGrad):
        raise RuntimeError("A leaf node was passed to _will_engine_execute_node but we are currently running "
                           "autograd.grad(). This is currently not supported.")
    return node in task.plan if task.plan is not None else node in task.order
