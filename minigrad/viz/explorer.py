"""Plot a function of one variable, its derivative computed by minigrad, and a tangent.

``explore`` does the work (one forward and one backward over the whole grid)
and returns arrays; ``function_explorer`` adds sliders for the parameters and
for the point where the tangent touches.
"""
from __future__ import annotations

import html
from typing import Callable

import numpy as np

import minigrad
from minigrad.viz import style


def explore(f: Callable, xs, params: dict[str, float], x0: float) -> dict[str, np.ndarray]:
    """``f(x, **params)`` and its derivative on the grid ``xs``, and the tangent at ``x0``.

    ``f`` must work elementwise (``y[i]`` depends on ``x[i]`` only): then one
    backward of ``y.sum()`` gives every ``dy/dx[i]`` at once. ``x0`` rides
    along as one more grid point. Returns ``y``, ``dy`` and ``tangent`` over
    ``xs``, and ``y0`` and ``slope`` at ``x0``.
    """
    xs = np.asarray(xs, dtype=np.float64)
    x = minigrad.tensor(np.append(xs, x0), requires_grad=True)
    y = f(x, **params)
    y.sum().backward()
    ys, dys = y.detach().numpy(), x.grad.numpy()
    y0, slope = ys[-1], dys[-1]
    return {"y": ys[:-1], "dy": dys[:-1], "tangent": y0 + slope * (xs - x0), "y0": y0, "slope": slope}


def plot_explore(xs, result: dict, x0: float, title: str = "f"):
    """Two panels side by side: ``f`` with its tangent at ``x0``, and ``f'``.

    Side by side rather than stacked, so the whole explorer fits the height of a
    projected screen (720 px at 150% zoom) with its sliders.
    """
    with style.styled():
        fig = style.new_figure(11, 3.9)
        top, bottom = fig.subplots(1, 2, sharex=True)
        top.plot(xs, result["y"], color=style.BLUE, label=f"{title}(x)")
        top.plot(xs, result["tangent"], color=style.VERMILION, linestyle="--", label="tangent at x0")
        top.plot([x0], [result["y0"]], "o", color=style.VERMILION, markersize=10)
        spread = np.ptp(result["y"]) or 1.0
        top.set_ylim(result["y"].min() - 0.2 * spread, result["y"].max() + 0.2 * spread)
        top.set_title(f"x0 = {x0:.3g}:  {title}(x0) = {result['y0']:.4g}")
        top.legend(loc="best")
        bottom.set_title(f"slope {title}'(x0) = {result['slope']:.4g}")
        bottom.plot(xs, result["dy"], color=style.ORANGE, label=f"{title}'(x), by backward")
        bottom.plot([x0], [result["slope"]], "s", color=style.VERMILION, markersize=10)
        bottom.axhline(0, color=style.GREY, linewidth=1)
        bottom.legend(loc="best")
        for ax in (top, bottom):
            ax.set_xlabel("x")
            ax.axvline(x0, color=style.GREY, linewidth=1, linestyle=":")
            ax.grid(alpha=0.3)
        fig.tight_layout()
    return fig


class FunctionExplorer:
    """Sliders for ``f``'s parameters and for ``x0``, above the plot of ``plot_explore``."""

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
        self.image = widgets.Image(format="png", layout=widgets.Layout(max_width="100%", height="auto"))
        self.error = widgets.HTML()
        for s in self.sliders.values():
            s.observe(lambda change: self.update(), names="value")
        self.widget = widgets.VBox([*self.sliders.values(), self.image, self.error])
        self.figure = None
        self.update()

    def update(self) -> None:
        """Recompute and redraw with the sliders' current values."""
        values = {name: s.value for name, s in self.sliders.items()}
        x0 = values.pop("x0")
        try:
            self.result = explore(self.f, self.xs, values, x0)
        except Exception as e:  # a learner's f may fail for some parameters: say so, keep the sliders
            self.error.value = f"<b>f raised {type(e).__name__}:</b> {html.escape(str(e))}"
            return
        self.error.value = ""
        name = self.name or getattr(self.f, "__name__", "f")
        self.figure = plot_explore(self.xs, self.result, x0, name if self.name or name.isidentifier() else "f")
        self.image.value = style.to_png(self.figure)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def function_explorer(f: Callable, x_range: tuple[float, float] = (-3, 3),
                      params: dict[str, tuple[float, float, float]] | None = None,
                      name: str | None = None) -> FunctionExplorer:
    """Explore ``f(x, **params)``: ``params`` maps each name to ``(min, max, start)`` for its slider.
    ``name`` is what the plots call ``f`` (by default its ``__name__``; ``name="f'"`` labels
    the second panel ``f''(x)``).

        function_explorer(lambda x, a: (a * x).sin(), params={"a": (0.1, 3.0, 1.0)})
    """
    return FunctionExplorer(f, x_range, params or {}, name=name)
