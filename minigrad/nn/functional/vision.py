"""PyTorch's vision functions: ``pixel_shuffle``, ``pixel_unshuffle``, ``channel_shuffle``,
``interpolate`` and the ``upsample`` forms, ``affine_grid`` and ``grid_sample``; and ``flatten``.
"""
from __future__ import annotations

import warnings

import numpy as np

from minigrad.functional_ops import where
from minigrad.nn.ops.linear_map import (
    ChannelShuffle, PixelShuffle, PixelUnshuffle, UpsampleBicubic2d, UpsampleBicubic2dAa, UpsampleBilinear2d,
    UpsampleBilinear2dAa, UpsampleLanczos2dAa, UpsampleLinear1d, UpsampleNearest, UpsampleNearestExact,
    UpsampleTrilinear3d,
)
from minigrad.ops.broadcast import integer
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _check_tensors
from minigrad.nn.functional.pooling import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C * r^2, H, W) -> (*, C, H * r, W * r), r = upscale_factor: each r^2 channels of a pixel become an
    r x r block of pixels (channel i * r + j at offset (i, j)). One ``PixelShuffleBackward0`` node."""
    if type(input) not in _TENSORS:
        _check_tensors("pixel_shuffle", input=input)
    r = integer(upscale_factor, "upscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           f"upscale_factor, but input.size(-3)={c} is not divisible by {r * r}")
    b = len(batch)

    def shuffle(t: Tensor) -> Tensor:
        blocks = t.reshape(*batch, c // (r * r), r, r, h, w).permute(*range(b), b, b + 3, b + 1, b + 4, b + 2)
        return blocks.reshape(*batch, c // (r * r), h * r, w * r)
    return PixelShuffle.apply(input, shuffle, shuffle)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H * r, W * r) -> (*, C * r^2, H, W): pixel_shuffle's inverse, each r x r block of pixels
    becoming r^2 channels. One ``PixelUnshuffleBackward0`` node."""
    if type(input) not in _TENSORS:
        _check_tensors("pixel_unshuffle", input=input)
    r = integer(downscale_factor, "downscale_factor")
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got input with "
                           f"{input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *batch, c, h, w = input.shape
    for name, size, dim in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle expects {name} to be divisible by downscale_factor, but "
                               f"input.size({dim})={size} is not divisible by {r}")
    b = len(batch)

    def unshuffle(t: Tensor) -> Tensor:
        blocks = t.reshape(*batch, c, h // r, r, w // r, r).permute(*range(b), b, b + 2, b + 4, b + 1, b + 3)
        return blocks.reshape(*batch, c * r * r, h // r, w // r)
    return PixelUnshuffle.apply(input, unshuffle, unshuffle)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, g * c, *) -> channel i * g + j of the output is channel j * c + i of the input: the g groups'
    channels interleaved (ShuffleNet), so that a following grouped conv mixes them. Dimension 1 is the
    channels, in an unbatched input too (as in PyTorch). One ``ChannelShuffleBackward0`` node."""
    if type(input) not in _TENSORS:
        _check_tensors("channel_shuffle", input=input)
    g = integer(groups, "groups")
    if input.ndim <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(input.shape)}")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of groups:{g}")
    n, c, *rest = input.shape
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and {g} groups.")

    def shuffle(t: Tensor) -> Tensor:
        return t.reshape(n, g, c // g, *rest).transpose(1, 2).reshape(n, c, *rest)
    return ChannelShuffle.apply(input, shuffle, shuffle)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one (``torch.flatten``)."""
    if type(input) not in _TENSORS:
        _check_tensors("flatten", input=input)
    return input.flatten(start_dim, end_dim)


_UPSAMPLE_NODES = {**{(n + 2, "nearest"): UpsampleNearest[n] for n in (1, 2, 3)},
                   **{(n + 2, "nearest-exact"): UpsampleNearestExact[n] for n in (1, 2, 3)},
                   (3, "linear"): UpsampleLinear1d, (4, "bilinear"): UpsampleBilinear2d,
                   (5, "trilinear"): UpsampleTrilinear3d, (4, "bicubic"): UpsampleBicubic2d}
_ANTIALIASED_NODES = {"bilinear": UpsampleBilinear2dAa, "bicubic": UpsampleBicubic2dAa, "lanczos": UpsampleLanczos2dAa}
_TORCH_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resize the last dimensions of (N, C, L), (N, C, H, W) or (N, C, D, H, W) ``input`` to ``size``, or by
    ``scale_factor``.

    ``mode="nearest"`` copies, for output cell i, input cell floor(i * scale) (scale = 1 / scale_factor,
    or in / out), rounded as PyTorch rounds it, so the same cells are picked; "nearest-exact" takes
    floor((i + 0.5) * scale), the cell whose centre is nearest, which "nearest" misses by half a cell.
    ``"linear"`` (3-D), ``"bilinear"`` (4-D) and ``"trilinear"`` (5-D) mix the two nearest cells along
    each dimension, "bicubic" (4-D) four, with Keys' cubic convolution weights (a = -0.75, PyTorch's);
    ``align_corners=True`` maps the corner cells' centres onto each other instead of the corners of the
    grid. "area" is ``adaptive_avg_pool``. ``antialias=True`` (4-D bilinear, bicubic, and "lanczos", which
    needs it) resamples as Pillow does: when shrinking, every input cell under the stretched filter counts,
    instead of aliasing (``_antialiased_weights``). One node each, named as PyTorch's.
    """
    if type(input) not in _TENSORS:
        _check_tensors("interpolate", input=input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dims = input.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    scales = None
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dims:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got input with spatial "
                    f"dimensions of {list(input.shape[2:])} and output size of {size}. Please provide input tensor "
                    f"in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.")
            if not all(isinstance(o, (int, np.integer)) for o in size):
                raise TypeError(f"expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                                f"Tuple[int, int, int], but got size with types {[type(o) for o in size]}")
        out = tuple(size) if isinstance(size, (list, tuple)) else (size,) * dims
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)) and len(scale_factor) != dims:
            raise ValueError(
                f"Input and scale_factor must have the same number of spatial dimensions, but got input with "
                f"spatial dimensions of {list(input.shape[2:])} and scale_factor of shape {scale_factor}. Please "
                f"provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
        scales = tuple(scale_factor) if isinstance(scale_factor, (list, tuple)) else (scale_factor,) * dims
        # PyTorch's output size: the product, truncated; the factor itself still sets the scale below
        out = tuple(int(n * s) for n, s in zip(input.shape[2:], scales))
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor:
        if size is not None:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        scales = None  # the scale becomes in / out
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and input.ndim == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and requires a "
                         "4-D tensor as input")
    if mode == "area" and input.ndim in (3, 4, 5):
        return (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dims - 1](input, out)
    if mode == "lanczos" and input.ndim == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    node = _ANTIALIASED_NODES.get(mode) if antialias else _UPSAMPLE_NODES.get((input.ndim, mode))
    if node is None:
        _refuse_interpolation(input.ndim, mode)
    if min(out) <= 0 or min(input.shape[2:]) <= 0:
        names = ("D", "H", "W")[-dims:]
        shown = [", ".join(f"{d}: {n}" for d, n in zip(names, sizes)) for sizes in (input.shape[2:], out)]
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({shown[0]}) and "
                           f"output ({shown[1]})")
    scales = scales or (None,) * dims
    if antialias:  # one (out, in) matrix per dimension
        rows, cols = (Tensor._wrap(_antialiased_weights(n, o, s, align_corners, mode).astype(input._data.dtype))
                      for n, o, s in zip(input.shape[2:], out, scales))
        cols = cols.transpose(0, 1)

        def resized(t: Tensor) -> Tensor:
            return rows.matmul(t).matmul(cols)
    elif mode in ("nearest", "nearest-exact"):
        small = dims == 2 and sum(out) <= 128
        sources = [_nearest_sources(n, o, s, input._data.dtype, small, mode == "nearest-exact")
                   for n, o, s in zip(input.shape[2:], out, scales)]

        def resized(t: Tensor) -> Tensor:
            for axis, index in enumerate(sources, start=2):
                t = t[(slice(None),) * axis + (index,)]
            return t
    elif mode == "bicubic":
        taps = [_cubic_sources(n, o, s, align_corners, input._data.dtype)
                for n, o, s in zip(input.shape[2:], out, scales)]

        def resized(t: Tensor) -> Tensor:
            for axis, (cells, weights) in enumerate(taps, start=2):
                trailing = (1,) * (t.ndim - axis - 1)
                mixed = None
                for index, weight in zip(cells, weights):
                    term = t[(slice(None),) * axis + (index,)] * Tensor._wrap(weight.reshape(-1, *trailing))
                    mixed = term if mixed is None else mixed + term
                t = mixed
            return t
    else:
        dtype = input._data.dtype
        mixes = [_linear_sources(n, o, s, align_corners, dtype) for n, o, s in zip(input.shape[2:], out, scales)]

        def resized(t: Tensor) -> Tensor:
            for axis, (low, high, w_low, w_high) in enumerate(mixes, start=2):
                trailing = (1,) * (t.ndim - axis - 1)
                near, far = (Tensor._wrap(w.reshape(-1, *trailing)) for w in (w_low, w_high))
                t = t[(slice(None),) * axis + (low,)] * near + t[(slice(None),) * axis + (high,)] * far
            return t
    return node.apply(input, resized, resized)


def _refuse_interpolation(ndim: int, mode: str) -> None:
    """PyTorch's NotImplementedError for a mode and a rank that do not go together, or a mode it does not have."""
    needs = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}
    if mode in needs and ndim in (3, 4, 5):
        raise NotImplementedError(f"Got {ndim}D input, but {mode} mode needs {needs[mode]}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {ndim}D) for the "
                              f"modes: {_TORCH_MODES} (got {mode})")


