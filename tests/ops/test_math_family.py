"""Elementwise math PyTorch has beyond the basics: inverse trigonometry (ops/inverse_trig.py),
logarithms in other bases, the error function and friends (ops/special.py), and the predicates
isnan ... with logical_and ... and nan_to_num (ops/predicates.py).

Each op runs through the checks of tests/ops/test_creation_and_devices.py: gradcheck and gradgradcheck in
float64; values, gradients, dtypes, shapes and node names against PyTorch in float64 and
float32; a second backward and an in-place change before backward failing exactly where
PyTorch's do. Then, generated rather than picked: every op on a grid of special values
(±0, ±1, ±inf, NaN, and points out of each domain), every input dtype, and bad input
against PyTorch's exception type.
"""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck
from tests.ops.test_creation_and_devices import (
    backward_twice, change_then_backward, needs_torch, outputs, raised, run, tolerance, torch,
)

INF, NAN = float("inf"), float("nan")


def uniform(low, high):
    return lambda rng, *shape: rng.uniform(low, high, shape)


normal = lambda rng, *shape: rng.standard_normal(shape)  # noqa: E731
inside = uniform(-0.9, 0.9)  # asin, acos, atanh: away from the poles at ±1
above_one = uniform(1.2, 3.0)  # acosh
positive = uniform(0.3, 3.0)  # log2, log10
unit = uniform(0.1, 0.9)  # logit
weight = uniform(-0.5, 1.5)  # lerp: both of its formulas (weight below and above 0.5)


