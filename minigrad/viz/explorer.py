"""Plot a function of one variable, its derivative computed by minigrad, and a tangent.

``explore`` does the work (one forward and one backward over the whole grid)
and returns arrays; ``function_explorer`` adds sliders for the parameters and
for the point where the tangent touches. The plots are HTML charts
(``minigrad.viz.chart``): their text stays 13 px or more in any width.

Where ``f`` is not defined (``x.log()`` at x <= 0, ``(x + a).sqrt()`` where
x + a < 0) the explorer draws the part where it is, and says in words what is
undefined where, instead of raising or silently keeping an old picture.
"""
from __future__ import annotations

import ast
import html
import inspect
import secrets
import textwrap
from typing import Callable

import numpy as np

import minigrad
from minigrad.viz import chart, style

PLOT_HEIGHT = 130  # px: with two sliders, the titles and the legend, the explorer fits 360 px

# Operations defined on part of the line only: the name as called -> where it is undefined,
# with {} for its argument's source text.
DOMAINS = {
    "sqrt": "{} < 0", "rsqrt": "{} ≤ 0", "log": "{} ≤ 0", "log2": "{} ≤ 0", "log10": "{} ≤ 0",
    "log1p": "{} ≤ −1", "acos": "|{}| > 1", "asin": "|{}| > 1", "arccos": "|{}| > 1", "arcsin": "|{}| > 1",
    "acosh": "{} < 1", "atanh": "|{}| ≥ 1", "reciprocal": "{} = 0", "lgamma": "{} is a negative integer",
}
NODES = {  # the graph node each of them records
    "SqrtBackward0": "sqrt", "RsqrtBackward0": "rsqrt", "LogBackward0": "log", "Log2Backward0": "log2",
    "Log10Backward0": "log10", "Log1PBackward0": "log1p", "AcosBackward0": "acos", "AsinBackward0": "asin",
    "AcoshBackward0": "acosh", "AtanhBackward0": "atanh", "ReciprocalBackward0": "reciprocal",
    "PowBackward0": "pow", "PowBackward1": "pow", "DivBackward0": "division",
}


def explore(f: Callable, xs, params: dict[str, float], x0: float) -> dict[str, np.ndarray]:
    """``f(x, **params)`` and its derivative on the grid ``xs``, and the tangent at ``x0``.

    ``f`` must work elementwise (``y[i]`` depends on ``x[i]`` only): then one
    backward of ``y.sum()`` gives every ``dy/dx[i]`` at once. ``x0`` rides
    along as one more grid point. Returns ``y``, ``dy`` and ``tangent`` over
    ``xs``, and ``y0`` and ``slope`` at ``x0``; where ``f`` is undefined, ``y``
    is NaN or infinite (as NumPy computes it) and so is ``dy``.
    """
    xs = np.asarray(xs, dtype=np.float64)
    x = minigrad.tensor(np.append(xs, x0), requires_grad=True)
    y = f(x, **params)
    if not isinstance(y, minigrad.Tensor) or y.shape != x.shape:
        raise ValueError(f"f must return one value per x (a tensor of shape {tuple(x.shape)}), "
                         f"not {type(y).__name__} {tuple(getattr(y, 'shape', ()))}: write it elementwise")
    with np.errstate(all="ignore"):
        if y.requires_grad:
            y.sum().backward()
        dys = x.grad.numpy() if x.grad is not None else np.zeros_like(xs, shape=x.shape)
    ys = y.detach().numpy().astype(np.float64)
    dys = np.where(np.isfinite(ys), dys, np.nan)  # no slope where there is no function
    y0, slope = ys[-1], dys[-1]
    with np.errstate(all="ignore"):
        tangent = y0 + slope * (xs - x0)
    return {"y": ys[:-1], "dy": dys[:-1], "tangent": tangent, "y0": y0, "slope": slope, "graph": y}


def undefined_ops(y: minigrad.Tensor) -> list[str]:
    """The operations in ``y``'s graph that are defined on part of the line only, by name."""
    if y.grad_fn is None:
        return []
    from minigrad.autograd import engine

    found = [NODES.get(node.name()) for node in engine.topological_order([y.grad_fn])]
    return list(dict.fromkeys(op for op in found if op))


