"""Small grids of numbers as HTML, and sliders that redraw a picture: lesson 11's windows.

    def draw(kernel=3, stride=1):
        return side_by_side(grid_html(image, "input"), grid_html(counts, "reads", numbers=True))
    sliders(draw, kernel=(1, 5, 3), stride=(1, 4, 1))

A grid is a CSS grid of square cells, each number HTML text of ``LABEL`` px, so it stays
readable at any width a notebook gives it (a picture drawn by matplotlib is shrunk with its
text into a narrow output). Cells are at most ``CELL`` px and a grid at most ``GRID_MAX`` px
on its longer side; grids side by side shrink together, so the sliders and the grids fit
360 px of height on a projected screen.
"""
from __future__ import annotations

import html
import secrets
from typing import Callable

import numpy as np

from minigrad.viz import style

LABEL = 13  # px: every number and title
GRID_MAX = 210  # px: the widest (and tallest) a grid is drawn
CELL = 28  # px: the largest a cell is drawn (two digits at LABEL px fit)


def _mix(colour: str, strength: float) -> str:
    """``colour`` blended with white: 0 is white, 1 the colour itself."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(255 - (255 - c) * strength):02x}" for c in rgb)


def grid_html(values, title: str, *, numbers: bool = False, box: tuple[int, int, int] | None = None,
              colour: str = style.BLUE, shades: np.ndarray | None = None, categories: bool = False) -> str:
    """An ``n x m`` grid of ``values``, each cell shaded by its value (``shades``, 0 to 1, if
    given, else the value over the largest one), its number written in it if ``numbers``;
    with ``categories``, each whole number has a pale colour of its own instead (the same
    number, the same colour, in every grid). ``box = (row, column, size)`` colours a square
    of cells orange (a kernel's window)."""
    values = np.asarray(values)
    rows, columns = values.shape
    if shades is None:
        top = float(np.abs(values).max()) or 1.0
        shades = np.abs(values) / top
    cells = []
    for (r, c), value in np.ndenumerate(values):
        shade = float(shades[r, c])
        inside = box is not None and box[0] <= r < box[0] + box[2] and box[1] <= c < box[1] + box[2]
        if categories:
            background, shade = _mix(style.PALETTE[int(value) % len(style.PALETTE)], 0.3), 0.0
        else:
            background = _mix(colour, 0.08 + 0.85 * shade)
        if inside:
            background = _mix(style.ORANGE, 0.55 + 0.3 * shade)
        ink = "#fff" if shade > 0.55 and not inside else "#000"
        text = html.escape(f"{value:g}") if numbers else ""
        cells.append(f"<div style='background:{background};color:{ink};display:flex;align-items:center;"
                     f"justify-content:center;font-size:{LABEL}px;line-height:1;overflow:hidden'>{text}</div>")
    side = min(CELL, GRID_MAX / max(rows, columns))  # px per cell, at most: square cells
    return (f"<div style='flex:0 1 auto;min-width:0'>"
            f"<div style='font-size:{LABEL}px;margin:0 0 3px'>{html.escape(title)}</div>"
            f"<div class='mg-grid' style='display:grid;grid-template-columns:repeat({columns},1fr);gap:1px;"
            f"background:#bbb;border:1px solid #bbb;width:{side * columns:.0f}px;max-width:100%;"
            f"aspect-ratio:{columns}/{rows}'>{''.join(cells)}</div></div>")


def side_by_side(*parts: str, caption: str = "") -> str:
    """``parts`` next to each other (a ``caption`` line above them), shrinking together with the output."""
    line = f"<div style='font-size:{LABEL + 1}px;margin:0 0 6px'>{html.escape(caption)}</div>" if caption else ""
    return (f"<div class='mg-grids' style='font-family:sans-serif'>{line}"
            f"<div style='display:flex;gap:16px;align-items:flex-start'>{''.join(parts)}</div></div>")


class Sliders(style.StaticCopy):
    """Integer sliders, two to a row, above the HTML that ``draw(**values)`` returns for them.

    ``ranges`` maps each of ``draw``'s arguments to ``(min, max, start)``. If ``draw``
    raises, the widget says so in words and keeps the last picture. Below the widget a static
    copy of the picture is kept, hidden while the widget is alive, for a notebook reopened
    after its kernel stopped.
    """

    STATIC_CAPTION = "A picture of the sliders' last values: run the cell to move them."

    def __init__(self, draw: Callable[..., str], ranges: dict[str, tuple[int, int, int]]) -> None:
        import ipywidgets as widgets

        self.draw = draw
        self.id = "mg-sliders-" + secrets.token_hex(4)
        self.sliders = {name: widgets.IntSlider(min=lo, max=hi, value=start, description=name,
                                                continuous_update=False, style={"description_width": "4.5em"},
                                                layout=widgets.Layout(width="auto"))
                        for name, (lo, hi, start) in ranges.items()}
        for s in self.sliders.values():
            s.observe(lambda change: self.update(), names="value")
        self.image = widgets.HTML(layout=widgets.Layout(width="100%"))
        controls = widgets.GridBox(list(self.sliders.values()),
                                   layout=widgets.Layout(grid_template_columns="repeat(2, minmax(0, 1fr))",
                                                         width="100%"))
        self.widget = widgets.VBox([controls, self.image])
        self.picture, self.message = "", ""
        self._static = None
        self.update()

    def update(self) -> None:
        """Redraw with the sliders' current values."""
        values = {name: s.value for name, s in self.sliders.items()}
        try:
            self.picture, self.message = self.draw(**values), ""
        except Exception as e:  # a learner's draw may fail for some values: say so, keep the picture
            at = ", ".join(f"{k} = {v}" for k, v in values.items())
            self.message = f"{type(e).__name__} at {at}: {e}. The picture is the last one that could be drawn."
        note = (f"<div role='status' style='font-size:14px;color:#8A3B00;margin:0 0 4px'>"
                f"{html.escape(self.message)}</div>") if self.message else ""
        self._show_picture(note, self.picture)


def sliders(draw: Callable[..., str], **ranges: tuple[int, int, int]) -> Sliders:
    """Integer sliders for ``draw``'s arguments (``name=(min, max, start)``) above the HTML it returns.

        sliders(lambda n=3: grid_html(np.arange(n * n).reshape(n, n), "n x n", numbers=True), n=(1, 6, 3))
    """
    return Sliders(draw, ranges)
