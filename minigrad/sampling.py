"""Draws from distributions: multinomial, bernoulli, normal, poisson, randint_like, the in-place
samplers (random_, exponential_, geometric_, log_normal_, cauchy_, bernoulli_), and the
generator's state as a tensor (get_rng_state / set_rng_state), as PyTorch's.

Every draw comes from minigrad's one generator (``minigrad/random.py``), so ``manual_seed``
makes it repeat, or from a ``Generator`` passed as ``generator=``: a generator of its own,
seeded apart. The numbers are NumPy's (PCG64), not PyTorch's stream; the distributions are the
same. A state is the PCG64 state in 37 bytes (128-bit state, 128-bit increment, the cached
half-word), a uint8 tensor: ``set_rng_state(get_rng_state())`` repeats the draws that followed.

Sampling has no useful derivative: as in PyTorch, ``normal``, ``poisson`` and ``bernoulli``
of a tensor that requires grad record a node whose gradient is zero.
"""
from __future__ import annotations

import numpy as np

from minigrad import dtypes, random
from minigrad.autograd.function import Function
from minigrad.creation import _shape
from minigrad.ops.broadcast import NOT_GIVEN, flag, integer, number
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _tensor_argument

_STATE_BYTES = 37


class Generator:
    """A random generator of its own (``torch.Generator``): pass it as ``generator=`` to draw from it
    instead of the global one that ``manual_seed`` seeds."""

    def __init__(self, device="cpu") -> None:
        self.device = device
        self._numpy = np.random.default_rng(67280421310721)  # PyTorch's default seed for a new Generator
        self._initial_seed = 67280421310721

    def manual_seed(self, seed: int) -> Generator:
        self._numpy, self._initial_seed = np.random.default_rng(int(seed)), int(seed)
        return self

    def seed(self) -> int:
        """Reseed from the operating system's entropy and return the seed."""
        new_seed = int(np.random.SeedSequence().entropy % (1 << 63))
        self.manual_seed(new_seed)
        return new_seed

    def initial_seed(self) -> int:
        return self._initial_seed

    def get_state(self) -> Tensor:
        return _encode(self._numpy)

    def set_state(self, new_state: Tensor) -> Generator:
        _decode(self._numpy, new_state)
        return self


def _encode(rng: np.random.Generator) -> Tensor:
    state = rng.bit_generator.state
    raw = (state["state"]["state"].to_bytes(16, "little") + state["state"]["inc"].to_bytes(16, "little")
           + bytes([state["has_uint32"]]) + int(state["uinteger"]).to_bytes(4, "little"))
    return Tensor._wrap(np.frombuffer(raw, dtype=np.uint8).copy())


def _decode(rng: np.random.Generator, new_state: Tensor) -> None:
    if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
        raise TypeError("RNG state must be a minigrad.ByteTensor: a uint8 tensor from get_rng_state()")
    raw = new_state._data.tobytes()
    if len(raw) != _STATE_BYTES:
        raise RuntimeError(f"RNG state is wrong size: expected {_STATE_BYTES} bytes (from get_rng_state()), "
                           f"got {len(raw)}")
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": int.from_bytes(raw[:16], "little"), "inc": int.from_bytes(raw[16:32], "little")},
        "has_uint32": raw[32], "uinteger": int.from_bytes(raw[33:], "little"),
    }


def get_rng_state() -> Tensor:
    """The global generator's state, a uint8 tensor to give back to ``set_rng_state``."""
    return _encode(random.generator())


def set_rng_state(new_state: Tensor) -> None:
    """Restore the global generator to a state from ``get_rng_state``: the same draws follow."""
    _decode(random.generator(), new_state)


# -- sampling with a zero gradient -----------------------------------------------------------------------
class _Sampled(Function):
    """A draw already made (``sample``) recorded against its parameters, each with a zero gradient."""

    @staticmethod
    def forward(ctx, sample, *parameters):
        ctx.shapes = [p.shape if isinstance(p, Tensor) else None for p in parameters]
        return Tensor._wrap(sample._data)

    @staticmethod
    def backward(ctx, grad):
        zeros = [None if shape is None else Tensor._wrap(np.zeros(shape, grad._data.dtype)) for shape in ctx.shapes]
        return (None, *zeros)


class NormalTensorFloat(_Sampled):
    node_name = "NormalBackward1"


class NormalFloatTensor(_Sampled):
    node_name = "NormalBackward2"


class NormalTensorTensor(_Sampled):
    node_name = "NormalBackward3"


class Poisson(_Sampled):
    node_name = "PoissonBackward0"


class Bernoulli(_Sampled):
    node_name = "BernoulliBackward0"