def _antialiased_weights(size: int, out: int, scale: float | None, align_corners: bool, mode: str) -> np.ndarray:
    """The (out, size) matrix of PyTorch's antialiased resampling (_compute_weights_aa, Pillow's): output cell i
    averages the input cells within the filter's support around its centre, the filter (a triangle, Keys'
    cubic with a = -0.5, or Lanczos-3) stretched by the scale when shrinking, so that every input cell counts
    instead of only the nearest few; each row normalised to sum to 1."""
    if align_corners:
        step = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        step = 1.0 / scale if scale is not None and scale > 0 else size / out
    support = {"bilinear": 1.0, "bicubic": 2.0, "lanczos": 3.0}[mode] * max(step, 1.0)
    stretch = 1.0 / step if step >= 1.0 else 1.0
    weights = np.zeros((out, size))
    for i in range(out):
        centre = step * (i + 0.5)
        low = max(int(centre - support + 0.5), 0)
        high = min(int(centre + support + 0.5), size)
        w = _antialias_filter(mode, (np.arange(low, high) - centre + 0.5) * stretch)
        weights[i, low:high] = w / w.sum() if w.sum() != 0 else w
    return weights


def _antialias_filter(mode: str, x: np.ndarray) -> np.ndarray:
    x = np.abs(x)
    if mode == "bilinear":
        return np.maximum(1 - x, 0)
    if mode == "bicubic":
        a = -0.5
        return np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                        np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0))
    return np.where(x < 3, np.sinc(x) * np.sinc(x / 3), 0)  # Lanczos-3 (np.sinc is sin(pi x) / (pi x))


