"""``ChannelShuffle``: interleave the channels of ``groups`` groups (ShuffleNet)."""
from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad._tensor import Tensor


class ChannelShuffle(Module):
    """(N, g * c, *) -> the channels of the g groups interleaved, so that the next grouped convolution's
    groups each see channels from all of the previous one's."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input: Tensor) -> Tensor:
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"