def _float(name: str, t: Tensor) -> None:
    if t._data.dtype.kind != "f":
        raise RuntimeError(f"{name} needs a floating-point tensor, got {t.dtype}: convert it with .float()")


def normal(mean, std=1.0, size=None, *, generator: Generator | None = None, dtype=None, requires_grad: bool = False,
           device=None) -> Tensor:
    """Draws from N(mean, std²): PyTorch's four overloads, ``mean`` and ``std`` each a tensor (one draw per
    element, broadcast) or a number; two numbers need ``size``."""
    rng = random.generator(generator)
    mean_t, std_t = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_t and not std_t:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with a number mean and std, "
                            "pass size (normal(0.0, 1.0, (2, 3)))")
        m, s = number(mean, "mean"), number(std, "std")
        if s < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {s}")
        want = dtypes.default_float.numpy if dtype is None else dtypes.to_numpy_dtype(dtype)
        out = Tensor._wrap(rng.normal(m, s, _shape((size,) if isinstance(size, int) else tuple(size))).astype(want))
        return out.requires_grad_(requires_grad) if requires_grad else out
    if size is not None:
        raise TypeError("normal(): size goes only with a number mean and std; a tensor's shape fixes the result's")
    for name, value in (("mean", mean), ("std", std)):
        if isinstance(value, Tensor):
            _float(f"normal expects {name} to be floating-point, and", value)
    std_values = std._data if std_t else number(std, "std")
    if np.any(np.asarray(std_values) < 0):
        raise RuntimeError(f"normal expects all elements of std >= 0.0, but found {np.min(std_values)}")
    mean_values = mean._data if mean_t else number(mean, "mean")
    shape = np.broadcast_shapes(np.shape(mean_values), np.shape(std_values))
    want = np.result_type(*[t._data for t in (mean, std) if isinstance(t, Tensor)])
    sample = Tensor._wrap(np.asarray(mean_values + std_values * rng.standard_normal(shape), dtype=want))
    if mean_t and std_t:
        return NormalTensorTensor.apply(sample, mean, std)
    return NormalTensorFloat.apply(sample, mean) if mean_t else NormalFloatTensor.apply(sample, std)


@tensor_method(top_level=True, out=False)
def poisson(self: Tensor, generator: Generator | None = None) -> Tensor:
    """One draw from Poisson(rate) per element of ``self``, the rates (in its float dtype)."""
    _float("poisson", self)
    if np.any(self._data < 0) or np.isnan(self._data).any():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    sample = Tensor._wrap(random.generator(generator).poisson(self._data).astype(self._data.dtype))
    return Poisson.apply(sample, self)


@tensor_method(top_level=True)
def bernoulli(self: Tensor, p=NOT_GIVEN, *, generator: Generator | None = None) -> Tensor:
    """0 or 1 per element, 1 with probability ``self`` (or with ``p`` if given), in self's dtype."""
    p = None if p is NOT_GIVEN else number(p, "p")
    probabilities = self._data if p is None else p
    if p is None and self._data.dtype.kind != "f":
        raise NotImplementedError(f"bernoulli is not implemented for {self.dtype} probabilities: convert them with "
                                  ".float()")
    if np.any((np.asarray(probabilities) < 0) | (np.asarray(probabilities) > 1)) or np.isnan(probabilities).any():
        raise RuntimeError(f"bernoulli expects each probability to be in [0, 1], got {probabilities}")
    draws = random.generator(generator).random(self._data.shape) < probabilities
    sample = Tensor._wrap(draws.astype(self._data.dtype))
    return Bernoulli.apply(sample, self) if p is None else sample  # (PyTorch's with p has no derivative)


@tensor_method(top_level=True)
def multinomial(self: Tensor, num_samples: int, replacement: bool = False, *,
                generator: Generator | None = None) -> Tensor:
    """``num_samples`` indices per row drawn with probabilities proportional to the row's weights.

    Without replacement each index comes at most once, in the order drawn: the largest weight / E
    with E ~ Exp(1) (PyTorch's trick), so indices of zero weight come last, in order.
    """
    n = integer(num_samples, "num_samples")
    if self._data.dtype.kind != "f":
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{dtypes.scalar_type_name(self._data.dtype)}")
    if self.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {self.ndim} dims")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not flag(replacement, "replacement") and n > self.shape[-1]:
        raise RuntimeError(f"cannot sample n_sample > prob_dist.size(-1) samples without replacement "
                           f"({n} > {self.shape[-1]})")
    weights = self._data.reshape(-1, self.shape[-1]).astype(np.float64)
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    totals = weights.sum(axis=1, keepdims=True)
    if np.any(totals <= 0):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    rng = random.generator(generator)
    if replacement:
        cumulative = np.cumsum(weights / totals, axis=1)
        u = rng.random((weights.shape[0], n))
        rows = [np.minimum(np.searchsorted(c, ui, side="right"), weights.shape[1] - 1) for c, ui in zip(cumulative, u)]
        picked = np.stack(rows)
    else:
        with np.errstate(divide="ignore"):
            keys = weights / rng.exponential(size=weights.shape)
        picked = np.argsort(-keys, axis=1, kind="stable")[:, :n]
    return Tensor._wrap(picked.astype(np.int64).reshape(*self.shape[:-1], n))


