"""``minigrad.viz``: the pure functions, drawings checked for structure (not pixels),
the backward stepper against the engine, the function explorer against closed
forms, and the dashboard's throttling with a fake clock.

Graphs are SVG, checked through the geometry behind them and by parsing the SVG;
the explorer's figures are drawn with the Agg backend; widgets are driven through
their Python state (no browser: that is tests/viz/test_browser.py).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import minigrad  # noqa: E402
import minigrad.nn as nn  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from minigrad.autograd import Function, engine  # noqa: E402
from minigrad.autograd.graph import AccumulateGrad  # noqa: E402
from minigrad.viz import (  # noqa: E402
    BackwardStepper, Throttle, TrainingDashboard, backward_states, draw_graph, explore, function_explorer,
    graph_of, label, layers,
)
from minigrad.viz.graph import rows  # noqa: E402


def leaf(values):
    return minigrad.tensor(np.asarray(values, dtype=np.float64), requires_grad=True)


def node_boxes(picture) -> list:
    """The kind of each node box of a drawn graph ("leaf", "function", "current", "done");
    none for a summary."""
    if not hasattr(picture, "boxes"):
        return []
    return [picture.kind(node) for node in picture.nodes]


def box_texts(picture) -> dict:
    """``{text of a box: (x, y) of its centre}``."""
    return {"\n".join(picture.lines(n)): picture.boxes[n][:2] for n in picture.nodes}


def parsed(picture):
    """The picture's SVG parsed as XML (so also checked to be well-formed)."""
    import xml.etree.ElementTree as ET

    return ET.fromstring(picture.svg)


def svg_texts(picture) -> list:
    return [t.text for t in parsed(picture).iter("{http://www.w3.org/2000/svg}text")]


@pytest.fixture
def small():
    """c = a * b; d = c + a: four nodes, a used twice."""
    a, b = leaf(2.0), leaf(-3.0)
    c = a * b
    d = c + a
    return a, b, c, d


# -- graph_of, layers, label ------------------------------------------------------------------
def test_graph_of_known_expression(small):
    a, b, c, d = small
    nodes, edges = graph_of(d)
    acc = {n.variable is a: n for n in nodes if isinstance(n, AccumulateGrad)}
    acc_a, acc_b = acc[True], acc[False]
    assert sorted(n.name() for n in nodes) == ["AccumulateGrad", "AccumulateGrad", "AddBackward0", "MulBackward0"]
    assert set(edges) == {(acc_a, c.grad_fn), (acc_b, c.grad_fn), (c.grad_fn, d.grad_fn), (acc_a, d.grad_fn)}
    assert len(edges) == 4
    position = {n: i for i, n in enumerate(nodes)}
    assert all(position[x] < position[y] for x, y in edges), "nodes come inputs first"


def test_graph_of_lists_an_edge_used_twice_once_and_handles_leaves():
    x = leaf([1.0, 2.0])
    nodes, edges = graph_of(x * x)
    assert [n.name() for n in nodes] == ["AccumulateGrad", "MulBackward0"] and len(edges) == 1
    assert graph_of(x)[0][0].variable is x and graph_of(x)[1] == []
    assert graph_of(minigrad.tensor([1.0])) == ([], [])


def test_layers_put_every_edge_left_to_right_and_leaves_next_to_their_consumer():
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 2))
    loss = F.cross_entropy(model(minigrad.randn(5, 2)), minigrad.tensor(np.array([0, 1, 0, 1, 1])))
    nodes, edges = graph_of(loss)
    column = layers(nodes, edges)
    assert set(column) == set(nodes)
    assert all(column[a] < column[b] for a, b in edges)
    assert column[loss.grad_fn] == max(column.values()) and min(column.values()) == 0
    for a, b in edges:  # a leaf sits in the column just before its (only) consumer
        if isinstance(a, AccumulateGrad):
            assert column[a] == column[b] - 1


def test_layers_on_plain_hashables():
    # a diamond plus a long edge: x -> y -> z -> out, x -> out
    edges = [("x", "y"), ("y", "z"), ("z", "out"), ("x", "out"), ("w", "z")]
    column = layers(["x", "y", "z", "w", "out"], edges)
    assert column == {"x": 0, "y": 1, "w": 1, "z": 2, "out": 3}
    assert layers([], []) == {}


def test_rows_uncross_a_simple_crossing():
    # columns: [p, q] -> [r, s] with p->s and q->r: the sweeps should order r, s to follow q, p
    nodes, edges = ["p", "q", "s", "r"], [("p", "s"), ("q", "r")]
    row = rows(nodes, edges, {"p": 0, "q": 0, "r": 1, "s": 1})
    assert (row["p"] < row["q"]) == (row["s"] < row["r"])


def test_labels(small):
    a, b, c, d = small
    d.backward(retain_graph=True)
    nodes, _ = graph_of(d)
    by_name = {n.variable is a and "a" or "b" if isinstance(n, AccumulateGrad) else n.name(): n for n in nodes}
    names = {"a": a, "b": b, "c": c, "d": d}
    assert label(by_name["a"], names) == "a\nscalar"
    assert label(by_name["a"], names, show_values=True) == "a\nscalar\nvalue 2\ngrad -2"  # d = a*b + a: b + 1
    assert label(by_name["b"]) == "leaf\nscalar"
    assert label(by_name["MulBackward0"], names) == "MulBackward0\nc"
    assert label(by_name["AddBackward0"]) == "AddBackward0"
    w = leaf(np.ones((2, 3)))
    assert label(graph_of(w)[0][0], {"w": w}) == "w\nshape 2×3"


