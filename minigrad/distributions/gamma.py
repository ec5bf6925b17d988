"""Gamma(concentration, rate): positive values, density rate^a x^(a-1) e^(-rate x) / Γ(a).

rsample draws x ~ Gamma(a, 1) in NumPy and divides by ``rate``. There is no noise ε with
x = f(a, ε) in closed form, so the gradient with respect to ``a`` is the implicit one
(Figurnov et al. 2018): keeping the cdf F(x; a) fixed, dx/da = -(∂F/∂a) / (∂F/∂x). PyTorch
approximates it by series and a rational fit (``standard_gamma_grad_one``); ``_standard_gamma_grad``
below is that approximation, so the same draw gets PyTorch's gradient. Like PyTorch's, it is a
first derivative only.
"""
from __future__ import annotations

from numbers import Number

import numpy as np

from minigrad import random
from minigrad.autograd.function import Function
from minigrad.distributions import constraints
from minigrad.distributions.exp_family import ExponentialFamily
from minigrad.distributions.utils import broadcast_all
from minigrad._tensor import Size, Tensor

__all__ = ["Gamma"]

# PyTorch's bivariate rational fit of log dx/da in u = log(x / a), v = log(a) (ATen/native/Distributions.h)
_COEF_UV = np.array([
    [0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084],
    [0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623],
    [0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
     -1.5247877e-07],
])


