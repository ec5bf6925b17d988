"""minigrad.viz.text.TextPanel: the block of text a training loop replaces (stage 12's samples)."""
from minigrad.viz.text import TextPanel


def test_text_mode_prints_each_update_with_its_title(capsys):
    panel = TextPanel("sample", text_mode=True)
    panel.update("To be, or not", title="after 10 steps")
    panel.update("to be")
    out = capsys.readouterr().out
    assert out == "-- after 10 steps --\nTo be, or not\n-- after 10 steps --\nto be\n"
    assert panel.updates == 2 and panel.text == "to be"


def test_html_escapes_the_text_and_keeps_its_lines():
    panel = TextPanel("<b>", "a < b & c\nnext line", text_mode=True)
    page = panel.html()
    assert "&lt;b&gt;" in page and "a &lt; b &amp; c\nnext line" in page and "<pre" in page
