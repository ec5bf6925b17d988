"""minigrad.distributions: PyTorch's ``torch.distributions`` for the models a course builds.

    from minigrad.distributions import Normal, kl_divergence
    q = Normal(mu, sigma)                       # a VAE's encoder output
    z = q.rsample()                             # differentiable in mu and sigma
    loss = -p_x_given_z.log_prob(x).sum() + kl_divergence(q, Normal(0., 1.)).sum()

A distribution has a batch_shape and an event_shape, draws with ``sample`` (no gradient) or
``rsample`` (the reparameterization trick, where ``has_rsample``), and scores values with
``log_prob``; REINFORCE multiplies a reward by ``log_prob(action)`` of a Categorical or Bernoulli
policy. Draws come from minigrad's generator (``minigrad.manual_seed``). Read distribution.py
first, then normal.py; constraints.py and transforms.py are the vocabulary the others use.
"""
from minigrad.distributions import constraints, transforms
from minigrad.distributions.bernoulli import Bernoulli
from minigrad.distributions.beta import Beta
from minigrad.distributions.binomial import Binomial
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.dirichlet import Dirichlet
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.exp_family import ExponentialFamily
from minigrad.distributions.exponential import Exponential
from minigrad.distributions.gamma import Gamma
from minigrad.distributions.independent import Independent
from minigrad.distributions.kl import kl_divergence, register_kl
from minigrad.distributions.laplace import Laplace
from minigrad.distributions.log_normal import LogNormal
from minigrad.distributions.mixture_same_family import MixtureSameFamily
from minigrad.distributions.multinomial import Multinomial
from minigrad.distributions.multivariate_normal import MultivariateNormal
from minigrad.distributions.normal import Normal
from minigrad.distributions.one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from minigrad.distributions.poisson import Poisson
from minigrad.distributions.relaxed_bernoulli import LogitRelaxedBernoulli, RelaxedBernoulli
from minigrad.distributions.relaxed_categorical import ExpRelaxedCategorical, RelaxedOneHotCategorical
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.transforms import (
    AbsTransform, AffineTransform, ComposeTransform, ExpTransform, PowerTransform, SigmoidTransform,
    SoftmaxTransform, SoftplusTransform, TanhTransform, Transform, identity_transform,
)
from minigrad.distributions.uniform import Uniform

__all__ = [
    "AbsTransform", "AffineTransform", "Bernoulli", "Beta", "Binomial", "Categorical", "ComposeTransform",
    "Dirichlet", "Distribution", "ExpRelaxedCategorical", "ExpTransform", "Exponential", "ExponentialFamily",
    "Gamma", "Independent", "Laplace", "LogNormal", "LogitRelaxedBernoulli", "MixtureSameFamily", "Multinomial",
    "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
    "PowerTransform", "RelaxedBernoulli", "RelaxedOneHotCategorical", "SigmoidTransform", "SoftmaxTransform",
    "SoftplusTransform", "TanhTransform", "Transform", "TransformedDistribution", "Uniform", "constraints",
    "identity_transform", "kl_divergence", "register_kl", "transforms",
]