def distinct(rng, *shape):
    """Values 0.1 or more apart, in both signs, none near 0: no ties, no kinks."""
    n = int(np.prod(shape, dtype=np.int64))
    return ((rng.permutation(n) - (n - 1) // 2) * 0.2 + 0.1 + rng.uniform(-0.02, 0.02, n)).reshape(shape)


def with_specials(rng, *shape):
    """Normal values with NaN, +inf and -inf among them (nan_to_num's input)."""
    x = rng.standard_normal(shape)
    x.reshape(-1)[:3] = [NAN, INF, -INF][:x.size]
    return x


def interleaved(rng, *shape):
    """distinct() shifted by 0.1: against distinct() values, no two are within 0.08 of each other."""
    return distinct(rng, *shape) + 0.1


# Each case: (fn(L, *inputs), input makers with shapes). fn returns a tensor or a tuple.
CASES = {
    "asin": (lambda L, x: x.asin(), [(inside, (2, 3))]),
    "arcsin_fn": (lambda L, x: L.arcsin(x), [(inside, (4,))]),
    "acos": (lambda L, x: L.acos(x), [(inside, (2, 3))]),
    "arccos": (lambda L, x: x.arccos(), [(inside, ())]),
    "atan": (lambda L, x: x.atan(), [(normal, (2, 3))]),
    "arctan_fn": (lambda L, x: L.arctan(x), [(normal, (3,))]),
    "asinh": (lambda L, x: x.asinh(), [(normal, (2, 3))]),
    "arcsinh_fn": (lambda L, x: L.arcsinh(x), [(normal, (3,))]),
    "acosh": (lambda L, x: L.acosh(x), [(above_one, (2, 3))]),
    "arccosh": (lambda L, x: x.arccosh(), [(above_one, (3,))]),
    "atanh": (lambda L, x: x.atanh(), [(inside, (2, 3))]),
    "arctanh_fn": (lambda L, x: L.arctanh(x), [(inside, (3,))]),
    "asin_empty": (lambda L, x: x.asin(), [(inside, (0, 3))]),
    "atan2": (lambda L, y, x: y.atan2(x), [(normal, (2, 3)), (normal, (2, 3))]),
    "atan2_fn": (lambda L, y, x: L.atan2(y, x), [(normal, (2, 3)), (normal, (3,))]),
    "atan2_broadcast_both": (lambda L, y, x: L.arctan2(y, x), [(normal, (2, 1)), (normal, (1, 3))]),
    "arctan2_0d": (lambda L, y, x: y.arctan2(x), [(normal, ()), (normal, (2,))]),
    "log2": (lambda L, x: x.log2(), [(positive, (2, 3))]),
    "log10_fn": (lambda L, x: L.log10(x), [(positive, (2, 3))]),
    "square": (lambda L, x: x.square(), [(normal, (2, 3))]),
    "square_fn": (lambda L, x: L.square(x), [(normal, ())]),
    "erf": (lambda L, x: x.erf(), [(normal, (2, 3))]),
    "erf_wide": (lambda L, x: L.erf(x * 3), [(normal, (4, 5))]),
    "erfc": (lambda L, x: L.erfc(x), [(normal, (2, 3))]),
    "erfc_wide": (lambda L, x: (x * 3).erfc(), [(normal, (4, 5))]),
    "erfinv": (lambda L, x: x.erfinv(), [(inside, (2, 3))]),
    "erfinv_fn": (lambda L, x: L.erfinv(x), [(uniform(-0.99, 0.99), (4, 5))]),
    "logit": (lambda L, x: x.logit(), [(unit, (2, 3))]),
    "logit_eps": (lambda L, x: L.logit(x, 0.2), [(distinct, (2, 3))]),
    "logit_eps_keyword": (lambda L, x: x.logit(eps=0.05), [(unit, (3,))]),
    "hypot": (lambda L, a, b: a.hypot(b), [(normal, (2, 3)), (normal, (2, 3))]),
    "hypot_broadcast": (lambda L, a, b: L.hypot(a, b), [(normal, (2, 1)), (normal, (3,))]),
    "lerp_number": (lambda L, a, b: a.lerp(b, 0.3), [(normal, (2, 3)), (normal, (2, 3))]),
    "lerp_number_high": (lambda L, a, b: L.lerp(a, b, 0.75), [(normal, (2, 3)), (normal, (3,))]),
    "lerp_tensor": (lambda L, a, b, w: L.lerp(a, b, w), [(normal, (2, 3)), (normal, (2, 3)), (weight, (2, 3))]),
    "lerp_tensor_broadcast": (lambda L, a, b, w: a.lerp(b, w), [(normal, (2, 1)), (normal, (3,)), (weight, (2, 3))]),
    "lerp_weight_broadcast": (lambda L, a, b, w: a.lerp(b, weight=w), [(normal, (2, 3)), (normal, (2, 3)), (weight, (3,))]),
    "sgn": (lambda L, x: x.sgn() * x, [(distinct, (2, 3))]),
    "clamp_min": (lambda L, x: x.clamp_min(0.15), [(distinct, (2, 3))]),
    "clamp_max_fn": (lambda L, x: L.clamp_max(x, -0.15), [(distinct, (2, 3))]),
    "clamp_min_tensor": (lambda L, x, m: x.clamp_min(m), [(distinct, (2, 3)), (interleaved, (2, 3))]),
    "clamp_max_tensor": (lambda L, x, m: L.clamp_max(x, m), [(distinct, (2, 3)), (interleaved, (3,))]),
    "clamp_min_tensor_bigger": (lambda L, x, m: L.clamp_min(x, min=m), [(distinct, (3,)), (interleaved, (2, 3))]),
    "minimum": (lambda L, a, b: a.minimum(b), [(distinct, (2, 3)), (interleaved, (2, 3))]),
    "minimum_fn": (lambda L, a, b: L.minimum(a, b), [(distinct, (2, 3)), (interleaved, (3,))]),
    "fmax": (lambda L, a, b: a.fmax(b), [(distinct, (2, 3)), (interleaved, (2, 3))]),
    "fmax_fn": (lambda L, a, b: L.fmax(a, b), [(distinct, (2, 1)), (interleaved, (3,))]),
    "fmin": (lambda L, a, b: L.fmin(a, b), [(distinct, (2, 3)), (interleaved, (2, 3))]),
    "fmin_method": (lambda L, a, b: a.fmin(b), [(distinct, ()), (interleaved, (3,))]),
    "true_divide": (lambda L, a, b: a.true_divide(b), [(normal, (2, 3)), (positive, (2, 3))]),
    "true_divide_broadcast": (lambda L, a, b: a.true_divide(b), [(normal, (2, 3)), (positive, (3,))]),
    "true_divide_number": (lambda L, a: a.true_divide(4.0), [(normal, (2, 3))]),
    "nan_to_num": (lambda L, x: x.nan_to_num(), [(with_specials, (2, 3))]),
    "nan_to_num_values": (lambda L, x: L.nan_to_num(x, 1.5, 2.0, -3.0), [(with_specials, (2, 3))]),
    "nan_to_num_keywords": (lambda L, x: x.nan_to_num(posinf=4.0, neginf=None), [(with_specials, (4,))]),
    "nan_to_num_finite": (lambda L, x: L.nan_to_num(x), [(normal, (2, 3))]),
    # in place, on a non-leaf
    "asin_": (lambda L, x: (x * 1).asin_(), [(inside, (2, 3))]),
    "arccos_": (lambda L, x: L.arccos_(x * 1), [(inside, (2, 3))]),
    "atan_": (lambda L, x: (x * 1).atan_(), [(normal, (3,))]),
    "asinh_": (lambda L, x: (x * 1).asinh_(), [(normal, (3,))]),
    "acosh_": (lambda L, x: (x * 1).acosh_(), [(above_one, (3,))]),
    "arctanh_": (lambda L, x: (x * 1).arctanh_(), [(inside, (3,))]),
    "atan2_": (lambda L, y, x: (y * 1).atan2_(x), [(normal, (2, 3)), (normal, (3,))]),
    "arctan2_": (lambda L, y, x: (y * 1).arctan2_(x), [(normal, (2, 3)), (normal, (2, 3))]),
    "log2_": (lambda L, x: (x * 1).log2_(), [(positive, (2, 3))]),
    "log10_": (lambda L, x: L.log10_(x * 1), [(positive, (3,))]),
    "square_": (lambda L, x: L.square_(x * 1), [(normal, (2, 3))]),
    "erf_": (lambda L, x: (x * 1).erf_(), [(normal, (3,))]),
    "erfc_": (lambda L, x: L.erfc_(x * 1), [(normal, (3,))]),
    "erfinv_": (lambda L, x: (x * 1).erfinv_(), [(inside, (3,))]),
    "logit_": (lambda L, x: (x * 1).logit_(), [(unit, (3,))]),
    "logit_eps_": (lambda L, x: L.logit_(x * 1, 0.2), [(distinct, (2, 3))]),
    "hypot_": (lambda L, a, b: (a * 1).hypot_(b), [(normal, (2, 3)), (normal, (3,))]),
    "lerp_": (lambda L, a, b: (a * 1).lerp_(b, 0.6), [(normal, (2, 3)), (normal, (2, 3))]),
    "lerp_tensor_": (lambda L, a, b, w: (a * 1).lerp_(b, w), [(normal, (2, 3)), (normal, (3,)), (weight, (2, 3))]),
    "sgn_": (lambda L, x: (x * 1).sgn_() * x, [(distinct, (2, 3))]),
    "clamp_min_": (lambda L, x: (x * 1).clamp_min_(0.15), [(distinct, (2, 3))]),
    "clamp_max_": (lambda L, x: L.clamp_max_(x * 1, 0.15), [(distinct, (2, 3))]),
    "clamp_min_tensor_": (lambda L, x, m: (x * 1).clamp_min_(m), [(distinct, (2, 3)), (interleaved, (3,))]),
    "clamp_max_tensor_": (lambda L, x, m: L.clamp_max_(x * 1, m), [(distinct, (2, 3)), (interleaved, (2, 3))]),
    "true_divide_": (lambda L, a, b: (a * 1).true_divide_(b), [(normal, (2, 3)), (positive, (3,))]),
    "nan_to_num_": (lambda L, x: (x * 1).nan_to_num_(neginf=-2.0), [(with_specials, (2, 3))]),
    "nan_to_num_fn_": (lambda L, x: L.nan_to_num_(x * 1, 0.5), [(with_specials, (3,))]),
    # PyTorch's second names, rounding division, sinc, degrees, log-sums, a float's parts, the gamma family
    "multiply": (lambda L, a, b: L.multiply(a, b), [(normal, (2, 3)), (normal, (3,))]),
    "subtract": (lambda L, a, b: a.subtract(b), [(normal, (2, 3)), (normal, (2, 1))]),
    "divide": (lambda L, a, b: L.divide(a, b), [(normal, (2, 3)), (positive, (3,))]),
    "divide_trunc": (lambda L, a, b: a.divide(b, rounding_mode="trunc") * a, [(normal, (2, 3)), (positive, (3,))]),
    "div_floor_number": (lambda L, a: L.div(a, 0.3, rounding_mode="floor") * a, [(normal, (2, 3))]),
    "negative": (lambda L, x: x.negative(), [(normal, (2, 3))]),
    "absolute": (lambda L, x: L.absolute(x), [(distinct, (2, 3))]),
    "positive": (lambda L, x: L.positive(x) * x, [(normal, (3,))]),
    "fix": (lambda L, x: x.fix() * x, [(distinct, (2, 3))]),
    "sinc": (lambda L, x: x.sinc(), [(normal, (2, 3))]),
    "sinc_wide": (lambda L, x: L.sinc(x * 4), [(distinct, (4, 5))]),
    "deg2rad": (lambda L, x: x.deg2rad(), [(normal, (2, 3))]),
    "rad2deg": (lambda L, x: L.rad2deg(x), [(normal, (3,))]),
    "logaddexp": (lambda L, a, b: a.logaddexp(b), [(normal, (2, 3)), (normal, (2, 3))]),
    "logaddexp_broadcast": (lambda L, a, b: L.logaddexp(a * 30, b * 30), [(normal, (2, 1)), (normal, (3,))]),
    "logaddexp2": (lambda L, a, b: L.logaddexp2(a, b), [(normal, (2, 3)), (normal, (3,))]),
    "xlogy": (lambda L, a, b: a.xlogy(b), [(normal, (2, 3)), (positive, (2, 3))]),
    "xlogy_broadcast": (lambda L, a, b: L.xlogy(a, b), [(normal, (3,)), (positive, (2, 1))]),
    "xlogy_number": (lambda L, a: a.xlogy(2.5), [(normal, (2, 3))]),
    "xlogy_number_first": (lambda L, b: L.xlogy(3, b), [(positive, (2, 3))]),
    "float_power": (lambda L, a, b: a.float_power(b), [(positive, (2, 3)), (normal, (3,))]),
    "float_power_number": (lambda L, a: L.float_power(a, 3), [(normal, (2, 3))]),
    "float_power_number_first": (lambda L, b: L.float_power(2, b), [(normal, (2, 3))]),
    "copysign": (lambda L, a, b: a.copysign(b), [(distinct, (2, 3)), (distinct, (2, 3))]),
    "copysign_number": (lambda L, a: L.copysign(a, -2.0), [(distinct, (2, 3))]),
    "ldexp": (lambda L, a, e: L.ldexp(a, e), [(normal, (2, 3)), (normal, (3,))]),
    "frexp": (lambda L, x: x.frexp(), [(distinct, (2, 3))]),
    "frexp_fn": (lambda L, x: L.frexp(x * 100), [(distinct, (4,))]),
    "angle": (lambda L, x: x.angle() * x, [(distinct, (2, 3))]),
    "lgamma": (lambda L, x: x.lgamma(), [(uniform(0.2, 6.0), (2, 3))]),
    "lgamma_negative": (lambda L, x: L.lgamma(x), [(uniform(-2.9, -2.1), (3,))]),
    "digamma": (lambda L, x: x.digamma(), [(uniform(0.2, 12.0), (2, 3))]),
    "digamma_negative": (lambda L, x: L.digamma(x), [(uniform(-3.9, -3.1), (3,))]),
    "polygamma_1": (lambda L, x: x.polygamma(1), [(uniform(0.2, 12.0), (2, 3))]),
    "polygamma_2_fn": (lambda L, x: L.polygamma(2, x), [(uniform(0.3, 12.0), (2, 3))]),
    "polygamma_3_negative": (lambda L, x: L.polygamma(3, x), [(uniform(-1.9, -1.1), (3,))]),
    "polygamma_0": (lambda L, x: x.polygamma(0), [(uniform(0.2, 5.0), (3,))]),
    "mvlgamma": (lambda L, x: x.mvlgamma(3), [(uniform(1.2, 5.0), (2, 3))]),
    "mvlgamma_fn": (lambda L, x: L.mvlgamma(x, p=1), [(uniform(0.2, 5.0), (3,))]),
    "mvlgamma_below_domain": (lambda L, x: x.mvlgamma(2), [(uniform(0.1, 0.4), (3,))]),
    "i0": (lambda L, x: x.i0(), [(normal, (2, 3))]),
    "i0_wide": (lambda L, x: L.i0(x * 10), [(normal, (4, 5))]),
    "multiply_": (lambda L, a, b: (a * 1).multiply_(b), [(normal, (2, 3)), (normal, (3,))]),
    "subtract_": (lambda L, a, b: (a * 1).subtract_(b, alpha=0.5), [(normal, (2, 3)), (normal, (2, 3))]),
    "divide_": (lambda L, a, b: (a * 1).divide_(b), [(normal, (2, 3)), (positive, (3,))]),
    "divide_floor_": (lambda L, a, b: (a * 1).divide_(b, rounding_mode="floor") * a, [(normal, (2, 3)), (positive, (3,))]),
    "negative_": (lambda L, x: L.negative_(x * 1), [(normal, (3,))]),
    "absolute_": (lambda L, x: (x * 1).absolute_(), [(distinct, (3,))]),
    "clip_": (lambda L, x: L.clip_(x * 1, -0.3, 0.5), [(distinct, (2, 3))]),
    "floor_": (lambda L, x: L.floor_(x * 1) * x, [(distinct, (2, 3))]),
    "ceil_": (lambda L, x: (x * 1).ceil_() * x, [(distinct, (3,))]),
    "round_": (lambda L, x: L.round_(x * 1) * x, [(distinct, (2, 3))]),
    "round_decimals_": (lambda L, x: (x * 1).round_(decimals=1) * x, [(distinct, (3,))]),
    "trunc_": (lambda L, x: (x * 1).trunc_() * x, [(distinct, (3,))]),
    "fix_": (lambda L, x: L.fix_(x * 1) * x, [(distinct, (3,))]),
    "frac_": (lambda L, x: L.frac_(x * 1), [(distinct, (2, 3))]),
    "reciprocal_": (lambda L, x: L.reciprocal_(x * 1), [(positive, (2, 3))]),
    "rsqrt_": (lambda L, x: (x * 1).rsqrt_(), [(positive, (3,))]),
    "exp2_": (lambda L, x: L.exp2_(x * 1), [(normal, (3,))]),
    "sinc_": (lambda L, x: L.sinc_(x * 1), [(normal, (2, 3))]),
    "deg2rad_": (lambda L, x: (x * 1).deg2rad_(), [(normal, (3,))]),
    "rad2deg_": (lambda L, x: L.rad2deg_(x * 1), [(normal, (3,))]),
    "cumsum_": (lambda L, x: (x * 1).cumsum_(1), [(normal, (2, 3))]),
    "cumprod_": (lambda L, x: (x * 1).cumprod_(0), [(normal, (3, 2))]),
    "remainder_": (lambda L, a, b: (a * 1).remainder_(b), [(normal, (2, 3)), (positive, (3,))]),
    "remainder_number_": (lambda L, a: (a * 1).remainder_(0.7), [(normal, (3,))]),
    "fmod_": (lambda L, a, b: (a * 1).fmod_(b), [(normal, (2, 3)), (positive, (2, 3))]),
    "eq_": (lambda L, a, b: (a * 1).eq_(b) * a, [(distinct, (2, 3)), (interleaved, (2, 3))]),
    "lt_number_": (lambda L, a: (a * 1).lt_(0.05) * a, [(distinct, (2, 3))]),
    "greater_equal_": (lambda L, a, b: (a * 1).greater_equal_(b) * a, [(distinct, (2, 3)), (interleaved, (3,))]),
    "not_equal_": (lambda L, a, b: (a * 1).not_equal_(b) + a, [(distinct, (3,)), (interleaved, (3,))]),
    "xlogy_": (lambda L, a, b: L.xlogy_(a * 1, b), [(normal, (2, 3)), (positive, (3,))]),
    "copysign_": (lambda L, a, b: (a * 1).copysign_(b), [(distinct, (2, 3)), (normal, (3,))]),
    "nextafter": (lambda L, a, b: a.nextafter(b), [(normal, (2, 3)), (normal, (3,))]),
    "nextafter_": (lambda L, a, b: L.nextafter(a, b) * (a * 1).nextafter_(b), [(normal, (2, 3)), (normal, (2, 3))]),
    "ldexp_": (lambda L, a, e: L.ldexp_(a * 1, e), [(normal, (2, 3)), (normal, (2, 3))]),
    "lgamma_": (lambda L, x: (x * 1).lgamma_(), [(uniform(0.2, 6.0), (3,))]),
    "digamma_": (lambda L, x: (x * 1).digamma_(), [(uniform(0.2, 6.0), (3,))]),
    "polygamma_": (lambda L, x: (x * 1).polygamma_(2), [(uniform(0.2, 6.0), (3,))]),
    "mvlgamma_": (lambda L, x: (x * 1).mvlgamma_(2), [(uniform(0.7, 6.0), (3,))]),
    "i0_": (lambda L, x: L.i0_(x * 1), [(normal, (2, 3))]),
    "igamma": (lambda L, x: L.igamma(L.full_like(x, 2.5), x), [(uniform(0.3, 3.0), (2, 3))]),
    "igamma_broadcast": (lambda L, x: L.tensor([[0.5], [4.0]], dtype=x.dtype).igamma(x), [(uniform(0.3, 6.0), (3,))]),
    "igammac": (lambda L, x: L.igammac(L.full_like(x, 0.7), x), [(uniform(0.3, 3.0), (2, 3))]),
    "igammac_large": (lambda L, x: L.full_like(x, 1.5).igammac(x * 10), [(uniform(0.2, 1.0), (3,))]),
    "igamma_": (lambda L, x: L.full_like(x, 1.5).igamma_(x), [(uniform(0.3, 3.0), (3,))]),
    "igammac_": (lambda L, x: L.full_like(x, 3.5).igammac_(x * 1), [(uniform(0.3, 3.0), (3,))]),
}


# PyTorch 2.13 has no derivative for these in-place forms ("the derivative for 'inplace version of
# asinh' is not implemented"); minigrad gives the out-of-place one's, which is what torch is run on.
TORCH_HAS_NO_DERIVATIVE = {"asinh_": lambda L, x: L.asinh(x * 1), "acosh_": lambda L, x: (x * 1).acosh(),
                           "arctanh_": lambda L, x: (x * 1).arctanh()}


def torch_fn(name, fn):
    return TORCH_HAS_NO_DERIVATIVE.get(name, fn)


def make_inputs(name):
    """The case's function and inputs; the same inputs whatever order the tests run in."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    fn, makers = CASES[name]
    return fn, [make(rng, *shape) for make, shape in makers]


# -- finite differences, once and twice (float64) ----------------------------------------------------
@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    assert gradcheck(lambda *xs: fn(minigrad, *xs), inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", list(CASES))
def test_gradgradcheck(name):
    fn, arrays = make_inputs(name)
    inputs = [minigrad.tensor(a, requires_grad=True) for a in arrays]
    float_outputs = lambda *xs: tuple(o for o in outputs(fn(minigrad, *xs)) if o.is_floating_point())  # noqa: E731
    assert gradgradcheck(float_outputs, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- the same inputs through PyTorch ------------------------------------------------------------------
def assert_close(ours, theirs, tol):
    for i, (m, t) in enumerate(zip(ours, theirs)):
        assert m.shape == t.shape, f"{i}: shape {m.shape}, torch {t.shape}"
        scale = max(1.0, float(np.abs(t[np.isfinite(t)]).max())) if np.isfinite(t).any() else 1.0
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol * scale, err_msg=f"output or gradient {i}")


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_torch(name, dtype):
    fn, arrays = make_inputs(name)
    mv, mg, md, mn, _ = run(minigrad, fn, arrays, dtype=dtype)
    tv, tg, td, tn, _ = run(torch, torch_fn(name, fn), arrays, dtype=dtype)
    assert (md, mn) == (td, tn), f"dtypes and node names: minigrad {md} {mn}, torch {td} {tn}"
    assert [g.dtype for g in mg] == [g.dtype for g in tg] and len(mv) == len(tv) and len(mg) == len(tg)
    assert_close(mv + mg, tv + tg, tolerance(arrays, dtype))


@needs_torch
@pytest.mark.parametrize("name", list(CASES))
def test_second_backward_matches_torch(name):
    fn, arrays = make_inputs(name)
    assert backward_twice(minigrad, fn, arrays) == backward_twice(torch, torch_fn(name, fn), arrays)


@needs_torch
@pytest.mark.parametrize("change", ["input", "output"])
@pytest.mark.parametrize("name", [n for n in CASES if not n.endswith("_")])
def test_inplace_change_before_backward_matches_torch(name, change):
    fn, arrays = make_inputs(name)
    assert change_then_backward(minigrad, fn, arrays, change) == change_then_backward(torch, fn, arrays, change)


# -- special values, generated: every op on every point of a grid (pairs of points for two inputs) -------
SPECIAL = [-INF, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, INF, NAN]
UNARY = {
    "asin": lambda L, x: x.asin(), "acos": lambda L, x: x.acos(), "atan": lambda L, x: x.atan(),
    "asinh": lambda L, x: x.asinh(), "acosh": lambda L, x: x.acosh(), "atanh": lambda L, x: x.atanh(),
    "log2": lambda L, x: x.log2(), "log10": lambda L, x: x.log10(), "square": lambda L, x: x.square(),
    "erf": lambda L, x: x.erf(), "erfc": lambda L, x: x.erfc(), "erfinv": lambda L, x: x.erfinv(),
    "logit": lambda L, x: x.logit(), "logit_eps": lambda L, x: x.logit(0.25), "sgn": lambda L, x: x.sgn() * x,
    "clamp_min": lambda L, x: x.clamp_min(0.5), "clamp_max": lambda L, x: L.clamp_max(x, -0.5),
    "lerp_weight": lambda L, x: L.lerp(L.zeros_like(x), L.ones_like(x), x),
    "nan_to_num": lambda L, x: x.nan_to_num(), "nan_to_num_values": lambda L, x: L.nan_to_num(x, -1.0, 7.0, -7.0),
    "sinc": lambda L, x: x.sinc(), "deg2rad": lambda L, x: x.deg2rad(), "rad2deg": lambda L, x: L.rad2deg(x),
    "lgamma": lambda L, x: x.lgamma(), "digamma": lambda L, x: x.digamma(), "polygamma_1": lambda L, x: x.polygamma(1),
    "polygamma_2": lambda L, x: L.polygamma(2, x), "polygamma_3": lambda L, x: x.polygamma(3),
    "mvlgamma": lambda L, x: (x.nan_to_num(3.0).abs() + 1.5).mvlgamma(2), "i0": lambda L, x: x.i0(),
    "nextafter_zero": lambda L, x: x.nextafter(L.zeros_like(x)), "frexp": lambda L, x: x.frexp().mantissa, "frexp_exponent": lambda L, x: x.frexp().exponent, "angle": lambda L, x: x.angle(), "fix": lambda L, x: x.fix(),
    "signbit": lambda L, x: x.signbit(), "absolute": lambda L, x: x.absolute(), "negative": lambda L, x: x.negative(),
    "copysign_number": lambda L, x: x.copysign(-0.0), "xlogy_number": lambda L, x: x.xlogy(0.5),
    "float_power_number": lambda L, x: x.float_power(-1.5), "div_trunc_number": lambda L, x: x.div(0.5, rounding_mode="trunc"),
}
BINARY = {
    "atan2": lambda L, a, b: L.atan2(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b), "minimum": lambda L, a, b: L.minimum(a, b),
    "fmax": lambda L, a, b: L.fmax(a, b), "fmin": lambda L, a, b: L.fmin(a, b),
    "clamp_min_tensor": lambda L, a, b: L.clamp_min(a, b), "clamp_max_tensor": lambda L, a, b: a.clamp_max(b),
    "true_divide": lambda L, a, b: a.true_divide(b) if isinstance(a, L.Tensor) else a / b,
    "lerp_number": lambda L, a, b: L.lerp(a, b, 0.75), "lerp_ends": lambda L, a, b: a.lerp(b, L.full_like(a, 0.25)),
    "logaddexp": lambda L, a, b: L.logaddexp(a, b), "logaddexp2": lambda L, a, b: a.logaddexp2(b),
    "xlogy": lambda L, a, b: L.xlogy(a, b), "copysign": lambda L, a, b: a.copysign(b),
    "float_power": lambda L, a, b: L.float_power(a, b), "ldexp": lambda L, a, b: a.ldexp(b),
    "divide_floor": lambda L, a, b: L.divide(a, b, rounding_mode="floor"),
    "div_trunc": lambda L, a, b: a.div(b, rounding_mode="trunc") if isinstance(a, L.Tensor) else L.div(a, b, rounding_mode="trunc"),
    "multiply": lambda L, a, b: L.multiply(a, b), "subtract": lambda L, a, b: L.subtract(a, b),
    "igamma": lambda L, a, b: L.igamma(a.detach(), b) if isinstance(a, L.Tensor) else L.igamma(a, b),
    "igammac": lambda L, a, b: a.detach().igammac(b) if isinstance(a, L.Tensor) else L.igammac(a, b),
}


def special_inputs(name):
    if name in UNARY:
        return UNARY[name], [np.array(SPECIAL)]
    a, b = zip(*itertools.product(SPECIAL, SPECIAL))
    return BINARY[name], [np.array(a), np.array(b)]


# Which of -0.0 and 0.0 PyTorch picks on a tie depends on its kernel's path (vectorized or not:
# torch.minimum(-0., 0.) is -0. in a 2-element tensor, 0. in a long one), so no sign is checked there.
TIES_OF_ZEROS_VARY = {"minimum", "fmax", "fmin", "clamp_min_tensor", "clamp_max_tensor"}
# Computed through a C library function whose last bits differ from the one NumPy or Python calls
# (PyTorch's n! in polygamma is glibc's exp(lgamma(n + 1)); its logaddexp2 uses SIMD log1p and exp2;
# its igamma and igammac, Cephes' lgam1p and Lanczos sums): these agree to 16 ulps rather than 4.
LIBM_DIFFERS = {"polygamma_2", "polygamma_3", "logaddexp2", "igamma", "igammac"}


def _signbits(values):
    return [np.signbit(v[v == 0]) for v in values]


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(UNARY) + list(BINARY))
def test_special_values_match_torch(name, dtype):
    """Values and gradients, NaN where PyTorch's is, and the sign of a zero."""
    fn, arrays = special_inputs(name)
    mv, mg, md, mn, _ = run(minigrad, fn, arrays, dtype=dtype)
    tv, tg, td, tn, _ = run(torch, fn, arrays, dtype=dtype)
    assert (md, mn) == (td, tn)
    tol = (16 if name in LIBM_DIFFERS else 4) * np.finfo(dtype).eps
    for m, t in zip(mv + mg, tv + tg):
        np.testing.assert_allclose(m, t, rtol=tol, atol=0)
    for m, t in zip(_signbits(mv), _signbits(tv)) if name not in TIES_OF_ZEROS_VARY else ():
        np.testing.assert_array_equal(m, t, err_msg="the sign of a zero")


# -- dtypes, generated: every input dtype (and Python numbers where the op takes them) -----------------
DTYPES = ["float32", "float64", "int32", "int64", "bool"]


def outcome(fn):
    """The result's dtype name and values, or the exception type's name."""
    try:
        out = fn()
    except Exception as e:  # noqa: BLE001 - compared with torch's
        return type(e).__name__, None
    return str(out.dtype).split(".")[-1], out.detach().numpy()


def _operand(L, dtype, shape):
    return L.tensor(np.resize(np.array([0.25, 1.0, 0.0]), shape), dtype=getattr(L, dtype))


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(UNARY))
def test_unary_result_dtype_matches_torch(name, dtype):
    ours, theirs = (outcome(lambda: UNARY[name](L, _operand(L, dtype, (3,)))) for L in (minigrad, torch))
    assert ours[0] == theirs[0]
    if theirs[1] is not None:
        np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6)


