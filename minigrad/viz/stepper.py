"""Walk the backward pass one node at a time, in the engine's real order.

``backward_states(loss)`` runs backward once and records, for every node it
runs, what the node received and what it passed on: a plain list you can
index, print and test. ``BackwardStepper`` only shows one of those states.

The states are recorded by an observer on the real engine
(``minigrad.autograd.engine.observe``), so the stepper cannot show an order
the engine does not run. It keeps the graph (``retain_graph=True``), so
``loss.backward()`` still works after it.
"""
from __future__ import annotations

import html
import inspect
from dataclasses import dataclass, field

import numpy as np

from minigrad.autograd import engine
from minigrad.autograd.graph import AccumulateGrad, Node
from minigrad._tensor import Tensor
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


PICTURE_HEIGHT = 180  # px: with the controls and the text, the stepper fits 360 px of height
TEXT_STYLE = "font-size:13px;line-height:1.3;margin:4px 0 0;white-space:pre-wrap"


class BackwardStepper:
    """A widget to step through ``loss``'s backward pass: play button, slider, graph, text.

    ``stepper.states`` is the whole pass (see ``backward_states``); the widget
    shows step ``slider.value`` (counted from 1, like the text): the node running
    in orange, the nodes already done in green (dashed), each with the gradient it
    received. Every step is drawn on the same layout, so the picture never jumps.
    Below the widget a static copy of the current picture is kept in the notebook,
    hidden while the widget is alive: a notebook reopened without its kernel shows
    that picture where the widget can no longer be drawn.
    Creating it does not change any ``.grad``; call ``loss.backward()`` as usual.
    """

    _count = 0  # tells the static copies of several steppers in one notebook apart

    def __init__(self, loss: Tensor, names: dict[str, Tensor] | None = None, interval_ms: int = 1500,
                 size: str = "notebook") -> None:
        self.loss = loss
        self.names = names if names is not None else graph.caller_names(inspect.currentframe().f_back)
        self.states = backward_states(loss)
        self.interval_ms = interval_ms
        self.notes = [{s.node: "grad " + ", ".join(style.short(g) for g in s.received if g is not None)
                       for s in self.states[: i + 1]} for i in range(len(self.states))]
        # One layout for every step, with room for all the notes the last step shows.
        self.picture = graph.draw_graph(loss, names=self.names, notes=self.notes[-1], size=size)
        BackwardStepper._count += 1
        self.id = f"mg-stepper-{BackwardStepper._count}"
        self._widget = None
        self._static = None  # the display handle of the static copy

    def draw(self, step: int) -> str:
        """The graph as it is at step ``step`` (1 to ``len(states)``), as HTML holding its SVG
        (a layout for wide outputs and one for narrow ones, when the graph has both).

        A graph taller than ``PICTURE_HEIGHT`` shows a window of that height that follows the
        running node, so the whole stepper fits a projected screen and the node stays in view.
        """
        state = self.states[step - 1]
        highlight = {node: "done" for node in state.done}
        highlight[state.node] = "current"
        if not isinstance(self.picture, graph.GraphPicture):  # too large to draw: the summary, every step
            return self.picture.html
        self.picture.render(highlight, self.notes[step - 1], follow=state.node, max_height=PICTURE_HEIGHT)
        return f"<div class='minigrad-graph'>{self.picture.html()}</div>"

    @property
    def widget(self):
        """The ipywidgets box (built on first use, so ipywidgets is imported only in Jupyter)."""
        if self._widget is None:
            import ipywidgets as widgets

            n = len(self.states)
            # The browser animates a Play widget by itself; ipywidgets 8 shows no tooltips on its
            # buttons, so it stays hidden behind two labelled buttons that have them.
            self.play = widgets.Play(min=1, max=n, interval=self.interval_ms, layout=widgets.Layout(display="none"))
            start = widgets.Button(description="play", icon="play", layout=widgets.Layout(width="auto"),
                                   tooltip=f"Play the backward pass, one node every {self.interval_ms / 1000:g} s")
            stop = widgets.Button(description="stop", icon="stop", layout=widgets.Layout(width="auto"),
                                  tooltip="Stop playing (the slider stays where it is)")
            start.on_click(lambda _: self._start())
            stop.on_click(lambda _: setattr(self.play, "playing", False))
            self.slider = widgets.IntSlider(min=1, max=n, description="step", continuous_update=False,
                                            tooltip="Drag, or click and use the arrow keys, to move one node at a time")
            widgets.jslink((self.play, "value"), (self.slider, "value"))
            # Hides the static copy while the widget is alive (a reopened notebook has no widget, so no rule).
            self.image = widgets.HTML(layout=widgets.Layout(width="100%"))
            self.panel = widgets.HTML(layout=widgets.Layout(width="100%"))
            self.slider.observe(lambda change: self.show(change["new"]), names="value")
            self._widget = widgets.VBox([widgets.HBox([self.play, start, stop, self.slider]), self.image, self.panel])
            self.show(1)
        return self._widget

    def _start(self) -> None:
        if self.slider.value == self.slider.max:  # at the end: play again from the start
            self.play.value = self.slider.value = 1
        self.play.playing = True

    def show(self, step: int) -> None:
        """Render step ``step`` (1 to ``len(states)``) into the widget and its static copy."""
        svg = self.draw(step)
        self.image.value = f"<style>.{self.id}-static{{display:none}}</style>{svg}"
        text = describe(self.states[step - 1], len(self.states), self.names)
        self.panel.value = f"<pre style='{TEXT_STYLE}'>{html.escape(text)}</pre>"
        if self._static is not None:
            self._static.update(self._static_html(svg, text))

    def _static_html(self, svg: str, text: str):
        from IPython.display import HTML

        return HTML(f"<div class='{self.id}-static'>{style.hide_lost_widget(self.id + '-static')}<div>{svg}</div><pre style='{TEXT_STYLE}'>{html.escape(text)}</pre>"
                    "<p><i>A picture of the backward stepper: run the cell to step through it.</i></p></div>")

    def _ipython_display_(self) -> None:
        from IPython.display import DisplayHandle, display

        display(self.widget)
        self._static = DisplayHandle()
        step = self.slider.value
        self._static.display(self._static_html(self.draw(step), describe(self.states[step - 1], len(self.states), self.names)))
