"""LogNormal(loc, scale): exp of a Normal(loc, scale); positive, skewed (incomes, durations)."""
from __future__ import annotations

from minigrad.distributions import constraints
from minigrad.distributions.normal import Normal
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.transforms import ExpTransform
from minigrad._tensor import Tensor

__all__ = ["LogNormal"]


class LogNormal(TransformedDistribution):
    """X = exp(Y), Y ~ Normal(loc, scale)."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc: Tensor | float, scale: Tensor | float, validate_args: bool | None = None) -> None:
        super().__init__(Normal(loc, scale, validate_args=validate_args), ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> LogNormal:
        return super().expand(batch_shape, _instance=self._get_checked_instance(LogNormal, _instance))

    @property
    def loc(self) -> Tensor:
        return self.base_dist.loc

    @property
    def scale(self) -> Tensor:
        return self.base_dist.scale

    @property
    def mean(self) -> Tensor:
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self) -> Tensor:
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self) -> Tensor:
        scale_sq = self.scale.pow(2)
        return scale_sq.expm1() * (2 * self.loc + scale_sq).exp()

    def entropy(self) -> Tensor:
        return self.base_dist.entropy() + self.loc
