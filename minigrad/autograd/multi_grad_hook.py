"""``register_multi_grad_hook``: one hook for the gradients of several tensors
(``torch.autograd.graph.register_multi_grad_hook``, where ``minigrad.autograd.graph`` has it too).

    handle = register_multi_grad_hook((a, b), lambda grads: print(grads))              # mode="all"
    handle = register_multi_grad_hook((a, b), lambda grad: print(grad), mode="any")

``mode="all"``: once per backward pass, after the gradients of all the tensors the pass reaches
are computed, ``fn(grads)`` gets them in order (None for a tensor the pass does not reach).
``mode="any"``: once per pass, ``fn(grad)`` gets the first of them computed. It is PyTorch's
algorithm: a tensor hook on each tensor, counting calls per backward pass (``engine``'s
``current_graph_task_id``), against the number of the tensors' nodes the pass runs
(``will_engine_execute_node``), counted at the first call.
"""
from __future__ import annotations

from typing import Callable, Sequence

from minigrad.autograd import engine


class _MultiHandle:
    """The handle ``register_multi_grad_hook`` returns: ``remove()`` removes every tensor's hook."""

    def __init__(self, handles: tuple) -> None:
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()

    def __enter__(self) -> "_MultiHandle":
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def register_multi_grad_hook(tensors: Sequence, fn: Callable, *, mode: str = "all") -> _MultiHandle:
    """Call ``fn`` with the gradients of ``tensors`` (see the module's docstring for the modes)."""
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    if mode == "any":
        ran = {}

        def any_hook(grad):
            task = engine.current_graph_task_id()
            if ran.get(task):
                return
            ran[task] = True
            fn(grad)

        return _MultiHandle(tuple(t.register_hook(any_hook) for t in tensors if t.requires_grad))

    for t in tensors:
        if not t.requires_grad:  # (PyTorch's AssertionError, with what to do)
            raise AssertionError("Expected gradient function to be set: every tensor given to "
                                 "register_multi_grad_hook(mode='all') must require grad")
    count, buffer, calls = {}, {}, [None]
    nodes = [t._edge()[0] for t in tensors]  # (a leaf's accumulator, kept alive here, as PyTorch keeps it)

    def hook_for(index: int):
        def all_hook(grad):
            task = engine.current_graph_task_id()
            seen = count.get(task, 0)
            grads = buffer.setdefault(task, [None] * len(nodes))
            count[task] = seen + 1
            if seen == 0:
                calls[0] = sum(map(engine.will_engine_execute_node, nodes))
            grads[index] = grad
            if seen == calls[0] - 1:
                del count[task], buffer[task]
                fn(grads)
        return all_hook

    return _MultiHandle(tuple(t.register_hook(hook_for(i)) for i, t in enumerate(tensors)))
