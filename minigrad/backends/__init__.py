"""``minigrad.backends``: which optional backends exist. ``cuda``, ``mps`` and ``cudnn``: never
available; their switches are kept so that scripts that set them run."""
from minigrad.backends import cuda, cudnn, mps

__all__ = ["cuda", "cudnn", "mps"]
