"""Padding layers: ``F.pad`` with its sizes and mode kept on a Module, to sit in a ``Sequential``.

``padding`` is one int for every side, or F.pad's list: (left, right) for a 1-D layer, (left, right, top,
bottom) for a 2-D one, (left, right, top, bottom, front, back) for a 3-D one. Constant padding keeps a
conv's window from shrinking the image; reflection, replication and circular padding fill the border
from the image itself, so the edge looks less like a wall of zeros (circular: as if the image tiled the
plane).
"""
from __future__ import annotations

from minigrad.nn import functional as F
from minigrad.nn.module import Module
from minigrad.nn.modules.conv import _ntuple
from minigrad._tensor import Tensor


class _PadNd(Module):
    """Pads the last ``_dims`` dimensions of its input with F.pad's ``mode``."""

    _dims: int
    mode: str

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._dims)

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    mode = "constant"

    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input: Tensor) -> Tensor:
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPadNd):
    """Pads the last dimension with ``value``."""

    _dims = 1


class ConstantPad2d(_ConstantPadNd):
    """Pads the last two dimensions with ``value``."""

    _dims = 2


class ConstantPad3d(_ConstantPadNd):
    """Pads the last three dimensions with ``value``."""

    _dims = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last dimension with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


class ZeroPad2d(ConstantPad2d):
    """Pads the last two dimensions with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


class ZeroPad3d(ConstantPad3d):
    """Pads the last three dimensions with zeros."""

    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    extra_repr = _PadNd.extra_repr


class ReflectionPad1d(_PadNd):
    """Mirrors the last dimension at its ends, without repeating the edge value (padding < its length)."""

    _dims, mode = 1, "reflect"


class ReflectionPad2d(_PadNd):
    """Mirrors the last two dimensions at their ends, without repeating the edge."""

    _dims, mode = 2, "reflect"


class ReflectionPad3d(_PadNd):
    """Mirrors the last three dimensions at their ends, without repeating the edge."""

    _dims, mode = 3, "reflect"


class ReplicationPad1d(_PadNd):
    """Repeats the edge values of the last dimension."""

    _dims, mode = 1, "replicate"


class ReplicationPad2d(_PadNd):
    """Repeats the edge values of the last two dimensions."""

    _dims, mode = 2, "replicate"


class ReplicationPad3d(_PadNd):
    """Repeats the edge values of the last three dimensions."""

    _dims, mode = 3, "replicate"


class _CircularPadNd(_PadNd):
    mode = "circular"

    def forward(self, input: Tensor) -> Tensor:
        if input.ndim not in (self._dims + 1, self._dims + 2):
            raise ValueError(f"expected {self._dims + 1}D or {self._dims + 2}D input (got {input.ndim}D input)")
        return super().forward(input)


class CircularPad1d(_CircularPadNd):
    """Wraps the last dimension around: the left padding comes from the right end, and the other way round."""

    _dims = 1


class CircularPad2d(_CircularPadNd):
    """Wraps the last two dimensions around, as if the image tiled the plane."""

    _dims = 2


class CircularPad3d(_CircularPadNd):
    """Wraps the last three dimensions around, as if the volume tiled space."""

    _dims = 3
