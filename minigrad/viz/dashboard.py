"""A live view of a training loop: progress, loss and accuracy curves, decision boundary.

    dash = TrainingDashboard(total_steps=1000, data=(X, y), predict=model)
    for step in range(1000):
        ...
        dash.log(step, loss=loss, accuracy=accuracy)

``log`` only appends two numbers. The view is redrawn at ``frames`` evenly
spaced steps of the run (so even a run that takes a fraction of a second shows
the boundary forming, each frame held for at least ``pace`` seconds), and in
between at most every ``update_every`` seconds, less often if drawing ever took
more than ``max_overhead`` of the training time (see ``Throttle``).

The view is HTML with SVG charts, written as a string and swapped in place
with ``display(..., display_id=True)``. A matplotlib figure costs 60-200 ms
to render, which alone would slow a 3-second training loop by several
percent; the SVG string takes about a millisecond, stays sharp on a
projector, and stays in the saved notebook without widgets. Outside Jupyter
the dashboard prints a line now and then instead.
"""
from __future__ import annotations

import html
import secrets
import time
from typing import Callable

import numpy as np

import minigrad
from minigrad.viz import chart, style

TEXT_EVERY = 5.0  # seconds between lines of text outside Jupyter
FIRST_DRAW_GUESS = 0.01  # seconds a first draw takes, until one has been measured
STATUS = 15  # px: the status line
CHART_HEIGHT = 150  # px: a curve's plot (with its title and labels, about 200 px)
BOUNDARY_PX = 190  # px: the boundary's square, where the row has room for it
MAX_WIDTH = 900  # px: wider, the charts would only stretch
GRID = 40  # the boundary is predicted on GRID x GRID points: few enough that BLAS stays on one thread
MAX_POINTS = 500  # a curve is thinned to this many points: more would not show


class Throttle:
    """Decides when to redraw, so that drawing takes at most ``budget`` of the time.

    A draw is due when ``interval`` has passed since the last one and the time
    spent drawing so far, plus one more draw as long as the last one, stays
    within ``budget`` of the time since the first call to ``due``. So a slow
    machine simply redraws less often.
    """

    def __init__(self, interval: float, budget: float, clock: Callable[[], float],
                 first_cost: float = FIRST_DRAW_GUESS) -> None:
        self.interval, self.budget, self.clock = interval, budget, clock
        self.cost = first_cost  # the duration of the last draw
        self.spent = 0.0  # total time spent drawing
        self.start = self.last = None

    def due(self) -> bool:
        now = self.clock()
        if self.start is None:
            self.start = now
        if self.last is not None and now - self.last < self.interval:
            return False
        return self.spent + self.cost <= self.budget * (now - self.start)

    def run(self, draw: Callable[[], None]) -> None:
        """Call ``draw`` and count the time it took."""
        start = self.clock()
        draw()
        self.last = self.clock()
        self.cost = self.last - start
        self.spent += self.cost


