"""Dirichlet(concentration): probability vectors on the simplex, density ∝ Π x_k^(α_k - 1).

rsample normalizes independent Gamma(α_k, 1) draws, x = g / Σ g, each g differentiable in its α
by the implicit gradient (gamma.py); the gradient then flows through the normalization. That is
an exact pathwise gradient of the same distribution, but another estimator than PyTorch's, which
differentiates the Beta marginal's cdf of x directly (``_dirichlet_grad``): per draw they differ,
in expectation they agree.
"""
from __future__ import annotations

from minigrad.distributions import constraints
from minigrad.distributions.exp_family import ExponentialFamily
from minigrad.distributions.gamma import StandardGamma
from minigrad.nn.functional import one_hot
from minigrad.tensor import Size, Tensor

__all__ = ["Dirichlet"]


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the simplex of the last dim of ``concentration``."""

    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration: Tensor, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Dirichlet:
        new = self._get_checked_instance(Dirichlet, _instance)
        batch_shape = Size(batch_shape)
        new.concentration = self.concentration.expand(tuple(batch_shape) + tuple(self.event_shape))
        super(Dirichlet, new).__init__(batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=Size()) -> Tensor:
        gammas = StandardGamma.apply(self.concentration.expand(tuple(self._extended_shape(sample_shape))))
        return gammas / gammas.sum(-1, keepdim=True)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return (a - 1.0).xlogy(value).sum(-1) + a.sum(-1).lgamma() - a.lgamma().sum(-1)

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        """(α - 1)⁺ normalized; where every α < 1 the density peaks at a corner: the largest α's."""
        above_one = (self.concentration - 1).clamp(min=0.0)
        mode = above_one / above_one.sum(-1, True)
        all_below = (self.concentration < 1).all(dim=-1, keepdim=True)
        corner = one_hot(mode.argmax(dim=-1), above_one.shape[-1]).to(mode.dtype)
        return mode.masked_fill(all_below, 0) + corner * all_below.to(mode.dtype)

    @property
    def variance(self) -> Tensor:
        total = self.concentration.sum(-1, True)
        return self.concentration * (total - self.concentration) / (total.pow(2) * (total + 1))

    def entropy(self) -> Tensor:
        a = self.concentration
        k, a0 = a.size(-1), a.sum(-1)
        return a.lgamma().sum(-1) - a0.lgamma() - (k - a0) * a0.digamma() - ((a - 1.0) * a.digamma()).sum(-1)

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.concentration,)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.lgamma().sum(-1) - x.sum(-1).lgamma()
