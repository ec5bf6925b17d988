"""Helpers the distributions share, with PyTorch's names (``torch.distributions.utils``): broadcasting
parameters, probabilities <-> logits, a cached property, and the draws from minigrad's one generator."""
from __future__ import annotations

from functools import update_wrapper
from numbers import Number

import numpy as np

from minigrad import dtypes, random
from minigrad.autograd.grad_mode import enable_grad
from minigrad.functional_ops import broadcast_tensors
from minigrad._tensor import Size, Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs", "probs_to_logits"]


def broadcast_all(*values) -> tuple[Tensor, ...]:
    """Broadcast tensors and numbers together; numbers take the dtype of the first tensor (or the default)."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "minigrad.Tensor or objects implementing __torch_function__.")
    dtype = next((v.dtype for v in values if isinstance(v, Tensor)), dtypes.get_default_dtype())
    return broadcast_tensors(*(v if isinstance(v, Tensor) else Tensor._wrap(np.array(v, dtype.numpy))
                               for v in values))


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` right-most dimensions (an event's log-densities into one)."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """sigmoid of log-odds (binary) or softmax over the last dim (categorical)."""
    return logits.sigmoid() if is_binary else logits.softmax(-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """Clamp into [eps, 1 - eps] of the dtype, so logs stay finite."""
    eps = float(np.finfo(probs._data.dtype).eps)
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """log-odds (binary) or log-probabilities (categorical) of clamped probabilities."""
    clamped = clamp_probs(probs)
    return clamped.log() - (-clamped).log1p() if is_binary else clamped.log()


class lazy_property:
    """A property computed on first use, then stored on the instance (so ``probs`` from ``logits``
    is computed once, and only if asked for). Computed with grad enabled, as PyTorch's."""

    def __init__(self, wrapped) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _BinaryProbsOrLogits:
    """The parameters of a two-outcome family (Bernoulli, LogitRelaxedBernoulli, Binomial): ``probs`` or
    ``logits``, whichever was given, and the other computed from it on first use."""

    def _set_probs_or_logits(self, probs, logits) -> Size:
        """Keep the one of ``probs``/``logits`` given as a tensor; return the batch shape it makes."""
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
        else:
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        return Size() if isinstance(probs if probs is not None else logits, Number) else self._param.size()

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()


def _expand_probs_or_logits(source, new, shape) -> None:
    """Give ``new`` whichever of ``probs``/``logits`` ``source`` holds, expanded to ``shape`` (the other stays
    lazy), and point ``new._param`` at it: the shared step of ``expand`` for the probs-or-logits families."""
    for name in ("probs", "logits"):
        if name in source.__dict__:
            new._param = getattr(source, name).expand(shape)
            setattr(new, name, new._param)


def _standard_normal(shape, dtype) -> Tensor:
    """N(0, 1) noise of ``shape`` from minigrad's generator."""
    return Tensor._wrap(random.generator().standard_normal(tuple(shape)).astype(dtype.numpy))


def _numpy_draw(values: np.ndarray, dtype) -> Tensor:
    """A tensor of a NumPy draw (counts, gamma variates) in ``dtype``."""
    return Tensor._wrap(np.asarray(values).astype(dtype.numpy))
