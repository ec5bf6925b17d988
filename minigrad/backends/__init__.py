"""``minigrad.backends``: which optional backends exist. ``mps`` and ``cudnn``: never available."""
from minigrad.backends import cudnn, mps

__all__ = ["cudnn", "mps"]