@needs_torch
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_result_dtype_matches_torch(name):
    # (true_divide, a method here, with a number first is checked as ``number / tensor``)
    """Every pair of dtypes, as dimensioned or 0-d tensors, and Python numbers: torch's dtype or error."""
    operands = [(d, s) for d in DTYPES for s in [(3,), ()]] + [2, 0.5, True]
    wrong = []
    for a, b in itertools.product(operands, repeat=2):
        if not (isinstance(a, tuple) or isinstance(b, tuple)):
            continue  # (two numbers: no tensor function takes them)
        results = []
        for L in (minigrad, torch):
            x, y = (_operand(L, *v) if isinstance(v, tuple) else v for v in (a, b))
            results.append(outcome(lambda: BINARY[name](L, x, y)))
        if results[0][0] != results[1][0]:
            wrong.append(f"{a} with {b}: {results[0][0]}, torch {results[1][0]}")
        elif results[1][1] is not None:
            np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-6)
    assert not wrong, f"{name}: " + "; ".join(wrong)


# -- bad input: PyTorch's exception type ------------------------------------------------------------
def z(L, *shape, dtype=None):
    return L.zeros(*shape, dtype=dtype or L.float32)


BAD = {
    "atan2_shapes": lambda L: z(L, 2).atan2(z(L, 3)),
    "atan2_number": lambda L: z(L, 2).atan2(2.0),
    "atan2_fn_number": lambda L: L.atan2(z(L, 2), 2.0),
    "atan2_list": lambda L: z(L, 2).atan2([1.0, 2.0]),
    "atan2_ndarray": lambda L: L.arctan2(z(L, 2), np.ones(2)),
    "atan2_inplace_broadcast": lambda L: z(L, 3).atan2_(z(L, 2, 3)),
    "atan2_inplace_int": lambda L: L.tensor([1, 2]).atan2_(z(L, 2)),
    "asin_inplace_int": lambda L: L.tensor([1, 2]).asin_(),
    "acosh_inplace_leaf": lambda L: L.ones(2, requires_grad=True).acosh_(),
    "hypot_shapes": lambda L: L.hypot(z(L, 2), z(L, 3)),
    "hypot_number": lambda L: z(L, 2).hypot(1.0),
    "minimum_number": lambda L: L.minimum(z(L, 2), 1.0),
    "fmax_list": lambda L: z(L, 2).fmax([1.0, 2.0]),
    "fmin_shapes": lambda L: z(L, 2, 3).fmin(z(L, 2)),
    "lerp_end_number": lambda L: z(L, 2).lerp(1.0, 0.5),
    "lerp_weight_string": lambda L: z(L, 2).lerp(z(L, 2), "a"),
    "lerp_shapes": lambda L: L.lerp(z(L, 2), z(L, 3), 0.5),
    "lerp_weight_shape": lambda L: L.lerp(z(L, 2), z(L, 2), z(L, 3)),
    "lerp_dtypes": lambda L: L.lerp(z(L, 2), z(L, 2, dtype=L.float64), 0.5),
    "lerp_weight_dtype": lambda L: L.lerp(z(L, 2), z(L, 2), z(L, 2, dtype=L.float64)),
    "lerp_int": lambda L: L.lerp(L.tensor([1, 2]), L.tensor([3, 4]), 0.5),
    "lerp_inplace_broadcast": lambda L: z(L, 3).lerp_(z(L, 2, 3), 0.5),
    "clamp_min_string": lambda L: z(L, 2).clamp_min("a"),
    "clamp_max_shapes": lambda L: z(L, 2).clamp_max(z(L, 3)),
    "clamp_min_inplace_int": lambda L: L.tensor([1, 2]).clamp_min_(0.5),
    "true_divide_list": lambda L: z(L, 2).true_divide([1.0, 2.0]),
    "true_divide_inplace_int": lambda L: L.tensor([1, 2]).true_divide_(2),
    "erf_inplace_int": lambda L: L.tensor([1, 2]).erf_(),
    "square_inplace_bool": lambda L: L.tensor([True]).square_(),
    "logit_inplace_leaf": lambda L: L.ones(2, requires_grad=True).logit_(),
    "logical_and_number": lambda L: L.logical_and(z(L, 2), 1),
    "logical_or_bool": lambda L: z(L, 2).logical_or(True),
    "logical_xor_shapes": lambda L: L.logical_xor(z(L, 2), z(L, 3)),
    "logical_and_list": lambda L: z(L, 2).logical_and([1.0, 0.0]),
    "nan_to_num_string": lambda L: z(L, 2).nan_to_num("a"),
    "nan_to_num_posinf_string": lambda L: L.nan_to_num(z(L, 2), posinf="a"),
    "nan_to_num_inplace_leaf": lambda L: L.ones(2, requires_grad=True).nan_to_num_(),
    "divide_rounding_mode_string": lambda L: z(L, 2).divide(2.0, rounding_mode="round"),
    "divide_rounding_mode_int": lambda L: L.divide(z(L, 2), 2.0, rounding_mode=1),
    "div_integer_by_zero_floor": lambda L: L.tensor([1, 2]).div(L.tensor([0, 1]), rounding_mode="floor"),
    "positive_bool": lambda L: L.tensor([True]).positive(),
    "pos_operator_bool": lambda L: +L.tensor([True]),
    "absolute_bool": lambda L: L.absolute(L.tensor([True])),
    "floor_bool": lambda L: L.tensor([True]).floor(),
    "floor_inplace_leaf": lambda L: L.ones(2, requires_grad=True).floor_(),
    "round_decimals_inplace_int": lambda L: L.tensor([1, 2]).round_(decimals=1),
    "frac_inplace_int": lambda L: L.tensor([1, 2]).frac_(),
    "floor_divide_inplace_backward": lambda L: (L.ones(2, requires_grad=True) * 1).floor_divide_(0.3).sum().backward(),
    "remainder_inplace_shapes": lambda L: z(L, 2).remainder_(z(L, 3, 2)),
    "eq_inplace_leaf": lambda L: L.ones(2, requires_grad=True).eq_(1.0),
    "lt_inplace_broadcast": lambda L: z(L, 2).lt_(z(L, 2, 2)),
    "greater_list": lambda L: z(L, 2).greater([1.0, 2.0]),
    "logical_and_inplace_number": lambda L: z(L, 2).logical_and_(1),
    "cumsum_inplace_dtype": lambda L: z(L, 2).cumsum_(0, dtype=L.float64),
    "cumsum_inplace_bool": lambda L: L.tensor([True]).cumsum_(0),
    "cumprod_inplace_dim": lambda L: z(L, 2).cumprod_(1),
    "clip_inplace_no_bounds": lambda L: z(L, 2).clip_(),
    "sinc_inplace_int": lambda L: L.tensor([1, 2]).sinc_(),
    "deg2rad_inplace_leaf": lambda L: L.ones(2, requires_grad=True).deg2rad_(),
    "logaddexp_number": lambda L: z(L, 2).logaddexp(1.0),
    "logaddexp_int": lambda L: L.logaddexp(L.tensor([1]), L.tensor([2])),
    "logaddexp2_shapes": lambda L: L.logaddexp2(z(L, 2), z(L, 3)),
    "xlogy_list": lambda L: z(L, 2).xlogy([1.0, 2.0]),
    "xlogy_inplace_int": lambda L: L.tensor([1, 2]).xlogy_(2.0),
    "float_power_inplace_float32": lambda L: z(L, 2).float_power_(2.0),
    "float_power_string": lambda L: L.float_power(z(L, 2), "a"),
    "heaviside_dtypes": lambda L: z(L, 2).heaviside(z(L, 2, dtype=L.float64)),
    "heaviside_number": lambda L: L.heaviside(z(L, 2), 0.5),
    "heaviside_backward": lambda L: L.ones(2, requires_grad=True).heaviside(z(L, 2)).sum().backward(),
    "copysign_inplace_int": lambda L: L.tensor([1, 2]).copysign_(-1.0),
    "copysign_shapes": lambda L: L.copysign(z(L, 2), z(L, 3)),
    "nextafter_number": lambda L: z(L, 2).nextafter(1.0),
    "nextafter_int": lambda L: L.nextafter(L.tensor([1]), L.tensor([2])),
    "ldexp_number": lambda L: z(L, 2).ldexp(2),
    "ldexp_bool_exponent": lambda L: z(L, 2).ldexp(L.tensor([True, False])),
    "frexp_int": lambda L: L.tensor([1, 2]).frexp(),
    "lgamma_inplace_int": lambda L: L.tensor([1, 2]).lgamma_(),
    "digamma_inplace_leaf": lambda L: L.ones(2, requires_grad=True).digamma_(),
    "polygamma_negative": lambda L: L.polygamma(-1, z(L, 2)),
    "polygamma_float_order": lambda L: z(L, 2).polygamma(1.5),
    "polygamma_tensor_first": lambda L: L.polygamma(z(L, 2), 1),
    "mvlgamma_p_zero": lambda L: (z(L, 2) + 5).mvlgamma(0),
    "mvlgamma_bool": lambda L: L.tensor([True]).mvlgamma(1),
    "mvlgamma_p_string": lambda L: (z(L, 2) + 5).mvlgamma("2"),
    "i0_inplace_int": lambda L: L.tensor([1, 2]).i0_(),
    "igamma_int": lambda L: L.igamma(L.tensor([1]), L.tensor([2])),
    "igamma_number": lambda L: z(L, 2).igamma(2.0),
    "igammac_shapes": lambda L: L.igammac(z(L, 2), z(L, 3)),
    "igamma_backward_to_a": lambda L: L.igamma(L.ones(2, requires_grad=True), L.ones(2)).sum().backward(),
    "igammac_inplace_int": lambda L: L.tensor([1, 2]).igammac_(L.ones(2)),
    "imag_of_real": lambda L: z(L, 2).imag,
    "imag_fn_of_real": lambda L: L.imag(z(L, 2)),
    "is_nonzero_many": lambda L: z(L, 2).is_nonzero(),
    "is_nonzero_empty": lambda L: L.is_nonzero(z(L, 0)),
    "gcd_float": lambda L: L.gcd(z(L, 2), z(L, 2)),
    "gcd_bool": lambda L: L.tensor([True]).gcd(L.tensor([True])),
    "gcd_number": lambda L: L.tensor([4]).gcd(2),
    "lcm_inplace_shapes": lambda L: L.tensor([4, 6]).lcm_(L.tensor([[1], [2]])),
    "bitwise_and_float": lambda L: z(L, 2) & z(L, 2),
    "bitwise_or_float_number": lambda L: L.tensor([1, 2]) | 1.5,
    "bitwise_xor_list": lambda L: L.tensor([1, 2]).bitwise_xor([1, 2]),
    "bitwise_not_float": lambda L: L.bitwise_not(z(L, 2)),
    "invert_float": lambda L: ~z(L, 2),
    "left_shift_bool": lambda L: L.tensor([True]) << L.tensor([True]),
    "right_shift_float": lambda L: L.bitwise_right_shift(L.tensor([4]), z(L, 1)),
    "iand_into_bool": lambda L: L.tensor([True]).__iand__(L.tensor([3])),
    "ior_float_number": lambda L: L.tensor([1, 2]).__ior__(2.5),
    "bitwise_and_inplace_shapes": lambda L: L.tensor([1, 2]).bitwise_and_(L.tensor([[1], [2]])),
}