# -- drawing ----------------------------------------------------------------------------------
def test_draw_graph_structure(small):
    a, b, c, d = small
    fig = draw_graph(d)  # names come from this function's variables
    assert len(node_boxes(fig)) == 4
    texts = box_texts(fig)
    assert set(texts) == {"a\nscalar", "b\nscalar", "MulBackward0\nc", "AddBackward0\nd"}
    x = {t.split("\n")[0]: pos[0] for t, pos in texts.items()}
    assert x["a"] < x["MulBackward0"] < x["AddBackward0"] and x["b"] < x["MulBackward0"]
    assert fig.direction == "LR" and fig.width <= 860  # small enough to go across, inside a cell
    assert {"a", "scalar", "MulBackward0", "c", "AddBackward0", "d"} <= set(svg_texts(fig))
    assert "<svg" in fig._repr_html_()


def test_draw_graph_names_a_models_parameters_and_shows_values():
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 3))
    out = model(minigrad.randn(4, 2)).sum()
    texts = "\n".join(box_texts(draw_graph(out, show_values=True)))
    assert "model.0.weight\nshape 3×2\nvalue [" in texts and "model.0.bias" in texts
    texts = box_texts(draw_graph(out, names={}))
    assert "leaf\nshape 3×2" in texts


def test_draw_graph_left_to_right_for_every_edge():
    x, w = leaf([0.5, -1.0]), leaf([2.0, 3.0])
    p = x * w
    t = p.tanh()
    e = x.exp()
    q = e * w
    s = t + q
    y = s.sum()
    names = {"x": x, "w": w, "p": p, "t": t, "e": e, "q": q, "s": s, "y": y}  # every box unique
    fig = draw_graph(y, names=names)
    nodes, edges = graph_of(y)
    texts = box_texts(fig)
    assert len(node_boxes(fig)) == len(nodes) == len(texts) == 8
    x_of = {node: texts[label(node, names)][0] for node in nodes}
    assert all(x_of[a] < x_of[b] for a, b in edges)
    column = layers(nodes, edges)  # and one x per column, growing with the column
    xs_of_column = {}
    for node in nodes:
        xs_of_column.setdefault(column[node], set()).add(x_of[node])
    assert all(len(xs) == 1 for xs in xs_of_column.values())
    xs = [min(xs_of_column[c]) for c in sorted(xs_of_column)]
    assert xs == sorted(xs) and len(set(xs)) == len(xs)


def test_draw_graph_without_a_graph_says_why():
    fig = draw_graph(minigrad.tensor([1.0, 2.0]))
    assert not node_boxes(fig)
    assert "requires_grad=True" in fig.text and "requires_grad=True" in fig._repr_html_()


def test_large_graph_is_summarised():
    x = leaf([1.0])
    y = x
    for _ in range(999):
        y = y * 1.001
    nodes, edges = graph_of(y)
    assert len(nodes) == 1000
    fig = draw_graph(y)
    assert not node_boxes(fig), "a 1000-node graph must not be drawn box by box"
    text = fig._repr_html_()  # its sentences are HTML, so they wrap instead of being cut off
    assert "1000 nodes, 999 edges, depth 1000, widest layer 1, 1 leaf" in text
    assert "1000 nodes, more than the 200 drawn" in text  # says which limit it passed
    bars = [r for r in parsed(fig).iter("{http://www.w3.org/2000/svg}rect") if r.get("class") == "bar"]
    assert sorted(int(b.get("data-count")) for b in bars) == [1, 999]


def test_long_chain_is_summarised_wide_graph_drawn():
    x = leaf([1.0])
    chain = x
    for _ in range(45):  # few nodes, but 46 columns
        chain = chain * 1.5
    summary = draw_graph(chain)
    assert not node_boxes(summary) and "more than 40 steps deep" in summary.why
    wide = minigrad.stack([x * float(k) for k in range(60)]).sum()  # 63 nodes in 4 columns: drawn
    assert len(node_boxes(draw_graph(wide))) == len(graph_of(wide)[0])


# -- the backward stepper ---------------------------------------------------------------------
def mlp_loss(seed=0):
    minigrad.manual_seed(seed)
    model = nn.Sequential(nn.Linear(2, 4), nn.Tanh(), nn.Linear(4, 2))
    x = minigrad.randn(6, 2)
    return model, F.cross_entropy(model(x), minigrad.tensor(np.array([0, 1, 1, 0, 1, 0])))


def test_stepper_order_is_the_engines():
    _, loss = mlp_loss()
    states = backward_states(loss)
    assert [s.node for s in states] == engine.topological_order([loss.grad_fn])
    assert [s.index for s in states] == list(range(len(states)))
    for i, s in enumerate(states):
        assert s.done == frozenset(t.node for t in states[:i])


