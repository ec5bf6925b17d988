"""Categorical(probs | logits): one of K classes; a policy's discrete action, a mixture's component.

``probs`` are normalized along the last dim (``probs / probs.sum(-1)``), ``logits`` shifted so that
``logsumexp(logits) = 0``: both then describe the same distribution, and ``log_prob(k)`` is
``logits[..., k]``. A draw returns class indices (int64), so it has no rsample.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import creation, dtypes, random
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import _expand_probs_or_logits, lazy_property, logits_to_probs, probs_to_logits
from minigrad.functional_ops import broadcast_tensors
from minigrad._tensor import Size, Tensor

__all__ = ["Categorical"]


class Categorical(Distribution):
    """Class ``k`` with probability ``probs[..., k]`` (the last dim holds the K classes)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True

    def __init__(self, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Categorical:
        new = self._get_checked_instance(Categorical, _instance)
        batch_shape = Size(batch_shape)
        param_shape = tuple(batch_shape) + (self._num_events,)
        _expand_probs_or_logits(self, new, param_shape)
        new._num_events = self._num_events
        super(Categorical, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @property
    def mean(self) -> Tensor:
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        return self.probs.argmax(dim=-1)

    @property
    def variance(self) -> Tensor:
        return creation.full(self._extended_shape(), math.nan, dtype=self.probs.dtype)

    def sample(self, sample_shape=Size()) -> Tensor:
        """Indices drawn by inverting the cumulative probabilities at uniform noise."""
        shape = self._extended_shape(sample_shape)
        probs = np.broadcast_to(self.probs._data.astype(np.float64), tuple(shape) + (self._num_events,))
        cdf = np.cumsum(probs, -1)
        u = random.generator().random(tuple(shape))[..., None] * cdf[..., -1:]
        index = np.minimum((cdf <= u).sum(-1), self._num_events - 1)
        # a class of probability 0 is never drawn, even where u lands on its (empty) step
        while np.any(zero := np.take_along_axis(probs, index[..., None], -1)[..., 0] == 0):
            index = np.where(zero, index - 1, index)
        return Tensor._wrap(index.astype(np.int64))

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self) -> Tensor:
        logits = self.logits.clamp(min=float(np.finfo(self.logits._data.dtype).min))  # -inf * 0 would be NaN
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = creation.arange(self._num_events, dtype=dtypes.int64).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values


class _CategoricalParams:
    """``probs``, ``logits`` and ``param_shape`` of a distribution built on a Categorical kept as
    ``self._categorical`` (OneHotCategorical, Multinomial, ExpRelaxedCategorical)."""

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape
