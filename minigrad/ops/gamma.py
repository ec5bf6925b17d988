"""The gamma function's family: lgamma, digamma, polygamma, mvlgamma, the incomplete gamma
functions igamma and igammac; and Bessel's i0.

Each is the derivative of the one before, which is how their gradients are written:

    lgamma(x) = ln|Γ(x)|          lgamma' = digamma
    digamma(x) = Γ'(x) / Γ(x)     digamma' = polygamma(1, ·)      polygamma(n, ·)' = polygamma(n + 1, ·)
    mvlgamma(x, p) = p(p-1)/4 ln π + Σᵢ lgamma(x - i/2), i < p   (the multivariate log-gamma)
    i0(x) = Σₖ (x/2)^(2k) / (k!)²                                 i0' = i1 = Σₖ (x/2)^(2k+1) / (k! (k+1)!)
    igamma(a, x) = P(a, x) = γ(a, x) / Γ(a),  igammac = Q = 1 - P       dP/dx = -dQ/dx = x^(a-1) e^-x / Γ(a)

NumPy has none of them but i0, so they are computed here with the algorithms PyTorch's CPU
kernels use (Cephes' digamma and Hurwitz zeta, PyTorch's own trigamma), in the dtype PyTorch
computes them in (float32 arithmetic for a float32 input, the zeta sum in float64), so that the
values are PyTorch's to the last bits, at the poles (0, -1, -2, ...) too: lgamma gives inf there,
digamma NaN (and -inf at +0). polygamma(n ≥ 2, x) is (-1)^(n+1) n! ζ(n + 1, x). igamma and
igammac sum Cephes' series or continued fraction, without its asymptotic expansion for large a
near x (there PyTorch's values are the less accurate ones, by 1e-10 or so, relative).
Integer and bool inputs give the default float.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, integer, sum_to
from minigrad.ops.elementwise import Where, _float
from minigrad.ops.registry import tensor_method
from minigrad._tensor import Tensor, _tensor_argument, check_tensor


_EPS64 = np.finfo(np.float64).eps / 2  # Cephes' MACHEP


def _computed(fn, a: Tensor, *args) -> Tensor:
    """``fn`` of the input's values in its float dtype (integers and bools: the default float)."""
    x = _float(a)
    with np.errstate(all="ignore"):
        return Tensor._wrap(np.asarray(fn(x, *args)).astype(x.dtype, copy=False))


def _lgamma_of(v: float) -> float:
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):  # the poles, and past float64's range
        return math.inf


def _lgamma(x: np.ndarray) -> np.ndarray:
    """ln|Γ(x)| in float64 (rounded once to float32 for a float32 x, as its own lgammaf is):
    inf at the poles 0, -1, ... and at ±inf, NaN at NaN."""
    out = np.full(x.shape, np.nan)
    known = ~np.isnan(x)
    out[known] = [_lgamma_of(v) for v in x[known].tolist()]
    return out


# Cephes' coefficients of digamma's asymptotic series (Bernoulli numbers B₂ₖ / 2k), highest power first
_DIGAMMA_SERIES = np.array([8.33333333333333333333e-2, -2.10927960927960927961e-2, 7.57575757575757575758e-3,
                            -4.16666666666666666667e-3, 3.96825396825396825397e-3, -8.33333333333333333333e-3,
                            8.33333333333333333333e-2])


_DIGAMMA_10 = 2.25175258906672110764


def _digamma(x: np.ndarray) -> np.ndarray:
    """Reflect x < 0 (ψ(x) = ψ(1 - x) - π / tan(π frac(x)), that term in float64), step up to x ≥ 10
    (ψ(x) = ψ(x + 1) - 1/x), then the asymptotic series: PyTorch's kernel, in x's dtype."""
    t = x.dtype.type
    negative = x < 0
    fraction = (x - np.trunc(x)).astype(np.float64)
    reflection = (math.pi / np.tan(math.pi * fraction)).astype(x.dtype)
    y = np.where(negative, 1 - x, x)
    result = np.zeros_like(y)
    low = y < 10
    while low.any():
        result[low] -= 1 / y[low]
        y[low] += 1
        low = y < 10
    z = 1 / (y * y)
    tail = np.where(y < 1e17, z * np.polyval(_DIGAMMA_SERIES.astype(x.dtype), z), t(0))
    result = np.where(y == 10, result + t(_DIGAMMA_10), result + np.log(y) - t(0.5) / y - tail)
    result = np.where(negative, result - reflection, result)
    result = np.where(negative & (fraction == 0), np.nan, result)  # the poles (and -inf)
    return np.where(x == 0, np.copysign(np.inf, -x), result)