def argument_text(f: Callable, op: str) -> str | None:
    """The source text of the argument ``f`` passes to ``op`` (``x + a`` in ``(x + a).sqrt()``),
    if ``f``'s source can be read and calls ``op`` exactly once."""
    try:
        source = textwrap.dedent(inspect.getsource(f))
    except (OSError, TypeError):
        return None
    tree = None
    lambda_on = source[source.find("lambda"):] if "lambda" in source else ""
    for text in (source, lambda_on, lambda_on.strip().rstrip(",)")):
        try:
            tree = ast.parse(text.strip())
            break
        except SyntaxError:
            continue
    if tree is None:
        return None
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == op:
            base = node.func.value
            if node.args and isinstance(base, ast.Name) and base.id in ("minigrad", "torch", "np", "numpy"):
                found.append(ast.unparse(node.args[0]))  # minigrad.sqrt(x + a)
            elif not node.args:
                found.append(ast.unparse(base))  # (x + a).sqrt()
    return found[0] if len(found) == 1 else None


def explain(f: Callable, y: minigrad.Tensor | None, xs: np.ndarray, ys: np.ndarray, params: dict) -> str:
    """In words: where ``f`` is undefined on the grid, and what the picture shows instead."""
    defined = np.isfinite(ys)
    at = ", ".join(f"{name} = {value:.3g}" for name, value in params.items())
    at = f"at {at} " if at else ""
    if not defined.any():
        showing = "there is nothing to draw: try other values"
    else:
        showing = f"showing where it is defined (x from {xs[defined][0]:.3g} to {xs[defined][-1]:.3g})" \
            if defined[np.argmax(defined):len(defined) - np.argmax(defined[::-1])].all() \
            else "showing where it is defined"
    ops = undefined_ops(y) if y is not None else []
    if len(ops) == 1 and ops[0] in DOMAINS:
        argument = argument_text(f, ops[0])
        where = DOMAINS[ops[0]].format(argument) if argument else None
        what = f"{ops[0]} is undefined where {where}" if where else f"{ops[0]} is undefined for some x here"
    else:
        named = " or ".join(ops) if ops else "f"
        what = f"{named} is undefined (not a finite number) for some x here"
    return f"{what}; {at}{showing}."


def plot_explore(xs, result: dict, x0: float, title: str = "f", message: str = "") -> str:
    """Two panels side by side, as HTML: ``f`` with its tangent at ``x0``, and ``f'``.

    Side by side rather than stacked, so the whole explorer fits the height of a
    projected screen with its sliders; each panel is as wide as half the output.
    """
    y, dy, y0, slope = result["y"], result["dy"], result["y0"], result["slope"]
    x_range = (float(xs[0]), float(xs[-1]))
    y_range = chart.padded_range([y])
    dy_range = chart.padded_range([dy, [0.0]] if np.isfinite(dy).any() else [[-1.0, 1.0]])
    defined = bool(np.isfinite(y0))
    left = chart.chart(
        f"x0 = {x0:.3g}:  {title}(x0) = {y0:.4g}" if defined else f"x0 = {x0:.3g}: {title} undefined there",
        [chart.Series(xs, y, style.BLUE, f"{title}(x)"),
         chart.Series(xs, result["tangent"], style.VERMILION, "tangent at x0", dashed=True)],
        x_range, y_range, height=PLOT_HEIGHT, x_label="x", legend=True, x_marker=x0,
        marks=[chart.Mark(x0, y0, style.VERMILION)])
    right = chart.chart(
        f"slope {title}'(x0) = {slope:.4g}" if np.isfinite(slope) else f"slope {title}'(x0) undefined",
        [chart.Series(xs, dy, style.ORANGE, f"{title}'(x), by backward")],
        x_range, dy_range, height=PLOT_HEIGHT, x_label="x", legend=True, zero_line=True, x_marker=x0,
        marks=[chart.Mark(x0, slope, style.VERMILION, "square")])
    note = (f"<div class='mg-explorer-message' role='status' style='font-size:14px;color:#8A3B00;"
            f"margin:0 0 4px'>{html.escape(message)}</div>") if message else ""
    return (f"<div class='mg-explorer' style='font-family:sans-serif'>{note}"
            f"<div style='display:flex;gap:16px'><div style='flex:1 1 0;min-width:0'>{left}</div>"
            f"<div style='flex:1 1 0;min-width:0'>{right}</div></div></div>")