def test_stepper_gradients_equal_backward_and_leave_grad_alone():
    model, loss = mlp_loss()
    params = list(model.parameters())
    kept = minigrad.tensor(np.full((4,), 7.0))
    params[1].grad = kept  # an old gradient must survive the stepper untouched
    states = backward_states(loss)
    assert params[0].grad is None and params[1].grad is kept
    np.testing.assert_array_equal(kept.numpy(), 7.0)
    final = states[-1].leaf_grads
    model.zero_grad()
    loss.backward()  # works: the stepper did not free the graph
    by_leaf = {node.variable: g for node, g in final.items()}
    assert len(by_leaf) == len(params)
    for p in params:
        np.testing.assert_allclose(by_leaf[p], p.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_stepper_states_received_and_passed():
    a, b = leaf(2.0), leaf(-3.0)
    c = a * b
    loss = c * c  # dloss/dc = 2c = -12
    states = backward_states(loss)
    first, second = states[0], states[1]
    assert first.node is loss.grad_fn and first.received[0] == 1.0
    assert [g for _, g in first.passed] == [-6.0, -6.0]  # to c, twice
    assert second.node is c.grad_fn and second.received[0] == -12.0
    passed = {child.variable is a and "a" or "b": g for child, g in second.passed}
    assert passed == {"a": -12.0 * -3.0, "b": -12.0 * 2.0}
    assert {n.variable is a and "a" or "b": g for n, g in states[-1].leaf_grads.items()} == {"a": 36.0, "b": -24.0}


def test_stepper_widget_follows_its_slider():
    pytest.importorskip("ipywidgets")
    a, b = leaf(2.0), leaf(-3.0)
    c = a * b
    loss = (c + a).tanh()
    stepper = BackwardStepper(loss)
    stepper.widget  # builds the widget and shows step 1
    n = len(stepper.states)
    assert (stepper.slider.min, stepper.slider.max, stepper.play.min, stepper.play.max) == (1, n, 1, n)
    start, stop = stepper.widget.children[0].children[1:3]
    assert stepper.slider.tooltip and "Play the backward pass" in start.tooltip and stop.tooltip
    stepper.slider.value = n
    start.click()  # at the end, play starts again from step 1
    assert stepper.play.playing and stepper.slider.value == 1
    stop.click()
    assert not stepper.play.playing
    picture = stepper.picture
    geometry = dict(picture.boxes)
    seen = set()
    for step in [1, 3, n]:
        stepper.slider.value = step
        state = stepper.states[step - 1]
        assert f"Step {step} of {n}" in stepper.panel.value  # the slider and the text count alike
        assert state.node.name() in stepper.panel.value
        kinds = node_boxes(picture)
        assert kinds.count("current") == 1 and kinds.count("done") == step - 1
        current = next(node for node in picture.nodes if picture.kind(node) == "current")
        assert current is state.node
        grad = f"{state.received[0].item():.4g}"
        assert f"grad {grad}" in picture.lines(current) and f"received gradient {grad}" in stepper.panel.value
        assert picture.boxes == geometry, "the boxes must not move between steps"
        assert picture.svg in stepper.image.value
        seen.add(stepper.image.value)
    assert len(seen) == 3, "each step shows a different picture"
    stepper.slider.value = 1  # back to a step already drawn: its own picture again
    assert node_boxes(picture).count("done") == 0


def test_stepper_keeps_a_static_picture_for_a_reopened_notebook():
    """The widget hides the static copy with a style rule only it carries; the copy follows the slider."""
    pytest.importorskip("ipywidgets")
    pytest.importorskip("IPython")
    from unittest import mock

    loss = (leaf(2.0) * leaf(3.0)).exp()
    stepper = BackwardStepper(loss)
    shown = []
    with mock.patch("IPython.display.display", side_effect=lambda *objs, **kw: shown.extend(objs)), \
            mock.patch("IPython.display.DisplayHandle.display", lambda self, obj, **kw: shown.append(obj)), \
            mock.patch("IPython.display.DisplayHandle.update", lambda self, obj, **kw: shown.append(obj)):
        stepper._ipython_display_()
        stepper.slider.value = 2
    static = [o for o in shown if hasattr(o, "data")]
    assert len(static) == 2 and f"{stepper.id}-static" in static[0].data
    assert "Step 1 of" in static[0].data and "Step 2 of" in static[1].data
    assert f".{stepper.id}-static{{display:none}}" in stepper.image.value


# -- the function explorer --------------------------------------------------------------------
class Sin(Function):
    """minigrad has no sin: this one is written here, as lesson 01 would."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return minigrad.tensor(np.sin(x.detach().numpy()))

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * minigrad.tensor(np.cos(x.detach().numpy()))


def test_explore_sin_derivative_is_cos_and_tangent_touches():
    xs = np.linspace(-3, 3, 61)
    r = explore(lambda x: Sin.apply(x), xs, {}, x0=0.7)
    np.testing.assert_allclose(r["y"], np.sin(xs), atol=1e-12)
    np.testing.assert_allclose(r["dy"], np.cos(xs), atol=1e-12)
    assert r["y0"] == pytest.approx(np.sin(0.7)) and r["slope"] == pytest.approx(np.cos(0.7))
    # the tangent is a line through (x0, f(x0)) with slope f'(x0)
    np.testing.assert_allclose(r["tangent"], np.sin(0.7) + np.cos(0.7) * (xs - 0.7), atol=1e-12)
    assert np.interp(0.7, xs, r["tangent"]) == pytest.approx(np.sin(0.7))


@pytest.mark.parametrize("a", [0.5, 2.0])
def test_explore_library_ops_with_a_parameter(a):
    xs = np.linspace(-2, 2, 41)
    r = explore(lambda x, a: (a * x).tanh() + x ** 3, xs, {"a": a}, x0=-1.0)
    np.testing.assert_allclose(r["y"], np.tanh(a * xs) + xs ** 3, atol=1e-12)
    np.testing.assert_allclose(r["dy"], a * (1 - np.tanh(a * xs) ** 2) + 3 * xs ** 2, atol=1e-12)
    assert r["slope"] == pytest.approx(a * (1 - np.tanh(-a) ** 2) + 3)


def test_function_explorer_widget():
    pytest.importorskip("ipywidgets")
    explorer = function_explorer(lambda x, a: (a * x).exp(), x_range=(-1, 1), params={"a": (0.1, 3.0, 1.0)})
    assert set(explorer.sliders) == {"a", "x0"} and explorer.sliders["a"].value == 1.0
    before = explorer.image.value
    explorer.sliders["x0"].value = 0.5
    explorer.sliders["a"].value = 2.0
    assert explorer.result["slope"] == pytest.approx(2 * np.exp(1.0))
    assert "x0 = 0.5:  f(x0) = 2.718" in explorer.image.value
    assert explorer.image.value != before and not explorer.message
    explorer.f = lambda x, a: x.no_such_method()  # a learner's mistake: shown, not raised
    explorer.update()
    assert "AttributeError" in explorer.message and "AttributeError" in explorer.image.value
    assert "x0 = 0.5" in explorer.image.value, "the last picture stays"


# -- the training dashboard -------------------------------------------------------------------
class FakeClock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_throttle_waits_interval_and_keeps_within_budget():
    clock = FakeClock()
    throttle = Throttle(interval=0.5, budget=0.05, clock=clock, first_cost=0.1)
    draws = []

    def draw():
        draws.append(clock.now)
        clock.now += 0.1  # every draw takes 100 ms

    for _ in range(2000):  # 10 ms of training per step, 20 s in all
        clock.now += 0.01
        if throttle.due():
            throttle.run(draw)
    assert draws[0] == pytest.approx(2.01)  # 0.1 s of drawing is 5 % of the 2 s since the first step
    assert throttle.spent <= 0.05 * (clock.now - 0.01) + 1e-9
    assert throttle.spent >= 0.04 * clock.now  # and it does use its budget
    gaps = np.diff(draws)
    assert gaps.min() >= 0.5


def test_throttle_draws_every_interval_when_drawing_is_cheap():
    clock = FakeClock()
    throttle = Throttle(interval=0.5, budget=0.05, clock=clock, first_cost=0.001)
    count = 0
    for _ in range(1000):  # 10 s
        clock.now += 0.01
        if throttle.due():
            throttle.run(lambda: None)
            count += 1
    assert count == 20  # every 0.5 s, from 0.03 s on


def test_dashboard_text_mode_prints_now_and_then(capsys):
    clock = FakeClock()
    dash = TrainingDashboard(total_steps=1000, text=True, clock=clock)
    for step in range(1000):
        clock.now += 0.02  # 20 s in all
        dash.log(step, loss=minigrad.tensor(1.0 / (step + 1)), accuracy=step / 1000)
    lines = capsys.readouterr().out.splitlines()
    assert 3 <= len(lines) <= 5 and dash.updates == len(lines)  # every 5 s, and the last step
    assert lines[-1] == "step 1000/1000 · loss 0.001 · accuracy 0.999 · 50.0 steps/s"
    assert dash.history["loss"][0] == list(range(1000)) and dash.history["loss"][1][0] == 1.0


def svgs(page: str) -> list:
    """Every SVG of the dashboard's HTML, parsed (so also checked to be well-formed)."""
    import re
    import xml.etree.ElementTree as ET

    return [ET.fromstring(s) for s in re.findall(r"<svg.*?</svg>", page, flags=re.S)]


def titles(page: str) -> list:
    return re.findall(r"class='mg-title'[^>]*>([^<]*)<", page)


def tags(svg, name: str) -> list:
    return svg.findall(f"{{http://www.w3.org/2000/svg}}{name}")


def test_dashboard_view_with_a_fake_clock(capsys):
    from minigrad.data.toy import make_moons

    X, y = make_moons(60, seed=1)
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    clock = FakeClock()
    dash = TrainingDashboard(total_steps=500, data=(X, y), predict=model, text=False, clock=clock, frames=0)
    assert "waiting for the first step" in dash.html()
    for step in range(499):
        clock.now += 0.01  # 5 s in all
        dash.log(step, loss=1.0 / (step + 1), accuracy=step / 500)
    assert 10 <= dash.updates <= 11  # the first step at once, then every 0.5 s: drawing costs no time on this clock
    updates = dash.updates
    clock.now += 0.01
    dash.log(499, loss=0.5, accuracy=1.0)  # the last step is always shown
    assert dash.updates == updates + 1
    page = dash.html()
    assert "step 500/500 · loss 0.5 · accuracy 1 · 100.0 steps/s" in page
    assert "width:100.0%" in page  # the progress bar is full
    loss, accuracy, boundary = svgs(page)
    assert titles(page) == ["loss: 0.5", "accuracy: 1", "decision boundary"]
    assert not any(tags(s, "text") for s in (loss, accuracy, boundary)), "text is HTML, never scaled with a picture"
    assert len(tags(loss, "polyline")[0].get("points").split()) == 501  # every step, then the last again
    assert len(tags(boundary, "circle")) == 30  # class 0 points are circles, class 1 squares
    grid = [r for r in tags(boundary, "rect") if r.get("shape-rendering")]
    assert 40 <= len(grid) < 400  # at least one run of equal classes per grid row, not one per cell
    assert len(tags(boundary, "rect")) - len(grid) == 30


def test_dashboard_shows_a_dozen_frames_of_a_run_faster_than_the_eye(monkeypatch):
    """1000 steps in 0.1 s (faster than one 0.5 s redraw): the frames come from progress, and
    each is held on screen for ``pace`` seconds."""
    from minigrad.viz import dashboard as dashboard_module

    clock, held = FakeClock(), []

    def fake_sleep(seconds):
        held.append(seconds)
        clock.now += seconds

    monkeypatch.setattr(dashboard_module.time, "sleep", fake_sleep)
    dash = TrainingDashboard(total_steps=1000, text=False, clock=clock, pace=0.2)
    shown = []
    dash._handle.update = lambda view: shown.append(dash.step)
    for step in range(1000):
        clock.now += 0.0001
        dash.log(step, loss=1.0 / (step + 1))
    assert len(shown) >= 12 and shown[-1] == 999
    gaps = np.diff(shown)
    assert gaps.max() <= 1000 / 12 + 1, "frames are spread over the whole run"
    assert len(held) >= 11 and all(0 < s <= 0.2 for s in held)  # the earlier frame stayed 0.2 s on screen
    speed = dash.speed
    dash.finish()  # after the last step was shown: nothing new, and the speed stays
    assert len(shown) == len(set(shown)) and dash.speed == speed and dash.speed > 0


def test_region_colours_stay_apart_for_colour_blind_viewers():
    """Every pair of decision-region colours differs by CIE76 >= 20 in normal vision and under
    simulated protanopia, deuteranopia and tritanopia (Machado et al. 2009, full severity)."""
    from itertools import combinations

    from minigrad.viz.dashboard import REGIONS

    simulations = {
        "normal": np.eye(3),
        "protan": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
        "deutan": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
        "tritan": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
    }

    def linear(colour):
        c = np.array([int(colour[i:i + 2], 16) for i in (1, 3, 5)]) / 255
        return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)

    def lab(rgb):
        xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb
        f = np.cbrt(xyz / np.array([0.95047, 1.0, 1.08883]))  # every colour here is light: the cube-root branch
        return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])

    for name, matrix in simulations.items():
        seen = [lab(np.clip(np.asarray(matrix) @ linear(c), 0, 1)) for c in REGIONS]
        for (i, a), (j, b) in combinations(enumerate(seen), 2):
            assert np.linalg.norm(a - b) >= 20, f"regions {i} and {j} look alike ({name})"