def _trigamma(x: np.ndarray) -> np.ndarray:
    """PyTorch's trigamma, in x's dtype: reflect x < 1/2, six steps of the recurrence, five terms of
    the series."""
    t = x.dtype.type
    pi = t(math.pi)
    reflect = x < 0.5
    sin = np.sin(pi * x)
    result = np.where(reflect, -(pi * pi) / (sin * sin), t(0))
    y = np.where(reflect, 1 - x, x)
    for _ in range(6):
        result = result + 1 / (y * y)
        y = y + 1
    z = 1 / (y * y)
    result = result + (1 + 1 / (2 * y) + z * (t(1 / 6) - z * (t(1 / 30) - z * t(1 / 42)))) / y
    return np.where(reflect, -result, result)


# Cephes' Euler-Maclaurin coefficients for the Hurwitz zeta function: (2k)! / B₂ₖ
_ZETA_COEFFICIENTS = [12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
                      -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
                      1.8152105401943546773e17, -7.1661652561756670113e18]


def _zeta64(s: float, q: np.ndarray) -> np.ndarray:
    """Hurwitz's ζ(s, q) = Σₖ (q + k)^-s for an integer s ≥ 2, as Cephes computes it: the terms up
    to q + k > 9 (at least nine of them), then the Euler-Maclaurin tail; inf at a pole q = 0, -1, ..."""
    pole = (q <= 0) & (q == np.floor(q))  # (-inf too)
    far = q < -1e6  # (Cephes would sum a million terms or more: NaN instead)
    total = q ** -s
    a = q.copy()
    done = pole | far | np.isnan(q)
    b = np.zeros_like(q)
    i = 0
    while True:
        active = ~done & ((i < 9) | (a <= 9.0))
        if not active.any():
            break
        i += 1
        a[active] += 1.0
        b[active] = a[active] ** -s
        total[active] += b[active]
        done |= active & (np.abs(b / total) < _EPS64)
    w = a
    tail = ~done
    total[tail] += (b * w / (s - 1))[tail]
    total[tail] -= 0.5 * b[tail]
    a_, k = np.ones_like(q), 0.0
    for coefficient in _ZETA_COEFFICIENTS:
        if not tail.any():
            break
        a_[tail] *= s + k
        b[tail] /= w[tail]
        t = a_ * b / coefficient
        total[tail] += t[tail]
        tail &= ~(np.abs(t / total) < _EPS64)
        k += 1.0
        a_[tail] *= s + k
        b[tail] /= w[tail]
        k += 1.0
    return np.where(pole, np.inf, np.where(far, np.nan, total))


def _polygamma_values(x: np.ndarray, n: int) -> np.ndarray:
    if n == 0:
        return _digamma(x)
    if n == 1:
        return _trigamma(x)
    factor = np.exp(np.asarray(math.lgamma(n + 1.0), x.dtype))  # n!, as PyTorch computes it
    return (factor if n % 2 else -factor) * _zeta64(n + 1.0, x.astype(np.float64)).astype(x.dtype)


