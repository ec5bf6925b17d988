"""Dropout: ``dropout``, ``dropout1d``, ``dropout2d``, ``alpha_dropout`` and ``feature_alpha_dropout``.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.random import generator
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _check_tensors


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by 1 / (1 - p).

    The scaling ("inverted dropout") keeps each element's expected value, so
    nothing needs rescaling at evaluation time, when dropout is the identity.
    The mask is drawn from minigrad's generator (``minigrad.manual_seed``).
    """
    if type(input) not in _TENSORS:
        _check_tensors("dropout", input=input)
    _check_probability(p)
    return _dropout(input, p, training, inplace, feature=False)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each channel of (N, C, L) or unbatched (C, L) ``input``, whole, with probability ``p``; scale the
    rest by 1 / (1 - p). Neighbouring positions carry much the same signal, so only dropping a whole
    channel takes it away (``nn.Dropout1d``)."""
    if type(input) not in _TENSORS:
        _check_tensors("dropout1d", input=input)
    _check_probability(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note that "
                           "dropout1d exists to provide channel-wise dropout on inputs with 1 spatial dimension, a "
                           "channel dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:  # unbatched: a batch of one (which in place writes through to input)
        out = _dropout(input.unsqueeze(0), p, training, inplace, feature=True)
        return input if inplace else out.squeeze(0)
    return _dropout(input, p, training, inplace, feature=True)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each channel of (N, C, H, W) ``input``, a whole feature map, with probability ``p``; scale the rest
    by 1 / (1 - p) (see dropout1d for why). As in PyTorch, a 3-D input is taken as (N, C, L), with a warning."""
    if type(input) not in _TENSORS:
        _check_tensors("dropout2d", input=input)
    _check_probability(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will "
                      "result in an error in a future release. To retain the behavior and silence this warning, "
                      "please use dropout instead. Note that dropout2d exists to provide channel-wise dropout on "
                      "inputs with 2 spatial dimensions, a channel dimension, and an optional batch dimension "
                      "(i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
                      "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel dim. "
                      "Use dropout1d for that, or unsqueeze an unbatched (C, H, W) image to (1, C, H, W).",
                      stacklevel=2)
    return _dropout(input, p, training, inplace, feature=True)


def _check_probability(p: float) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """input times a random mask: 0 with probability p, 1 / (1 - p) otherwise. One draw per element, or with
    ``feature``, per (sample, channel): a mask of shape (N, C, 1, ...) that broadcasts over the rest."""
    if not training or p == 0.0:
        return input
    dtype = input._data.dtype
    if p == 1.0:
        scale = Tensor._wrap(np.zeros((), dtype))
    else:
        shape = input.shape
        if feature:
            if input.ndim < 2:
                raise RuntimeError("Feature dropout requires at least 2 dimensions in the input: a batch and a "
                                   "channel dimension")
            shape = (*shape[:2], *[1] * (input.ndim - 2))
        keep = generator().random(shape) >= p  # True with probability 1 - p
        scale = Tensor._wrap(keep.astype(dtype) / dtype.type(1.0 - p))
    return input.mul_(scale) if inplace else input * scale


# SELU's alpha * scale: a dropped unit is set to -1.758..., where SELU saturates, before the affine correction
_ALPHA_DROPOUT_ALPHA = 1.7580993408473766


def _alpha_dropout(input: Tensor, p: float, training: bool, inplace: bool, feature: bool) -> Tensor:
    """Dropout for SELU networks: a dropped unit is set to SELU's saturation value instead of 0, then
    everything is scaled by a and shifted by b so that zero mean and unit variance stay so.

    a = 1 / sqrt((alpha^2 p + 1)(1 - p)), b = alpha a p; ``feature`` drops whole channels (dimension 1).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if p == 0 or not training or input.numel() == 0:
        return input
    if feature and input.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input: (N, C, ...)")
    dtype = input._data.dtype
    if p == 1:
        zero = Tensor._wrap(np.zeros((), dtype))
        return input.mul_(zero) if inplace else input * zero
    shape = input.shape[:2] + (1,) * (input.ndim - 2) if feature else input.shape
    keep = (generator().random(shape) >= p).astype(dtype)
    alpha = _ALPHA_DROPOUT_ALPHA
    a = 1.0 / math.sqrt((alpha * alpha * p + 1) * (1 - p))
    scale = Tensor._wrap((keep * a).astype(dtype))
    shift = Tensor._wrap(((keep - 1) * (alpha * a) + alpha * a * p).astype(dtype))
    return input.mul_(scale).add_(shift) if inplace else input * scale + shift


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's self-normalisation (see ``_alpha_dropout``); the identity unless ``training``."""
    if type(input) not in _TENSORS:
        _check_tensors("alpha_dropout", input=input)
    return _alpha_dropout(input, p, training, inplace, feature=False)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False, inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels: one draw per (sample, channel) of (N, C, ...) input."""
    if type(input) not in _TENSORS:
        _check_tensors("feature_alpha_dropout", input=input)
    return _alpha_dropout(input, p, training, inplace, feature=True)
