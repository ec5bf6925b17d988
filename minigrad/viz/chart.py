"""Line charts as HTML around an SVG plot: the dashboard's curves and the function explorer.

The plot area is SVG stretched to the box it is given (``preserveAspectRatio='none'``,
strokes that keep their width), and every text (title, legend, the values at the
axes' ends) is HTML in CSS pixels beside it. So the chart fills any width, from a
phone to a projector, and its text is always ``LABEL`` px or more: nothing is shrunk
with the picture. Markers are HTML too, so they stay round however the plot stretches.
Plain strings, no matplotlib: a chart costs about a millisecond.
"""
from __future__ import annotations

import html
from typing import NamedTuple, Sequence

import numpy as np

TITLE = 14  # px
LABEL = 13  # px: axis values and legend; never below 12 px wherever the chart is shown
VIEW = 1000  # the plot's own coordinates: 0..VIEW on both axes


class Series(NamedTuple):
    """One curve: ``ys`` over ``xs``, drawn in ``colour`` (dashed if ``dashed``); gaps where ys is not finite."""

    xs: np.ndarray
    ys: np.ndarray
    colour: str
    label: str = ""
    dashed: bool = False


class Mark(NamedTuple):
    """A marker at ``(x, y)``: ``shape`` is "circle" or "square"."""

    x: float
    y: float
    colour: str
    shape: str = "circle"


def number(value: float) -> str:
    """A short, readable number for an axis end: 3 significant digits."""
    return f"{value:.3g}".replace("-", "\u2212")


def padded_range(values: Sequence[np.ndarray], pad: float = 0.08) -> tuple[float, float]:
    """The finite range of all ``values``, widened by ``pad`` of its size (a flat one by 0.5)."""
    finite = np.concatenate([np.asarray(v, dtype=float).ravel() for v in values])
    finite = finite[np.isfinite(finite)]
    if finite.size == 0:
        return -1.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    if hi - lo < 1e-12 * max(1.0, abs(hi)):
        return lo - 0.5, hi + 0.5
    return lo - pad * (hi - lo), hi + pad * (hi - lo)


def _scaled(values, lo: float, hi: float, flip: bool = False) -> np.ndarray:
    t = (np.asarray(values, dtype=float) - lo) / (hi - lo)
    return VIEW * (1 - t if flip else t)


def polylines(series: Series, x_range, y_range) -> str:
    """The series as SVG polylines in plot coordinates, broken where it is not finite or leaves the plot."""
    xs = _scaled(series.xs, *x_range)
    ys = _scaled(series.ys, *y_range, flip=True)
    ok = np.isfinite(ys) & (ys > -VIEW) & (ys < 2 * VIEW)  # far outside: a gap, not a line to infinity
    dash = " stroke-dasharray='7 5'" if series.dashed else ""
    parts, start = [], None
    for i in range(len(xs) + 1):
        if i < len(xs) and ok[i]:
            if start is None:
                start = i
            continue
        if start is not None and i - start >= 1:
            points = " ".join(f"{a:.1f},{b:.1f}" for a, b in zip(xs[start:i], ys[start:i]))
            if i - start == 1:  # a lone point: a dot
                points += f" {xs[start] + 0.1:.1f},{ys[start]:.1f}"
            parts.append(f"<polyline points='{points}' fill='none' stroke='{series.colour}' stroke-width='2.5' "
                         f"stroke-linejoin='round' stroke-linecap='round' vector-effect='non-scaling-stroke'{dash}/>")
        start = None
    return "".join(parts)


def chart(title: str, series: Sequence[Series], x_range: tuple[float, float], y_range: tuple[float, float], *,
          height: int = 130, x_label: str = "", marks: Sequence[Mark] = (), zero_line: bool = False,
          x_marker: float | None = None, legend: bool = False, css_class: str = "mg-chart") -> str:
    """A line chart: title (and legend) above, the y range's ends at the left, the x range's below.

    ``height`` is the plot's height in px; the chart is as wide as its container.
    """
    lines = []
    if zero_line and y_range[0] < 0 < y_range[1]:
        y0 = _scaled(0.0, *y_range, flip=True)
        lines.append(f"<line x1='0' x2='{VIEW}' y1='{y0:.1f}' y2='{y0:.1f}' stroke='#999' stroke-width='1' "
                     "vector-effect='non-scaling-stroke'/>")
    if x_marker is not None and x_range[0] <= x_marker <= x_range[1]:
        xm = _scaled(x_marker, *x_range)
        lines.append(f"<line x1='{xm:.1f}' x2='{xm:.1f}' y1='0' y2='{VIEW}' stroke='#999' stroke-width='1' "
                     "stroke-dasharray='2 4' vector-effect='non-scaling-stroke'/>")
    lines += [polylines(s, x_range, y_range) for s in series]
    dots = []
    for m in marks:
        if not (np.isfinite(m.x) and np.isfinite(m.y)):
            continue
        left = 100 * (m.x - x_range[0]) / (x_range[1] - x_range[0])
        top = 100 * (y_range[1] - m.y) / (y_range[1] - y_range[0])
        if not (0 <= left <= 100 and 0 <= top <= 100):
            continue
        radius = "50%" if m.shape == "circle" else "1px"
        dots.append(f"<div class='mg-mark' style='position:absolute;left:{left:.2f}%;top:{top:.2f}%;width:11px;"
                    f"height:11px;margin:-6px 0 0 -6px;border-radius:{radius};background:{m.colour};"
                    "border:1px solid #222'></div>")
    keys = ""
    if legend:
        keys = "<div class='mg-legend' style='display:flex;flex-wrap:wrap;gap:0 12px'>" + "".join(
            f"<span style='white-space:nowrap'><span style='display:inline-block;width:20px;vertical-align:middle;"
            f"border-top:3px {'dashed' if s.dashed else 'solid'} {s.colour};margin-right:4px'></span>"
            f"{html.escape(s.label)}</span>" for s in series if s.label) + "</div>"
    ends = (f"<div style='display:flex;flex-direction:column;justify-content:space-between;text-align:right;"
            f"padding-right:4px;white-space:nowrap'><span>{number(y_range[1])}</span>"
            f"<span>{number(y_range[0])}</span></div>")
    plot = (f"<div style='position:relative;flex:1 1 0;min-width:0;height:{height}px;border:1px solid #999'>"
            f"<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {VIEW} {VIEW}' preserveAspectRatio='none' "
            # JupyterLab's svg {height: auto} would make it square: the inline size wins
            f"width='100%' height='100%' style='position:absolute;left:0;top:0;width:100%;height:100%;"
            "display:block;overflow:hidden'>"
            f"{''.join(lines)}</svg>"
            f"{''.join(dots)}</div>")
    below = (f"<div style='display:flex;justify-content:space-between;gap:6px;white-space:nowrap'>"
             f"<span>{number(x_range[0])}</span><span>{html.escape(x_label)}</span>"
             f"<span>{number(x_range[1])}</span></div>")
    axis_width = max(len(number(y_range[0])), len(number(y_range[1]))) * 0.6 * LABEL + 6
    return (f"<div class='{css_class}' style='font-size:{LABEL}px;line-height:1.3;min-width:0'>"
            f"<div class='mg-title' style='font-size:{TITLE}px;font-weight:bold;overflow-wrap:anywhere'>"
            f"{html.escape(title)}</div>{keys}<div style='display:flex'>{ends}{plot}</div>"
            f"<div style='margin-left:{axis_width:.0f}px'>{below}</div></div>")