def _nearest_sources(size: int, out: int, scale: float | None, dtype: np.dtype, small: bool,
                     exact: bool = False) -> np.ndarray:
    """The input cell of each output cell, floor(i * scale) (``exact``: floor((i + 0.5) * scale)), exactly as
    PyTorch's CPU kernels pick it.

    They differ: for a 2-D output with H + W <= 128 (``small``) PyTorch's nearest_idx takes the
    scale in float32 and copies a size kept or doubled without it; otherwise the scale is in the
    input's dtype and i * scale is rounded to float32 before the floor (floorf).
    """
    cells = np.arange(out)
    if small and out in (size, 2 * size):
        return cells if out == size else cells >> 1
    arithmetic = np.dtype(np.float32) if small else dtype
    step = (arithmetic.type(1.0 / scale) if scale is not None and scale > 0
            else arithmetic.type(size) / arithmetic.type(out))
    positions = cells.astype(arithmetic) + arithmetic.type(0.5) if exact else cells.astype(arithmetic)
    source = (positions * step).astype(np.float32)
    return np.minimum(np.floor(source).astype(np.int64), size - 1)


def _cubic_sources(size: int, out: int, scale: float | None, align_corners: bool, dtype: np.dtype) -> tuple:
    """The four input cells of each output cell (clamped to the edges) and their weights: PyTorch's
    upsample_bicubic2d, Keys' cubic convolution with a = -0.75 at the distances 1 + t, t, 1 - t, 2 - t."""
    cells = np.arange(out).astype(dtype)
    if align_corners:
        ratio = dtype.type(size - 1) / dtype.type(out - 1) if out > 1 else dtype.type(0)
        source = ratio * cells
    else:  # (no clamp at 0, unlike linear)
        ratio = dtype.type(1.0 / scale) if scale is not None and scale > 0 else dtype.type(size) / dtype.type(out)
        source = ratio * (cells + dtype.type(0.5)) - dtype.type(0.5)
    low = np.floor(source)
    t = (source - low).astype(dtype)
    a = dtype.type(-0.75)

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    index = low.astype(np.int64)
    return [np.clip(index + k - 1, 0, size - 1) for k in range(4)], [w.astype(dtype) for w in weights]


