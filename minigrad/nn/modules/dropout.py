"""``Dropout``: randomly silence units while training, so none can be relied on alone;
``Dropout1d`` and ``Dropout2d`` silence whole channels. ``AlphaDropout`` and ``FeatureAlphaDropout``
do it without disturbing a SELU network's self-normalisation."""
from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad._tensor import Tensor


class _DropoutNd(Module):
    """What the dropouts share: ``p`` checked, ``inplace``, the repr."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training mode; the identity after ``eval()``.

    See ``functional.dropout`` for the 1/(1-p) scaling; ``inplace=True`` scales ``input`` itself.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)


class Dropout1d(_DropoutNd):
    """Zero each channel of (N, C, L) or (C, L) input, whole, with probability ``p`` in training mode.

    Neighbouring positions of a sequence are strongly correlated, so dropping single elements hardly
    regularises a conv layer: the ones beside a dropped one carry the same signal. Dropping whole
    feature maps does.
    """

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout1d(input, self.p, self.training, self.inplace)


class Dropout2d(_DropoutNd):
    """Zero each channel of (N, C, H, W) input, a whole feature map, with probability ``p`` in training
    mode (see ``Dropout1d`` for why). A 3-D input is taken as (N, C, L), with PyTorch's warning."""

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout2d(input, self.p, self.training, self.inplace)


class AlphaDropout(_DropoutNd):
    """Dropout for SELU networks (``F.alpha_dropout``): keeps zero mean and unit variance; the identity after
    ``eval()``."""

    def forward(self, input: Tensor) -> Tensor:
        return F.alpha_dropout(input, self.p, self.training, self.inplace)


class FeatureAlphaDropout(_DropoutNd):
    """``AlphaDropout`` of whole channels of (N, C, ...) input (``F.feature_alpha_dropout``)."""

    def forward(self, input: Tensor) -> Tensor:
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
