"""Bernoulli(probs | logits): a coin, 1 with probability ``probs``; REINFORCE's binary action.

    log p(x) = x log p + (1 - x) log(1 - p) = -BCEWithLogits(logits, x)
It has no rsample (a draw is not a differentiable function of p): use log_prob's gradient
(the score function) or RelaxedBernoulli.
"""
from __future__ import annotations

import math
from numbers import Number

from minigrad import creation, random
from minigrad.autograd.grad_mode import no_grad
from minigrad.distributions import constraints
from minigrad.distributions.exp_family import ExponentialFamily
from minigrad.distributions.utils import _BinaryProbsOrLogits, _expand_probs_or_logits, broadcast_all
from minigrad.nn.functional import binary_cross_entropy_with_logits
from minigrad._tensor import Size, Tensor

__all__ = ["Bernoulli"]


class Bernoulli(_BinaryProbsOrLogits, ExponentialFamily):
    """1 with probability ``probs`` (or ``sigmoid(logits)``), else 0; give exactly one of them."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs: Tensor | Number | None = None, logits: Tensor | Number | None = None,
                 validate_args: bool | None = None) -> None:
        super().__init__(self._set_probs_or_logits(probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Bernoulli:
        new = self._get_checked_instance(Bernoulli, _instance)
        batch_shape = Size(batch_shape)
        _expand_probs_or_logits(self, new, batch_shape)
        super(Bernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.probs

    @property
    def mode(self) -> Tensor:
        """1 where p > 1/2, 0 where p < 1/2, NaN at a tie."""
        probs = self.probs.detach()
        return (probs >= 0.5).to(probs.dtype).masked_fill(probs == 0.5, math.nan)

    @property
    def variance(self) -> Tensor:
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        with no_grad():
            probs = self.probs.expand(shape)
            return (Tensor._wrap(random.generator().random(tuple(shape))) < probs.double()).to(probs.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self) -> Tensor:
        return binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand: bool = True) -> Tensor:
        values = creation.arange(2, dtype=self._param.dtype).reshape((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.probs.logit(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp().log1p()