@needs_torch
@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_raises_torchs_type(name):
    theirs, ours = raised(BAD[name], torch), raised(BAD[name], minigrad)
    assert theirs is not None, f"torch accepts {name}: the case is wrong"
    assert isinstance(ours, type(theirs)), f"minigrad raised {type(ours).__name__}: {ours}; torch {type(theirs).__name__}: {theirs}"
    assert str(ours), "an error must say what went wrong"


def test_aliases_are_the_same_function():
    for short, long in [("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"), ("asinh", "arcsinh"),
                        ("acosh", "arccosh"), ("atanh", "arctanh"), ("atan2", "arctan2"), ("asin_", "arcsin_")]:
        assert getattr(minigrad.Tensor, short) is getattr(minigrad.Tensor, long)


# -- erf, erfc and erfinv are computed in NumPy here: against PyTorch's at many points ----------------
def _ulps(ours, theirs):
    """The largest difference in units of the last place of float64 (0 where both are equal)."""
    theirs = theirs.numpy()
    scale = np.maximum(np.abs(theirs), np.finfo(np.float64).tiny) * np.finfo(np.float64).eps
    with np.errstate(invalid="ignore"):
        return float(np.nanmax(np.where(ours == theirs, 0.0, np.abs(ours - theirs) / scale)))


