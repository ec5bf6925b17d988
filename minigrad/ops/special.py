"""More elementwise math: log2, log10, square, erf, erfc, erfinv, logit, hypot, lerp, sgn,
clamp_min, clamp_max, minimum, fmax, fmin and true_divide.

The derivatives, each one line of calculus:

    log2'(x) = 1 / (x ln 2)     log10'(x) = 1 / (x ln 10)     square'(x) = 2x
    erf'(x) = 2/√π e^(-x²) = -erfc'(x)          erfinv'(y) = √π/2 e^(erfinv(y)²)
    logit(x) = ln(x / (1 - x)),  logit'(x) = 1 / (x (1 - x))  (0 outside [eps, 1 - eps] when eps clamps x)
    hypot(a, b) = √(a² + b²),  its gradient (a, b) / hypot(a, b)
    lerp(a, b, w) = a + w (b - a),  its gradient (1 - w, w, b - a)

The flat ones (sgn, and clamp_min / clamp_max / minimum / fmax / fmin away from their kinks)
pass the gradient to the input that gave the value; fmax and fmin ignore NaN, where minimum
propagates it. ``erf`` has no NumPy function: it is computed below from series accurate to
float64 rounding (no SciPy needed). Integer and bool inputs give the default float.
"""
from __future__ import annotations

import math

import numpy as np

from minigrad import dtypes
from minigrad.autograd.function import Function
from minigrad.ops.broadcast import broadcast_error, number, sum_to
from minigrad.ops.elementwise import Clamp, Div, Pow, Where, _binary, _float, _zero_where
from minigrad.ops.registry import tensor_method
from minigrad.ops.unary import Sign
from minigrad._tensor import Tensor, _argument, _tensor_argument


_TWO_OVER_SQRT_PI = 2 / math.sqrt(math.pi)


# -- erf, erfc and erfinv in NumPy -----------------------------------------------------------------
# erfc at 0.5, 0.75, ..., 3.0 (from mpmath, 40 digits), the centres of erfc's Taylor series below
_ERFC_NODES = np.array([
    0.4795001221869535, 0.28884436634648486, 0.15729920705028513, 0.07709987174354177, 0.033894853524689274,
    0.013328328780817557, 0.004677734981047266, 0.0014627165866811518, 0.0004069520174449589,
    0.00010062192211963683, 2.209049699858544e-05,
])


def _exp_minus_square(x: np.ndarray) -> np.ndarray:
    """e^(-x²) without the rounding of x² (which e^ would multiply by x², up to 700 ulps): with
    x = h + l, h of 24 bits, h² is exact and x² = h² + l (x + h)."""
    h = x.astype(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(x), 0.0, np.exp(-h * h) * np.exp(-(x - h) * (x + h)))


def _erf_series(x: np.ndarray) -> np.ndarray:
    """erf(x) = 2/√π e^(-x²) Σ 2ⁿ x^(2n+1) / (1·3···(2n+1)): terms of one sign, no cancellation (|x| < 2)."""
    x2 = x * x
    term, total = x.copy(), x.copy()
    n = 0
    while np.any(np.abs(term) > 1e-17 * np.abs(total)):
        n += 1
        term *= 2 * x2 / (2 * n + 1)
        total += term
    return _TWO_OVER_SQRT_PI * _exp_minus_square(x) * total


def _erfc_taylor(x: np.ndarray) -> np.ndarray:
    """erfc near the closest node x0 (|h| <= 1/8): the n-th derivative of erfc is
    -2/√π (-1)^(n-1) H_(n-1)(x) e^(-x²), with Hermite's H_(m+1) = 2x H_m - 2m H_(m-1)."""
    i = np.rint((x - 0.5) * 4).astype(np.intp)
    x0 = 0.5 + 0.25 * i
    h = x - x0
    h_prev, h_now = np.zeros_like(x), np.ones_like(x)  # H_(-1) (unused), H_0
    power, total = np.ones_like(x), np.zeros_like(x)  # (-1)^(n-1) h^n / n!, the sum
    for n in range(1, 30):
        power = power * h / n * (1 if n == 1 else -1)
        total += power * h_now
        h_prev, h_now = h_now, 2 * x0 * h_now - 2 * (n - 1) * h_prev
    return _ERFC_NODES[i] - _TWO_OVER_SQRT_PI * np.exp(-x0 * x0) * total


