"""Poisson(rate): counts of rare events, P(k) = rate^k e^(-rate) / k!. Draws are counts (no rsample)."""
from __future__ import annotations

from numbers import Number

import numpy as np

from minigrad import random
from minigrad.autograd.grad_mode import no_grad
from minigrad.distributions import constraints
from minigrad.distributions.exp_family import ExponentialFamily
from minigrad.distributions.utils import _numpy_draw, broadcast_all
from minigrad._tensor import Size, Tensor

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The Poisson distribution with mean and variance ``rate``."""

    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate: Tensor | Number, validate_args: bool | None = None) -> None:
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size() if isinstance(rate, Number) else self.rate.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None) -> Poisson:
        new = self._get_checked_instance(Poisson, _instance)
        batch_shape = Size(batch_shape)
        new.rate = self.rate.expand(batch_shape)
        super(Poisson, new).__init__(batch_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self) -> Tensor:
        return self.rate

    @property
    def mode(self) -> Tensor:
        return self.rate.floor()

    @property
    def variance(self) -> Tensor:
        return self.rate

    def sample(self, sample_shape=Size()) -> Tensor:
        shape = tuple(self._extended_shape(sample_shape))
        with no_grad():
            rate = np.broadcast_to(self.rate._data.astype(np.float64), shape)
            return _numpy_draw(random.generator().poisson(rate), self.rate.dtype)

    def log_prob(self, value: Tensor) -> Tensor:
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self) -> tuple[Tensor]:
        return (self.rate.log(),)

    def _log_normalizer(self, x: Tensor) -> Tensor:
        return x.exp()
