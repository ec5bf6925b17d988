"""Distribution: the base class every distribution derives from, as ``torch.distributions.Distribution``.

A distribution has a ``batch_shape`` (independent distributions side by side, one per parameter
entry) and an ``event_shape`` (the shape of one draw: () for a scalar, (k,) for a vector).
``sample(sample_shape)`` returns ``sample_shape + batch_shape + event_shape``; ``log_prob(value)``
returns ``value``'s shape without the event dims. ``rsample`` is a sample written as a
differentiable function of the parameters and parameter-free noise (the reparameterization trick,
``loc + scale * eps``), so gradients flow through it; ``sample`` is the same draw without history.

Validation (on by default, as Python's ``assert``: off under ``python -O``) checks parameters
against ``arg_constraints`` in ``__init__`` and values against ``support`` in ``log_prob``.
"""
from __future__ import annotations

import warnings

from minigrad.autograd.grad_mode import no_grad
from minigrad.distributions import constraints
from minigrad.distributions.utils import lazy_property
from minigrad._tensor import Size, Tensor

__all__ = ["Distribution"]


class Distribution:
    """The abstract base of probability distributions (batch_shape, event_shape, validate_args)."""

    has_rsample = False
    has_enumerate_support = False
    _validate_args = __debug__

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Turn argument and sample validation on or off for distributions built afterwards."""
        if value not in [True, False]:
            raise ValueError
        Distribution._validate_args = value

    def __init__(self, batch_shape=Size(), event_shape=Size(), validate_args: bool | None = None) -> None:
        self._batch_shape = Size(batch_shape)
        self._event_shape = Size(event_shape)
        if validate_args is not None:
            self._validate_args = validate_args
        if self._validate_args:
            try:
                arg_constraints = self.arg_constraints
            except NotImplementedError:
                arg_constraints = {}
                warnings.warn(f"{self.__class__} does not define `arg_constraints`. Please set "
                              "`arg_constraints = {}` or initialize the distribution with "
                              "`validate_args=False` to turn off validation.", stacklevel=2)
            for param, constraint in arg_constraints.items():
                if constraints.is_dependent(constraint):
                    continue  # checked nowhere: it depends on other parameters
                if param not in self.__dict__ and isinstance(getattr(type(self), param), lazy_property):
                    continue  # the other parametrization (probs given, logits lazy): not computed yet
                value = getattr(self, param)
                if not constraint.check(value).all():
                    raise ValueError(
                        f"Expected parameter {param} ({type(value).__name__} of shape {tuple(value.shape)}) "
                        f"of distribution {self!r} to satisfy the constraint {constraint!r}, "
                        f"but found invalid values:\n{value}")

    def expand(self, batch_shape, _instance=None) -> Distribution:
        """A distribution with its batch dims expanded to ``batch_shape`` (parameters expanded, not copied)."""
        raise NotImplementedError

    @property
    def batch_shape(self) -> Size:
        """The shape over which parameters are batched."""
        return self._batch_shape

    @property
    def event_shape(self) -> Size:
        """The shape of a single draw, without batching."""
        return self._event_shape

    @property
    def arg_constraints(self) -> dict:
        """The constraint each tensor parameter must satisfy, by name."""
        raise NotImplementedError

    @property
    def support(self):
        """The constraint the values of this distribution lie in."""
        raise NotImplementedError

    @property
    def mean(self) -> Tensor:
        raise NotImplementedError

    @property
    def mode(self) -> Tensor:
        raise NotImplementedError(f"{self.__class__} does not implement mode")

    @property
    def variance(self) -> Tensor:
        raise NotImplementedError

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def sample(self, sample_shape=Size()) -> Tensor:
        """A draw of shape ``sample_shape + batch_shape + event_shape``, with no autograd history."""
        with no_grad():
            return self.rsample(sample_shape)

    def rsample(self, sample_shape=Size()) -> Tensor:
        """A draw that is a differentiable function of the parameters (only where ``has_rsample``)."""
        raise NotImplementedError

    def sample_n(self, n: int) -> Tensor:
        """``sample((n,))``, deprecated as in PyTorch."""
        warnings.warn("`sample_n(n)` will be deprecated. Use `sample((n,))` instead.", FutureWarning, stacklevel=2)
        return self.sample(Size((n,)))

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the density (or mass) at ``value``."""
        raise NotImplementedError

    def cdf(self, value: Tensor) -> Tensor:
        """The cumulative distribution function at ``value``."""
        raise NotImplementedError

    def icdf(self, value: Tensor) -> Tensor:
        """The inverse of the cdf: the value below which a fraction ``value`` of the mass lies."""
        raise NotImplementedError

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """Every value of a discrete distribution along dim 0: ``(cardinality,) + batch_shape + event_shape``
        (batch dims of size 1 when ``expand=False``)."""
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """The entropy, one per batch entry."""
        raise NotImplementedError

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return self.entropy().exp()

    def _extended_shape(self, sample_shape=Size()) -> Size:
        """``sample_shape + batch_shape + event_shape``: the shape of a draw."""
        return Size(tuple(sample_shape) + tuple(self._batch_shape) + tuple(self._event_shape))

    def _validate_sample(self, value: Tensor) -> None:
        """Check that ``value`` has the event shape, broadcasts with the batch shape and lies in the support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event_dim_start = value.dim() - len(self._event_shape)
        if value.size()[event_dim_start:] != self._event_shape:
            raise ValueError(f"The right-most size of value must match event_shape: {value.size()} vs "
                             f"{self._event_shape}.")
        actual_shape = value.size()
        expected_shape = Size(tuple(self._batch_shape) + tuple(self._event_shape))
        for i, j in zip(reversed(actual_shape), reversed(expected_shape)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(f"Value is not broadcastable with batch_shape+event_shape: {actual_shape} vs "
                                 f"{expected_shape}.")
        try:
            support = self.support
        except NotImplementedError:
            warnings.warn(f"{self.__class__} does not define `support` to enable sample validation. Please "
                          "initialize the distribution with `validate_args=False` to turn off validation.",
                          stacklevel=2)
            return
        if not support.check(value).all():
            raise ValueError(
                f"Expected value argument ({type(value).__name__} of shape {tuple(value.shape)}) "
                f"to be within the support ({support!r}) of the distribution {self!r}, "
                f"but found invalid values:\n{value}")

    def _get_checked_instance(self, cls, _instance=None):
        """A blank instance for ``expand`` to fill (a subclass with its own __init__ needs its own expand)."""
        if _instance is None and type(self).__init__ != cls.__init__:
            raise NotImplementedError(f"Subclass {self.__class__.__name__} of {cls.__name__} that defines a "
                                      "custom __init__ method must also define a custom .expand() method.")
        return self.__new__(type(self)) if _instance is None else _instance

    def __repr__(self) -> str:
        params = [k for k in self.arg_constraints if k in self.__dict__]
        args = ", ".join(f"{p}: {self.__dict__[p] if self.__dict__[p].numel() == 1 else self.__dict__[p].size()}"
                         for p in params)
        return f"{self.__class__.__name__}({args})"
