"""``backward`` and ``grad`` (the core's: ``minigrad/core/differentiate.py``)."""
from minigrad.core.differentiate import _as_tuple, _seed, backward, grad  # noqa: F401