def _erfc_fraction(x: np.ndarray) -> np.ndarray:
    """erfc(x) = e^(-x²)/√π / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))): converged after 40 terms from x = 3."""
    f = x.copy()
    for k in range(40, 0, -1):
        f = x + (k / 2) / f
    return _exp_minus_square(x) / math.sqrt(math.pi) / f


def _erfc_positive(x: np.ndarray) -> np.ndarray:
    """erfc(x) for x >= 0.5, to a few ulps."""
    out = np.empty_like(x)
    near = x < 3.125
    out[near] = _erfc_taylor(x[near])
    out[~near] = _erfc_fraction(x[~near])
    return out


def _in_float64(fn, x: np.ndarray) -> np.ndarray:
    """``fn`` on float64 values (float32 too: then rounded once), NaN kept."""
    x64 = x.astype(np.float64)
    out = np.full_like(x64, np.nan)
    ok = ~np.isnan(x64)
    out[ok] = fn(x64[ok])
    return out.astype(x.dtype, copy=False)


def _erf64(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    small = np.abs(x) < 2
    out[small] = _erf_series(x[small])
    big = x[~small]
    out[~small] = np.copysign(1 - _erfc_positive(np.abs(big)), big)
    return out


def _erfc64(x: np.ndarray) -> np.ndarray:
    out = np.empty_like(x)
    small = np.abs(x) < 0.5
    out[small] = 1 - _erf_series(x[small])
    high = x >= 0.5
    out[high] = _erfc_positive(x[high])
    low = x <= -0.5
    out[low] = 2 - _erfc_positive(-x[low])
    return out


def _erfinv64(y: np.ndarray) -> np.ndarray:
    """Winitzki's closed form (within 2e-3), then three of Halley's steps on erf(x) = y; in the
    tails the residual is erfc(x) - (1 - |y|), whose 1 - |y| is exact, so no digit is lost there."""
    a = np.abs(y)
    with np.errstate(divide="ignore", invalid="ignore"):
        log = np.log1p(-a * a)
        c = 2 / (math.pi * 0.147) + log / 2
        x = np.sqrt(np.sqrt(c * c - log / 0.147) - c)
        tail = a > 0.5
        for _ in range(3):
            residual = np.where(tail, (1 - a) - _erfc64(np.where(tail, x, 1.0)), _erf64(np.where(tail, 0.0, x)) - a)
            slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
            step = residual / slope
            x = np.where(np.isfinite(step), x - step / (1 + x * step), x)
    x = np.where(a == 1, np.inf, np.where(a > 1, np.nan, x))
    return np.copysign(x, y)


class Log2(Function):
    node_name = "Log2Backward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Tensor._wrap(np.log2(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (a * math.log(2))


@tensor_method(top_level=True)
def log2(self) -> Tensor:
    return Log2.apply(self)


@tensor_method(top_level=True)
def log2_(self) -> Tensor:
    return self._inplace(Log2)


class Log10(Function):
    node_name = "Log10Backward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Tensor._wrap(np.log10(_float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad / (a * math.log(10))


@tensor_method(top_level=True)
def log10(self) -> Tensor:
    return Log10.apply(self)


@tensor_method(top_level=True)
def log10_(self) -> Tensor:
    return self._inplace(Log10)


class Erf(Function):
    node_name = "ErfBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(_in_float64(_erf64, _float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * (-(a * a)).exp() * _TWO_OVER_SQRT_PI


@tensor_method(top_level=True)
def erf(self) -> Tensor:
    return Erf.apply(self)


@tensor_method(top_level=True)
def erf_(self) -> Tensor:
    return self._inplace(Erf)


class Erfc(Function):
    node_name = "ErfcBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(_in_float64(_erfc64, _float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        return grad * (-(a * a)).exp() * -_TWO_OVER_SQRT_PI


@tensor_method(top_level=True)
def erfc(self) -> Tensor:
    return Erfc.apply(self)


@tensor_method(top_level=True)
def erfc_(self) -> Tensor:
    return self._inplace(Erfc)


class Erfinv(Function):
    node_name = "ErfinvBackward0"

    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return Tensor._wrap(_in_float64(_erfinv64, _float(a)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        x = Erfinv.apply(a)
        return grad * (x * x).exp() * (math.sqrt(math.pi) / 2)


@tensor_method(top_level=True)
def erfinv(self) -> Tensor:
    return Erfinv.apply(self)


@tensor_method()
def erfinv_(self) -> Tensor:
    return self._inplace(Erfinv)


class Logit(Function):
    node_name = "LogitBackward0"

    @staticmethod
    def forward(ctx, a, eps=None):
        ctx.save_for_backward(a)
        ctx.eps = eps
        x = _float(a)
        if eps is not None:  # (eps first, as PyTorch: with eps > 0.5 the low bound wins)
            x = np.where(x < eps, eps, np.where(x > 1 - eps, 1 - eps, x)).astype(x.dtype, copy=False)
        with np.errstate(divide="ignore", invalid="ignore"):
            return Tensor._wrap(np.log(x / (1 - x)))

    @staticmethod
    def backward(ctx, grad):
        a, = ctx.saved_tensors
        eps = ctx.eps
        spread = a * (1 - a)
        slope = grad / Where.apply(a._data == 0, 0.0, spread)  # (+0 at -0 too: +inf, as in PyTorch)
        if eps is None:
            return Where.apply((a._data < 0) | (a._data > 1), np.nan, slope), None
        return _zero_where((a._data < eps) | (a._data > 1 - eps), slope), None


@tensor_method(top_level=True)
def logit(self, eps: float | None = None) -> Tensor:
    return Logit.apply(self, eps if eps is None else float(number(eps, "eps")))


@tensor_method(top_level=True)
def logit_(self, eps: float | None = None) -> Tensor:
    return self._inplace(Logit, eps if eps is None else float(number(eps, "eps")))


class Hypot(Function):
    node_name = "HypotBackward0"

    @staticmethod
    def forward(ctx, a, b):
        out = _binary(np.hypot, a, b)
        if out._data.dtype.kind != "f":
            raise NotImplementedError(f"\"hypot_cpu\" not implemented for "
                                      f"'{dtypes.scalar_type_name(out._data.dtype)}': "
                                      "convert the tensors with .float() first")
        ctx.save_for_backward(a, b, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, b, out = ctx.saved_tensors
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(grad * a / out, a.shape) if need_a else None,
                sum_to(grad * b / out, b.shape) if need_b else None)


@tensor_method(top_level=True)
def hypot(self, other: Tensor) -> Tensor:
    return Hypot.apply(self, _tensor_argument("hypot", "other", 1, other))


@tensor_method()
def hypot_(self, other: Tensor) -> Tensor:
    return self._inplace(Hypot, _tensor_argument("hypot_", "other", 1, other))


class Lerp(Function):
    """``start + weight * (end - start)``, computed as PyTorch does: from ``end`` when
    weight >= 0.5, so that lerp(a, b, 1) is exactly b."""

    node_name = "LerpBackward0"

    @staticmethod
    def forward(ctx, start, end, weight):
        s, e, w = start._data, end._data, weight._data if isinstance(weight, Tensor) else weight
        # (a 0-d weight tensor of any dtype is taken as a number would be, as in PyTorch)
        if s.dtype != e.dtype or (isinstance(weight, Tensor) and w.dtype != s.dtype and w.ndim):
            other, name = (e, "end") if s.dtype != e.dtype else (w, "weight")
            raise RuntimeError(f"expected dtype {dtypes.scalar_type_name(s.dtype)} for `{name}` but got dtype "
                               f"{dtypes.scalar_type_name(other.dtype)}: convert it with .to(start.dtype)")
        if s.dtype.kind != "f":
            raise NotImplementedError(f"\"lerp_kernel\" not implemented for "
                                      f"'{dtypes.scalar_type_name(s.dtype)}': "
                                      "convert the tensors with .float() first")
        try:
            shape = np.broadcast_shapes(s.shape, e.shape)
        except ValueError:
            raise broadcast_error(s.shape, e.shape) from None
        try:
            shape = np.broadcast_shapes(shape, np.shape(w))
        except ValueError:
            raise broadcast_error(shape, np.shape(w)) from None
        with np.errstate(invalid="ignore", over="ignore"):
            out = np.where(np.abs(w) < 0.5, s + w * (e - s), e - (e - s) * (1 - w))
        if isinstance(weight, Tensor):
            ctx.save_for_backward(start, end, weight)
        ctx.weight, ctx.shapes = weight, (s.shape, e.shape)
        return Tensor._wrap(np.broadcast_to(out, shape).astype(s.dtype, copy=True))

    @staticmethod
    def backward(ctx, grad):  # (a number weight: nothing saved, as in PyTorch)
        start, end, w = ctx.saved_tensors if ctx.saved_tensors else (None, None, ctx.weight)
        need_start, need_end, need_weight = ctx.needs_input_grad
        return (sum_to(grad * (1 - w), ctx.shapes[0]) if need_start else None,
                sum_to(grad * w, ctx.shapes[1]) if need_end else None,
                sum_to(grad * (end - start), w.shape) if need_weight else None)


class LerpTensor(Lerp):
    """A tensor weight: PyTorch names this overload's node LerpBackward1."""

    node_name = "LerpBackward1"


class Sgn(Sign):
    """The sign, and for complex numbers z / |z| (minigrad has none): PyTorch names its node apart."""

    node_name = "SgnBackward0"


@tensor_method(top_level=True)
def sgn(self) -> Tensor:
    return Sgn.apply(self)


@tensor_method()
def sgn_(self) -> Tensor:
    return self._inplace(Sgn)


class ClampMin(Clamp):
    node_name = "ClampMinBackward0"


class ClampMax(Clamp):
    node_name = "ClampMaxBackward0"


def _pick_forward(ctx, a: Tensor, b: Tensor, a_picked, nan_wins: bool) -> Tensor:
    """``a`` where ``a_picked(a, b)``, else ``b`` (so ``a`` on ties: the sign of a zero is PyTorch's);
    NaN where either is NaN if ``nan_wins``."""
    ctx.save_for_backward(a, b)
    with np.errstate(invalid="ignore"):
        return _binary(lambda x, y: np.where((a_picked(x, y) | nan_wins & np.isnan(x)) & ~(nan_wins & np.isnan(y)), x, y), a, b)


def _pick_backward(ctx, grad: Tensor, to_a: np.ndarray, to_b: np.ndarray | None = None) -> tuple:
    """The gradient to ``a`` where ``to_a``, to ``b`` where ``to_b`` (default: elsewhere)."""
    a, b = ctx.saved_tensors
    need_a, need_b = ctx.needs_input_grad
    return (sum_to(_zero_where(~to_a, grad), a.shape) if need_a else None,
            sum_to(_zero_where(to_a if to_b is None else ~to_b, grad), b.shape) if need_b else None)


def _at_least_or_nan(x, y):
    return (x >= y) | np.isnan(y)


def _at_most_or_nan(x, y):
    return (x <= y) | np.isnan(y)


class ClampMinTensor(Function):
    """``max(a, bound)`` with a tensor bound: the gradient goes to ``a`` where it is kept
    (ties included), to the bound elsewhere."""

    node_name = "ClampMinBackward1"

    @staticmethod
    def forward(ctx, a, bound):
        return _pick_forward(ctx, a, bound, np.greater_equal, nan_wins=True)

    @staticmethod
    def backward(ctx, grad):
        a, bound = ctx.saved_tensors
        return _pick_backward(ctx, grad, a._data >= bound._data, a._data < bound._data)  # (NaN: neither)


class ClampMaxTensor(Function):
    node_name = "ClampMaxBackward1"

    @staticmethod
    def forward(ctx, a, bound):
        return _pick_forward(ctx, a, bound, np.less_equal, nan_wins=True)

    @staticmethod
    def backward(ctx, grad):
        a, bound = ctx.saved_tensors
        return _pick_backward(ctx, grad, a._data <= bound._data, a._data > bound._data)


class Minimum(Function):
    node_name = "MinimumBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _pick_forward(ctx, a, b, np.less_equal, nan_wins=True)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        x, y = a._data, b._data
        # As PyTorch: ties share the gradient, the larger operand gets 0, NaN passes it to both
        shared = Where.apply(x == y, grad / 2, grad)
        need_a, need_b = ctx.needs_input_grad
        return (sum_to(_zero_where(x > y, shared), a.shape) if need_a else None,
                sum_to(_zero_where(x < y, shared), b.shape) if need_b else None)


@tensor_method(top_level=True)
def minimum(self, other: Tensor) -> Tensor:
    return Minimum.apply(self, _tensor_argument("minimum", "other", 1, other))


class Fmax(Function):
    """The larger value, NaN ignored (NaN only where both are): ``a`` gets the gradient where it is
    picked (ties included, or ``b`` is NaN), ``b`` elsewhere."""

    node_name = "FmaxBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _pick_forward(ctx, a, b, _at_least_or_nan, nan_wins=False)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _pick_backward(ctx, grad, _at_least_or_nan(a._data, b._data))


@tensor_method(top_level=True)
def fmax(self, other: Tensor) -> Tensor:
    return Fmax.apply(self, _tensor_argument("fmax", "other", 1, other))


class Fmin(Function):
    node_name = "FminBackward0"

    @staticmethod
    def forward(ctx, a, b):
        return _pick_forward(ctx, a, b, _at_most_or_nan, nan_wins=False)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return _pick_backward(ctx, grad, _at_most_or_nan(a._data, b._data))


@tensor_method(top_level=True)
def fmin(self, other: Tensor) -> Tensor:
    return Fmin.apply(self, _tensor_argument("fmin", "other", 1, other))


def _lerp(start: Tensor, end, weight):
    end = _tensor_argument("lerp", "other", 1, end)
    if isinstance(weight, Tensor):
        return LerpTensor, (start, end, weight)
    return Lerp, (start, end, number(weight, "weight"))


def _clamp_bound(name: str, a: Tensor, bound):
    """The Function and arguments of clamp_min / clamp_max for a number or a tensor bound."""
    if isinstance(bound, Tensor):
        return (ClampMinTensor if name == "min" else ClampMaxTensor), (bound,)
    bound = number(bound, name)
    if a._data.dtype == np.bool_ and isinstance(bound, bool):
        raise NotImplementedError(f"\"clamp_{name}_scalar_cpu\" not implemented for 'Bool': convert with .int() first")
    return (ClampMin, (bound, None)) if name == "min" else (ClampMax, (None, bound))


@tensor_method(top_level=True)
def square(self) -> Tensor:
    """``self ** 2``, as PyTorch computes it (a PowBackward0 node; integers stay integers)."""
    return Pow.apply(self, 2)


@tensor_method(top_level=True)
def lerp(self, end: Tensor, weight) -> Tensor:
    op, args = _lerp(self, end, weight)
    return op.apply(*args)


@tensor_method(top_level=True)
def clamp_min(self, min) -> Tensor:  # noqa: A002 - PyTorch's keyword
    op, args = _clamp_bound("min", self, min)
    return op.apply(self, *args)


@tensor_method(top_level=True)
def clamp_max(self, max) -> Tensor:  # noqa: A002 - PyTorch's keyword
    op, args = _clamp_bound("max", self, max)
    return op.apply(self, *args)


@tensor_method(top_level=True)
def true_divide(self, other) -> Tensor:
    """``self / other``: PyTorch's older name for ``div``."""
    return Div.apply(self, _argument("true_divide", other))


@tensor_method(top_level=True)
def square_(self) -> Tensor:
    return self._inplace(Pow, 2)


@tensor_method()
def lerp_(self, end: Tensor, weight) -> Tensor:
    op, args = _lerp(self, end, weight)
    return self._inplace(op, *args[1:])


@tensor_method(top_level=True)
def clamp_min_(self, min) -> Tensor:  # noqa: A002
    op, args = _clamp_bound("min", self, min)
    return self._inplace(op, *args)


@tensor_method(top_level=True)
def clamp_max_(self, max) -> Tensor:  # noqa: A002
    op, args = _clamp_bound("max", self, max)
    return self._inplace(op, *args)


@tensor_method()
def true_divide_(self, other) -> Tensor:
    return self._inplace(Div, _argument("true_divide_", other))
