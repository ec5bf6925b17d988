"""Dirichlet(concentration): probability vectors on the simplex, density ∝ Π x_k^(α_k - 1).

rsample normalizes independent Gamma(α_k, 1) draws (NumPy), x = g / Σ g. Its gradient is
PyTorch's implicit one: each x_k has a Beta(α_k, α₀ - α_k) marginal, and keeping that marginal's
cdf fixed gives dx_k/dα_k = -(∂F/∂α_k) / pdf. PyTorch approximates it by series, a saddle-point
expansion and a rational fit (``dirichlet_grad_one``); ``_dirichlet_grad`` below is that
approximation, so the same draw gets PyTorch's gradient. A first derivative only, as PyTorch's.
"""
from __future__ import annotations

import numpy as np

from minigrad import random
from minigrad.autograd.function import Function
from minigrad.distributions import constraints
from minigrad.distributions.exp_family import ExponentialFamily
from minigrad.nn.functional import one_hot
from minigrad._tensor import Size, Tensor

__all__ = ["Dirichlet"]

# PyTorch's rational correction to x (ψ(α₀) - ψ(α)) / β, in u = log x, a = log α - u, b = log α₀ - a
# (ATen/native/Distributions.h): numerator [0] and denominator [1], indexed [power of u][power of a][power of b]
_C = np.array([
    [[[1.003668233, -0.01061107488, -0.0657888334, 0.01201642863],
      [0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033],
      [-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013]],
     [[0.221950385, -0.3187676331, 0.01799915743, 0.01074823814],
      [-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057],
      [0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05]],
     [[-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565],
      [0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181],
      [0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05]]],
    [[[1, -0.02924021934, -0.04438342661, 0.007285809825],
      [0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521],
      [-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149]],
     [[0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273],
      [0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956],
      [-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05]],
     [[0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05],
      [0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05],
      [-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06]]],
])


def _digamma(x: np.ndarray) -> np.ndarray:
    return Tensor._wrap(x).digamma()._data


def _beta_grad_alpha_small(x, alpha, beta):
    """dx/dα of a Beta(α, β) draw near 0: a Taylor series of the cdf."""
    factor = _digamma(alpha) - _digamma(alpha + beta) - np.log(x)
    numer = np.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * (i - beta) * x / i
        denom = alpha + i
        series = series + numer / denom * (factor + 1 / denom)
    result = x * (1 - x) ** -beta * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_beta_small(x, alpha, beta):
    """dx/dβ of a Beta(α, β) draw near 0: a Taylor series of the cdf."""
    factor = _digamma(alpha + beta) - _digamma(beta)
    numer, betas, dbetas, series = np.ones_like(x), np.ones_like(x), np.zeros_like(x), factor / alpha
    for i in range(1, 9):
        numer = numer * -x / i
        dbetas = dbetas * (beta - i) + betas
        betas = betas * (beta - i)
        series = series + numer / (alpha + i) * (dbetas + factor * betas)
    result = -(1 - x) ** (1 - beta) * series
    return np.where(np.isnan(result), 0.0, result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """dx/dα of a Beta(α, β) draw with α and β both large: Rice's saddle-point expansion."""
    total = alpha + beta
    mean = alpha / total
    std = np.sqrt(alpha * beta / (total + 1)) / total
    poly = 47 * x * beta ** 4 + alpha * ((43 + 20 * (16 + 27 * beta) * x) * beta ** 3 + alpha * (
        3 * (59 + 180 * beta - 90 * x) * beta ** 2 + alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta
                                                              + alpha * (8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / total ** 2
    prefactor_den = 12960 * alpha ** 3 * beta ** 2 * (1 + 12 * total)
    at_mean = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / np.sqrt(2 * alpha * beta / total)
    stirling = ((1 + 1 / (12 * alpha) + 1 / (288 * alpha ** 2)) * (1 + 1 / (12 * beta) + 1 / (288 * beta ** 2))
                / (1 + 1 / (12 * total) + 1 / (288 * total ** 2)))
    term1_num = 2 * alpha ** 2 * (x - 1) + alpha * beta * (x - 1) - x * beta ** 2
    axbx = alpha * (x - 1) + beta * x
    term1 = term1_num / (np.sqrt(2 * alpha / beta) * total ** 1.5 * axbx ** 2)
    term2 = 0.5 * np.log(alpha / (total * x))
    term3 = np.sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1))
    term4 = (beta * np.log(beta / (total * (1 - x))) + alpha * np.log(alpha / (total * x))) ** -1.5
    away = stirling * prefactor * (term1 + term2 * (term3 + np.where(x < mean, term4, -term4)))
    return np.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), at_mean, away)


def _dirichlet_grad(x: np.ndarray, alpha: np.ndarray, total: np.ndarray) -> np.ndarray:
    """-(∂F/∂α) / pdf / (1 - x) for x ~ Beta(α, total - α), F its cdf: PyTorch's ``_dirichlet_grad``,
    by the same four approximations, chosen by the same regions."""
    x, alpha, total = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (x, alpha, total)))
    beta = total - alpha
    boundary = total * x * (1 - x)
    with np.errstate(all="ignore"):
        near_0 = _beta_grad_alpha_small(x, alpha, beta)
        near_1 = -_beta_grad_beta_small(1 - x, beta, alpha)
        mid = _beta_grad_alpha_mid(x, alpha, beta)
        u = np.log(x)
        a = np.log(alpha) - u
        b = np.log(total) - a
        p, q = np.zeros_like(x), np.zeros_like(x)
        for i in range(3):
            for j in range(3):
                ua = u ** i * a ** j
                cp, cq = _C[0][i][j], _C[1][i][j]
                p = p + ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])))
                q = q + ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])))
        fit = p / q * x * (_digamma(total) - _digamma(alpha)) / beta
    return np.where((x <= 0.5) & (boundary < 2.5), near_0,
                    np.where((x >= 0.5) & (boundary < 0.75), near_1,
                             np.where((alpha > 6) & (beta > 6), mid, fit)))


class DirichletSample(Function):
    """Normalized Gamma(α, 1) draws, differentiable in α by PyTorch's implicit gradient
    (node _DirichletBackward, the name of PyTorch's Python Function)."""

    node_name = "_DirichletBackward"

    @staticmethod
    def forward(ctx, concentration):
        alpha = concentration._data
        tiny = np.finfo(alpha.dtype).tiny
        gammas = np.maximum(random.generator().standard_gamma(alpha.astype(np.float64)), tiny)
        x = np.clip(gammas / gammas.sum(-1, keepdims=True), tiny, 1 - np.finfo(alpha.dtype).eps).astype(alpha.dtype)
        ctx.alpha, ctx.x = alpha, x
        return Tensor._wrap(x)

    @staticmethod
    def backward(ctx, grad):
        total = np.broadcast_to(ctx.alpha.sum(-1, keepdims=True), ctx.alpha.shape)
        d = Tensor._wrap(_dirichlet_grad(ctx.x, ctx.alpha, total).astype(ctx.alpha.dtype))
        x = Tensor._wrap(ctx.x)
        return d * (grad - (x * grad).sum(-1, keepdim=True))


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
        return DirichletSample.apply(self.concentration.expand(tuple(self._extended_shape(sample_shape))))

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
