"""A panel of text that a training loop replaces in place: the latest sample of a language model.

    panel = TextPanel("sample")
    panel.update(text, title="after 200 steps")

In Jupyter it is one output, swapped with ``display(..., display_id=True)`` like
``TrainingDashboard``'s (its own output, so the two stay independent); outside Jupyter each
update prints the title and the text.
"""
from __future__ import annotations

import html

from minigrad.viz import style


class TextPanel:
    """A titled block of monospaced text, replaced by ``update``."""

    def __init__(self, title: str = "", text: str = "", *, text_mode: bool | None = None) -> None:
        self.title, self.text = title, text
        self.text_mode = not style.in_notebook() if text_mode is None else text_mode
        self.updates = 0
        self._handle = None
        if not self.text_mode:
            from IPython.display import HTML, DisplayHandle

            self._handle = DisplayHandle()
            self._handle.display(HTML(self.html()))

    def update(self, text: str, title: str | None = None) -> None:
        """Show ``text`` (and a new ``title``, if given) in place of what the panel showed."""
        self.text = text
        if title is not None:
            self.title = title
        self.updates += 1
        if self.text_mode:
            print(f"-- {self.title} --\n{self.text}", flush=True)
        else:
            from IPython.display import HTML

            self._handle.update(HTML(self.html()))

    def html(self) -> str:
        return (f"<div style='font-size:{style.FONT_SIZE}px'><b>{html.escape(self.title)}</b>"
                f"<pre style='white-space:pre-wrap;margin:4px 0;font-size:{style.FONT_SIZE}px'>"
                f"{html.escape(self.text)}</pre></div>")