def test_dashboard_fits_a_narrow_cell():
    """No fixed pixel widths: the progress bar and the charts shrink with the cell, in one row."""
    clock = FakeClock()
    dash = TrainingDashboard(total_steps=10, text=False, clock=clock)
    for step in range(10):
        dash.log(step, loss=1.0, accuracy=0.5)
    page = dash.html()
    assert "flex-wrap" not in page and "min-width:0" in page
    assert all(s.get("width") == "100%" for s in svgs(page))
    assert all(int(px) >= 13 for px in re.findall(r"font-size:(\d+)px", page)), "text of 13 px or more, in CSS px"
    bar = page.split("mg-progress", 1)[1].split(">", 1)[0]
    assert "px" not in bar.split("height")[0], "the progress bar has no fixed width"


def test_dashboard_without_a_total_shows_a_run_shorter_than_one_redraw():
    """25 steps in a quarter of a second, no total (a loop that stops on the clock): the view
    still shows two frames, where the run started and where it ended."""
    clock = FakeClock()
    dash = TrainingDashboard(text=False, clock=clock)
    shown = []
    dash._handle.update = lambda view: shown.append(dash.step)
    for step in range(25):
        clock.now += 0.01
        dash.log(step, loss=1.0 / (step + 1))
    dash.finish()
    assert shown == [0, 24]


