"""ExponentialFamily: distributions with density exp(<t(x), θ> - F(θ) + k(x)).

Knowing the natural parameters θ and the log-normalizer F is enough for two quantities, by
autograd (Nielsen & Nock, "Entropies and cross-entropies of exponential families"):
    H = F(θ) - <θ, ∇F(θ)> - E[k(x)]
    KL(p || q) = F(θ_q) - F(θ_p) - <θ_q - θ_p, ∇F(θ_p)>    (a Bregman divergence of F; kl.py)
Normal, Bernoulli, Exponential, Gamma, Poisson, Beta and Dirichlet declare theirs; their own
closed-form entropies are what they use, and a test checks them against this one.
"""
from __future__ import annotations

from minigrad.autograd.differentiate import grad
from minigrad.distributions.distribution import Distribution
from minigrad._tensor import Tensor

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """The base of exponential-family distributions: ``_natural_params``, ``_log_normalizer``,
    ``_mean_carrier_measure``, and the entropy they determine."""

    @property
    def _natural_params(self) -> tuple[Tensor, ...]:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params: Tensor) -> Tensor:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """F(θ) - <θ, ∇F(θ)> - E[k(x)], with ∇F from autograd."""
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = grad(lg_normal.sum(), nparams, create_graph=True)
        result = lg_normal - self._mean_carrier_measure
        for param, g in zip(nparams, gradients):
            result = result - (param * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