@needs_torch
@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_error_functions_are_within_a_few_ulps_of_torch(name):
    rng = np.random.default_rng(7)
    if name == "erfinv":  # the whole of (-1, 1), and the tails down to 1 - 1e-16
        tails = 1 - np.logspace(-16, -1, 400)
        x = np.concatenate([np.linspace(-1, 1, 20001), rng.uniform(-1, 1, 20000), tails, -tails])
    else:  # to where erfc underflows (x = 27), and the tiny values where erf(x) ~ 2x/√π
        x = np.concatenate([np.linspace(-28, 28, 40001), rng.standard_normal(20000) * 3, np.logspace(-300, 0, 300)])
    ours = getattr(minigrad.tensor(x), name)().numpy()
    assert _ulps(ours, getattr(torch.tensor(x), name)()) <= 8


# -- the gamma family and i0 are computed in NumPy here, with PyTorch's algorithms: at many points ---------
GAMMA_FAMILY = {"lgamma": lambda L, x: x.lgamma(), "digamma": lambda L, x: x.digamma(),
                "trigamma": lambda L, x: x.polygamma(1), "polygamma_2": lambda L, x: L.polygamma(2, x),
                "polygamma_5": lambda L, x: L.polygamma(5, x), "mvlgamma_3": lambda L, x: x.mvlgamma(3),
                "i0": lambda L, x: x.i0(), "sinc": lambda L, x: x.sinc()}


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("name", list(GAMMA_FAMILY))
def test_gamma_family_is_within_a_few_ulps_of_torch(name, dtype):
    """Both signs, the poles and the points between them, tiny and huge values: the same non-finite
    values, and the finite ones within 16 ulps of the result (or of 1, near a zero of the function)."""
    rng = np.random.default_rng(11)
    x = np.concatenate([np.linspace(-12, 12, 4801), rng.uniform(-30, 30, 2000), np.logspace(-30, 2.5, 300),
                        -np.logspace(-30, 1.5, 300), [0.0, -0.0, np.inf, -np.inf, np.nan, 1e30, 700.0, 88.0, 90.0]])
    x = x.astype(dtype)
    ours = GAMMA_FAMILY[name](minigrad, minigrad.tensor(x)).numpy()
    theirs = GAMMA_FAMILY[name](torch, torch.tensor(x)).numpy()
    finite = np.isfinite(theirs)
    np.testing.assert_array_equal(np.isfinite(ours), finite)
    np.testing.assert_array_equal(ours[~finite], theirs[~finite])
    scale = np.maximum(np.abs(theirs[finite]), 1) * np.finfo(dtype).eps
    assert np.max(np.abs(ours[finite] - theirs[finite]) / scale, initial=0) <= 16