class TrainingDashboard:
    """A progress bar with steps per second, a curve per logged metric, and for 2-D data
    the decision boundary of ``predict``.

    ``predict`` gets a minigrad float32 tensor of points, shape ``(n, 2)``, and
    returns class labels ``(n,)`` or scores ``(n, classes)``; it runs under
    ``no_grad``. Steps count from 0, as in ``for step in range(total_steps)``:
    the last one is always shown. ``frames`` redraws are spread evenly over
    ``total_steps``. In Jupyter the first logged step is drawn at once, with or without
    a total, so a run shorter than ``update_every`` still shows where it started and
    where it ended. ``pace`` (seconds, default 0.1 in Jupyter) is the least time a
    frame stays on screen, so a class can watch a run that trains faster than the
    eye. ``text`` forces (True) or prevents (False) the text mode; by default it
    is used outside Jupyter.
    """

    def __init__(
        self,
        total_steps: int | None = None,
        update_every: float = 0.5,
        data: tuple | None = None,
        predict: Callable | None = None,
        *,
        frames: int = 12,
        pace: float | None = None,
        max_overhead: float = 0.02,
        text: bool | None = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        self.total_steps = total_steps
        self.data, self.predict = data, predict
        self.history: dict[str, tuple[list, list]] = {}  # metric -> (steps, values)
        self.step = None
        self.text = not style.in_notebook() if text is None else text
        self.clock = clock
        self.throttle = Throttle(max(update_every, TEXT_EVERY) if self.text else update_every, max_overhead, clock)
        self.frames = 0 if self.text or not total_steps else frames
        self.pace = (0.0 if self.text else 0.1) if pace is None else pace
        self._next_frame = 0  # the next of the evenly spaced frames
        self._shown_step = None  # the step the view shows
        self.speed = None  # steps per second, measured between two updates
        self._last = None  # (time, step) of the last update
        self.updates = 0
        self._handle = None
        self.id = "mg-dash-" + secrets.token_hex(4)
        if data is not None and predict is not None:
            self._prepare_boundary(*data)
        if not self.text:
            from IPython.display import HTML, DisplayHandle

            self._handle = DisplayHandle()  # updates replace this output in place
            self._handle.display(HTML(self.html() + self.scroll_script()))

    def log(self, step: int, **metrics) -> None:
        """Record ``metrics`` (numbers or one-element tensors) at ``step``; show them if it is time."""
        for name, value in metrics.items():
            steps, values = self.history.setdefault(name, ([], []))
            steps.append(step)
            values.append(float(value))
        self.step = step
        if self._last is None:
            self._last = (self.clock(), step)
        last_step = self.total_steps is not None and step >= self.total_steps - 1
        frame_due = self.frames and step + 1 >= self.total_steps * (self._next_frame + 1) / self.frames
        if self._shown_step is None and not self.text:  # the first step at once: the room sees where it starts
            self.update()
        elif frame_due:
            self._next_frame = min(self.frames, (step + 1) * self.frames // self.total_steps)
            self._hold()
            self.update()  # a progress frame is always drawn: the budget applies to the others
        elif self.throttle.due() or last_step:
            self.throttle.run(self.update)

    def _hold(self) -> None:
        """Keep the previous frame on screen for ``pace`` seconds, if training was faster."""
        if self.pace and self._last is not None:
            wait = self.pace - (self.clock() - self._last[0])
            if wait > 0:
                time.sleep(wait)

    def finish(self) -> None:
        """Show the final state (for loops that stop before ``total_steps``, or have none)."""
        if self.step is not None and self.step != self._shown_step:
            self.update()

    def update(self) -> None:
        """Show the current state now: a line of text, or the HTML view."""
        now = self.clock()
        then, first = self._last
        if now > then and self.step > first:  # no new steps: keep the speed measured last time
            self.speed = (self.step - first) / (now - then)
        self._last = (now, self.step)
        self._shown_step = self.step
        self.updates += 1
        if self.text:
            print(self.status(), flush=True)
        else:
            from IPython.display import HTML

            self._handle.update(HTML(self.html() + self.scroll_script()))

    # -- what is shown ----------------------------------------------------------------------
    def status(self) -> str:
        """One line: step, latest metrics, speed."""
        parts = [f"step {self.step + 1}" + (f"/{self.total_steps}" if self.total_steps else "")]
        parts += [f"{name} {values[-1]:.4g}" for name, (_, values) in self.history.items()]
        if self.speed is not None:
            parts.append(f"{self.speed:.1f} steps/s")
        return " · ".join(parts)

    def html(self) -> str:
        """The whole view: status line, progress bar, one chart per metric, the boundary.

        Its text is HTML in CSS pixels (at least 13 px), beside SVG that stretches: it stays
        readable in any width. In Jupyter every frame also brings the view on screen until the
        lecturer scrolls (``scroll_script``): the room sees the training, not the code that started it.
        """
        if self.step is None:
            return (f"<div class='mg-dashboard' style='font-family:sans-serif;font-size:{STATUS}px'>"
                    "waiting for the first step…</div>")
        done = (self.step + 1) / self.total_steps if self.total_steps else 0
        bar = ("<div class='mg-progress' style='background:#E5E5E5;height:10px;border-radius:5px;margin:2px 0 6px'>"
               f"<div style='background:{style.BLUE};width:{100 * min(done, 1):.1f}%;height:10px;"
               "border-radius:5px'></div></div>") if self.total_steps else ""
        cells = [f"<div style='flex:1 1 0;min-width:0'>{curve_html(name, steps, values, self.total_steps)}</div>"
                 for name, (steps, values) in self.history.items()]
        if self.data is not None and self.predict is not None:
            cells.append(f"<div style='flex:0 1 {BOUNDARY_PX}px;min-width:110px'>{self.boundary_html()}</div>")
        # One row whose charts share the cell's width (never wrapping below each other, never
        # scrolling sideways); the boundary keeps its square.
        return (f"<div class='mg-dashboard' id='{self.id}' style='font-family:sans-serif;font-size:{STATUS}px;"
                f"max-width:{MAX_WIDTH}px'><div class='mg-status'>{html.escape(self.status())}</div>{bar}"
                f"<div style='display:flex;gap:14px;align-items:flex-start'>{''.join(cells)}</div></div>")

    def scroll_script(self) -> str:
        """A script that scrolls the notebook just enough to show the whole view (JupyterLab runs
        scripts in outputs it trusts, as the ones a kernel just sent). Sent with every frame,
        it stops for good once the lecturer scrolls, clicks or types: their scrolling wins."""
        return ("<script>(function () { var id = '" + self.id + "';"
                " var left = window.mgLeftAlone = window.mgLeftAlone || {};"
                " if (!(id in left)) { left[id] = false; var stop = function () { left[id] = true; };"
                " ['wheel', 'touchmove', 'mousedown', 'keydown'].forEach(function (e) {"
                " window.addEventListener(e, stop, {once: true, capture: true}); }); }"
                " var show = function () { if (left[id]) return;"
                " var view = document.getElementById(id);"
                " var out = view && (view.closest('.jp-OutputArea-child') || view);"
                " if (out) out.scrollIntoView({block: 'nearest'}); };"
                " requestAnimationFrame(show); setTimeout(show, 60); })();</script>")

    def _prepare_boundary(self, X, y) -> None:
        """What stays the same at every redraw: the grid to predict on, and the points."""
        X, y = (a.detach().numpy() if isinstance(a, minigrad.Tensor) else np.asarray(a) for a in (X, y))
        y = y.astype(int)
        lo, hi = X.min(axis=0) - 0.5, X.max(axis=0) + 0.5
        gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], GRID), np.linspace(lo[1], hi[1], GRID))
        self._grid = minigrad.tensor(np.stack([gx.ravel(), gy.ravel()], axis=1).astype(np.float32))
        n_classes = y.max() + 1
        self._colours = (style.PALETTE * n_classes)[:n_classes]
        self._regions = (REGIONS + [pale_colour(c, 0.4) for c in style.PALETTE[len(REGIONS):]] * n_classes)[:n_classes]
        self._marks = point_marks(X, y, lo, hi, self._colours)

    def boundary_svg(self) -> str:
        """The 2-D points by class, over the class ``predict`` gives at each point of a grid (a square SVG, no text)."""
        with minigrad.no_grad():
            out = self.predict(self._grid)
        out = out.detach().numpy() if isinstance(out, minigrad.Tensor) else np.asarray(out)
        classes = (out.argmax(axis=1) if out.ndim == 2 else out).astype(int).reshape(GRID, GRID)
        return (f"<svg xmlns='http://www.w3.org/2000/svg' width='100%' viewBox='0 0 {BOX} {BOX}' "
                f"style='display:block;box-sizing:border-box;border:1px solid #999'>{grid_rects(classes, self._regions)}{self._marks}</svg>")

    def boundary_html(self) -> str:
        return (f"<div class='mg-chart' style='font-size:{chart.LABEL}px;line-height:1.3'><div class='mg-title' "
                f"style='font-size:{chart.TITLE}px;font-weight:bold'>decision boundary</div>"
                f"{self.boundary_svg()}</div>")