def _igam_factor(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """x^a e^-x / Γ(a), the factor both of Cephes' sums for the incomplete gamma function share."""
    return np.exp(a * np.log(x) - x - _lgamma(a))


def _until_converged(step, state: tuple, count: int = 2000) -> None:
    """Run ``step(state, active)`` on the elements whose terms still count (it returns that mask)."""
    active = np.ones(state[0].shape, bool)
    for _ in range(count):
        active = step(active)
        if not active.any():
            return


def _igam_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(a, x) = x^a e^-x / Γ(a + 1) Σₙ xⁿ / ((a + 1)···(a + n)): positive terms (x below about a)."""
    r, c, total = a.copy(), np.ones_like(a), np.ones_like(a)

    def step(active):
        r[active] += 1
        c[active] *= x[active] / r[active]
        total[active] += c[active]
        return active & (c / total > _EPS64)
    _until_converged(step, (a,))
    return total * _igam_factor(a, x) / a


def _igamc_fraction(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) from Legendre's continued fraction, Cephes' recurrence (x above about a)."""
    y, z, c = 1 - a, x + 2 - a, np.zeros_like(a)
    p2, q2, p1, q1 = np.ones_like(a), x.copy(), x + 1, z * x
    answer = p1 / q1

    def step(active):
        nonlocal y, z, c, p2, q2, p1, q1, answer
        c, y, z = c + active, y + active, z + 2 * active
        yc = y * c
        pk, qk = p1 * z - p2 * yc, q1 * z - q2 * yc
        with np.errstate(invalid="ignore", divide="ignore"):
            r = np.where(qk != 0, pk / qk, answer)
            change = np.where(qk != 0, np.abs((answer - r) / r), 1.0)
        answer = np.where(active, r, answer)
        keep = ~active
        p2, p1 = np.where(keep, p2, p1), np.where(keep, p1, pk)
        q2, q1 = np.where(keep, q2, q1), np.where(keep, q1, qk)
        big = np.abs(p1) > 2.0 ** 52
        p2, p1, q2, q1 = (np.where(big, v * 2.0 ** -52, v) for v in (p2, p1, q2, q1))
        return active & (change > _EPS64)
    _until_converged(step, (a,))
    return answer * _igam_factor(a, x)


def _igamc_series(a: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Q(a, x) for x <= 1.1 and a not too large, Cephes' alternating series."""
    n, fac, total = np.zeros_like(a), np.ones_like(a), np.zeros_like(a)

    def step(active):
        n[active] += 1
        fac[active] *= -x[active] / n[active]
        term = fac / (a + n)
        total[active] += term[active]
        return active & (np.abs(term) > _EPS64 * np.abs(total))
    _until_converged(step, (a,))
    log_x = np.log(x)
    return -np.expm1(a * log_x - _lgamma(1 + a)) - np.exp(a * log_x - _lgamma(a)) * total


def _igamma_pair(a: np.ndarray, x: np.ndarray, upper: bool) -> np.ndarray:
    """P(a, x) (``upper=False``) or Q(a, x) = 1 - P, choosing as Cephes does which one to sum and
    which to take as 1 minus the other, and its values at the edges (a or x 0 or infinite)."""
    a, x = np.broadcast_arrays(a.astype(np.float64), x.astype(np.float64))
    a, x = a.copy(), x.copy()
    out = np.full(a.shape, np.nan)
    edge = (x < 0) | (a < 0) | (a == 0) | (x == 0) | np.isinf(a) | np.isinf(x) | np.isnan(a) | np.isnan(x)
    p_edge = np.where(a == 0, np.where(x > 0, 1.0, np.nan), np.where(x == 0, 0.0, np.where(
        np.isinf(a), np.where(np.isinf(x), np.nan, 0.0), np.where(np.isinf(x), 1.0, np.nan))))
    p_edge = np.where((x < 0) | (a < 0), np.nan, p_edge)
    out[edge] = (1 - p_edge if upper else p_edge)[edge]
    inside = ~edge
    # Cephes' choice: the continued fraction for Q where x > 1.1 and x >= a, the series for Q where
    # x <= 1.1 and a is small against x, else the series for P
    fraction = inside & (x > 1.1) & (x >= a)
    with np.errstate(divide="ignore"):
        small = inside & (x <= 1.1) & ~fraction & np.where(x <= 0.5, -0.4 / np.log(x) >= a, x * 1.1 >= a)
    series = inside & ~fraction & ~small
    if fraction.any():
        q = _igamc_fraction(a[fraction], x[fraction])
        out[fraction] = q if upper else 1 - q
    if small.any():
        q = _igamc_series(a[small], x[small])
        out[small] = q if upper else 1 - q
    if series.any():
        p = _igam_series(a[series], x[series])
        out[series] = 1 - p if upper else p
    return out


class Igamma(Function):
    """The regularized lower incomplete gamma function P(a, x) = γ(a, x) / Γ(a) (``special.gammainc``).
    Its x-derivative is x^(a-1) e^-x / Γ(a); PyTorch has none for a (backward raises, here as there)."""

    node_name = "IgammaBackward0"
    sign = 1.0

    @staticmethod
    def forward(ctx, a, x):
        return Igamma._forward(ctx, a, x, False, "igamma")

    @staticmethod
    def _forward(ctx, a, x, upper: bool, name: str):
        want = dtypes.result_type(a._data, x._data)
        if want.kind != "f":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{dtypes.scalar_type_name(want)}': "
                                      "convert the tensors with .float() first")
        try:
            np.broadcast_shapes(a._data.shape, x._data.shape)
        except ValueError:
            raise broadcast_error(a._data.shape, x._data.shape) from None
        ctx.save_for_backward(a, x)
        with np.errstate(all="ignore"):
            return Tensor._wrap(_igamma_pair(a._data, x._data, upper).astype(want))

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        need_a, need_x = ctx.needs_input_grad
        name = type(ctx).__name__.removesuffix("Backward0").lower()
        if need_a:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented: a's derivative "
                                      "has no closed form; detach a")
        slope = ((a - 1) * x.log() - x - Lgamma.apply(a)).exp()
        return None, sum_to(grad * slope * type(ctx)._forward_cls.sign, x.shape)


