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
from typing import Callable

import numpy as np

from minigrad.autograd.grad_mode import no_grad
from minigrad.random import generator as _rng
from minigrad._tensor import Tensor


def _overwrite(tensor: Tensor, values) -> Tensor:
    with no_grad():
        return tensor.copy_(Tensor._wrap(np.asarray(values, dtype=tensor._data.dtype)))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn uniformly from [a, b)."""
    return _overwrite(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill with values drawn from N(mean, std**2)."""
    return _overwrite(tensor, _rng(generator).normal(mean, std, tensor.shape))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator=None) -> Tensor:
    """Fill with values drawn from N(mean, std**2) restricted to [a, b] (the values outside are drawn again).

    When [a, b] holds little of the normal's mass, redrawing normals would take long, so values are
    drawn uniformly in [a, b] and kept with probability proportional to the normal's density, as in PyTorch.
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    rng, shape = _rng(generator), tensor.shape
    mass = (math.erf((b - mean) / std / math.sqrt(2)) - math.erf((a - mean) / std / math.sqrt(2))) / 2
    if mass > 0.3:
        values = rng.normal(mean, std, shape)
        while (outside := (values < a) | (values > b)).any():
            values[outside] = rng.normal(mean, std, np.count_nonzero(outside))
    else:
        peak = max(a, min(mean, b))  # where the density is highest within [a, b]
        values, pending = np.empty(shape), np.ones(shape, dtype=bool)
        while pending.any():
            candidates = rng.uniform(a, b, np.count_nonzero(pending))
            keep = np.log(rng.uniform(size=candidates.shape)) <= -0.5 * (((candidates - mean) / std) ** 2
                                                                         - ((peak - mean) / std) ** 2)
            where = np.flatnonzero(pending)[keep]
            values.flat[where] = candidates[keep]
            pending.flat[where] = False
    return _overwrite(tensor, values)


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


def _kaiming_std(tensor: Tensor, a: float, mode: str, nonlinearity: str) -> float:
    """gain / sqrt(fan): the spread that keeps each layer's output variance (He et al., 2015)."""
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan_in if mode == "fan_in" else fan_out)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator=None) -> Tensor:
    """U(-bound, bound) with bound = sqrt(3) * gain / sqrt(fan): that spread, uniformly.

    ``Linear`` and ``Conv2d`` use ``a=sqrt(5)``, which makes the bound exactly 1 / sqrt(fan_in).
    """
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator=None) -> Tensor:
    """N(0, std**2) with std = gain / sqrt(fan): the same spread as ``kaiming_uniform_``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", UserWarning, stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """U(-bound, bound) with bound = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """N(0, std**2) with std = gain * sqrt(2 / (fan_in + fan_out)): the same spread as ``xavier_uniform_``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix times ``gain``: rows (or columns) of unit length at right angles, so
    the layer keeps the length of what it maps (Saxe et al., 2013). Dimensions after the first are
    flattened. Drawn as the Q of a Gaussian matrix's QR, with the signs that make it uniform."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    flat = _rng(generator).normal(0.0, 1.0, (rows, tensor.numel() // rows))
    wide = rows < flat.shape[1]  # then orthonormal rows: the QR of the transpose, transposed back
    q, r = np.linalg.qr(flat.T if wide else flat)
    q *= np.sign(np.diag(r))
    return _overwrite(tensor, gain * (q.T if wide else q).reshape(tensor.shape))


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """N(0, std**2), then in each column ``ceil(sparsity * rows)`` entries at random rows set to 0
    (Martens, 2010)."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rng = _rng(generator)
    rows, cols = tensor.shape
    values = rng.normal(0.0, std, (rows, cols))
    for col in range(cols):
        values[rng.permutation(rows)[: math.ceil(sparsity * rows)], col] = 0.0
    return _overwrite(tensor, values)


def eye_(tensor: Tensor) -> Tensor:
    """The identity matrix (ones on the diagonal of a 2-D tensor): a Linear layer that passes its input on."""
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _overwrite(tensor, np.eye(*tensor.shape))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """A convolution weight that passes its input on: a 1 at the centre of the kernel linking each output
    channel to the input channel of the same index (within each of ``groups``), 0 elsewhere."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    out_channels = tensor.shape[0]
    if out_channels % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = out_channels // groups
    if min(per_group, tensor.shape[1]) > 0 and 0 in tensor.shape[2:]:
        dim = 2 + tensor.shape[2:].index(0)
        raise IndexError(f"index 0 is out of bounds for dimension {dim} with size 0: dirac_ puts a 1 at the centre "
                         "of each kernel, and this kernel has no centre")
    values = np.zeros(tensor.shape)
    centre = tuple(size // 2 for size in tensor.shape[2:])
    for g in range(groups):
        for d in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + d, d, *centre)] = 1.0
    return _overwrite(tensor, values)


def _deprecated(init: Callable) -> Callable:
    """PyTorch 0.x's name of an initialiser, without the trailing underscore; it warns."""
    new_name = init.__name__

    def deprecated(*args, **kwargs):
        warnings.warn(f"`nn.init.{new_name[:-1]}` is now deprecated in favor of `nn.init.{new_name}`.",
                      FutureWarning, stacklevel=2)
        return init(*args, **kwargs)

    deprecated.__name__ = deprecated.__qualname__ = new_name[:-1]
    return deprecated


uniform, normal, constant, eye, dirac = map(_deprecated, (uniform_, normal_, constant_, eye_, dirac_))
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal, sparse = _deprecated(orthogonal_), _deprecated(sparse_)
