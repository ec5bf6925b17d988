"""``minigrad.nn.functional``: the layers and losses as plain functions (``import ... as F``).

A Module such as ``Linear`` only stores its parameters and calls the
function here; the function does the computation. Most are a line or two of
tensor operations, so autograd differentiates them (to any order) with no
extra code. Four have a Function of their own in ``minigrad/nn/ops``:
``conv2d`` and ``max_pool2d`` (Numba kernels), and ``cross_entropy`` and
``linear`` (fused: one node instead of several, for speed).

What minigrad leaves out, compared with ``torch.nn.functional``: loss
weights, ``ignore_index`` and ``label_smoothing``; dilation, groups and
string padding in conv2d; ``ceil_mode`` and ``dilation`` in max_pool2d;
inputs without a batch dimension (conv2d and max_pool2d take NCHW,
cross_entropy takes (N, C) scores).
"""
from __future__ import annotations

import warnings

import numpy as np

from minigrad.creation import generator
from minigrad.dtypes import int64
from minigrad.nn.ops.conv import Conv2d, MaxPool2d
from minigrad.nn.ops.linear import Linear as FusedLinear, LinearNoBias as FusedLinearNoBias, fits_fused_linear
from minigrad.nn.ops.loss import CrossEntropy
from minigrad.ops.softmax import LogSoftmax, Softmax
from minigrad.tensor import Tensor

_REDUCTIONS = ("mean", "sum", "none")


# -- activations --------------------------------------------------------------
def relu(input: Tensor) -> Tensor:
    """max(x, 0), elementwise."""
    return input.relu()


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), elementwise."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:
    return input.tanh()


def softmax(input: Tensor, dim: int) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim``. (PyTorch lets ``dim`` default, with a warning; here it is required.)"""
    return Softmax.apply(input, dim)


def log_softmax(input: Tensor, dim: int) -> Tensor:
    """log(softmax(x)) along ``dim``, computed without ever taking the log of a rounded-to-0 value."""
    return LogSoftmax.apply(input, dim)


# -- layers -------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """``input @ weight.T + bias``: weight is (out_features, in_features), as in PyTorch."""
    if bias is not None and bias._data.dtype != weight._data.dtype:
        raise RuntimeError(
            f"linear: bias is {bias.dtype} but weight is {weight.dtype}; they must have the same dtype "
            "(PyTorch: 'self and mat2 must have the same dtype'). Convert one with .to(dtype)"
        )
    if fits_fused_linear(input, weight, bias):
        return (FusedLinear if bias is not None else FusedLinearNoBias).apply(input, weight, bias)
    out = input @ weight.T
    return out if bias is None else out + bias


def _pair(name: str, value) -> tuple[int, int]:
    """3 -> (3, 3): conv and pool take one size per spatial dimension."""
    pair = (value, value) if isinstance(value, (int, np.integer)) else tuple(value)
    if len(pair) != 2 or not all(isinstance(v, (int, np.integer)) for v in pair):
        raise TypeError(f"{name} must be an int or a pair of ints, got {value!r}")
    return int(pair[0]), int(pair[1])


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0) -> Tensor:
    """2-D convolution of NCHW ``input`` with (out_channels, in_channels, kH, kW) ``weight``.

    Differentiable once (see ``minigrad/nn/ops/conv.py``).
    """
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and t.dtype != input.dtype:
            raise RuntimeError(f"Input type ({input.dtype}) and {name} type ({t.dtype}) should be the same")
    return Conv2d.apply(input, weight, bias, _pair("stride", stride), _pair("padding", padding))


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0) -> Tensor:
    """The max of each kernel_size window of NCHW ``input``; ``stride`` defaults to ``kernel_size``.

    Padding counts as -inf (it never wins). Differentiable once.
    """
    kernel_size = _pair("kernel_size", kernel_size)
    stride = kernel_size if stride is None else _pair("stride", stride)
    return MaxPool2d.apply(input, kernel_size, stride, _pair("padding", padding))


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p).

    The scaling ("inverted dropout") keeps each element's expected value, so
    nothing needs rescaling at evaluation time, when dropout is the identity.
    The mask is drawn from minigrad's generator (``minigrad.manual_seed``).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    dtype = input._data.dtype
    if p == 1.0:
        return input * Tensor._wrap(np.zeros(input.shape, dtype))
    keep = generator().random(input.shape) >= p  # True with probability 1 - p
    return input * Tensor._wrap(keep.astype(dtype) / dtype.type(1.0 - p))


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one (``torch.flatten``)."""
    return input.flatten(start_dim, end_dim)


