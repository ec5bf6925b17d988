"""``minigrad.backends``: which optional backends exist. Only ``mps``, and it is never available."""
from minigrad.backends import mps

__all__ = ["mps"]