@needs_torch
@pytest.mark.parametrize("name", ["igamma", "igammac"])
def test_incomplete_gamma_matches_torch_on_a_grid(name):
    """a and x from 1e-3 to 500 and the edges (0, ±inf, NaN, negative): the same NaNs, and the values
    within 1e-8 (PyTorch's asymptotic series for large a near x is itself off by 1e-10 there)."""
    points = np.concatenate([[0.0, -1.0, np.inf, np.nan], np.logspace(-3, 2.7, 40)])
    a, x = (v.ravel() for v in np.meshgrid(points, points))
    ours = getattr(minigrad.tensor(a), name)(minigrad.tensor(x)).numpy()
    theirs = getattr(torch.tensor(a), name)(torch.tensor(x)).numpy()
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(theirs))
    np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-300)


# -- predicates and logic: bool results, no gradient, on every dtype --------------------------------------
PREDICATES = {
    "isnan": lambda L, x: x.isnan(), "isinf": lambda L, x: L.isinf(x), "isfinite": lambda L, x: x.isfinite(),
    "isposinf": lambda L, x: x.isposinf(), "isneginf": lambda L, x: x.isneginf(),
    "logical_not": lambda L, x: L.logical_not(x),
}
LOGIC = {
    "logical_and": lambda L, a, b: L.logical_and(a, b), "logical_or": lambda L, a, b: a.logical_or(b),
    "logical_xor": lambda L, a, b: L.logical_xor(a, b),
}


