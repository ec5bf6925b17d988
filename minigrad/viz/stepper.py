"""Walk the backward pass one node at a time, in the engine's real order.

``backward_states(loss)`` runs backward once and records, for every node it
runs, what the node received and what it passed on: a plain list you can
index, print and test. ``BackwardStepper`` only shows one of those states.

The loop below mirrors ``minigrad.autograd.engine.run_backward`` line for
line (the order of ``engine.topological_order``, the same gradient buffers,
hooks and grad mode), minus freeing the saved tensors, so that
``loss.backward()`` still works after it. The engine has no way to let us
watch it run, so we run the nodes ourselves; a test checks that the order and
the gradients are the engine's. Make the stepper before ``loss.backward()``,
which frees the graph (or pass it ``retain_graph=True``).
"""
from __future__ import annotations

import html
import inspect
from dataclasses import dataclass, field

import numpy as np

from minigrad.autograd import engine
from minigrad.autograd.graph import AccumulateGrad, Node
from minigrad.tensor import Tensor
from minigrad.viz import graph, style


@dataclass(frozen=True)
class StepState:
    """The backward pass as ``node`` runs: step ``index`` of ``len(states)``."""

    index: int
    node: Node
    done: frozenset  # the nodes that ran before this one: their gradients are complete
    received: list  # the gradient of each of the node's outputs (arrays, or None)
    passed: list  # (input node, gradient sent to it) for each input; (None, None) if it needs none
    leaf_grads: dict = field(repr=False)  # AccumulateGrad node -> the leaf's gradient so far


def _array(grad) -> np.ndarray | None:
    return None if grad is None else np.array(grad._data, copy=True)


def backward_states(loss: Tensor) -> list[StepState]:
    """Run ``loss.backward()`` and keep one state per node, as the engine runs it.

    The states are recorded by an observer on the engine (``engine.observe``),
    so they follow the engine's own order, including one set by ``use_order``.
    The graph is retained, and leaves' ``.grad`` are left as they were: the
    gradients are in the states.
    """
    leaves = [node.variable for node in engine.topological_order([loss.grad_fn]) if isinstance(node, AccumulateGrad)]
    kept = [leaf._grad for leaf in leaves]
    states, done, leaf_grads = [], [], {}

    def record(node: Node, grads: list, input_grads: tuple) -> None:
        if isinstance(node, AccumulateGrad):
            leaf_grads[node] = _array(node.variable._grad)
        passed = [(child, _array(grad)) for (child, _), grad in zip(node.next_functions, input_grads)]
        states.append(StepState(len(states), node, frozenset(done), [_array(g) for g in grads],
                                passed, dict(leaf_grads)))
        done.append(node)

    try:
        for leaf in leaves:
            leaf._grad = None  # so we see this pass's gradient alone, and the old one is untouched
        with engine.observe(record):
            loss.backward(retain_graph=True)
    finally:
        for leaf, grad in zip(leaves, kept):
            leaf._grad = grad
    return states


def _who(node: Node, names: dict | None) -> str:
    """A node's short name: its leaf's or output's name if known, else e.g. ``MulBackward0``."""
    lines = graph.label(node, names).split("\n")
    if isinstance(node, AccumulateGrad) or len(lines) == 1:
        return lines[0]
    return lines[1]


def describe(state: StepState, total: int, names: dict[str, Tensor] | None = None) -> str:
    """The state in words, one fact a line, for the stepper's text panel."""
    node = state.node
    if isinstance(node, AccumulateGrad):
        title = f"AccumulateGrad of {_who(node, names)}"
    else:
        title = node.name() + (f" (made {_who(node, names)})" if _who(node, names) != node.name() else "")
    lines = [f"Step {state.index + 1} of {total}: {title}"]
    received = ", ".join(style.short(g) for g in state.received if g is not None)
    lines.append(f"received gradient {received}")
    if isinstance(node, AccumulateGrad):
        lines.append(f"{_who(node, names)}.grad is now {style.short(state.leaf_grads[node])}")
    for child, grad in state.passed:
        if child is not None and grad is not None:
            lines.append(f"passes {style.short(grad)} to {_who(child, names)}")
    lines.append(f"{len(state.done)} node(s) done, {total - state.index - 1} to go")
    return "\n".join(lines)


class BackwardStepper:
    """A widget to step through ``loss``'s backward pass: play button, slider, graph, text.

    ``stepper.states`` is the whole pass (see ``backward_states``); the widget
    shows ``states[slider.value]``: the node running in orange, the nodes
    already done in green (dashed), each with the gradient it received.
    Creating it does not change any ``.grad``; call ``loss.backward()`` as usual.
    """

    def __init__(self, loss: Tensor, names: dict[str, Tensor] | None = None, interval_ms: int = 1500) -> None:
        self.loss = loss
        self.names = names if names is not None else graph.caller_names(inspect.currentframe().f_back)
        self.states = backward_states(loss)
        self.interval_ms = interval_ms
        self.figure = None  # the last figure shown, kept for tests and for saving
        self._widget = None
        self._drawn: dict[int, tuple] = {}  # index -> (figure, PNG bytes)

    def draw(self, index: int):
        """The graph as it is at ``states[index]`` (a matplotlib Figure)."""
        state = self.states[index]
        highlight = {node: "done" for node in state.done}
        highlight[state.node] = "current"
        notes = {s.node: "grad " + ", ".join(style.short(g) for g in s.received if g is not None)
                 for s in self.states[: index + 1]}
        return graph.draw_graph(self.loss, names=self.names, highlight=highlight, notes=notes)

    @property
    def widget(self):
        """The ipywidgets box (built on first use, so ipywidgets is imported only in Jupyter)."""
        if self._widget is None:
            import ipywidgets as widgets

            last = len(self.states) - 1
            self.play = widgets.Play(min=0, max=last, interval=self.interval_ms, description="play")
            self.slider = widgets.IntSlider(min=0, max=last, description="step", continuous_update=False)
            widgets.jslink((self.play, "value"), (self.slider, "value"))
            self.image = widgets.Image(format="png")
            self.panel = widgets.HTML()
            self.slider.observe(lambda change: self.show(change["new"]), names="value")
            self._widget = widgets.VBox([widgets.HBox([self.play, self.slider]), self.image, self.panel])
            self.show(0)
        return self._widget

    def show(self, index: int) -> None:
        """Render ``states[index]`` into the widget."""
        if index not in self._drawn:  # each picture is drawn once, then reused
            figure = self.draw(index)
            self._drawn[index] = (figure, style.to_png(figure))
        self.figure, self.image.value = self._drawn[index]
        text = describe(self.states[index], len(self.states), self.names)
        self.panel.value = f"<pre style='font-size:{style.FONT_SIZE + 2}px'>{html.escape(text)}</pre>"

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)