# -- the pieces: plain strings, so they cost next to nothing to make ---------------------------
def curve_html(name: str, steps: list, values: list, total_steps: int | None = None) -> str:
    """A line chart of ``values`` against ``steps``: its title the latest value, its axes labelled
    with the first and last step and the lowest and highest value."""
    stride = max(1, len(steps) // MAX_POINTS)
    xs, ys = np.asarray(steps[::stride] + steps[-1:]), np.asarray(values[::stride] + values[-1:], dtype=float)
    x_max = total_steps or max(steps[-1], 1)
    y_lo, y_hi = float(ys.min()), float(ys.max())
    if y_hi == y_lo:
        y_lo, y_hi = y_lo - 0.5, y_hi + 0.5
    colour = style.ORANGE if "acc" in name else style.BLUE
    return chart.chart(f"{name}: {values[-1]:.4g}", [chart.Series(xs, ys, colour)], (0, x_max), (y_lo, y_hi),
                       height=CHART_HEIGHT, x_label="step")


BOX_TOP, BOX, BOX_LEFT = 0, 200, 0  # the square of the decision boundary, in its SVG's coordinates
# The regions of classes 0, 1, 2 behind the points of colours BLUE, ORANGE, GREEN: a pale blue, a
# pale orange and a very pale green, which differ in lightness as well as hue, so every pair stays
# apart (CIE76 distance >= 20) for normal vision and under simulated protan-, deuter- and
# tritanopia, and on a washed-out projector. Later classes get the palette mixed with white.
REGIONS = ["#99c7e0", "#f5d999", "#d9f0ea"]


def grid_rects(classes: np.ndarray, regions: list) -> str:
    """Rectangles of the predicted class, one per run of equal classes in a grid row.

    They are opaque: overlapping translucent edges would show as stripes.
    """
    cell = BOX / classes.shape[1]
    rects = []
    for r, row in enumerate(classes[::-1]):  # the grid's first row is the bottom one
        starts = np.flatnonzero(np.diff(row, prepend=-1))
        for a, b in zip(starts, [*starts[1:], len(row)]):
            rects.append(f"<rect x='{BOX_LEFT + a * cell:.1f}' y='{BOX_TOP + r * cell:.1f}' "
                         f"width='{(b - a) * cell + 0.5:.1f}' height='{cell + 0.5:.1f}' "
                         f"fill='{regions[row[a] % len(regions)]}' shape-rendering='crispEdges'/>")
    return "".join(rects)


def pale_colour(colour: str, strength: float) -> str:
    """``colour`` (``#rrggbb``) mixed with white, ``strength`` of it."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - strength * (255 - c)):02x}" for c in rgb)


def point_marks(X: np.ndarray, y: np.ndarray, lo, hi, colours: list) -> str:
    """The data points, coloured by class and shaped too: circles and squares alternate."""
    px = BOX_LEFT + BOX * (X[:, 0] - lo[0]) / (hi[0] - lo[0])
    py = BOX_TOP + BOX * (hi[1] - X[:, 1]) / (hi[1] - lo[1])
    marks = []
    for a, b, k in zip(px, py, y):
        paint = f"fill='{colours[k]}' stroke='black' stroke-width='0.7'"
        if k % 2 == 0:
            marks.append(f"<circle cx='{a:.1f}' cy='{b:.1f}' r='4' {paint}/>")
        else:
            marks.append(f"<rect x='{a - 3.5:.1f}' y='{b - 3.5:.1f}' width='7' height='7' {paint}/>")
    return "".join(marks)
