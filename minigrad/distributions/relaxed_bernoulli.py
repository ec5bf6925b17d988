"""RelaxedBernoulli(temperature, probs | logits): the Concrete / Gumbel-sigmoid relaxation of a coin.

A draw is sigmoid((logit u + logits) / temperature) with u ~ U(0, 1): a value in (0, 1) that is a
differentiable function of the logits, and tends to a Bernoulli draw as the temperature goes to 0.
LogitRelaxedBernoulli is the same before the sigmoid.
"""
from __future__ import annotations

from numbers import Number

from minigrad import random
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.transforms import SigmoidTransform
from minigrad.distributions.utils import _BinaryProbsOrLogits, _expand_probs_or_logits, broadcast_all, clamp_probs
from minigrad._tensor import Size, Tensor

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_BinaryProbsOrLogits, Distribution):
    """The logit of a RelaxedBernoulli draw: (logit u + logits) / temperature."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature: Tensor, probs: Tensor | Number | None = None,
                 logits: Tensor | Number | None = None, validate_args: bool | None = None) -> None:
        self.temperature = temperature
        super().__init__(self._set_probs_or_logits(probs, logits), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LogitRelaxedBernoulli:
        new = self._get_checked_instance(LogitRelaxedBernoulli, _instance)
        batch_shape = Size(batch_shape)
        new.temperature = self.temperature
        _expand_probs_or_logits(self, new, batch_shape)
        super(LogitRelaxedBernoulli, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        probs = clamp_probs(self.probs.expand(shape))
        uniforms = clamp_probs(Tensor._wrap(random.generator().random(shape, dtype=probs._data.dtype)))
        return (uniforms.log() - (-uniforms).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """A value in (0, 1) that relaxes a Bernoulli draw; lower ``temperature`` is closer to 0/1."""

    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature: Tensor, probs: Tensor | Number | None = None,
                 logits: Tensor | Number | None = None, validate_args: bool | None = None) -> None:
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits), SigmoidTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> RelaxedBernoulli:
        return super().expand(batch_shape, _instance=self._get_checked_instance(RelaxedBernoulli, _instance))

    @property
    def temperature(self) -> Tensor:
        return self.base_dist.temperature

    @property
    def logits(self) -> Tensor:
        return self.base_dist.logits

    @property
    def probs(self) -> Tensor:
        return self.base_dist.probs