def randint_like(input: Tensor, low: int = 0, high: int | None = None, *, generator: Generator | None = None,
                 dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from [low, high) in ``input``'s shape and dtype (``randint_like(x, high)``
    with one bound)."""
    input = _tensor_argument("randint_like", "input", 0, input)
    if high is None:
        low, high = 0, low
    low, high = integer(low, "low"), integer(high, "high")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    want = input._data.dtype if dtype is None else dtypes.to_numpy_dtype(dtype)
    return Tensor._wrap(random.generator(generator).integers(low, high, input._data.shape).astype(want))


# -- in-place samplers ------------------------------------------------------------------------------------
def _fill(self: Tensor, values: np.ndarray) -> Tensor:
    return self.copy_(Tensor._wrap(np.asarray(values).astype(self._data.dtype)))


@tensor_method()
def random_(self: Tensor, low: int = 0, high: int | None = None, *, generator: Generator | None = None) -> Tensor:
    """Fill with integers from [low, high): ``random_(high)`` from 0; ``random_()`` from 0 to the
    largest integer the dtype holds exactly (2²⁴ for float32, 2⁵³ for float64, the maximum for integers)."""
    if high is None and low != 0:
        low, high = 0, low
    if high is None:
        data = self._data
        if data.dtype.kind == "f":
            high = 2 ** (np.finfo(data.dtype).nmant + 1) + 1
        elif data.dtype.kind == "b":
            high = 2
        else:
            high = int(np.iinfo(data.dtype).max) + 1
    low, high = integer(low, "from"), integer(high, "to")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    return _fill(self, random.generator(generator).integers(low, high, self._data.shape))


def _continuous(name: str, self: Tensor) -> None:
    if self._data.dtype.kind != "f":
        raise RuntimeError(f"{name} draws from a continuous distribution: the tensor must be floating-point, "
                           f"got {self.dtype}")


@tensor_method()
def exponential_(self: Tensor, lambd: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill with draws from the exponential distribution of rate ``lambd`` (density λ e^(-λx))."""
    lambd = number(lambd, "lambd")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    _continuous("exponential_", self)
    return _fill(self, random.generator(generator).exponential(1 / lambd, self._data.shape))


@tensor_method()
def geometric_(self: Tensor, p: float, *, generator: Generator | None = None) -> Tensor:
    """Fill with the number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    p = number(p, "p")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill(self, random.generator(generator).geometric(p, self._data.shape))


@tensor_method()
def log_normal_(self: Tensor, mean: float = 1.0, std: float = 2.0, *, generator: Generator | None = None) -> Tensor:
    """Fill with exp(N(mean, std²)) draws."""
    mean, std = number(mean, "mean"), number(std, "std")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    _continuous("log_normal_", self)
    return _fill(self, random.generator(generator).lognormal(mean, std, self._data.shape))


@tensor_method()
def cauchy_(self: Tensor, median: float = 0.0, sigma: float = 1.0, *, generator: Generator | None = None) -> Tensor:
    """Fill with draws from the Cauchy distribution: median + sigma · tan(π (U - 1/2))."""
    median, sigma = number(median, "median"), number(sigma, "sigma")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    _continuous("cauchy_", self)
    return _fill(self, median + sigma * random.generator(generator).standard_cauchy(self._data.shape))


@tensor_method()
def bernoulli_(self: Tensor, p=0.5, *, generator: Generator | None = None) -> Tensor:
    """Fill with 0 or 1, 1 with probability ``p`` (a number, or a tensor broadcast to self)."""
    if isinstance(p, Tensor) and p._data.dtype.kind != "f":
        raise NotImplementedError(f"bernoulli_ is not implemented for {p.dtype} probabilities: convert them with "
                                  ".float()")
    probabilities = p._data if isinstance(p, Tensor) else number(p, "p")
    if np.any((np.asarray(probabilities) < 0) | (np.asarray(probabilities) > 1)):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill(self, random.generator(generator).random(self._data.shape) < probabilities)