def test_dashboard_thins_long_curves_and_needs_no_total():
    clock = FakeClock()
    dash = TrainingDashboard(text=False, clock=clock)
    dash.finish()  # nothing logged yet: nothing to show
    assert dash.updates == 0
    for step in range(5000):
        dash.log(step, loss=float(step))
    dash.finish()
    (chart,) = svgs(dash.html())
    points = tags(chart, "polyline")[0].get("points").split()
    assert len(points) == 501 and points[-1].startswith("1000.0,")  # every 10th step, and the last at the right edge
    assert "mg-progress" not in dash.html()  # no progress bar without a total
    assert dash.status().startswith("step 5000 · loss 4999")


# -- packaging --------------------------------------------------------------------------------
def test_imports_stay_light():
    code = (
        "import sys, minigrad\n"
        "assert 'minigrad.viz' not in sys.modules\n"
        "import minigrad.viz\n"
        "heavy = [m for m in ('matplotlib', 'ipywidgets', 'IPython') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_stepper_follows_the_engines_order_even_a_custom_one():
    """The states come from the engine itself: an order set with use_order shows up in them."""
    from minigrad.autograd import engine
    from minigrad.viz.stepper import backward_states

    a = minigrad.tensor([1.0, 2.0], requires_grad=True)
    b = minigrad.tensor([3.0, 4.0], requires_grad=True)
    loss = ((a * b).exp() + a * 2).sum()
    default = [s.node for s in backward_states(loss)]
    assert default == engine.topological_order([loss.grad_fn])

    def leaves_last_reversed(roots):
        order = engine.topological_order(roots)
        inner = [n for n in order if n.next_functions]
        return inner + [n for n in order if not n.next_functions][::-1]

    with engine.use_order(leaves_last_reversed):
        custom = [s.node for s in backward_states(loss)]
    assert custom == leaves_last_reversed([loss.grad_fn]) != default


def segment_hits_box(p, q, box, inset: float = 2.0) -> bool:
    """Whether the segment p-q passes through the inside of ``box`` (shrunk by ``inset``)."""
    left, right = box.x - box.w / 2 + inset, box.x + box.w / 2 - inset
    top, bottom = box.y - box.h / 2 + inset, box.y + box.h / 2 - inset
    t0, t1 = 0.0, 1.0  # Liang-Barsky clipping
    dx, dy = q[0] - p[0], q[1] - p[1]
    for edge_p, edge_q in ((-dx, p[0] - left), (dx, right - p[0]), (-dy, p[1] - top), (dy, bottom - p[1])):
        if edge_p == 0:
            if edge_q < 0:
                return False
            continue
        t = edge_q / edge_p
        if edge_p < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
    return t0 < t1


def assert_no_arrow_crosses_a_box(picture):
    assert picture.edges
    for (a, b), points in picture.edges.items():
        for node, box in picture.boxes.items():
            if node is a or node is b:
                continue
            for p, q in zip(points, points[1:]):
                assert not segment_hits_box(p, q, box), f"the arrow {a.name()} -> {b.name()} crosses {node.name()}"
        start, end = points[0], points[-1]  # and it starts and ends on its own boxes' borders
        for point, node in ((start, a), (end, b)):
            box = picture.boxes[node]
            assert abs(point[0] - box.x) <= box.w / 2 + 0.5 and abs(point[1] - box.y) <= box.h / 2 + 0.5


def test_no_arrow_runs_behind_a_box_it_does_not_connect():
    """h feeds AddBackward0 directly and through ExpBackward0: the direct arrow skips a column."""
    a = minigrad.tensor([1.0, 2.0], requires_grad=True)
    h = a * 3
    picture = draw_graph((h + h.exp()).sum())
    assert picture.direction == "LR" and len(picture.edges) >= 4
    assert any(len(points) > 2 for points in picture.edges.values()), "the skipping arrow goes around"
    assert_no_arrow_crosses_a_box(picture)


def mlp3_loss():
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 10))
    return F.cross_entropy(model(minigrad.randn(8, 64)), minigrad.tensor(np.arange(8)))