def grid(L, dtype: str):
    """The special values in ``dtype`` (integers and bools: -2 ... 2)."""
    if dtype.startswith("float"):
        return L.tensor(SPECIAL, dtype=getattr(L, dtype), requires_grad=True)
    return L.tensor([-2, -1, 0, 1, 2], dtype=getattr(L, dtype))


def answer(out):
    return str(out.dtype).split(".")[-1], out.requires_grad, out.grad_fn is None, out.numpy().tolist()


@needs_torch
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(PREDICATES))
def test_predicates_match_torch(name, dtype):
    ours, theirs = (answer(PREDICATES[name](L, grid(L, dtype))) for L in (minigrad, torch))
    assert ours == theirs


@needs_torch
@pytest.mark.parametrize("name", list(LOGIC))
def test_logic_matches_torch_for_every_pair_of_dtypes(name):
    for a_dtype, b_dtype in itertools.product(DTYPES, repeat=2):
        results = []
        for L in (minigrad, torch):
            a, b = grid(L, a_dtype), grid(L, b_dtype)
            if a.shape != b.shape:  # (integers: 5 values against 11 floats) every pair, by broadcasting
                a, b = a.reshape(-1, 1), b.reshape(1, -1)
            results.append(answer(LOGIC[name](L, a, b)))
        assert results[0] == results[1], f"{name}({a_dtype}, {b_dtype})"


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(5,), (10, 16), (64, 128), (300, 300)])
def test_relu_is_maximum_with_zero_bit_for_bit(dtype, shape):
    """relu's forward (against cached zeros for small arrays) gives np.maximum(x, 0)'s bits:
    NaN, -0.0, infinities included, and a transposed input too."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[::7], flat[::11], flat[::13], flat[::17] = -0.0, np.nan, np.inf, -np.inf
    for data in (x, x.T):
        got = minigrad.tensor(data).relu().numpy()
        want = np.maximum(data, 0)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(np.ascontiguousarray(got).view(np.uint8), np.ascontiguousarray(want).view(np.uint8))
