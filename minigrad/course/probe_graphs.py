"""Stand-in graph nodes for probing a learner's graph walks (stages 02 and 04).

A ``ProbeNode`` has a name and ``next_functions``, nothing else, and every read
of ``next_functions`` spends from a budget shared by the graph. A walk that
forgets its visited set on 30 stacked diamonds (91 nodes, 2**30 paths) runs
out of budget at once, instead of running for hours.
"""
from __future__ import annotations


class Exploded(BaseException):
    """Raised when a walk reads far more nodes than the graph has (BaseException,
    so a learner's ``except Exception`` can't swallow it)."""


class Budget:
    def __init__(self, limit: int) -> None:
        self.limit, self.spent = limit, 0

    def spend(self) -> None:
        self.spent += 1
        if self.spent > self.limit:
            raise Exploded


class ProbeNode:
    """A stand-in for a graph node: a name and ``next_functions``, nothing else."""

    def __init__(self, name: str, sequence_nr: int, budget: Budget) -> None:
        # _sequence_nr lets minigrad's own engine order these nodes (for the reference).
        self._name, self._sequence_nr, self._budget = name, sequence_nr, budget
        self.edges: tuple = ()

    @property
    def next_functions(self) -> tuple:
        self._budget.spend()
        return self.edges

    def name(self) -> str:
        return self._name

    def __repr__(self) -> str:
        return f"<{self._name}>"


def build(edges: dict[str, list], budget_factor: int = 50) -> ProbeNode:
    """The root of a graph with edges ``consumer -> [producer or None]``; the first key is the root."""
    names = list(dict.fromkeys([*edges, *(p for ps in edges.values() for p in ps if p is not None)]))
    budget = Budget(budget_factor * (len(names) + 1) + 100)
    nodes = {n: ProbeNode(n, len(names) - i, budget) for i, n in enumerate(names)}
    for consumer, producers in edges.items():
        nodes[consumer].edges = tuple((None if p is None else nodes[p], 0) for p in producers)
    return nodes[names[0]]