@pytest.mark.parametrize("shown_at", [900, 700])  # a notebook cell; the same cell at 1280x720 and 150% zoom
def test_an_mlps_graph_keeps_readable_text_in_a_cell(shown_at):
    picture = draw_graph(mlp3_loss())
    assert picture.direction == "TB", "twelve nodes do not fit across a cell: top to bottom"
    smallest = min(float(t.get("font-size", picture.font)) for t in parsed(picture).iter())
    assert smallest * min(1.0, shown_at / picture.width) >= 12
    # each layer's weight and bias sit in the row of the operation that uses them
    rows = {}
    for node in picture.nodes:
        rows.setdefault(round(picture.boxes[node].y), []).append(node.name())
    assert sum(names.count("AccumulateGrad") == 2 and "AddmmBackward0" in names for names in rows.values()) == 3
    assert_no_arrow_crosses_a_box(picture)


def test_a_thirty_node_graph_is_drawn_readably_and_lecture_size_is_larger():
    x = leaf(np.ones(3))
    h = x
    for k in range(9):  # three nodes a step: 1 leaf + 27 + 2 = 30
        h = (h * 0.5 + float(k)).tanh()
    loss = h.sum() * 2
    picture = draw_graph(loss)
    assert len(picture.nodes) == 30 and picture.width <= 860 and picture.font >= 12
    assert_no_arrow_crosses_a_box(picture)
    lecture = draw_graph(loss, size="lecture")
    assert lecture.font > picture.font
    with pytest.raises(ValueError, match="size must be one of"):
        draw_graph(loss, size="huge")



# -- readable at the size a lecture has (issue 25) --------------------------------------------
OUTPUT_WIDTHS = [421, 460, 673, 860]  # JupyterLab at 853x480 with the sidebar open, 640x360, collapsed, 100%


def shown_variant(picture, width: float):
    """The layout the browser shows in an output ``width`` px wide (style.responsive's rule)."""
    layouts = picture.layouts()
    return next((p for p in layouts if width >= p.min_width), layouts[-1])


def h_loss():
    """Lesson 04's graph: h = a * b used three times."""
    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    h = a * b
    return h, (h * 3 + h.exp() * h).sum()


@pytest.mark.parametrize("make", [lambda: h_loss()[1], mlp3_loss, lambda: mlp_loss()[1]])
def test_every_graph_text_is_12px_or_more_in_every_output_width(make):
    picture = draw_graph(make())
    for width in OUTPUT_WIDTHS:
        shown = shown_variant(picture, width)
        # shrunk to the output, but never below min_width: there it scrolls sideways instead
        scale = max(min(1.0, width / shown.width), shown.min_width / shown.width)
        assert shown.font * scale >= 12 - 1e-9, f"{width} px: text at {shown.font * scale:.1f} px"
    page = picture._repr_html_()
    assert "container-type:inline-size" in page and "@container" in page if picture.narrow else True
    assert f"min-width:{min(picture.min_width, picture.width):.0f}px" in page


def test_the_three_arrows_leaving_h_are_distinct_and_enclose_no_box():
    h, loss = h_loss()
    picture = draw_graph(loss)
    for shown in picture.layouts():
        node = h.grad_fn
        leaving = [points for (a, _), points in shown.edges.items() if a is node]
        assert len(leaving) == 3
        assert len({points[0] for points in leaving}) == 3, "three separate ports"
        segments = [(p, q) for points in shown.edges.values() for p, q in zip(points, points[1:])]
        for i, (p, q) in enumerate(segments):  # no two arrows run along one line
            for r, s in segments[i + 1:]:
                assert not (collinear(p, q, r, s) and overlap(p, q, r, s)), f"arrows overlap at {p}-{q} and {r}-{s}"
        assert_no_arrow_crosses_a_box(shown)


def collinear(p, q, r, s) -> bool:
    cross = lambda o, a, b: (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])  # noqa: E731
    return abs(cross(p, q, r)) < 1e-6 and abs(cross(p, q, s)) < 1e-6


def overlap(p, q, r, s) -> bool:
    axis = 0 if abs(q[0] - p[0]) >= abs(q[1] - p[1]) else 1
    lo1, hi1 = sorted((p[axis], q[axis]))
    lo2, hi2 = sorted((r[axis], s[axis]))
    return min(hi1, hi2) - max(lo1, lo2) > 1e-6


