"""``Dropout``: randomly silence units while training, so none can be relied on alone."""
from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class Dropout(Module):
    """Zero each element with probability ``p`` in training mode; the identity after ``eval()``.

    See ``functional.dropout`` for the 1/(1-p) scaling; ``inplace=True`` scales ``input`` itself.
    """

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"
