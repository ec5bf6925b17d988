"""Shakespeare as plain text: 400 KB of plays, for a character-level language model.

A language model needs text, and a course that runs offline must ship it. This
is the first 399,862 characters (the first plays, cut at a speech boundary) of
the "tiny shakespeare" file of Andrej Karpathy's char-rnn
(``data/tinyshakespeare/input.txt``, commit 6f9487a), a selection of
Shakespeare's plays. Shakespeare's works are in the public domain; see
``SHAKESPEARE_LICENSE.txt``. Stored gzip-compressed (155 KB).
"""
from __future__ import annotations

import gzip
from functools import lru_cache
from importlib import resources

__all__ = ["load_shakespeare"]

_FILE = "shakespeare.txt.gz"


@lru_cache(maxsize=1)
def load_shakespeare() -> str:
    """Return the text: 399,862 characters, 63 distinct ones (letters, punctuation, space and
    newline; no digits)."""
    with resources.files(__package__).joinpath(_FILE).open("rb") as f:
        return gzip.decompress(f.read()).decode("utf-8")