def _linear_sources(size: int, out: int, scale: float | None, align_corners: bool, dtype: np.dtype) -> tuple:
    """PyTorch's two input cells of each output cell and their weights (compute_source_index_and_lambda),
    in the input's dtype as its kernel computes them."""
    cells = np.arange(out)
    if out == size:
        return cells, cells, np.ones(out, dtype), np.zeros(out, dtype)
    if align_corners:
        ratio = dtype.type(size - 1) / dtype.type(out - 1) if out > 1 else dtype.type(0)
        source = ratio * cells.astype(dtype)
    else:
        ratio = dtype.type(1.0 / scale) if scale is not None and scale > 0 else dtype.type(size) / dtype.type(out)
        source = np.maximum(ratio * (cells.astype(dtype) + dtype.type(0.5)) - dtype.type(0.5), dtype.type(0))
    low = np.minimum(np.floor(source).astype(np.int64), size - 1)
    w_high = np.clip(source - low.astype(dtype), 0, 1).astype(dtype)
    return low, low + (low < size - 1), (dtype.type(1) - w_high).astype(dtype), w_high


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated: ``interpolate``, under its old name (with PyTorch's warning)."""
    if type(input) not in _TENSORS:
        _check_tensors("upsample", input=input)
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="nearest")`` (with PyTorch's warning)."""
    if type(input) not in _TENSORS:
        _check_tensors("upsample_nearest", input=input)
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: ``interpolate(..., mode="bilinear", align_corners=True)`` (with PyTorch's warning)."""
    if type(input) not in _TENSORS:
        _check_tensors("upsample_bilinear", input=input)
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use `nn.functional.interpolate` instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


_ALIGN_CORNERS_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False since "
                          "1.3.0. Please specify align_corners=True if the old behavior is desired. See the "
                          "documentation of grid_sample for details.")


def affine_grid(theta: Tensor, size: list[int], align_corners: bool | None = None) -> Tensor:
    """The sampling grid of a batch of affine maps: (N, H, W, 2) (or (N, D, H, W, 3)) points theta @ (x, y, 1),
    for the output pixels' own coordinates (x, y) in [-1, 1]; ``grid_sample`` then reads the input there.

    ``theta`` is (N, 2, 3) for a 4-D ``size`` (N, C, H, W), (N, 3, 4) for a 5-D one. With
    ``align_corners=False`` (the default) -1 and 1 are the outer edges of the corner pixels, with True
    their centres. A constant grid times theta's transpose: differentiable with respect to theta.
    """
    if type(theta) not in _TENSORS:
        _check_tensors("affine_grid", theta=theta)
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    size = list(size)
    if len(size) in (4, 5):
        rows = len(size) - 2
        if theta.ndim != 3 or tuple(theta.shape[-2:]) != (rows, rows + 1):
            raise ValueError(f"Expected a batch of {rows}D affine matrices of shape Nx{rows}x{rows + 1} for size "
                             f"{size}. Got {list(theta.shape)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D affine transforms, "
                                  f"respectively. Got size {size}.")
    if min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: expected theta's batch size {theta.shape[0]} to be size[0] = {size[0]}: "
                           "one affine map per output image")
    spatial = size[2:]
    axes = [_unit_positions(n, align_corners, theta._data.dtype) for n in reversed(spatial)]  # x (W) first
    mesh = np.meshgrid(*axes[::-1], indexing="ij")[::-1]  # each (D,) H, W
    base = np.stack([*mesh, np.ones(tuple(spatial), theta._data.dtype)], -1).reshape(-1, len(spatial) + 1)
    grid = Tensor._wrap(base).matmul(theta.transpose(1, 2))  # (N, D*H*W, dims)
    return grid.reshape(size[0], *spatial, len(spatial))