def test_a_tall_steppers_window_follows_the_running_node():
    pytest.importorskip("ipywidgets")
    from minigrad.viz.stepper import PICTURE_HEIGHT

    x = leaf(np.ones(3))
    h = x
    for k in range(6):
        h = (h * 0.5 + float(k)).tanh()
    stepper = BackwardStepper(h.sum())
    stepper.widget  # noqa: B018 (builds it)
    picture = stepper.picture
    assert picture.height > PICTURE_HEIGHT or (picture.narrow and picture.narrow.height > PICTURE_HEIGHT)
    for step in range(1, len(stepper.states) + 1):
        stepper.slider.value = step
        node = stepper.states[step - 1].node
        for shown in picture.layouts():
            svg = ET_parse(shown.svg)
            _, top, _, height = map(float, svg.get("viewBox").split())
            assert height <= PICTURE_HEIGHT
            box = shown.boxes[node]
            assert top <= box.y + 3 - box.h / 2 and box.y + 3 + box.h / 2 <= top + height + 1e-6, \
                f"step {step}: the running node is outside the window"


def ET_parse(svg: str):
    import xml.etree.ElementTree as ET

    return ET.fromstring(svg)


def test_a_5000_node_summary_is_never_clipped():
    x = leaf([1.0])
    y = x
    for _ in range(4999):
        y = y * 1.0001
    summary = draw_graph(y)
    first = "5000 nodes, 4999 edges, depth 5000, widest layer 1, 1 leaf"
    assert summary.text == first and f"<p style='margin:0 0 4px;font-size:16px'>{first}</p>" in summary.html
    svg = ET_parse(summary.svg)
    width = float(svg.get("width"))
    for text in tags(svg, "text"):  # every label inside the drawing's width
        x0 = float(text.get("x"))
        length = 0.6 * 14 * len(text.text)
        left = x0 - length if text.get("text-anchor") == "end" else x0
        assert 0 <= left and left + length <= width + 1e-6, text.text


def test_explorer_says_in_words_where_f_is_undefined_and_draws_the_rest():
    pytest.importorskip("ipywidgets")
    shifted = function_explorer(lambda x, a: (x + a).sqrt(), x_range=(0, 4), params={"a": (-3.0, 3.0, 1.0)})
    assert not shifted.message
    shifted.sliders["a"].value = -1.96
    assert shifted.message.startswith("sqrt is undefined where x + a < 0; at a = -1.96 showing where it is defined")
    assert shifted.message in html_unescape(shifted.image.value)
    y = shifted.result["y"]
    defined = shifted.xs >= 1.96
    assert np.isfinite(y[defined]).all() and not np.isfinite(y[~defined]).any()
    assert np.isnan(shifted.result["dy"][~defined]).all(), "no slope drawn where there is no function"
    assert shifted.image.value.count("<polyline") >= 2
    log = function_explorer(lambda x: x.log(), x_range=(-1, 3))  # raised a ValueError from matplotlib before
    assert log.message.startswith("log is undefined where x ≤ 0; showing where it is defined")
    log.sliders["x0"].value = -0.5
    assert "No tangent at x0 = -0.5" in log.message


def html_unescape(text: str) -> str:
    import html

    return html.unescape(text)


def test_dashboard_shows_the_first_step_at_once_and_brings_itself_on_screen():
    clock = FakeClock()
    dash = TrainingDashboard(total_steps=400, text=False, clock=clock, pace=0.0, frames=40)
    shown = []
    dash._handle.update = lambda view: shown.append((dash.step, "scrollIntoView" in view.data))
    for step in range(400):
        clock.now += 0.001
        dash.log(step, loss=1.0)
    assert shown[0] == (0, True), "the first step is shown: the room sees where training starts"
    assert all(scrolls for _, scrolls in shown) and len(shown) >= 40
    script = dash.scroll_script()
    assert dash.id in script and "'wheel', 'touchmove', 'mousedown', 'keydown'" in script  # the lecturer's scrolling wins


def test_lab_settings_for_the_course(tmp_path):
    from minigrad.course import lab_settings

    copy = tmp_path / "copy"
    path = lab_settings.write_settings(copy, tmp_path / "settings")
    settings = json.loads(path.read_text())
    # no saved widget state: restoring it marks a reopened notebook modified (static copies instead)
    assert settings["@jupyter-widgets/jupyterlab-manager:plugin"] == {"saveState": False}
    assert settings["@jupyterlab/apputils-extension:notification"]["fetchNews"] == "false"
    assert settings["@jupyterlab/notebook-extension:tracker"]["codeCellConfig"]["lineWrap"] is True
    assert "@jupyterlab/docmanager-extension:plugin" not in settings  # a copy autosaves
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / ".git").exists():
        assert lab_settings.overrides(checkout)["@jupyterlab/docmanager-extension:plugin"] == {"autosave": False}
    args = lab_settings.lab_arguments(copy)
    assert args[0].startswith("--LabApp.app_settings_dir=") and (Path(args[0].split("=", 1)[1]) / "overrides.json").is_file()
    assert "--ServerApp.contents_manager_class=minigrad.course.lab_settings.CourseContentsManager" in args


def test_contents_manager_hands_out_lessons_with_the_kernels_metadata(tmp_path):
    """JupyterLab writes the kernel's kernelspec and language_info into a notebook as it opens; equal
    values change nothing, so the lesson is not marked modified."""
    pytest.importorskip("jupyter_server")
    pytest.importorskip("ipykernel")
    import asyncio
    import shutil

    from minigrad.course.lab_settings import CourseContentsManager

    # what the kernel reports, asked in a process of its own (importing ipykernel here would
    # change the comm that this process's widgets close at exit)
    reported = json.loads(subprocess.run(
        [sys.executable, "-c", "import json; from ipykernel.ipkernel import IPythonKernel as K; "
                               "print(json.dumps(K.language_info))"],
        capture_output=True, text=True, check=True).stdout)

    root = Path(__file__).resolve().parents[2]
    shutil.copy(root / "lessons" / "00_tour.ipynb", tmp_path)
    on_disk = (tmp_path / "00_tour.ipynb").read_text()
    model = asyncio.run(CourseContentsManager(root_dir=str(tmp_path)).get("00_tour.ipynb"))
    metadata = model["content"]["metadata"]
    assert metadata["language_info"] == reported
    assert metadata["kernelspec"]["name"] == "python3" and metadata["kernelspec"]["language"] == "python"
    assert (tmp_path / "00_tour.ipynb").read_text() == on_disk, "the file is left as it is"