def _standard_gamma_grad(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """dx/dα of a Gamma(α, 1) draw x at a fixed cdf, as PyTorch's ``_standard_gamma_grad``:
    a Taylor series of the cdf for x < 0.8, Rice's saddle-point expansion for α > 8, else a rational fit."""
    a, x = np.broadcast_arrays(alpha.astype(np.float64), x.astype(np.float64))
    with np.errstate(all="ignore"):
        # x < 0.8: F(x; α) = x^α Σ (-x)^i / (i! (α + i)), differentiated in α
        numer, denom = np.ones_like(a), a.copy()
        series1, series2 = numer / denom, numer / denom ** 2
        for i in range(1, 6):
            numer = numer * -x / i
            denom = denom + 1
            series1 = series1 + numer / denom
            series2 = series2 + numer / denom ** 2
        pow_x_alpha = x ** a
        pdf = x ** (a - 1) * np.exp(-x)
        cdf = pow_x_alpha * series1
        digamma = Tensor._wrap(a).digamma()._data
        small = -((np.log(x) - digamma) * cdf - pow_x_alpha * series2) / pdf
        small = np.where(np.isnan(small), 0.0, small)
        # α > 8, x near α: the saddle point's limit
        near = ((1 + 24 * a * (1 + 12 * a)) * (1440 * a * a + 6 * x * (53 - 120 * x) - 65 * x * x / a
                                                + a * (107 + 3600 * x)) / (1244160 * a ** 4))
        # α > 8 elsewhere
        root = np.sqrt(8 * a)
        term2 = root / (a - x)
        term3 = (x - a - a * np.log(x / a)) ** -1.5
        term23 = np.where(x < a, term2 - term3, term2 + term3)
        term1 = np.log(x / a) * term23 - np.sqrt(2 / a) * (a + x) / (a - x) ** 2
        stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
        large = -stirling * x * term1 / root
        # otherwise: the rational fit
        u, v = np.log(x / a), np.log(a)
        c = _COEF_UV[0][:, None] + u.ravel() * (_COEF_UV[1][:, None] + u.ravel() * _COEF_UV[2][:, None])
        p = c[0] + v.ravel() * (c[1] + v.ravel() * (c[2] + v.ravel() * c[3]))
        q = c[4] + v.ravel() * (c[5] + v.ravel() * (c[6] + v.ravel() * c[7]))
        fit = np.exp(p / q).reshape(a.shape)
    return np.where(x < 0.8, small,
                    np.where(a > 8, np.where((0.9 * a <= x) & (x <= 1.1 * a), near, large), fit))


def _gammainc(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The regularized lower incomplete gamma P(a, x) = γ(a, x) / Γ(a), in float64: its power series
    where x < a + 1, else 1 minus Lentz's continued fraction for Q (Numerical Recipes' split)."""
    a, x = np.broadcast_arrays(a.astype(np.float64), x.astype(np.float64))
    out = np.full(a.shape, np.nan)
    lgamma_a = Tensor._wrap(a).lgamma()._data
    with np.errstate(all="ignore"):
        log_prefactor = a * np.log(x) - x - lgamma_a
        series = (x < a + 1) & (x > 0)
        term = total = 1.0 / a[series]
        ap = a[series].copy()
        for _ in range(500):
            ap = ap + 1
            term = term * x[series] / ap
            total = total + term
            if np.all(np.abs(term) < np.abs(total) * 1e-17):
                break
        out[series] = total * np.exp(log_prefactor[series])
        fraction = (x >= a + 1) & np.isfinite(x)
        af, xf = a[fraction], x[fraction]
        tiny = 1e-300
        b = xf + 1 - af
        c, d = np.full(af.shape, 1 / tiny), 1 / b
        h = d.copy()
        for i in range(1, 500):
            an = -i * (i - af)
            b = b + 2
            d = an * d + b
            d = np.where(np.abs(d) < tiny, tiny, d)
            c = b + an / c
            c = np.where(np.abs(c) < tiny, tiny, c)
            d = 1 / d
            delta = d * c
            h = h * delta
            if np.all(np.abs(delta - 1) < 1e-16):
                break
        out[fraction] = 1 - np.exp(log_prefactor[fraction]) * h
    out[(x == 0) & (a > 0)] = 0.0
    out[np.isposinf(x) & (a > 0)] = 1.0
    out[(a <= 0) | (x < 0)] = np.nan
    return out


class Igamma(Function):
    """P(a, x), the Gamma(a, 1) cdf at x (node IgammaBackward0). Its x-derivative is the density
    x^(a-1) e^(-x) / Γ(a), written with tensor ops so that it differentiates again; its
    a-derivative is not implemented, as in PyTorch."""

    node_name = "IgammaBackward0"

    @staticmethod
    def forward(ctx, a, x):
        ctx.save_for_backward(a, x)
        dtype = np.result_type(a._data, x._data)
        return Tensor._wrap(_gammainc(a._data, x._data).astype(dtype))

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        if ctx.needs_input_grad[0]:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        return None, grad * ((a - 1) * x.log() - x - a.lgamma()).exp()


class StandardGamma(Function):
    """A Gamma(α, 1) draw, differentiable in α by the implicit gradient (node StandardGammaBackward0)."""

    node_name = "StandardGammaBackward0"

    @staticmethod
    def forward(ctx, concentration):
        alpha = concentration._data
        x = random.generator().standard_gamma(alpha.astype(np.float64)).astype(alpha.dtype)
        x = np.maximum(x, np.finfo(alpha.dtype).tiny)  # a draw that underflows to 0 would give log(0)
        ctx.alpha, ctx.x = alpha, x
        return Tensor._wrap(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * Tensor._wrap(_standard_gamma_grad(ctx.alpha, ctx.x).astype(ctx.alpha.dtype))


class Gamma(ExponentialFamily):
    """The gamma distribution with shape ``concentration`` and inverse scale ``rate``."""

    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration: Tensor | float, rate: Tensor | float, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        scalar = isinstance(concentration, Number) and isinstance(rate, Number)
        super().__init__(Size() if scalar else self.concentration.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Gamma:
        new = self._get_checked_instance(Gamma, _instance)
        batch_shape = Size(batch_shape)
        new.concentration, new.rate = self.concentration.expand(batch_shape), self.rate.expand(batch_shape)
        super(Gamma, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        return StandardGamma.apply(self.concentration.expand(shape)) / self.rate.expand(shape)

    def log_prob(self, value) -> Tensor:
        if not isinstance(value, Tensor):
            value = Tensor._wrap(np.asarray(value, dtype=self.rate._data.dtype))
        if self._validate_args:
            self._validate_sample(value)
        a = self.concentration
        return a.xlogy(self.rate) + (a - 1).xlogy(value) - self.rate * value - a.lgamma()

    def cdf(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        return Igamma.apply(self.concentration, self.rate * value)

    def entropy(self) -> Tensor:
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1.0 - a) * a.digamma()

    _mean_carrier_measure = 0

    @property
    def _natural_params(self) -> tuple[Tensor, Tensor]:
        return self.concentration - 1, -self.rate

    def _log_normalizer(self, x: Tensor, y: Tensor) -> Tensor:
        return (x + 1).lgamma() + (x + 1) * (-y.reciprocal()).log()