def _unit_positions(n: int, align_corners: bool, dtype: np.dtype) -> np.ndarray:
    """The n pixels' centres in [-1, 1]: the ends at the corners' centres, or (n - 1) / n of that; 0 for n = 1."""
    if n <= 1:
        return np.zeros(n, dtype)
    steps = np.linspace(-1, 1, n, dtype=dtype)
    return steps if align_corners else (steps * (n - 1) / n).astype(dtype)


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """The values of (N, C, H, W) ``input`` at the points of (N, Ho, Wo, 2) ``grid``: (N, C, Ho, Wo).

    A point is (x, y) in [-1, 1] (-1 the left/top edge, or with ``align_corners`` the first pixel's
    centre), as ``affine_grid`` makes them. ``mode`` "bilinear" mixes the 4 pixels around it, "nearest"
    takes the closest, "bicubic" mixes 16 with the weights of ``interpolate``'s bicubic mode; points
    outside read 0 (``padding_mode="zeros"``), the nearest edge pixel ("border") or the image mirrored at
    its edges ("reflection"). 5-D input and grid sample volumes (trilinear for "bilinear"; no bicubic).
    Composed of gathers and products, so it is differentiable with respect to the input and the grid
    (where the weights move), to any order.
    """
    if type(input) not in _TENSORS or type(grid) not in _TENSORS:
        _check_tensors("grid_sample", input=input, grid=grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_CORNERS_WARNING, stacklevel=2)
        align_corners = False
    _check_grid_sampler(input, grid, mode)
    batch, channels, *sizes = input.shape
    points = tuple(grid.shape[1:-1])
    # per input dimension ((D,) H, W): the grid's last entry is x, along W
    coords = [_source_coordinates(grid[..., k], n, padding_mode, align_corners)
              for k, n in zip(range(len(sizes)), reversed(sizes))][::-1]
    flat = input.reshape(batch, channels, -1)

    def read(cells: list) -> Tensor:
        """input at integer cells (each (N, *points)), 0 outside when padding with zeros: (N, C, *points)."""
        inside = np.logical_and.reduce([(i >= 0) & (i < n) for i, n in zip(cells, sizes)])
        index = np.ravel_multi_index([np.clip(i, 0, n - 1) for i, n in zip(cells, sizes)], sizes)
        index = Tensor._wrap(index.reshape(batch, 1, -1)).expand(batch, channels, -1)
        values = flat.gather(2, index).reshape(batch, channels, *points)
        if inside.all():
            return values
        return values * Tensor._wrap(inside[:, None].astype(input._data.dtype))

    if mode == "nearest":
        rounded = [c.round() for c in coords]  # half to even, as PyTorch's nearbyint
        cells = [np.nan_to_num(r._data).astype(np.int64) for r in rounded]
        # the grid's gradient is 0 as in PyTorch (not None): joined through round, whose derivative is 0
        joint = sum(where(Tensor._wrap(np.isfinite(r._data)), r - r.detach(), 0.0).unsqueeze(1) for r in rounded)
        return read(cells) + joint
    if mode == "bicubic":  # the 4 x 4 pixels around each point, each moved inside by the padding mode on its own
        coords = [_source_coordinates(grid[..., 1 - k], n, "zeros", align_corners) for k, n in enumerate(sizes)]
        lows = [np.floor(c._data) for c in coords]
        weights = [_cubic_weights(c - Tensor._wrap(low)) for c, low in zip(coords, lows)]
        taps = [[_tap(low + k - 1, n, padding_mode, align_corners) for k in range(4)] for low, n in zip(lows, sizes)]
        out = None
        for i, j in np.ndindex(4, 4):
            term = read([taps[0][i], taps[1][j]]) * (weights[0][i] * weights[1][j]).unsqueeze(1)
            out = term if out is None else out + term
        return out
    lows = [np.floor(c._data) for c in coords]
    fracs = [c - Tensor._wrap(low) for c, low in zip(coords, lows)]
    lows = [np.nan_to_num(low).astype(np.int64) for low in lows]
    out = None
    for corner in np.ndindex(*(2,) * len(sizes)):  # the 4 (or 8) pixels around each point
        weight = None
        for up, frac in zip(corner, fracs):
            w = frac if up else 1 - frac
            weight = w if weight is None else weight * w
        term = read([low + up for low, up in zip(lows, corner)]) * weight.unsqueeze(1)
        out = term if out is None else out + term
    return out


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """Keys' cubic convolution weights (a = -0.75, PyTorch's) of the 4 pixels at distances 1 + t, t, 1 - t, 2 - t."""
    a = -0.75

    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((x * (a + 2) - (a + 3)) * x * x) + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((x * a - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _tap(cell: np.ndarray, size: int, padding_mode: str, align_corners: bool) -> np.ndarray:
    """A bicubic tap's pixel: moved inside by "border" or "reflection" (then truncated, as PyTorch's
    get_value_bounded), or left where it is for "zeros" (read as 0 outside)."""
    if padding_mode == "zeros":
        return np.nan_to_num(cell).astype(np.int64)
    moved = _source_coordinates(Tensor._wrap(cell), size, padding_mode, align_corners, normalized=False)._data
    return np.nan_to_num(moved).astype(np.int64)


def _check_grid_sampler(input: Tensor, grid: Tensor, mode: str) -> None:
    """PyTorch's checks of grid_sampler, in its order and words."""
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input._data.dtype != grid._data.dtype:
        raise RuntimeError(f"grid_sampler(): expected input and grid to have same dtype, but input has "
                           f"{input.dtype} and grid has {grid.dtype}")
    if input.ndim != 4 and (input.ndim != 5 or grid.ndim != 5):
        raise RuntimeError(f"grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
                           f"{sizes}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if grid.shape[-1] != input.ndim - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.ndim - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for dim in range(2, input.ndim):
        if input.shape[dim] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {dim} being empty")
    if input.ndim != grid.ndim:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got "
                           f"{sizes}")
    if input.ndim == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")


def _source_coordinates(coord: Tensor, size: int, padding_mode: str, align_corners: bool,
                        normalized: bool = True) -> Tensor:
    """A grid coordinate in [-1, 1] as a pixel position in [0, size - 1] (or past it), then moved inside
    for the "border" and "reflection" padding modes, as PyTorch's grid_sampler_compute_source_index.
    ``normalized=False``: ``coord`` is a pixel position already, only moved inside."""
    if normalized:
        coord = (coord + 1) / 2 * (size - 1) if align_corners else ((coord + 1) * size - 1) / 2
    if padding_mode == "reflection":
        coord = _reflected(coord, 0, 2 * (size - 1)) if align_corners else _reflected(coord, -1, 2 * size - 1)
    if padding_mode != "zeros":
        coord = coord.clamp(0, size - 1)
    return coord


def _reflected(coord: Tensor, twice_low: int, twice_high: int) -> Tensor:
    """coord mirrored at low and high (given doubled, to stay integers) until it lies between them."""
    if twice_low == twice_high:
        return coord * 0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    distance = (coord - low).abs()
    flips = np.floor(distance._data / span)
    extra = distance - Tensor._wrap(flips * span)  # fmod(distance, span)
    return where(Tensor._wrap(flips % 2 == 1), span - extra + low, extra + low)
