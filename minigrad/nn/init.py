"""Initialising weights in place, as ``torch.nn.init`` does.

Why it matters: if each layer's weights are too large, activations grow layer
after layer (and saturate tanh or sigmoid); too small, and they shrink to 0.
Scaling the spread of the weights by 1/sqrt(fan_in) (Kaiming, LeCun) or by
sqrt(2 / (fan_in + fan_out)) (Xavier) keeps the signal's scale steady.

Each function overwrites the tensor's values under ``no_grad`` (it is not an
operation to differentiate) and returns the tensor. Random values come from
minigrad's generator, so ``minigrad.manual_seed`` makes them reproducible.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.autograd.grad_mode import no_grad
from minigrad.random import generator
from minigrad.tensor import Tensor


def _overwrite(tensor: Tensor, values) -> Tensor:
    with no_grad():
        return tensor.copy_(Tensor._wrap(np.asarray(values, dtype=tensor._data.dtype)))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with values drawn uniformly from [a, b)."""
    return _overwrite(tensor, generator().uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with values drawn from N(mean, std**2)."""
    return _overwrite(tensor, generator().normal(mean, std, tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _overwrite(tensor, np.full(tensor.shape, val))


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor by which an activation shrinks the spread of its input, undone by the init."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """Inputs and outputs of one unit: (in, out) for Linear, (in*kH*kW, out*kH*kW) for Conv2d."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu") -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan): std gain / sqrt(fan) (He et al., 2015).

    ``Linear`` and ``Conv2d`` use ``a=sqrt(5)``, which makes the bound exactly 1 / sqrt(fan_in).
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=2)
        return tensor
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)): the same spread as ``xavier_uniform_``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))