# -- losses -------------------------------------------------------------------
def _reduce(losses: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return losses.mean()
    return losses.sum() if reduction == "sum" else losses


def _check_reduction(reduction: str) -> None:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _check_tensors(fn: str, input, target) -> None:
    """A NumPy target is a common slip: say so, instead of failing on a missing method."""
    for name, value in (("input", input), ("target", target)):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' must be Tensor, not {type(value).__name__}")


def _check_class_targets(input: Tensor, target: Tensor, fn: str) -> None:
    """(N, C) scores and N int64 class indices in [0, C), with PyTorch's errors."""
    if input.ndim != 2:
        raise RuntimeError(
            f"{fn} expects input of shape (N, C), one row of class scores per sample, but got "
            f"shape {list(input.shape)} (minigrad supports only this 2-D form)"
        )
    if target.dtype != int64:
        raise RuntimeError(
            f"expected target dtype to be Long (minigrad.int64), but got {target.dtype}: class "
            "indices must be int64 (call .long()), class probabilities must have the input's shape"
        )
    if target.ndim != 1:
        raise RuntimeError(
            f"0D or 1D target tensor expected, multi-target not supported: got target of shape "
            f"{list(target.shape)} for input of shape {list(input.shape)}"
        )
    if target.shape[0] != input.shape[0]:
        raise ValueError(
            f"Expected input batch_size ({input.shape[0]}) to match target batch_size ({target.shape[0]})."
        )
    t = target._data
    bad = t[(t < 0) | (t >= input.shape[1])]
    if bad.size:
        raise IndexError(f"Target {bad[0]} is out of bounds.")


def cross_entropy(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """The loss of classifying with scores ``input`` (N, C, raw logits) when ``target`` is right.

    ``target`` is either N class indices (int64 in [0, C)) or, as in PyTorch,
    (N, C) class probabilities (a float tensor of the input's shape). Equal to
    ``nll_loss(log_softmax(input, 1), target)``, computed in one fused node
    for class indices.
    """
    _check_reduction(reduction)
    _check_tensors("cross_entropy", input, target)
    if target.is_floating_point():
        if input.ndim != 2 or target.shape != input.shape:
            raise RuntimeError(
                f"cross_entropy: a float target holds class probabilities and must have the input's "
                f"shape (N, C), but got target of shape {list(target.shape)} for input of shape "
                f"{list(input.shape)}; pass class indices as an int64 tensor of shape (N,)"
            )
        return _reduce(-(target * input.log_softmax(1)).sum(1), reduction)
    _check_class_targets(input, target, "cross_entropy")
    return CrossEntropy.apply(input, target, reduction)


def nll_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Negative log-likelihood: ``-input[i, target[i]]``, for ``input`` of log-probabilities (N, C)."""
    _check_reduction(reduction)
    _check_tensors("nll_loss", input, target)
    _check_class_targets(input, target, "nll_loss")
    return _reduce(-input[np.arange(input.shape[0]), target], reduction)


def mse_loss(input: Tensor, target: Tensor, reduction: str = "mean") -> Tensor:
    """Mean squared error, ``((input - target) ** 2).mean()``.

    Shapes that differ are broadcast, with PyTorch's warning: (N, 1) against
    (N,) broadcasts to (N, N), which is almost never what was meant.
    """
    _check_reduction(reduction)
    _check_tensors("mse_loss", input, target)
    if target.shape != input.shape:
        warnings.warn(
            f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
            "This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=2,
        )
    diff = input - target
    return _reduce(diff * diff, reduction)