def test_lessons_code_lines_fit_a_projected_cell():
    """About 85 characters of code fit a cell at 1280x720 and 150% with the sidebar collapsed."""
    root = Path(__file__).resolve().parents[2]
    long = []
    for notebook in sorted([*root.glob("lessons/*.ipynb"), *root.glob("solutions/*.ipynb")]):
        for i, cell in enumerate(json.loads(notebook.read_text(encoding="utf-8"))["cells"]):
            if cell["cell_type"] == "code":
                long += [f"{notebook.parent.name}/{notebook.name} cell {i}: {len(line)}"
                         for line in "".join(cell["source"]).split("\n") if len(line) > 85]
    assert not long, f"{len(long)} code lines longer than 85 characters: {long[:10]}"


def test_static_graphs_fit_the_projected_height():
    """Lesson 04's numbered graph and lesson 00's model graph (both were taller than the 359 px a
    projected notebook shows): every layout the page may show is at most MAX_HEIGHT px tall,
    each narrower one takes over where the wider one's text would fall below 12 px, and the
    compact layouts keep every arrow clear of the boxes."""
    from minigrad.viz.graph import MAX_HEIGHT

    h, loss = h_loss()
    numbered = draw_graph(loss, notes={n: f"runs #{i + 1}" for i, n in enumerate(engine.topological_order([loss.grad_fn]))})
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 32), nn.Tanh(), nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 3))
    mlp = draw_graph(F.cross_entropy(model(minigrad.randn(300, 2)), minigrad.tensor(np.arange(300) % 3)))
    for picture in (numbered, mlp):
        layouts = picture.layouts()
        widths = [p.min_width for p in layouts]
        assert widths == sorted(widths, reverse=True) and len(set(widths)) == len(widths)
        for shown in layouts:
            assert shown.height <= MAX_HEIGHT, f"a {shown.direction} layout is {shown.height:.0f} px tall"
            assert_no_arrow_crosses_a_box(shown)
        for width in OUTPUT_WIDTHS:
            shown = shown_variant(picture, width)
            scale = max(min(1.0, width / shown.width), shown.min_width / shown.width)
            assert shown.font * scale >= 12 - 1e-9 and shown.height * min(1.0, width / shown.width) <= MAX_HEIGHT
    # at 673 px (the sidebar collapsed) lesson 04's graph goes across, compacted: 690 px did not fit
    assert shown_variant(numbered, 673).direction == "LR" and numbered.min_width > 673


def test_a_graph_too_tall_even_compacted_scrolls_in_a_frame():
    from minigrad.viz.graph import MAX_HEIGHT

    x = leaf(np.ones(3))
    h = x
    for k in range(12):
        h = (h * 0.5 + float(k)).tanh()
    picture = draw_graph(h.sum())
    tall = [p for p in picture.layouts() if p.height > MAX_HEIGHT]
    assert tall, "a 12-step chain is taller than the screen top to bottom"
    assert f"max-height:{MAX_HEIGHT}px;overflow-y:auto" in picture._repr_html_()


def test_grids_and_sliders_redraw_and_keep_a_static_copy():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("IPython")
    from unittest import mock

    from minigrad.viz.grids import LABEL, grid_html, side_by_side, sliders

    page = grid_html(np.array([[1, 2], [3, 4]]), "reads", numbers=True, box=(0, 1, 1))
    assert page.count("<div style='background:") == 4 and ">4</div>" in page and f"font-size:{LABEL}px" in page
    assert "repeat(2,1fr)" in page and page.count("#f") >= 1  # the boxed cell is orange

    def draw(n=2):
        if n == 3:
            raise ValueError("three is not allowed")
        return side_by_side(grid_html(np.arange(n * n).reshape(n, n), f"{n} x {n}"), caption=f"n = {n}")

    shown = []
    with mock.patch("IPython.display.display", side_effect=lambda *objs, **kw: shown.extend(objs)), \
            mock.patch("IPython.display.DisplayHandle.display", lambda self, obj, **kw: shown.append(obj)), \
            mock.patch("IPython.display.DisplayHandle.update", lambda self, obj, **kw: shown.append(obj)):
        widget = sliders(draw, n=(1, 4, 2))
        widget._ipython_display_()
        widget.sliders["n"].value = 4
        assert "n = 4" in widget.image.value and "n = 4" in shown[-1].data
        widget.sliders["n"].value = 3  # draw raises: said in words, the last picture kept
    assert "ValueError at n = 3: three is not allowed" in widget.message and "n = 4" in widget.image.value
    static = [o for o in shown if hasattr(o, "data")]
    assert all(f"{widget.id}-static" in s.data and ":not(:has(*))" in s.data for s in static)
    assert f".{widget.id}-static{{display:none}}" in widget.image.value


def test_grid_categories_give_each_number_its_own_colour():
    from minigrad.viz.grids import grid_html

    page = grid_html(np.array([[0, 1, 0]]), "a", numbers=True, categories=True)
    backgrounds = re.findall(r"background:(#[0-9a-f]{6})", page)
    assert len(backgrounds) == 3 and backgrounds[0] == backgrounds[2] != backgrounds[1]
