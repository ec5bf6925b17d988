"""Multinomial(total_count, probs | logits): counts per class of ``total_count`` categorical draws.

    log P(x) = log n! - Σ log x_k! + Σ x_k logits_k
"""
from __future__ import annotations

import math

from minigrad.distributions import constraints
from minigrad.distributions.binomial import Binomial
from minigrad.distributions.categorical import Categorical, _CategoricalParams
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.utils import broadcast_all
from minigrad.nn.functional import one_hot
from minigrad._tensor import Size, Tensor

__all__ = ["Multinomial"]


class Multinomial(_CategoricalParams, Distribution):
    """Counts of ``total_count`` draws over the K classes of ``probs`` (the last dim); event_shape (K,)."""

    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count: int = 1, probs: Tensor | None = None, logits: Tensor | None = None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Multinomial:
        new = self._get_checked_instance(Multinomial, _instance)
        batch_shape = Size(batch_shape)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        super(Multinomial, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()) -> Tensor:
        """``total_count`` categorical draws, counted per class."""
        draws = self._categorical.sample((self.total_count,) + tuple(sample_shape))
        counts = one_hot(draws, self._categorical._num_events).sum(0)
        return counts.reshape(tuple(self._extended_shape(sample_shape))).to(self.probs.dtype)

    def entropy(self) -> Tensor:
        n = self.total_count
        term1 = n * self._categorical.entropy() - math.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = self._binomial.log_prob(support).exp()
        term2 = (binomial_probs * (support + 1).lgamma()).sum([0, -1])
        return term1 + term2

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # 0 * -inf is 0 here: a class of probability 0 that was never drawn costs nothing
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0)
        return (value.sum(-1) + 1).lgamma() - (value + 1).lgamma().sum(-1) + (logits * value).sum(-1)