@tensor_method(top_level=True)
def igamma(self, other: Tensor) -> Tensor:
    return Igamma.apply(self, _tensor_argument("igamma", "other", 1, other))


@tensor_method()
def igamma_(self, other: Tensor) -> Tensor:
    return self._inplace(Igamma, _tensor_argument("igamma_", "other", 1, other))


class Igammac(Igamma):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x) (``special.gammaincc``)."""

    node_name = "IgammacBackward0"
    sign = -1.0

    @staticmethod
    def forward(ctx, a, x):
        return Igamma._forward(ctx, a, x, True, "igammac")


@tensor_method(top_level=True)
def igammac(self, other: Tensor) -> Tensor:
    return Igammac.apply(self, _tensor_argument("igammac", "other", 1, other))


@tensor_method()
def igammac_(self, other: Tensor) -> Tensor:
    return self._inplace(Igammac, _tensor_argument("igammac_", "other", 1, other))


def _i1_64(x: np.ndarray) -> np.ndarray:
    """I₁(x) = Σₖ (x/2)^(2k+1) / (k! (k+1)!): terms of one sign, summed until they stop counting
    (about |x| of them; past |x| = 710, e^|x| overflows anyway: see ``_bessel``)."""
    half = np.where(np.abs(x) <= 710, np.abs(x) / 2, 0.0)
    term, total, k = half.copy(), half.copy(), 0
    while np.any(term > _EPS64 * total):
        k += 1
        term = term * half * half / (k * (k + 1))
        total = total + term
    return np.copysign(total, x)


def _bessel(fn, a: Tensor) -> Tensor:
    """i0 or i1 as PyTorch's kernels give them: computed as e^|x| times a series in the input's dtype,
    they are ±inf once e^|x| overflows that dtype (|x| > 88.7 in float32), and NaN at ±inf."""
    x = _float(a)
    limit = math.log(np.finfo(x.dtype).max)
    with np.errstate(all="ignore"):
        out = fn(x.astype(np.float64))
        out = np.where(np.abs(x) > limit, np.copysign(np.inf, out), out)
        return Tensor._wrap(np.where(np.isinf(x) | np.isnan(x), np.nan, out).astype(x.dtype, copy=False))


class Lgamma(Function):
    node_name = "LgammaBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _computed(_lgamma, a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * Digamma.apply(a)


@tensor_method(top_level=True)
def lgamma(self) -> Tensor:
    return Lgamma.apply(self)


@tensor_method()
def lgamma_(self) -> Tensor:
    return self._inplace(Lgamma)


class Digamma(Function):
    node_name = "DigammaBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _computed(_digamma, a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * Polygamma.apply(a, 1)


@tensor_method(top_level=True)
def digamma(self) -> Tensor:
    return Digamma.apply(self)


@tensor_method()
def digamma_(self) -> Tensor:
    return self._inplace(Digamma)


class Polygamma(Function):
    node_name = "PolygammaBackward0"

    @staticmethod
    def forward(ctx, a, n):
        ctx.save_for_backward(a)
        ctx.n = n
        return _computed(_polygamma_values, a, n)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * Polygamma.apply(a, ctx.n + 1), None


@tensor_method("polygamma")
def _polygamma(self, n: int) -> Tensor:
    """``x.polygamma(n)``: the n-th derivative of digamma (``minigrad.polygamma(n, x)`` puts n first)."""
    return Polygamma.apply(self, _order(n, "polygamma"))


class PolygammaInplace(Polygamma):
    """``x.polygamma_(n)``: PyTorch's in-place overload, a node of its own name."""

    node_name = "PolygammaBackward1"


