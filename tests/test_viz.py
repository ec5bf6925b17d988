"""``minigrad.viz``: the pure functions, figures checked for structure (not pixels),
the backward stepper against the engine, the function explorer against closed
forms, and the dashboard's throttling with a fake clock.

Figures are drawn with the Agg backend; widgets are driven through their Python
state (no browser: that is tests/test_browser.py).
"""
from __future__ import annotations

import io
import subprocess
import sys

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


def node_boxes(fig):
    """The node boxes of a drawn graph: patches whose gid says which kind of node they are."""
    return [p for ax in fig.axes for p in ax.patches if (p.get_gid() or "").startswith("node:")]


def box_texts(fig):
    return {t.get_text(): t.get_position() for ax in fig.axes for t in ax.texts}


def png(fig) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


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
    assert png(fig).startswith(b"\x89PNG")


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
    assert "requires_grad=True" in " ".join(t.get_text() for t in fig.texts)


def test_large_graph_is_summarised():
    x = leaf([1.0])
    y = x
    for _ in range(999):
        y = y * 1.001
    nodes, edges = graph_of(y)
    assert len(nodes) == 1000
    fig = draw_graph(y)
    assert not node_boxes(fig), "a 1000-node graph must not be drawn box by box"
    text = " ".join(t.get_text() for t in fig.texts)
    assert "1000 nodes, 999 edges, depth 1000, widest layer 1, 1 leaves" in text
    bars = [p for p in fig.axes[0].patches]
    assert sorted(b.get_width() for b in bars) == [1, 999]
    assert png(fig).startswith(b"\x89PNG")


def test_long_chain_is_summarised_wide_graph_drawn():
    x = leaf([1.0])
    chain = x
    for _ in range(45):  # few nodes, but 46 columns
        chain = chain * 1.5
    assert not node_boxes(draw_graph(chain))
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
    stepper.widget  # builds the widget and shows state 0
    n = len(stepper.states)
    assert (stepper.slider.max, stepper.play.max) == (n - 1, n - 1)
    seen = set()
    for i in [0, 2, n - 1]:
        stepper.slider.value = i
        state = stepper.states[i]
        assert f"Step {i + 1} of {n}" in stepper.panel.value
        assert state.node.name() in stepper.panel.value
        boxes = node_boxes(stepper.figure)
        kinds = [box.get_gid() for box in boxes]
        assert kinds.count("node:current") == 1 and kinds.count("node:done") == i
        current = next(box for box in boxes if box.get_gid() == "node:current")
        inside = [t for t, (x, y) in box_texts(stepper.figure).items() if current.contains_point(
            stepper.figure.axes[0].transData.transform((x, y)))]
        assert inside and inside[0].split("\n")[0] in (state.node.name(), "a", "b")
        grad = f"{state.received[0].item():.4g}"
        assert f"grad {grad}" in inside[0] and f"received gradient {grad}" in stepper.panel.value
        seen.add(stepper.image.value)
    assert len(seen) == 3, "each step shows a different picture"
    stepper.slider.value = 0  # back to a step already drawn: its own picture again
    assert [b.get_gid() for b in node_boxes(stepper.figure)].count("node:done") == 0


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
    assert "x0 = 0.5" in explorer.figure.axes[0].get_title()
    assert explorer.image.value != before and not explorer.error.value
    explorer.f = lambda x, a: x.no_such_method()  # a learner's mistake: shown, not raised
    explorer.update()
    assert "AttributeError" in explorer.error.value


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


def tags(svg, name: str) -> list:
    return svg.findall(f"{{http://www.w3.org/2000/svg}}{name}")


def test_dashboard_view_with_a_fake_clock(capsys):
    from minigrad.data.toy import make_moons

    X, y = make_moons(60, seed=1)
    minigrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 2))
    clock = FakeClock()
    dash = TrainingDashboard(total_steps=500, data=(X, y), predict=model, text=False, clock=clock)
    assert "waiting for the first step" in dash.html()
    for step in range(499):
        clock.now += 0.01  # 5 s in all
        dash.log(step, loss=1.0 / (step + 1), accuracy=step / 500)
    assert 9 <= dash.updates <= 10  # every 0.5 s: drawing costs no time on this clock
    updates = dash.updates
    clock.now += 0.01
    dash.log(499, loss=0.5, accuracy=1.0)  # the last step is always shown
    assert dash.updates == updates + 1
    page = dash.html()
    assert "step 500/500 · loss 0.5 · accuracy 1 · 100.0 steps/s" in page
    assert "width:100.0%" in page  # the progress bar is full
    loss, accuracy, boundary = svgs(page)
    assert [tags(s, "text")[0].text for s in (loss, accuracy, boundary)] == [
        "loss: 0.5", "accuracy: 1", "decision boundary"]
    assert len(tags(loss, "polyline")[0].get("points").split()) == 501  # every step, then the last again
    assert len(tags(boundary, "circle")) == 30  # class 0 points are circles, class 1 squares
    grid = [r for r in tags(boundary, "rect") if r.get("shape-rendering")]
    assert 40 <= len(grid) < 400  # at least one run of equal classes per grid row, not one per cell
    assert len(tags(boundary, "rect")) - len(grid) == 30


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
    assert len(points) == 501 and points[-1].startswith("328.0,")  # every 10th step, and the last at the right edge
    assert "width:" not in dash.html().split("<svg")[0].split("</div>", 1)[1]  # no progress bar
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


def test_no_arrow_runs_behind_a_box_it_does_not_connect():
    """h feeds AddBackward0 directly and through ExpBackward0: the direct arrow skips a column."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch
    from matplotlib.path import Path

    from minigrad.viz import draw_graph

    a = minigrad.tensor([1.0, 2.0], requires_grad=True)
    h = a * 3
    fig = draw_graph((h + h.exp()).sum())
    fig.canvas.draw()
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if isinstance(p, FancyBboxPatch)]
    arrows = [p for p in ax.patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) >= 4
    for arrow in arrows:
        path = arrow.get_transform().transform_path(arrow.get_path())  # to display coordinates
        ends = [arrow._posA_posB[0], arrow._posA_posB[1]]
        ends = [ax.transData.transform(p) for p in ends]
        for box in boxes:
            outer = box.get_window_extent().padded(3)
            if any(outer.contains(*p) for p in ends):
                continue  # one of this arrow's own ends
            for line in path.to_polygons(closed_only=False):  # drops the CLOSEPOLY placeholder vertices
                assert not Path(line).intersects_bbox(box.get_window_extent().padded(-2), filled=False), \
                    "an arrow passes behind a box it does not connect"
