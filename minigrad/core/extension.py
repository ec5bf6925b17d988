"""Where the layers above plug into the core: every extension point, in one place.

The core runs alone (``import minigrad.core``) with each point at its default.
``minigrad/layers.py`` installs the library's layers here, in one visible list,
and nothing else reaches into the core. Each point costs one check, made only
where its feature could be in play:

- ``tensor_method`` (below; ``core/ops.py`` declares the primitives with it): the op table. A layer declares a
  Tensor method (and a top-level name) for each op it adds, or replaces a
  primitive with a PyTorch-exact version of it.
- ``Extensions.views``: PyTorch's view semantics (``minigrad/autograd/views.py``):
  how a view gets its history from its base. The core calls it only for a
  tensor whose ``_base`` or ``_view_meta`` is set, which only that layer sets.
- ``Extensions.anomaly``: anomaly mode (``minigrad/autograd/anomaly_mode.py``),
  set only while it is on: the engine and ``Function.apply`` check one attribute.
- ``Extensions.ReadyQueue``: the order among nodes ready at once in backward.
  The core's is ``heapq`` on sequence numbers (newest first); PyTorch's exact
  heap, which also breaks ties among leaves as PyTorch does, is a layer, and
  its ``ties_seen`` tells the engine when that order can be seen (hooks).
- ``Extensions.saved_tensor_hooks``: the ``saved_tensors_hooks`` blocks in force,
  innermost last (``minigrad/autograd/graph.py``): the innermost packs what a node
  saves (``pack(saved, tensor)``) and gives it back in backward (``unpack(saved, node)``).
"""
from __future__ import annotations

import heapq
import itertools
from typing import Callable


class HeapReadyQueue:
    """The nodes ready to run in backward, newest (largest sequence number) first."""

    __slots__ = ("heap", "_count")

    def __init__(self) -> None:
        self.heap: list = []
        self._count = itertools.count()  # ties (the leaves' accumulators share a number): first in, first out

    def push(self, node) -> None:
        heapq.heappush(self.heap, (-node._sequence_nr, next(self._count), node))

    def pop(self):
        return heapq.heappop(self.heap)[2]

    @staticmethod
    def ties_seen(accumulators: list) -> bool:
        """Whether the order among accumulators ready at once matters: never with this queue, which
        runs them in the order the engine's sort gives them (the first in, first out)."""
        return False


class _Extensions:
    """The points, as an object's slots (which Python reads faster than a class's attributes)."""

    __slots__ = ("Tensor", "views", "anomaly", "ReadyQueue", "saved_tensor_hooks", "saved_tensor_hooks_disabled")

    def __init__(self) -> None:
        self.Tensor: type = None  # the core's Tensor (core/tensor.py sets it), which tensor_method extends
        self.views = self.anomaly = None
        self.ReadyQueue, self.saved_tensor_hooks = HeapReadyQueue, []
        self.saved_tensor_hooks_disabled: str | None = None  # a message: entering saved_tensors_hooks raises it


Extensions = _Extensions()


# name -> the method that ``minigrad.<name>(input, ...)`` calls on its first argument
TOP_LEVEL: dict[str, Callable] = {}
# the top-level names that, as in PyTorch, take no ``out=`` (in-place ops, and those declared ``out=False``)
WITHOUT_OUT: set[str] = set()


def tensor_method(*names: str, top_level: bool = False, out: bool = True) -> Callable:
    """Make the decorated function ``Tensor.<name>`` for each of ``names`` (default: its own name);
    ``top_level``: ``minigrad.<name>`` too, with ``out=`` unless ``out=False`` (PyTorch's views and
    in-place ops take none). This is the op table's extension point."""
    def declare(fn: Callable) -> Callable:
        if hasattr(fn, "__qualname__"):  # (a property has none) help() and tracebacks say Tensor.exp
            fn.__name__ = names[0] if names else fn.__name__
            fn.__qualname__ = f"Tensor.{fn.__name__}"
        for name in names or (fn.__name__,):
            setattr(Extensions.Tensor, name, fn)
            if top_level and not name.startswith("_"):
                TOP_LEVEL[name] = fn
                if not out or name.endswith("_"):
                    WITHOUT_OUT.add(name)
        return fn
    return declare
