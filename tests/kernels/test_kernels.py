"""minigrad.kernels: every Numba kernel against its NumPy reference, and every reference
against finite differences and hand-written loops (so the specification itself is proven).

Six names have no kernel (it lost in bench/bench_kernels.py and was removed):
``minigrad.kernels`` exports their references, tested here with the rest.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad.kernels as kernels
from minigrad.kernels import conv, elementwise as ew, embedding, norm, reference as ref, softmax as sm

DTYPES = [np.float32, np.float64]
ROOT = Path(__file__).resolve().parents[2]


def tol(dtype, n: int = 1) -> dict:
    """How far a kernel may be from its reference, from the dtype and the reduction length ``n``.

    A few ulps per element (the floor: transcendental functions differ in their last bits;
    float64 kernels and references differ only in rounding), plus the standard bound for a
    sum of ``n`` terms of order one added in another order: up to ``n`` roundings of ``eps``
    each, on the terms' scale (so also in ``atol``: a sum that cancels to near zero keeps
    the absolute error of its terms).
    """
    eps = float(np.finfo(dtype).eps)
    floor_rtol, floor_atol = (2e-5, 2e-6) if np.dtype(dtype) == np.float32 else (1e-10, 1e-12)
    grown = 2 * n * eps
    return dict(rtol=floor_rtol + grown, atol=floor_atol + grown)


def make(shape, dtype, layout="contiguous", seed=0, scale=3.0) -> np.ndarray:
    """Random array of `shape`; 'transposed' and 'strided' give non-contiguous views."""
    rng = np.random.default_rng(seed)
    if layout == "transposed" and len(shape) >= 2:
        a = (rng.standard_normal(shape[::-1]) * scale).astype(dtype).T
    elif layout == "transposed" and len(shape) == 1:
        a = (rng.standard_normal(shape) * scale).astype(dtype)[::-1]
    elif layout == "strided" and len(shape) >= 1:
        a = (rng.standard_normal((shape[0] * 2, *shape[1:])) * scale).astype(dtype)[::2]
    else:
        a = (rng.standard_normal(shape) * scale).astype(dtype)
    assert a.shape == tuple(shape)
    if layout != "contiguous" and a.size > 1:
        assert not a.flags.c_contiguous
    return a


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------

UNARY = ["gelu_forward", "gelu_tanh_forward"]  # the elementwise names that have a kernel in elementwise.py
BINARY = ["sigmoid_backward", "tanh_backward", "relu_backward", "gelu_backward", "gelu_tanh_backward"]
REFERENCE_ONLY = ["sigmoid_forward", "tanh_forward", "relu_forward"]  # exported from reference.py
SHAPES = [(), (1,), (7,), (1023,), (3, 5, 7)]
LAYOUTS = ["contiguous", "transposed", "strided"]


def elementwise_args(name, shape, dtype, layout):
    x = make(shape, dtype, layout, seed=1)
    if x.ndim:
        x[..., ::5] = 0  # relu's x > 0 boundary
    if name in UNARY + REFERENCE_ONLY:
        return (x,)
    return (x, make(shape, dtype, layout, seed=2, scale=1.0))


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_elementwise_matches_reference(name, dtype, shape, layout):
    args = elementwise_args(name, shape, dtype, layout)
    got = getattr(ew, name)(*args)
    want = getattr(ref, name)(*args)
    assert got.dtype == np.dtype(dtype) and got.shape == tuple(shape)
    np.testing.assert_allclose(got, want, **tol(dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", UNARY + BINARY + REFERENCE_ONLY)
def test_elementwise_out(name, dtype):
    args = elementwise_args(name, (4, 6), dtype, "contiguous")
    want = getattr(ref, name)(*args)
    for fn in {getattr(kernels, name), getattr(ref, name)}:  # the export and its reference (one function if no kernel)
        out = np.full((4, 6), np.nan, dtype)
        assert fn(*args, out=out) is out
        np.testing.assert_allclose(out, want, **tol(dtype))
        strided_out = np.full((4, 12), np.nan, dtype)[:, ::2]  # non-contiguous out
        assert fn(*args, out=strided_out) is strided_out
        np.testing.assert_allclose(strided_out, want, **tol(dtype))
        in_place = [a.copy() for a in args]  # out aliasing the last input
        fn(*in_place, out=in_place[-1])
        np.testing.assert_allclose(in_place[-1], want, **tol(dtype))


def test_elementwise_known_values():
    x = np.array([-1.0, 0.0, 1.0, -1000.0, 1000.0])
    with np.errstate(over="raise", invalid="raise"):  # no overflow warning for exp(1000)
        np.testing.assert_allclose(ref.sigmoid_forward(x), [1 / (1 + math.e), 0.5, 1 / (1 + 1 / math.e), 0.0, 1.0],
                                   rtol=1e-15)
    # GELU(x) = x * Phi(x); Phi(1) = 0.8413447460685429
    for fn in (ew.gelu_forward, ref.gelu_forward):
        np.testing.assert_allclose(fn(x[:3]), [-0.15865525393145707, 0.0, 0.8413447460685429], rtol=1e-14)
    nan = np.array([np.nan, -2.0, 3.0])
    np.testing.assert_array_equal(ref.relu_forward(nan), [np.nan, 0.0, 3.0])  # NaN propagates, like torch


@pytest.mark.parametrize("name, saves_output", [("sigmoid", True), ("tanh", True), ("relu", False), ("gelu", False),
                                                ("gelu_tanh", False)])
def test_elementwise_reference_backward_is_the_derivative(name, saves_output):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(200) * 3
    x = x[np.abs(x) > 1e-3]  # keep relu away from its kink
    g = rng.standard_normal(x.shape)
    forward, backward = getattr(ref, f"{name}_forward"), getattr(ref, f"{name}_backward")
    h = 1e-6
    numeric = (forward(x + h) - forward(x - h)) / (2 * h) * g
    saved = forward(x) if saves_output else x
    np.testing.assert_allclose(backward(saved, g), numeric, rtol=1e-6, atol=1e-8)


def test_elementwise_errors():
    x = np.ones((2, 3))
    with pytest.raises(TypeError, match="float32 or float64"):
        ew.gelu_forward(np.ones(3, dtype=np.int64))
    with pytest.raises(ValueError, match="shape"):
        ew.relu_backward(x, np.ones((3, 2)))
    with pytest.raises(TypeError, match="dtype"):
        ew.sigmoid_backward(x, np.ones((2, 3), np.float32))
    with pytest.raises(ValueError, match="out"):
        ew.tanh_backward(x, x, out=np.empty((6,)))
    with pytest.raises(ValueError, match="out"):
        ew.gelu_forward(x, out=np.empty((2, 3), np.float32))


# ---------------------------------------------------------------------------
# Softmax family and cross-entropy
# ---------------------------------------------------------------------------

SOFTMAX_CASES = [((7,), -1), ((1, 1), -1), ((64, 10), -1), ((1023, 3), 1), ((3, 5, 7), -1),
                 ((3, 5, 7), 0), ((3, 5, 7), 1), ((), 0)]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape, axis", SOFTMAX_CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_softmax_matches_reference(dtype, shape, axis, layout):
    x = make(shape, dtype, layout, seed=4)
    g = make(shape, dtype, layout, seed=5, scale=1.0)
    n = shape[axis] if shape else 1  # the length of the reduction along axis
    y = sm.softmax_forward(x, axis=axis)
    np.testing.assert_allclose(y, ref.softmax_forward(x, axis=axis), **tol(dtype, n))
    assert y.dtype == np.dtype(dtype) and y.shape == tuple(shape)
    gx = sm.softmax_backward(y, g, axis=axis)
    np.testing.assert_allclose(gx, ref.softmax_backward(y, g, axis=axis), **tol(dtype, n))
    assert gx.dtype == np.dtype(dtype)
    log_y = sm.log_softmax_forward(x, axis=axis)
    np.testing.assert_allclose(log_y, ref.log_softmax_forward(x, axis=axis), **tol(dtype, n))
    assert log_y.dtype == np.dtype(dtype) and log_y.shape == tuple(shape)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(10, 10), (64, 10), (1, 1), (3, 0), (0, 4)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_log_softmax_rows_is_log_softmax_forward_on_axis_1(dtype, shape, layout):
    """The cross-entropy's unchecked entry: the same values, bit for bit, as the checked one (which the
    test above compares with the reference), C-contiguous, and the input left as it was."""
    x = make(shape, dtype, layout, seed=6)
    before = x.copy()
    got = kernels.log_softmax_rows(x)
    np.testing.assert_array_equal(got, sm.log_softmax_forward(x, axis=1))
    assert got.dtype == np.dtype(dtype) and got.shape == shape and got.flags.c_contiguous
    np.testing.assert_array_equal(x, before)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(160,), (16, 64), (128, 128), (3, 0)], ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("lr", [0.1, 3, 1e-3])
def test_sgd_step_is_the_reference_bit_for_bit_in_place(dtype, shape, layout, lr):
    """One pass of p -= lr * g (Numba) against NumPy's product then subtraction: the same bits (no
    fused multiply-add, lr rounded to p's dtype as NumPy rounds a Python number), into p's memory."""
    p, g = make(shape, dtype, layout, seed=7), make(shape, dtype, layout, seed=8)
    expected = ref.sgd_step_(p.copy(), g, lr)
    np.testing.assert_array_equal(expected, p - np.multiply(g, lr))
    memory = p
    got = ew.sgd_step_(p, g, lr)
    assert got is memory and got.dtype == np.dtype(dtype)
    bits = f"u{np.dtype(dtype).itemsize}"
    np.testing.assert_array_equal(got.view(bits), expected.view(bits))
    if p.size:
        assert not np.array_equal(p, make(shape, dtype, layout, seed=7))  # it did write


def test_sgd_step_refuses_what_it_is_not_compiled_for():
    with pytest.raises(TypeError, match="float32 or float64"):
        ew.sgd_step_(np.zeros(3, np.int64), np.zeros(3, np.int64), 0.1)
    with pytest.raises(ValueError, match="shape"):
        ew.sgd_step_(np.zeros(3), np.zeros(4), 0.1)
    with pytest.raises(TypeError, match="no implicit promotion"):
        ew.sgd_step_(np.zeros(3, np.float32), np.zeros(3), 0.1)


@pytest.mark.parametrize("fn", ["softmax_forward", "log_softmax_forward"])
def test_softmax_kernels_propagate_nan_and_inf_like_the_reference(fn):
    x = np.array([[np.nan, 1.0, 2.0], [1.0, np.nan, 2.0], [np.inf, 1.0, 2.0], [-np.inf, 0.0, 1.0]])
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(getattr(sm, fn)(x), getattr(ref, fn)(x), rtol=1e-14, atol=0)


def test_softmax_reference_properties():
    x = np.array([[1000.0, 1001.0, 999.0], [-5.0, 0.0, 5.0]])  # exp(1000) would overflow
    with np.errstate(over="raise", invalid="raise"):
        for mod in (kernels, ref):
            p = mod.softmax_forward(x)
            np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-15)
            np.testing.assert_allclose(p[0], [0.24472847105479764, 0.6652409557748219, 0.09003057317038046], rtol=1e-14)
            np.testing.assert_allclose(np.exp(mod.log_softmax_forward(x)), p, rtol=1e-14)
    np.testing.assert_allclose(ref.softmax_forward(x, axis=0)[:, 0], [1.0, 0.0], atol=1e-300)


def numerical_grad(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """d f(x) / dx by central differences, one element at a time (f returns a float)."""
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + h
        up = f(x)
        x[i] = old - h
        down = f(x)
        x[i] = old
        grad[i] = (up - down) / (2 * h)
    return grad


@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_reference_backward_is_the_derivative(axis):
    x, g = make((4, 5), np.float64, seed=6), make((4, 5), np.float64, seed=7)
    for fwd, bwd in ((ref.softmax_forward, ref.softmax_backward), (ref.log_softmax_forward, ref.log_softmax_backward)):
        numeric = numerical_grad(lambda v: float((fwd(v, axis=axis) * g).sum()), x.copy())
        np.testing.assert_allclose(bwd(fwd(x, axis=axis), g, axis=axis), numeric, rtol=1e-6, atol=1e-8)


CE_SHAPES = [(1, 1), (7, 10), (64, 10), (1023, 10), (5, 3)]


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shape", CE_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_cross_entropy_matches_reference(dtype, shape, layout):
    logits = make(shape, dtype, layout, seed=8)
    targets = np.random.default_rng(9).integers(0, shape[1], shape[0]).astype(np.int32)
    loss, log_probs = sm.cross_entropy_forward(logits, targets)
    ref_loss, ref_log_probs = ref.cross_entropy_forward(logits, targets)
    assert isinstance(loss, float) and log_probs.dtype == np.dtype(dtype)
    loss_tol = tol(dtype, shape[0] * shape[1])  # the mean over N of log-sum-exps over C
    assert loss == pytest.approx(ref_loss, rel=loss_tol["rtol"], abs=loss_tol["atol"])
    np.testing.assert_allclose(log_probs, ref_log_probs, **tol(dtype, shape[1]))


def test_cross_entropy_reference_against_definition_and_derivative():
    logits, targets = make((6, 4), np.float64, seed=10), np.array([0, 3, 1, 1, 2, 0])
    by_hand = np.mean([-(row[t] - math.log(sum(math.exp(v) for v in row))) for row, t in zip(logits, targets)])
    loss, log_probs = ref.cross_entropy_forward(logits, targets)
    assert loss == pytest.approx(by_hand, rel=1e-13)
    numeric = numerical_grad(lambda v: 2.5 * ref.cross_entropy_forward(v, targets)[0], logits.copy())
    np.testing.assert_allclose(ref.cross_entropy_backward(log_probs, targets, 2.5), numeric, rtol=1e-6, atol=1e-9)


def test_softmax_and_cross_entropy_errors():
    x = np.zeros((3, 4))
    with pytest.raises(IndexError, match="Dimension out of range"):
        sm.softmax_forward(x, axis=2)
    with pytest.raises(IndexError, match="Target 4 is out of bounds"):
        sm.cross_entropy_forward(x, np.array([0, 4, 1]))
    with pytest.raises(IndexError, match="Target -1 is out of bounds"):
        sm.cross_entropy_forward(x, np.array([0, -1, 1]))
    with pytest.raises(TypeError, match="integer class indices"):
        sm.cross_entropy_forward(x, np.array([0.0, 1.0, 2.0]))
    with pytest.raises(ValueError, match="targets has shape"):
        sm.cross_entropy_forward(x, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"\(N, C\)"):
        sm.cross_entropy_forward(np.zeros((2, 3, 4)), np.array([0, 1]))
    with pytest.raises(TypeError, match="float32 or float64"):
        sm.softmax_forward(np.zeros((2, 3), np.int32))


# ---------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------

# (input shape, weight shape, stride, padding): the course's shapes, then odd ones
CONV_CASES = [
    ((4, 1, 8, 8), (8, 1, 3, 3), (1, 1), (0, 0)),
    ((4, 1, 8, 8), (8, 1, 3, 3), (1, 1), (1, 1)),
    ((4, 8, 6, 6), (16, 8, 3, 3), (1, 1), (0, 0)),
    ((4, 8, 8, 8), (16, 8, 3, 3), (2, 2), (1, 1)),
    ((2, 3, 7, 5), (4, 3, 3, 2), (2, 1), (1, 0)),
    ((2, 3, 5, 5), (2, 3, 5, 5), (1, 1), (0, 0)),  # kernel as big as the input
    ((1, 2, 9, 9), (3, 2, 2, 3), (3, 2), (2, 1)),
    ((3, 1, 1, 1), (2, 1, 1, 1), (1, 1), (0, 0)),
]


@pytest.mark.parametrize("layout", ["contiguous", "non-contiguous"])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize("case", CONV_CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_conv2d_matches_reference(dtype, case, with_bias, layout):
    x_shape, w_shape, stride, padding = case
    x, w = make(x_shape, dtype, seed=11, scale=1.0), make(w_shape, dtype, seed=12, scale=1.0)
    if layout == "non-contiguous":  # NHWC data viewed as NCHW, and a strided weight
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
        w = np.repeat(w, 2, axis=0)[::2]
    b = make(w_shape[:1], dtype, seed=13) if with_bias else None
    y = conv.conv2d_forward(x, w, b, stride, padding)
    assert y.dtype == np.dtype(dtype)
    # Reduction lengths: an output sums C_in*kh*kw products (and the bias); grad_x sums at
    # most C_out*kh*kw; grad_weight and grad_bias sum over N*H_out*W_out.
    n_out, n_in = w_shape[1] * w_shape[2] * w_shape[3] + 1, w_shape[0] * w_shape[2] * w_shape[3]
    n_batch = y.shape[0] * y.shape[2] * y.shape[3]
    np.testing.assert_allclose(y, ref.conv2d_forward(x, w, b, stride, padding), **tol(dtype, n_out))
    gy = make(y.shape, dtype, seed=14, scale=1.0)
    got = conv.conv2d_backward(x, w, gy, stride, padding)
    want = ref.conv2d_backward(x, w, gy, stride, padding)
    for name, a, e, n in zip(("grad_x", "grad_weight", "grad_bias"), got, want, (n_in, n_batch, n_batch)):
        assert a.shape == e.shape and a.dtype == np.dtype(dtype), name
        np.testing.assert_allclose(a, e, err_msg=name, **tol(dtype, n))


@pytest.mark.parametrize("impl", ["kernel", "reference"])
@pytest.mark.parametrize("mask", [(False, True, True), (True, False, False), (False, False, True)], ids=str)
def test_conv2d_backward_output_mask_skips_what_is_not_needed(impl, mask):
    x_shape, w_shape, stride, padding = CONV_CASES[1]
    x, w = make(x_shape, np.float64, seed=21, scale=1.0), make(w_shape, np.float64, seed=22, scale=1.0)
    gy = make(ref.conv2d_forward(x, w, None, stride, padding).shape, np.float64, seed=23, scale=1.0)
    backward = conv.conv2d_backward if impl == "kernel" else ref.conv2d_backward
    full = ref.conv2d_backward(x, w, gy, stride, padding)
    for got, want, needed in zip(backward(x, w, gy, stride, padding, mask), full, mask):
        if needed:
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        else:
            assert got is None


def conv_by_loops(x, w, b, stride, padding):
    """The definition, one multiply-add at a time (float64, tiny shapes only)."""
    (sh, sw), (ph, pw) = stride, padding
    n_, c_, h_, w_ = x.shape
    o_, _, kh_, kw_ = w.shape
    oh_, ow_ = (h_ + 2 * ph - kh_) // sh + 1, (w_ + 2 * pw - kw_) // sw + 1
    y = np.zeros((n_, o_, oh_, ow_))
    for n, o, i, j, c, p, q in np.ndindex(n_, o_, oh_, ow_, c_, kh_, kw_):
        r, s = i * sh - ph + p, j * sw - pw + q
        if 0 <= r < h_ and 0 <= s < w_:
            y[n, o, i, j] += w[o, c, p, q] * x[n, c, r, s]
    return y + b[:, None, None]


@pytest.mark.parametrize("case", [CONV_CASES[1], CONV_CASES[4], CONV_CASES[6]], ids=str)
def test_conv2d_reference_forward_and_backward_are_right(case):
    x_shape, w_shape, stride, padding = case
    x_shape = (1,) + x_shape[1:]  # keep the finite differences cheap
    x, w, b = (make(s, np.float64, seed=s_, scale=1.0) for s, s_ in ((x_shape, 15), (w_shape, 16), (w_shape[:1], 17)))
    y = ref.conv2d_forward(x, w, b, stride, padding)
    np.testing.assert_allclose(y, conv_by_loops(x, w, b, stride, padding), rtol=1e-12, atol=1e-12)
    gy = make(y.shape, np.float64, seed=18, scale=1.0)
    grad_x, grad_w, grad_b = ref.conv2d_backward(x, w, gy, stride, padding)

    def loss(x_, w_, b_):
        return float((ref.conv2d_forward(x_, w_, b_, stride, padding) * gy).sum())

    np.testing.assert_allclose(grad_x, numerical_grad(lambda v: loss(v, w, b), x.copy()), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grad_w, numerical_grad(lambda v: loss(x, v, b), w.copy()), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grad_b, numerical_grad(lambda v: loss(x, w, v), b.copy()), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("impl", [conv, ref], ids=["numba", "reference"])
def test_conv2d_errors(impl):
    x, w = np.zeros((64, 1, 8, 8)), np.zeros((8, 3, 3, 3))
    with pytest.raises(RuntimeError, match=r"weight of size \[8, 3, 3, 3\], expected input\[64, 1, 8, 8\] "
                                           r"to have 3 channels, but got 1 channels instead"):
        impl.conv2d_forward(x, w, None, (1, 1), (0, 0))
    with pytest.raises(RuntimeError, match=r"padded input size per channel: \(4 x 4\). Kernel size: \(5 x 5\)"):
        impl.conv2d_forward(np.zeros((1, 1, 2, 2)), np.zeros((1, 1, 5, 5)), None, (1, 1), (1, 1))
    with pytest.raises(TypeError, match="should be the same"):
        impl.conv2d_forward(np.zeros((1, 1, 4, 4), np.float32), np.zeros((1, 1, 3, 3)), None, (1, 1), (0, 0))
    with pytest.raises(RuntimeError, match="expected bias"):
        impl.conv2d_forward(np.zeros((1, 1, 4, 4)), np.zeros((2, 1, 3, 3)), np.zeros(3), (1, 1), (0, 0))
    with pytest.raises(RuntimeError, match="4D"):
        impl.conv2d_forward(np.zeros((1, 4, 4)), np.zeros((2, 1, 3, 3)), None, (1, 1), (0, 0))
    with pytest.raises(RuntimeError, match="stride"):
        impl.conv2d_forward(np.zeros((1, 1, 4, 4)), np.zeros((2, 1, 3, 3)), None, (0, 1), (0, 0))
    with pytest.raises(ValueError, match="grad_y has shape"):
        impl.conv2d_backward(np.zeros((1, 1, 4, 4)), np.zeros((2, 1, 3, 3)), np.zeros((1, 2, 3, 3)), (1, 1), (0, 0))


# ---------------------------------------------------------------------------
# max_pool2d
# ---------------------------------------------------------------------------

POOL_CASES = [  # (input shape, kernel, stride, padding)
    ((4, 8, 8, 8), (2, 2), (2, 2), (0, 0)),
    ((2, 3, 7, 5), (3, 3), (1, 1), (1, 1)),  # overlapping windows
    ((2, 3, 7, 5), (3, 3), (2, 2), (1, 1)),
    ((2, 2, 6, 6), (2, 2), (1, 1), (0, 0)),
    ((1, 2, 9, 7), (3, 2), (2, 1), (1, 0)),
    ((3, 1, 1, 1), (1, 1), (1, 1), (0, 0)),
]


@pytest.mark.parametrize("values", ["random", "ties", "special"])
@pytest.mark.parametrize("layout", ["contiguous", "non-contiguous"])
@pytest.mark.parametrize("case", POOL_CASES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_max_pool2d_matches_reference(dtype, case, layout, values):
    shape, kernel, stride, padding = case
    x = make(shape, dtype, seed=19)
    if values == "ties":  # many equal values: the first max must win in both
        x = np.round(x / 3).astype(dtype)
    elif values == "special":  # NaN propagates; a window of only -inf must not point into the padding
        x = np.full(shape, -np.inf, dtype)
        x.flat[::7] = np.nan
    if layout == "non-contiguous":
        x = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)
    y, idx = conv.max_pool2d_forward(x, kernel, stride, padding)
    ref_y, ref_idx = ref.max_pool2d_forward(x, kernel, stride, padding)
    assert y.dtype == np.dtype(dtype) and idx.dtype == np.int64
    np.testing.assert_array_equal(idx, ref_idx)
    np.testing.assert_array_equal(y, ref_y)
    plane = shape[2] * shape[3]
    assert idx.min() >= 0 and idx.max() < plane
    gy = make(y.shape, dtype, seed=20)
    np.testing.assert_allclose(conv.max_pool2d_backward(gy, idx, shape),
                               ref.max_pool2d_backward(gy, ref_idx, shape), **tol(dtype))


def test_max_pool2d_reference_is_right():
    shape, kernel, stride, padding = (2, 2, 7, 5), (3, 3), (1, 1), (1, 1)
    x = make(shape, np.float64, seed=21)
    y, idx = ref.max_pool2d_forward(x, kernel, stride, padding)
    for n, c, i, j in np.ndindex(y.shape):  # the definition, window by window
        rows = range(max(i - 1, 0), min(i + 2, shape[2]))
        cols = range(max(j - 1, 0), min(j + 2, shape[3]))
        cells = [(x[n, c, r, s], r * shape[3] + s) for r in rows for s in cols]
        assert (y[n, c, i, j], idx[n, c, i, j]) == max(cells, key=lambda t: t[0])
    gy = make(y.shape, np.float64, seed=22)
    grad_x = ref.max_pool2d_backward(gy, idx, shape)
    numeric = numerical_grad(lambda v: float((ref.max_pool2d_forward(v, kernel, stride, padding)[0] * gy).sum()), x.copy())
    np.testing.assert_allclose(grad_x, numeric, rtol=1e-6, atol=1e-8)
    assert np.count_nonzero(grad_x) < x.size  # overlapping windows really did accumulate
    np.testing.assert_allclose(grad_x.sum(), gy.sum(), rtol=1e-12)


@pytest.mark.parametrize("impl", [conv, ref], ids=["numba", "reference"])
def test_max_pool2d_errors(impl):
    x = np.zeros((1, 1, 4, 4))
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        impl.max_pool2d_forward(x, (2, 2), (2, 2), (2, 2))
    with pytest.raises(RuntimeError, match="Output size is too small"):
        impl.max_pool2d_forward(np.zeros((1, 1, 2, 2)), (3, 3), (1, 1), (0, 0))
    with pytest.raises(IndexError, match="indices must lie in"):
        impl.max_pool2d_backward(np.ones((1, 1, 2, 2)), np.full((1, 1, 2, 2), 16), (1, 1, 4, 4))
    with pytest.raises(ValueError, match="does not match"):
        impl.max_pool2d_backward(np.ones((1, 1, 2, 2)), np.zeros((1, 1, 2, 2), np.int64), (1, 2, 4, 4))


# ---------------------------------------------------------------------------
# LayerNorm over rows
# ---------------------------------------------------------------------------

LN_SHAPES = [(1, 1), (5, 7), (64, 64), (3, 200)]


@pytest.mark.parametrize("affine", ["weight and bias", "weight", "none"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("shape", LN_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_layer_norm_matches_reference(dtype, shape, layout, affine):
    x = make(shape, dtype, layout, seed=1) + 5.0  # an offset: the statistics must not cancel
    grad = make(shape, dtype, layout, seed=2, scale=1.0)
    weight = make(shape[1:], dtype, seed=3) if affine != "none" else None
    bias = make(shape[1:], dtype, seed=4) if affine == "weight and bias" else None
    got, want = norm.layer_norm_forward(x, weight, bias, 1e-5), ref.layer_norm_forward(x, weight, bias, 1e-5)
    assert got.dtype == np.dtype(dtype) and got.shape == shape
    np.testing.assert_allclose(got, want, **tol(dtype, shape[1]))
    for mask in [(True, True, True), (True, False, False), (False, True, True)]:
        got = norm.layer_norm_backward(x, weight, grad, 1e-5, mask)
        want = ref.layer_norm_backward(x, weight, grad, 1e-5, mask)
        for g, w, needed in zip(got, want, mask):
            assert (g is None) == (not needed) and (w is None) == (not needed)
            if needed:
                assert g.dtype == np.dtype(dtype) and g.shape == w.shape
                np.testing.assert_allclose(g, w, **tol(dtype, max(shape)))


def test_layer_norm_reference_against_definition_and_derivative():
    rng = np.random.default_rng(5)
    x, w, b, g = (rng.standard_normal(s) for s in ((4, 6), (6,), (6,), (4, 6)))
    want = (x - x.mean(1, keepdims=True)) / np.sqrt(x.var(1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(ref.layer_norm_forward(x, w, b, 1e-5), want, rtol=1e-12)
    grad_x, grad_w, grad_b = ref.layer_norm_backward(x, w, g, 1e-5)
    h = 1e-6
    for arr, got in ((x, grad_x), (w, grad_w), (b, grad_b)):
        numeric = np.zeros_like(arr)
        for i in np.ndindex(arr.shape):
            old = arr[i]
            arr[i] = old + h
            up = (ref.layer_norm_forward(x, w, b, 1e-5) * g).sum()
            arr[i] = old - h
            down = (ref.layer_norm_forward(x, w, b, 1e-5) * g).sum()
            arr[i] = old
            numeric[i] = (up - down) / (2 * h)
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("impl", [norm, ref], ids=["numba", "reference"])
def test_layer_norm_errors(impl):
    x = np.zeros((3, 4), np.float32)
    with pytest.raises(TypeError, match="float32 or float64"):
        impl.layer_norm_forward(x.astype(np.int64), None, None, 1e-5)
    with pytest.raises(ValueError, match="2-D"):
        impl.layer_norm_forward(x[0], None, None, 1e-5)
    with pytest.raises(ValueError, match="weight must be a float32 array of shape \\(4,\\)"):
        impl.layer_norm_forward(x, np.ones(3, np.float32), None, 1e-5)
    with pytest.raises(ValueError, match="bias must be"):
        impl.layer_norm_forward(x, None, np.ones(4), 1e-5)
    with pytest.raises(ValueError, match="grad must be"):
        impl.layer_norm_backward(x, None, np.ones((3, 5), np.float32), 1e-5)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_embedding_backward_matches_reference_bit_for_bit(dtype, layout):
    rng = np.random.default_rng(6)
    indices = rng.integers(0, 7, 50)  # many repeats: each row sums several gradients, in index order
    grad = make((50, 5), dtype, layout, seed=7)
    got = embedding.embedding_backward(indices, grad, 9)
    want = ref.embedding_backward(indices, grad, 9)
    assert got.dtype == np.dtype(dtype) and got.shape == (9, 5)
    np.testing.assert_array_equal(got, want)
    assert not want[7:].any()  # rows nobody looked up get zeros
    manual = np.zeros((9, 5), dtype)
    for i, row in enumerate(indices):
        manual[row] += grad[i]
    np.testing.assert_array_equal(want, manual)


@pytest.mark.parametrize("impl", [embedding, ref], ids=["numba", "reference"])
def test_embedding_backward_errors(impl):
    grad = np.zeros((3, 2), np.float32)
    with pytest.raises(TypeError, match="integer"):
        impl.embedding_backward(np.zeros(3), grad, 4)
    with pytest.raises(ValueError, match="one row per index"):
        impl.embedding_backward(np.zeros(2, np.int64), grad, 4)
    with pytest.raises(IndexError, match="out of range for 4 rows"):
        impl.embedding_backward(np.array([0, 4, 1]), grad, 4)


# ---------------------------------------------------------------------------
# The package itself
# ---------------------------------------------------------------------------

def test_import_compiles_nothing():
    code = (
        "import json, numba, minigrad.kernels\n"
        "from minigrad.kernels import conv, elementwise, embedding, norm, softmax\n"
        "d = {f'{m.__name__}.{k}': len(v.signatures) for m in (conv, elementwise, embedding, norm, softmax)\n"
        "     for k, v in vars(m).items() if isinstance(v, numba.core.dispatcher.Dispatcher)}\n"
        "print(json.dumps(d))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    compiled = json.loads(result.stdout)
    assert len(compiled) >= 20  # every kernel was found...
    assert not any(compiled.values()), compiled  # ...and none was compiled


def test_exports():
    assert set(kernels.__all__) == {
        "sigmoid_forward", "sigmoid_backward", "tanh_forward", "tanh_backward", "relu_forward",
        "relu_backward", "gelu_forward", "gelu_backward", "gelu_tanh_forward", "gelu_tanh_backward",
        "layer_norm_forward", "layer_norm_backward", "embedding_backward", "softmax_forward", "softmax_backward",
        "log_softmax_forward", "log_softmax_backward", "cross_entropy_forward", "cross_entropy_backward",
        "conv2d_forward", "conv2d_backward", "max_pool2d_forward", "max_pool2d_backward",
    }
    for name in kernels.__all__:  # each export is the kernel or, where it lost, the reference
        fn = getattr(kernels, name)
        assert fn.__name__ == name and fn.__module__.startswith("minigrad.kernels.")
    # (each is wrapped once, to take float16 through float32: kernels._half_in_float32)
    assert {name for name in kernels.__all__ if getattr(kernels, name).__wrapped__ is getattr(ref, name)} == {
        "sigmoid_forward", "tanh_forward", "relu_forward", "log_softmax_backward",
        "cross_entropy_backward",
    }


def test_float16_is_computed_in_float32_and_rounded():
    """A float16 input: the float32 result rounded to float16 (out= too), nothing compiled for half."""
    x = np.random.default_rng(3).standard_normal((3, 5)).astype(np.float16)
    for name, args in (("gelu_forward", (x,)), ("softmax_forward", (x, 1)), ("relu_backward", (x, x))):
        want = getattr(ref, name)(*(a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args))
        got = getattr(kernels, name)(*args)
        assert got.dtype == np.float16
        np.testing.assert_array_equal(got, want.astype(np.float16))
    out = np.empty_like(x)
    assert kernels.gelu_forward(x, out=out) is out
    np.testing.assert_array_equal(out, ref.gelu_forward(x.astype(np.float32)).astype(np.float16))