@tensor_method()
def polygamma_(self, n: int) -> Tensor:
    return self._inplace(PolygammaInplace, _order(n, "polygamma"))


class Mvlgamma(Function):
    node_name = "MvlgammaBackward0"

    @staticmethod
    def forward(ctx, a, p):
        if a._data.dtype == np.bool_:
            raise RuntimeError("The input tensor may not be a boolean tensor: mvlgamma takes numbers, convert with .float()")
        x = _float(a)  # (PyTorch 2.13 no longer refuses x <= (p-1)/2, where it is not the multivariate gamma)
        ctx.save_for_backward(a)
        ctx.p = p
        # as PyTorch: x + (1-p)/2, ..., x - 1/2, x, their lgamma each in x's dtype, summed in that order
        shifted = x[..., None] + np.arange(-(p - 1) / 2, 0.5, 0.5).astype(x.dtype)
        terms = _lgamma(shifted.reshape(-1)).astype(x.dtype).reshape(shifted.shape)
        total = terms[..., 0].copy()
        for i in range(1, p):
            total += terms[..., i]
        return Tensor._wrap(total + x.dtype.type(p * (p - 1) / 4 * math.log(math.pi)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        slope = sum(Digamma.apply(a - i / 2) for i in reversed(range(ctx.p)))  # (PyTorch's order)
        return grad * slope, None


@tensor_method(top_level=True)
def mvlgamma(self, p: int) -> Tensor:
    return Mvlgamma.apply(self, _dimensions(p))


@tensor_method()
def mvlgamma_(self, p: int) -> Tensor:
    return self._inplace(Mvlgamma, _dimensions(p))


class I0(Function):
    node_name = "I0Backward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _bessel(np.i0, a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * I1.apply(a)


@tensor_method(top_level=True)
def i0(self) -> Tensor:
    return I0.apply(self)


@tensor_method(top_level=True)
def i0_(self) -> Tensor:
    return self._inplace(I0)


class I1(Function):
    """i0's derivative, PyTorch's ``special.i1``; its own derivative is i0(x) - i1(x)/x (1/2 at 0)."""

    node_name = "SpecialI1Backward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return _bessel(_i1_64, a)

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        at_zero = a._data == 0
        ratio = I1.apply(a) / Where.apply(at_zero, 1.0, a)
        return grad * Where.apply(at_zero, 0.5, I0.apply(a) - ratio)


def _order(n, name: str) -> int:
    n = integer(n, "n")
    if n < 0:
        raise RuntimeError(f"{name}(n, x) does not support negative n (got n={n}): n is the order of the derivative")
    return n


def _dimensions(p) -> int:
    p = integer(p, "p")
    if p < 1:
        raise RuntimeError(f"p has to be greater than or equal to 1 (got p={p}): it is the dimension of mvlgamma")
    return p


def polygamma(n: int, input: Tensor) -> Tensor:
    """``minigrad.polygamma(n, x)``, PyTorch's order of the arguments: ``x.polygamma(n)``."""
    check_tensor("polygamma", "input", 2, input)
    return _polygamma(input, n)
