"""``pad``: constant, reflect, replicate and circular padding (the convolutions, pools, norms and
attention pad with it too).
"""
from __future__ import annotations

import numpy as np

from minigrad.functional_ops import cat
from minigrad.nn.ops.linear_map import ConstantPadNd, ReflectionPad, ReplicationPad
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _check_tensors


def _pad_indices(mode: str, n: int, left: int, right: int, dim: int, shape: tuple) -> np.ndarray:
    """The source index of every output position along one dimension, for the non-constant modes."""
    positions = np.arange(-left, n + right)
    if mode == "replicate":
        return np.clip(positions, 0, n - 1)
    if mode == "circular":  # (pad checked that it wraps around at most once)
        return positions % n
    if left >= n or right >= n:
        raise RuntimeError(
            f"Argument #4: Padding size should be less than the corresponding input dimension, but got: "
            f"padding ({left}, {right}) at dimension {dim} of input {list(shape)}"
        )
    return _reflect(positions, n)


def _reflect(positions: np.ndarray, n: int) -> np.ndarray:
    """Mirror positions outside [0, n) back inside, without repeating the edge (PyTorch's "reflect")."""
    period = 2 * (n - 1)
    folded = np.abs(positions) % period if period else np.zeros_like(positions)
    return np.where(folded >= n, period - folded, folded)


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad (or, with negative sizes, crop) the last ``len(pad) // 2`` dimensions.

    ``pad`` lists (left, right) for the last dimension, then the one before it,
    and so on, as in PyTorch. ``mode`` is "constant" (filled with ``value``,
    default 0), "reflect", "replicate" or "circular". Built from ``cat``, slicing
    and indexing (``_padded``), run as one node named as PyTorch's (``nn/ops/linear_map.py``).
    """
    if type(input) not in _TENSORS:
        _check_tensors("pad", input=input)
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension "
                           f"but got padding length {len(pad)} and input of dimension {input.ndim}")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unsupported padding mode: {mode}")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f'Padding mode "{mode}" doesn\'t take in value argument.')
    dims = len(pad) // 2
    sizes = [(input.shape[-1 - i], pad[2 * i], pad[2 * i + 1]) for i in range(dims)]  # (last dimension first)
    if mode == "constant" and any(n + min(left, 0) + min(right, 0) < 0 for n, left, right in sizes):
        raise RuntimeError(f"negative padding {list(pad)} crops more than input of size {list(input.shape)} has")
    if mode != "constant" and not (dims in (1, 2, 3) and input.ndim in (dims + 1, dims + 2)):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {input.ndim}D input tensor: {mode} padding of the "
            f"last 1, 2 or 3 dimensions needs an input with one or two more (a batch and a channel dimension)"
        )
    if mode == "circular":  # (PyTorch's node is a CopySlices here: left as the composition)
        if any(left > n or right > n for n, left, right in sizes):
            raise RuntimeError("Padding value causes wrapping around more than once.")
        if any(n + left + right < 0 for n, left, right in sizes):
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return _padded(input, pad, mode, value)
    if mode != "constant" and all(n + left + right < 1 for n, left, right in sizes):  # (PyTorch's check: all)
        raise RuntimeError(f"input of size {list(input.shape)} is too small for padding {list(pad)}: "
                           f"the padded dimensions would be {[n + left + right for n, left, right in sizes][::-1]}")
    node = ConstantPadNd if mode == "constant" else (ReflectionPad if mode == "reflect" else ReplicationPad)[dims]
    return node.apply(input, lambda t: _padded(t, pad, mode, value), lambda t: _padded(t, pad, mode, None))


def _padded(input: Tensor, pad: tuple, mode: str, value: float | None) -> Tensor:
    """``pad``'s result from cat, slicing and indexing (with the padding mode's source indices)."""
    out = input
    for i in range(len(pad) // 2):
        dim = input.ndim - 1 - i
        left, right = pad[2 * i], pad[2 * i + 1]
        if mode != "constant" and (left > 0 or right > 0):
            idx = _pad_indices(mode, out.shape[dim], max(left, 0), max(right, 0), dim, tuple(input.shape))
            out = out[(slice(None),) * dim + (idx,)]
            left, right = min(left, 0), min(right, 0)
        if left < 0 or right < 0:  # negative padding crops
            n = out.shape[dim]
            out = out[(slice(None),) * dim + (slice(max(-left, 0), n - max(-right, 0)),)]
        blocks = []
        for size in (left, right):
            if size > 0:
                shape = out.shape[:dim] + (size,) + out.shape[dim + 1:]
                blocks.append(Tensor._wrap(np.full(shape, 0 if value is None else value, dtype=out._data.dtype)))
            else:
                blocks.append(None)
        if blocks[0] is not None or blocks[1] is not None:
            out = cat([b for b in (blocks[0], out, blocks[1]) if b is not None], dim)
    return out