class FunctionExplorer(style.StaticCopy):
    """Sliders for ``f``'s parameters and for ``x0``, above the plots of ``plot_explore``.

    ``message`` says in words what went wrong, if anything (``f`` raised, or is
    undefined somewhere): it is shown in the widget, above what could be drawn.
    Below the widget a static copy of the picture is kept, hidden while the widget is
    alive, for a notebook reopened without its kernel or widget state.
    """

    STATIC_CAPTION = "A picture of the function explorer: run the cell to move its sliders."

    def __init__(self, f: Callable, x_range: tuple[float, float], params: dict[str, tuple], points: int = 201,
                 name: str | None = None) -> None:
        import ipywidgets as widgets

        self.f = f
        self.name = name
        self.xs = np.linspace(*x_range, points)
        # One description width and one length for every slider, so their tracks line up.
        slider = dict(continuous_update=False, style={"description_width": "3em"},
                      layout=widgets.Layout(width="min(100%, 560px)"))
        self.sliders = {name: widgets.FloatSlider(min=lo, max=hi, value=start, step=(hi - lo) / 100,
                                                  description=name, **slider)
                        for name, (lo, hi, start) in params.items()}
        self.sliders["x0"] = widgets.FloatSlider(min=x_range[0], max=x_range[1], value=sum(x_range) / 2,
                                                 step=(x_range[1] - x_range[0]) / 100, description="x0", **slider)
        self.id = "mg-explorer-" + secrets.token_hex(4)
        self.image = widgets.HTML(layout=widgets.Layout(width="100%"))
        for s in self.sliders.values():
            s.observe(lambda change: self.update(), names="value")
        self.widget = widgets.VBox([*self.sliders.values(), self.image])
        self.message = ""
        self.result = None
        self.picture = ""
        self._static = None
        self.update()

    @property
    def title(self) -> str:
        name = self.name or getattr(self.f, "__name__", "f")
        return name if self.name or name.isidentifier() else "f"

    def update(self) -> None:
        """Recompute and redraw with the sliders' current values."""
        values = {name: s.value for name, s in self.sliders.items()}
        x0 = values.pop("x0")
        at = ", ".join(f"{name} = {value:.3g}" for name, value in values.items())
        try:
            result = explore(self.f, self.xs, values, x0)
        except Exception as e:  # a learner's f may fail for some parameters: say so, keep the sliders
            self.message = (f"{self.title} raised {type(e).__name__}{' at ' + at if at else ''}: {e}. "
                            "The picture is the last one that could be drawn.")
            self._show(self.picture)
            return
        self.result = result
        self.message = "" if np.isfinite(result["y"]).all() else \
            explain(self.f, result.get("graph"), self.xs, result["y"], values)
        if self.message and not np.isfinite(result["y0"]):
            self.message += f" No tangent at x0 = {x0:.3g}: {self.title} is undefined there."
        self.picture = plot_explore(self.xs, result, x0, self.title, "")
        self._show(self.picture)

    def _show(self, picture: str) -> None:
        note = (f"<div class='mg-explorer-message' role='status' style='font-size:14px;color:#8A3B00;"
                f"margin:0 0 4px'>{html.escape(self.message)}</div>") if self.message else ""
        self._show_picture(note, picture)


def function_explorer(f: Callable, x_range: tuple[float, float] = (-3, 3),
                      params: dict[str, tuple[float, float, float]] | None = None,
                      name: str | None = None) -> FunctionExplorer:
    """Explore ``f(x, **params)``: ``params`` maps each name to ``(min, max, start)`` for its slider.
    ``name`` is what the plots call ``f`` (by default its ``__name__``; ``name="f'"`` labels
    the second panel ``f''(x)``).

        function_explorer(lambda x, a: (a * x).sin(), params={"a": (0.1, 3.0, 1.0)})
    """
    return FunctionExplorer(f, x_range, params or {}, name=name)
