"""PyTorch's sparse functions: ``one_hot``, ``embedding`` and ``embedding_bag``.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import kernels
from minigrad.autograd.grad_mode import is_grad_enabled, no_grad
from minigrad.dtypes import int32, int64
from minigrad.functional_ops import where
from minigrad.nn.ops.linear_map import Embedding
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """(..., num_classes) int64 with a 1 at each class index; ``num_classes=-1`` means max + 1."""
    if type(tensor) not in _TENSORS:
        _check_tensors("one_hot", tensor=tensor)
    if tensor.dtype != int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    t = tensor._data
    if num_classes == -1:
        if t.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(t.max()) + 1
    if t.size and t.min() < 0:
        raise RuntimeError("Class values must be non-negative.")
    if t.size and t.max() >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    return Tensor._wrap((t[..., None] == np.arange(num_classes)).astype(np.int64))


def _check_embedding_options(scale_grad_by_freq: bool, sparse: bool) -> None:
    if scale_grad_by_freq or sparse:
        raise NotImplementedError(
            "minigrad's embedding supports neither scale_grad_by_freq nor sparse gradients: "
            "leave them at their defaults"
        )


def _renorm_rows(weight: Tensor, indices: np.ndarray, max_norm: float, norm_type: float) -> None:
    """PyTorch's embedding_renorm_: each looked-up row longer than ``max_norm`` is scaled back to it,
    in ``weight`` itself (not recorded), before the lookup."""
    rows = np.unique(indices)
    norms = np.linalg.norm(weight._data[rows], ord=norm_type, axis=1)
    long = norms > max_norm
    with no_grad():
        if long.any():
            scale = (max_norm / (norms[long] + 1e-7)).astype(weight._data.dtype)[:, None]
            weight[Tensor._wrap(rows[long])] = weight.detach()[Tensor._wrap(rows[long])] * Tensor._wrap(scale)


_KERNEL_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


class _Rows:
    """The lookup ``w[input]`` (the function EmbeddingRows applies), with the flat indices its backward adds at."""

    def __init__(self, input: Tensor):
        self.input, self.flat = input, input._data.reshape(-1)

    def __call__(self, w: Tensor) -> Tensor:
        return w[self.input]


class EmbeddingRows(Embedding):
    """``EmbeddingBackward0`` whose ordinary backward is one scatter-add (``kernels.embedding_backward``, a Numba
    loop; NumPy's ``np.add.at`` is its reference) instead of differentiating the lookup with a probe. Under
    ``create_graph=True`` the backward is Embedding's: the adjoint, recorded, differentiable again."""

    node_name = "EmbeddingBackward0"

    @staticmethod
    def backward(ctx, grad):
        if is_grad_enabled() or grad._data.dtype not in _KERNEL_FLOATS:
            return Embedding.backward(ctx, grad)
        rows = ctx.linear.flat
        table = kernels.embedding_backward(rows, grad._data.reshape(rows.shape[0], ctx.input_shape[1]),
                                           ctx.input_shape[0])
        return Tensor._wrap(table), None, None


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None, max_norm: float | None = None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Row ``input[...]`` of ``weight`` for every index: a lookup table, differentiable in ``weight``.

    The row at ``padding_idx`` is looked up like any other but gets no gradient,
    so a padding vector stays as it was initialised (zeros, in ``nn.Embedding``).
    With ``max_norm``, the looked-up rows longer than it are first scaled back to
    it in ``weight`` itself, as in PyTorch.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS:
        _check_tensors("embedding", input=input, weight=weight)
    _check_embedding_options(scale_grad_by_freq, sparse)
    if input.dtype not in (int64, int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
            f"but got {input.dtype} instead (while checking arguments for embedding)"
        )
    n = weight.shape[0]
    idx = input._data
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    if padding_idx is None:
        if weight.ndim == 2 and weight._data.dtype in _KERNEL_FLOATS:
            rows = _Rows(input)
            return EmbeddingRows.apply(weight, rows, rows)
        return Embedding.apply(weight, lambda w: w[input], lambda w: w[input])
    padding_idx = padding_idx + n if padding_idx < 0 else padding_idx
    frozen = Tensor._wrap(idx[..., None] == padding_idx)  # padding rows: the value, not its gradient
    return Embedding.apply(weight, lambda w: w[input], lambda w: where(frozen, 0.0, w[input]))


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm: float | None = None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """The sum, mean or max of the rows of ``weight`` looked up by each bag of indices: (bags, embedding_dim).

    A 2-D ``input`` (B, N) is B bags of N indices; a 1-D one is the bags one after another, bag b
    starting at ``offsets[b]``; with ``include_last_offset`` the last offset ends the last bag (PyTorch
    documents it as the input's length; short of it, its sum, mean and max disagree on where the bag ends).
    Indices equal to ``padding_idx`` are left out (of the mean's count too); an empty bag gives zeros.
    ``per_sample_weights`` (mode "sum" only) scales each looked-up row. Computed as one lookup of a
    (bags, longest bag, dim) block, masked, then reduced: ``embedding`` and a sum without the
    intermediate (N, dim) copy per bag that PyTorch's kernel avoids too.
    """
    if (type(input) not in _TENSORS or type(weight) not in _TENSORS or type(offsets) not in _TENSORS_OR_NONE
            or type(per_sample_weights) not in _TENSORS_OR_NONE):
        _check_tensors("embedding_bag", input=input, weight=weight, offsets=offsets,
                       per_sample_weights=per_sample_weights)
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is not None, then it "
                         f"must have the same shape as the input ({input.shape})")
    if weight.ndim != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension {weight.ndim}")
    if input.ndim == 2 and offsets is not None:
        raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of fixed "
                         f"length sequences. However, found offsets of type {type(offsets)}")
    if input.ndim == 1 and (offsets is None or offsets.ndim != 1):
        raise ValueError("offsets has to be a 1D Tensor" + (" but got None" if offsets is None else ""))
    if input.ndim not in (1, 2):
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {input.ndim}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    _check_embedding_options(scale_grad_by_freq, sparse)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'): scale the weights' rows yourself, or use mode='sum'")
    for name, t in (("input", input), ("offsets", offsets)):
        if t is not None and t.dtype not in (int64, int32):
            raise RuntimeError(f"embedding_bag: {name} must hold indices, int64 or int32, but got {t.dtype}")
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, {-rows} through {rows - 1}, "
                               f"but got {padding_idx}")
        padding_idx %= rows
    idx = input._data.reshape(-1)
    bad = idx[(idx < 0) | (idx >= rows)]
    if bad.size:
        raise RuntimeError(f"embedding_bag: index {bad[0]} is out of range [0, {rows}) of the weight's rows")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    if per_sample_weights is not None and per_sample_weights._data.dtype != weight._data.dtype:
        raise RuntimeError(f"embedding_bag: per_sample_weights is {per_sample_weights.dtype} but weight is "
                           f"{weight.dtype}; they must have the same dtype")
    starts, ends = _bag_bounds(input, offsets, include_last_offset)
    lengths = ends - starts
    longest = int(lengths.max()) if lengths.size else 0
    positions = starts[:, None] + np.arange(longest)
    inside = np.arange(longest) < lengths[:, None]
    positions = np.where(inside, positions, 0)
    looked_up = np.where(inside, idx[positions] if idx.size else 0, 0)
    counted = inside if padding_idx is None else inside & (looked_up != padding_idx)
    block = weight[Tensor._wrap(looked_up)]  # (bags, longest, dim)
    if per_sample_weights is not None:
        block = block * per_sample_weights.reshape(-1)[Tensor._wrap(positions)].unsqueeze(-1)
    mask = Tensor._wrap(counted[..., None])
    if mode == "max" and longest:
        largest = where(mask, block, -math.inf).max(1).values
        return where(Tensor._wrap(counted.any(1, keepdims=True)), largest, 0.0)
    total = where(mask, block, 0.0).sum(1)
    if mode != "mean":
        return total
    counts = np.maximum(counted.sum(1, keepdims=True), 1).astype(weight._data.dtype)
    return total / Tensor._wrap(counts)


def _bag_bounds(input: Tensor, offsets: Tensor | None, include_last_offset: bool) -> tuple:
    """Where each bag of ``embedding_bag`` starts and ends in the flattened input, with PyTorch's checks."""
    n = input.numel()
    if input.ndim == 2:
        if input.shape[1] == 0:
            raise RuntimeError("embedding_bag: a 2-D input (B, N) holds B bags of N indices; N must not be 0")
        starts = np.arange(0, n, input.shape[1])
        return starts, starts + input.shape[1]
    o = offsets._data.astype(np.int64)
    if include_last_offset and not o.size:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    if o.size and o[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                           f"position 0. However, got {o[0]}")
    if o.size and o[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of {o[-1]}")
    if (np.diff(o) < 0).any():
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing (each bag starts where the one before "
                           f"it ends or later), but got {o.tolist()}")
    if include_last_offset:
        return o[:-1], o[1:]
    return o, np.append(o[1:], n)
