"""Normalization: ``layer_norm``, ``batch_norm``, ``group_norm``, ``instance_norm``, ``rms_norm``
(nodes in ``minigrad/nn/ops/normalization.py``) and ``local_response_norm``.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad.autograd.grad_mode import no_grad
from minigrad.dtypes import scalar_type_name
from minigrad.nn.ops.normalization import NativeBatchNorm, NativeGroupNorm, NativeLayerNorm, batch_statistics
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors
from minigrad.nn.functional.padding import pad


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each sample over its last ``len(normalized_shape)`` dimensions, then scale and shift.

    (x - mean) / sqrt(var + eps) * weight + bias, with the biased variance (as PyTorch):
    one node, ``NativeLayerNormBackward0`` (``nn/ops/normalization.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("layer_norm", input=input, weight=weight, bias=bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, (int, np.integer)) else tuple(normalized_shape)
    k = len(shape)
    if tuple(input.shape[input.ndim - k:]) != shape or input.ndim < k:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape [*, {', '.join(map(str, shape))}], "
            f"but got input of size{list(input.shape)}"
        )
    dims = tuple(range(input.ndim - k, input.ndim))
    return NativeLayerNorm.apply(input, weight, bias, dims, shape, eps, None, True)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dimension 1) over the batch and any spatial dimensions.

    Training: use the batch's mean and biased variance, and move the running
    statistics (if given) toward the batch's, in place:
    ``running = (1 - momentum) * running + momentum * batch`` (the running
    variance takes the *unbiased* batch variance, as in PyTorch). Evaluation:
    use the running statistics, so a sample's output does not depend on its batch.
    """
    if (type(input) not in _TENSORS or type(running_mean) not in _TENSORS_OR_NONE
            or type(running_var) not in _TENSORS_OR_NONE or type(weight) not in _TENSORS_OR_NONE
            or type(bias) not in _TENSORS_OR_NONE):
        _check_tensors("batch_norm", input=input, running_mean=running_mean, running_var=running_var, weight=weight,
                       bias=bias)
    if input.ndim < 2:
        raise ValueError(f"expected at least 2D input (got {input.ndim}D input)")
    channels = input.shape[1]
    view = (1, channels) + (1,) * (input.ndim - 2)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        count = input.numel() // channels
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size {input.shape}")
        stats = mean, var = batch_statistics(input._data, dims)  # computed once, for the output and the running ones
        with no_grad():
            if running_mean is not None:
                running_mean.mul_(1 - momentum).add_(Tensor._wrap(mean.reshape(channels)) * momentum)
            if running_var is not None:
                unbiased = Tensor._wrap(var.reshape(channels)) * (count / (count - 1))
                running_var.mul_(1 - momentum).add_(unbiased * momentum)
    else:
        if running_mean is None or running_var is None:
            raise RuntimeError("batch_norm: running_mean and running_var must be given when training=False")
        stats = (running_mean._data.reshape(view), running_var._data.reshape(view))
    return NativeBatchNorm.apply(input, weight, bias, dims, view, eps, stats, training)


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise each sample's channels in ``num_groups`` groups (each over its channels and every position),
    then scale and shift each channel by ``weight`` and ``bias``.

    Independent of the batch, like layer_norm (one group) and instance_norm (a group per channel), so it
    suits small batches. One node, ``NativeGroupNormBackward0`` (``nn/ops/normalization.py``).
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE or type(bias) not in _TENSORS_OR_NONE:
        _check_tensors("group_norm", input=input, weight=weight, bias=bias)
    if input.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {input.ndim}")
    n, c, spatial = input.shape[0], input.shape[1], input.shape[2:]
    size = [n * c // num_groups, num_groups, *spatial]  # PyTorch's check, its ZeroDivisionError for 0 groups too
    if size[0] * math.prod(spatial) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, but got input of "
                           f"shape {list(input.shape)} and num_groups={num_groups}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of channels in input, "
                               f"but got {name} of shape {list(t.shape)} and input of shape {list(input.shape)}")
    grouped = (n, num_groups, c // num_groups, *spatial)
    dims = tuple(range(2, len(grouped)))
    view = (1, num_groups, c // num_groups) + (1,) * len(spatial)
    return NativeGroupNorm.apply(input, weight, bias, dims, view, eps, None, True, grouped)


def instance_norm(input: Tensor, running_mean: Tensor | None = None, running_var: Tensor | None = None,
                  weight: Tensor | None = None, bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample on its own, over its positions (a style-transfer staple).

    Computed as PyTorch does: batch_norm of the input viewed as one sample with N * C channels, the
    per-channel weight, bias and running statistics repeated N times; the running statistics then
    take the mean of their N updated copies.
    """
    if (type(input) not in _TENSORS or type(running_mean) not in _TENSORS_OR_NONE
            or type(running_var) not in _TENSORS_OR_NONE or type(weight) not in _TENSORS_OR_NONE
            or type(bias) not in _TENSORS_OR_NONE):
        _check_tensors("instance_norm", input=input, running_mean=running_mean, running_var=running_var,
                       weight=weight, bias=bias)
    if use_input_stats and math.prod(input.shape[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {list(input.shape)}")
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n, c = input.shape[:2]
    mean, var, w, b = (None if t is None else t.repeat(n) for t in (running_mean, running_var, weight, bias))
    out = batch_norm(input.reshape(1, n * c, *input.shape[2:]), mean, var, w, b, use_input_stats, momentum, eps)
    with no_grad():
        for running, copies in ((running_mean, mean), (running_var, var)):
            if running is not None:
                running.copy_(copies.view(n, c).mean(0))
    return out.view(input.shape)



def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None, eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) * weight over the last ``len(normalized_shape)`` dimensions.

    LayerNorm without the centring (and without a bias): cheaper, and what LLaMA-style transformers use.
    ``eps`` defaults to the machine epsilon of the input's dtype, as in PyTorch. Composed of tensor operations.
    """
    if type(input) not in _TENSORS or type(weight) not in _TENSORS_OR_NONE:
        _check_tensors("rms_norm", input=input, weight=weight)
    if isinstance(normalized_shape, (int, np.integer)):
        raise TypeError(f"rms_norm(): argument 'normalized_shape' (position 2) must be tuple of ints, not int; "
                        f"write ({normalized_shape},)")
    shape = tuple(normalized_shape)
    k = len(shape)
    if input.ndim < k:
        raise ValueError(f"Input tensor must have at least {k} dimensions, but got {input.ndim}")
    if tuple(input.shape[input.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape [*"
                           f"{', '.join(map(str, shape))}], but got input of size{list(input.shape)}")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
                           f"{list(weight.shape)} and normalized_shape = {list(shape)}")
    dtype = input._data.dtype
    if dtype.kind != "f":
        raise NotImplementedError(f'"rms_norm" not implemented for {scalar_type_name(dtype)!r}; convert the input '
                                  "with .float()")
    if eps is None:
        eps = float(np.finfo(dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    out = input * (input.square().mean(dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels) ** beta (AlexNet's normalization).

    The window is centred on each channel (size // 2 before, (size - 1) // 2 after) and padded with
    zeros, which count in the mean, as in PyTorch.
    """
    if type(input) not in _TENSORS:
        _check_tensors("local_response_norm", input=input)
    if input.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {input.ndim} dimensions): "
                         "local_response_norm normalises (N, C, ...) across channels")
    if input.numel() == 0:
        return input
    if size <= 0:
        raise RuntimeError(f"local_response_norm: size must be greater than zero, but got {size}")
    channels = input.shape[1]
    squares = pad(input * input, (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2))
    window = squares.narrow(1, 0, channels)
    for offset in range(1, size):
        window = window + squares.narrow(1, offset, channels)
    return input / ((window / size) * alpha + k) ** beta
