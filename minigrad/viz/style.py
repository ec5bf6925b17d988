"""Colours, fonts and small helpers shared by every figure in ``minigrad.viz``.

The figures are projected in class, so fonts are large and the colours are
the Okabe-Ito palette, which stays distinguishable with every common kind of
colour blindness. Nothing here imports matplotlib until a figure is made.
"""
from __future__ import annotations

import io
import secrets

import numpy as np

# Okabe & Ito (2008), "Color Universal Design".
BLUE = "#0072B2"
SKY = "#56B4E9"
GREEN = "#009E73"
ORANGE = "#E69F00"
VERMILION = "#D55E00"
PURPLE = "#CC79A7"
YELLOW = "#F0E442"
BLACK = "#000000"
GREY = "#999999"

FONT_SIZE = 14  # readable from the back of a lecture room at the default figure widths

PALETTE = [BLUE, ORANGE, GREEN, VERMILION, PURPLE, SKY]


def styled():
    """A context in which new figures, axes and texts get large fonts and our colours.

    matplotlib reads its settings when an artist is created, so wrap all the
    drawing (not only the figure's creation) in it.
    """
    import matplotlib.pyplot as plt
    from cycler import cycler

    return plt.rc_context({
        "font.size": FONT_SIZE,
        "axes.titlesize": FONT_SIZE + 2,
        "axes.labelsize": FONT_SIZE,
        "xtick.labelsize": FONT_SIZE - 2,
        "ytick.labelsize": FONT_SIZE - 2,
        "legend.fontsize": FONT_SIZE - 2,
        "lines.linewidth": 2.5,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": cycler(color=PALETTE),
        "axes.titley": 1.0,  # a fixed title position: working it out costs a third of a redraw
    })


def new_figure(width: float, height: float):
    """A matplotlib Figure that pyplot does not keep open.

    Closing it in pyplot means Jupyter does not show it twice (once when the
    cell ends, once as the returned value) and loops do not leak figures; a
    closed figure can still be drawn, saved and displayed.
    """
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(width, height))
    plt.close(fig)
    return fig


def to_png(fig, dpi: int = 80, tight: bool = True) -> bytes:
    """The figure as PNG bytes, for an ``ipywidgets.Image`` (``tight`` crops, at the cost of a second draw)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    return buffer.getvalue()


def short(values) -> str:
    """A few significant digits of an array, short enough for a box in a graph."""
    a = np.asarray(values)
    if a.size == 1:
        return f"{a.item():.4g}"
    if a.size <= 4:
        return "[" + ", ".join(f"{v:.3g}" for v in a.ravel()) + "]"
    return f"[{a.flat[0]:.3g}, {a.flat[1]:.3g}, …] {'×'.join(map(str, a.shape))}"


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where widgets can be shown), False in a plain Python."""
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in shell.config


def responsive(variants: list[tuple[float, str]]) -> str:
    """HTML showing one of ``variants`` (``(least width in px, html)``, narrowest first): the
    last one whose least width the output area has, decided by the browser (a CSS container
    query), so it follows the real width: a sidebar opened or closed, a zoom, a projector.

    Plain HTML and CSS, no script: it works in a saved notebook and inside a widget alike.
    """
    if len(variants) == 1:
        return variants[0][1]
    uid = "mg-" + secrets.token_hex(4)
    rules = [f"#{uid}>.mg-v{{display:none}}#{uid}>.mg-v0{{display:block}}"]
    for i, (least, _) in enumerate(variants[1:], start=1):
        rules.append(f"@container (min-width:{least:.0f}px){{#{uid}>.mg-v{{display:none}}"
                     f"#{uid}>.mg-v{i}{{display:block}}}}")
    shown = "".join(f"<div class='mg-v mg-v{i}'>{body}</div>" for i, (_, body) in enumerate(variants))
    return f"<div id='{uid}' style='container-type:inline-size'><style>{''.join(rules)}</style>{shown}</div>"


def hide_lost_widget(static_class: str) -> str:
    """A CSS rule, for a widget's static copy (class ``static_class``, displayed right after the
    widget): hide the widget's output while it holds no picture, only a line of text.

    A notebook reopened after its kernel stopped has no widget to draw: ipywidgets writes
    "Error displaying widget: model not found" there, and the static copy below already shows
    the last picture. A live widget always holds elements, so the rule never hides one.
    """
    # (one :has() may not hold another, so the rule hides the output, not its whole row)
    return (f"<style>.jp-OutputArea-child:has(+ .jp-OutputArea-child .{static_class})"
            f" > .jp-OutputArea-output:not(:has(*)){{display:none}}</style>")


class StaticCopy:
    """A widget shown with a static copy of its last picture right below it: what a notebook
    reopened without a kernel shows (``hide_lost_widget`` hides the widget's error line then).

    A subclass has ``id``, ``widget``, ``image`` (an HTML widget), ``_static`` (None until shown)
    and ``STATIC_CAPTION``, and calls ``_show_picture`` to redraw.
    """

    STATIC_CAPTION = ""
    _static = None

    def _show_picture(self, note: str, picture: str) -> None:
        self.image.value = f"<style>.{self.id}-static{{display:none}}</style>{note}{picture}"
        if self._static is not None:
            self._static.update(self._static_html())

    def _static_html(self):
        from IPython.display import HTML

        return HTML(f"<div class='{self.id}-static'>{hide_lost_widget(self.id + '-static')}"
                    f"{self.image.value.split('</style>', 1)[1]}"
                    f"<p><i>{self.STATIC_CAPTION}</i></p></div>")

    def _ipython_display_(self) -> None:
        from IPython.display import DisplayHandle, display

        display(self.widget)
        self._static = DisplayHandle()
        self._static.display(self._static_html())
