"""The order of the backward pass against PyTorch's, on generated graphs.

The order is observable: tensor hooks, node hooks and post-accumulate hooks run when their node
runs. Among the nodes ready to run, both engines take the newest; the leaves' accumulators all
share PyTorch's largest sequence number, so their order among themselves is that of PyTorch's
ready queue (a C++ binary heap), which ``engine._ReadyQueue`` reproduces.
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

import minigrad
from minigrad.autograd.engine import _ReadyQueue

torch = pytest.importorskip("torch")

OPS = ("mul", "add", "sub", "exp", "sin", "sum_keep")


@st.composite
def programs(draw):
    n_leaves = draw(st.integers(1, 5))
    steps = []
    for _ in range(draw(st.integers(1, 8))):
        op = draw(st.sampled_from(OPS))
        a = draw(st.integers(0, n_leaves + len(steps) - 1))
        b = draw(st.integers(0, n_leaves + len(steps) - 1))
        steps.append((op, a, b, draw(st.booleans())))
    roots = draw(st.lists(st.integers(0, n_leaves + len(steps) - 1), min_size=1, max_size=3, unique=True))
    return n_leaves, steps, roots


def run(lib, program):
    n_leaves, steps, roots = program
    log = []
    values = [lib.tensor([0.5 + 0.25 * i, -0.3], dtype=lib.float64, requires_grad=True) for i in range(n_leaves)]
    for i, leaf in enumerate(values):
        leaf.register_hook(lambda g, i=i: log.append(f"leaf {i}"))
        leaf.register_post_accumulate_grad_hook(lambda t, i=i: log.append(f"acc {i}"))
    for k, (op, a, b, hooked) in enumerate(steps):
        x, y = values[a], values[b]
        out = {"mul": lambda: x * y, "add": lambda: x + y, "sub": lambda: x - y, "exp": lambda: x.exp(),
               "sin": lambda: x.sin(), "sum_keep": lambda: x.sum(0, keepdim=True) * y}[op]()
        if hooked:
            out.register_hook(lambda g, k=k: log.append(f"step {k}"))
            out.grad_fn.register_hook(lambda gi, go, k=k: log.append(f"node {k}"))
        values.append(out)
    outputs = [values[r].sum() for r in roots]
    if not all(o.requires_grad for o in outputs):
        return "no graph"
    lib.autograd.backward(outputs)
    return log


@settings(max_examples=300, deadline=None)
@given(program=programs())
def test_hooks_run_in_torchs_order(program):
    assert run(minigrad, program) == run(torch, program)


class _Key:
    """A stand-in node with a sequence number (all the ready queue looks at) and a name."""

    def __init__(self, name: str, sequence_nr: int) -> None:
        self.name, self._sequence_nr = name, sequence_nr


@settings(max_examples=200, deadline=None)
@given(operations=st.lists(st.one_of(st.integers(0, 3), st.none()), max_size=40))
def test_ready_queue_is_a_max_heap(operations):
    """Pops come out with non-increasing sequence numbers, whatever the pushes (None: pop)."""
    queue, popped, pushed = _ReadyQueue(), [], 0
    for op in operations:
        if op is None:
            if queue.heap:
                popped.append(queue.pop()._sequence_nr)
        else:
            queue.push(_Key(str(pushed), op))
            pushed += 1
            popped.append(None)  # a push resets the comparison
    while queue.heap:
        popped.append(queue.pop()._sequence_nr)
    runs, current = [], []
    for value in popped:
        if value is None:
            runs.append(current)
            current = []
        else:
            current.append(value)
    runs.append(current)
    for run_ in runs:
        assert run_ == sorted(run_, reverse=True)


def _graph(program):
    """The program's graph without hooks (its roots' nodes), built in minigrad."""
    n_leaves, steps, roots = program
    values = [minigrad.tensor([0.5 + 0.25 * i, -0.3], dtype=minigrad.float64, requires_grad=True)
              for i in range(n_leaves)]
    for op, a, b, _ in steps:
        x, y = values[a], values[b]
        values.append({"mul": lambda: x * y, "add": lambda: x + y, "sub": lambda: x - y, "exp": lambda: x.exp(),
                       "sin": lambda: x.sin(), "sum_keep": lambda: x.sum(0, keepdim=True) * y}[op]())
    return values, [values[r].grad_fn or values[r]._edge()[0] for r in roots]


@settings(max_examples=300, deadline=None)
@given(program=programs())
def test_the_sorted_order_is_the_ready_queues_order(program):
    """Without hooks, backward's order is the nodes sorted newest first, each accumulator right after
    its last consumer: the ready queue's order (Kahn's algorithm, run here too), except that
    accumulators ready at the same moment may come in another order among themselves."""
    from minigrad.autograd.engine import _by_ready_queue, topological_order

    values, roots = _graph(program)
    fast, slow = topological_order(roots), _by_ready_queue(roots)
    assert len(fast) == len(slow) == len(set(fast))

    def runs(order):  # each non-accumulator, followed by the set of accumulators after it
        out, current = [], [None, set()]
        for node in order:
            if isinstance(node, minigrad.autograd.graph.AccumulateGrad):
                current[1].add(node)
            else:
                out.append(current)
                current = [node, set()]
        return out + [current]

    assert runs(fast) == runs(slow)


def test_a_root_given_twice_is_run_once():
    from minigrad.autograd.engine import topological_order

    x = minigrad.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    order = topological_order([y.grad_fn, y.grad_fn])
    assert len(order) == len(set(order)) == 3  # SumBackward, MulBackward, x's accumulator
