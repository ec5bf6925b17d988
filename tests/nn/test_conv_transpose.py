"""conv_transpose1d/2d and nn.ConvTranspose1d/2d, against PyTorch, against conv2d's input gradient, and by
gradcheck.

The torch comparisons draw shapes and hyperparameters with hypothesis (stride, padding, output_padding,
dilation, groups, bias, batched or not), some of them invalid, and run the same float64 inputs through
both libraries with test_nn_more_layers' harness: both raise the same exception type, or the values,
the node and the gradients of input, weight and bias agree. The checks at the top need no torch.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck
from tests.nn.test_conv1d_and_pools import _compare, _copy_parameters, _shape, _size, _tolerance, needs_torch

try:
    import torch
except ImportError:  # the comparisons skip; the checks without torch still run
    torch = None

FEW = settings(max_examples=60, deadline=None)


def _leaf(rng, shape):
    return minigrad.tensor(rng.standard_normal(shape), requires_grad=True)


# -- without torch ---------------------------------------------------------------------------------
GRADCHECKS = {  # name: (function of the leaves, leaf shapes)
    "2d stride padding output_padding": (lambda x, w, b: F.conv_transpose2d(x, w, b, 2, 1, 1),
                                         [(2, 2, 3, 3), (2, 3, 3, 2), (3,)]),
    "2d groups dilation": (lambda x, w, b: F.conv_transpose2d(x, w, b, (1, 2), 0, 0, 2, (2, 1)),
                           [(1, 4, 2, 3), (4, 1, 2, 2), (2,)]),
    # output_padding >= stride, allowed as dilation is larger: x is extended by zeros inside
    "1d output_padding past the stride": (lambda x, w: F.conv_transpose1d(x, w, None, 1, 0, 2, 1, 3),
                                          [(2, 2, 4), (2, 3, 2)]),
    "1d unbatched": (lambda x, w: F.conv_transpose1d(x, w, stride=3), [(2, 3), (2, 1, 2)]),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_and_gradgradcheck(name):
    fn, shapes = GRADCHECKS[name]
    rng = np.random.default_rng(len(name))
    leaves = [_leaf(rng, shape) for shape in shapes]
    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_it_is_conv2d_input_gradient(data):
    """The definition: conv_transpose(x, w) is the gradient with respect to y of <conv(y, w), x>, for y of the
    transposed convolution's output shape (computed here through conv2d's own backward)."""
    draw = data.draw
    n, groups = draw(st.sampled_from([1, 2])), draw(st.integers(1, 2))
    stride, dilation = (tuple(draw(st.integers(1, 3)) for _ in range(n)) for _ in range(2))
    padding = tuple(draw(st.integers(0, 2)) for _ in range(n))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(stride, dilation))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    spatial = tuple(draw(st.integers(1, 4)) for _ in range(n))
    out = [(i - 1) * s - 2 * p + d * (k - 1) + 1 + op
           for i, s, p, d, k, op in zip(spatial, stride, padding, dilation, kernel, output_padding)]
    if min(out) <= 0:
        return
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    x = minigrad.tensor(rng.standard_normal((2, 2 * groups, *spatial)))
    w = minigrad.tensor(rng.standard_normal((2 * groups, draw(st.integers(1, 2)), *kernel)))
    convolve, transpose = (getattr(F, f"{name}{n}d") for name in ("conv", "conv_transpose"))
    y = transpose(x, w, None, stride, padding, output_padding, groups, dilation)
    assert list(y.shape[2:]) == out
    y0 = minigrad.zeros(y.shape, dtype=y.dtype, requires_grad=True)
    conv = convolve(y0, w, None, stride, padding, dilation, groups)
    # (with output_padding >= stride, conv gives more positions than x has: those get gradient 0)
    extra = [c - i for c, i in zip(conv.shape[2:], spatial)]
    expected, = minigrad.autograd.grad(conv, y0, F.pad(x, [a for e in reversed(extra) for a in (0, e)]))
    np.testing.assert_allclose(y.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_the_module_takes_output_size():
    layer = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1)
    x = minigrad.zeros(1, 2, 4, 4)
    assert layer(x).shape == (1, 3, 7, 7)
    assert layer(x, output_size=[8, 8]).shape == (1, 3, 8, 8)
    assert layer(x, output_size=(1, 3, 8, 7)).shape == (1, 3, 8, 7)
    with pytest.raises(ValueError, match="valid sizes range from"):
        layer(x, output_size=(9, 8))
    with pytest.raises(ValueError, match="must have 2 or 4 elements"):
        layer(x, output_size=(8,))


# -- against torch ---------------------------------------------------------------------------------
@st.composite
def transposed_convolutions(draw):
    n = draw(st.sampled_from([1, 2]))
    groups = draw(st.integers(1, 3))
    channels, out_per_group = groups * draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    stride, dilation, padding = _size(draw, n, 1, 3), _size(draw, n, 1, 3), _size(draw, n, 0, 2)
    strides, dilations = ((v,) * n if isinstance(v, int) else v for v in (stride, dilation))
    output_padding = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(strides, dilations))
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(n))
    x_shape = _shape(draw, draw(st.booleans()), channels, spatial)
    w_shape = (channels, out_per_group, *kernel)
    bias = draw(st.booleans())
    broken = draw(st.sampled_from([None] * 16 + ["channels", "groups", "stride", "padding", "dilation", "bias",
                                                 "ndim", "output_padding", "negative output_padding", "too small"]))
    if broken == "channels":
        w_shape = (channels + 1, out_per_group, *kernel)
    elif broken == "groups":
        groups = draw(st.sampled_from([0, channels + 1]))
    elif broken == "stride":
        stride = (0,) * n
    elif broken == "padding":
        padding = draw(st.sampled_from([(-1,) * n, "same"]))
    elif broken == "dilation":
        dilation = 0
    elif broken == "ndim":
        x_shape = (1,) + x_shape if len(x_shape) == n + 2 else x_shape[1:]
    elif broken == "output_padding":  # as large as both the stride and the dilation
        output_padding = tuple(max(s, d) for s, d in zip(strides, dilations))
    elif broken == "negative output_padding":
        output_padding = -1
    elif broken == "too small":
        padding = tuple(5 * d * k for d, k in zip(dilations, kernel))
    b_shape = (out_per_group * groups + (broken == "bias"),)
    return n, x_shape, w_shape, b_shape if bias else None, stride, padding, output_padding, dilation, groups


@needs_torch
@settings(max_examples=150, deadline=None)
@given(transposed_convolutions(), st.integers(0, 2 ** 16))
def test_conv_transpose_matches_torch(case, seed):
    n, x_shape, w_shape, b_shape, stride, padding, output_padding, dilation, groups = case
    rng = np.random.default_rng(seed)
    inputs = [rng.standard_normal(x_shape), rng.standard_normal(w_shape),
              None if b_shape is None else rng.standard_normal(b_shape)]

    def conv_transpose(lib, x, w, b):
        fn = getattr(lib.nn.functional, f"conv_transpose{n}d")
        return fn(x, w, b, stride, padding, output_padding, groups, dilation)
    _compare(conv_transpose, inputs, terms=math.prod(w_shape[1:]) * w_shape[0])


@needs_torch
@settings(max_examples=30, deadline=None)
@given(transposed_convolutions(), st.integers(0, 2 ** 16))
def test_conv_transpose_second_derivatives_match_torch(case, seed):
    """Gradients with create_graph, differentiated again (conv2d's nodes under the transposed one)."""
    n, x_shape, w_shape, b_shape, stride, padding, output_padding, dilation, groups = case
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal(x_shape), rng.standard_normal(w_shape)]
    arrays += [] if b_shape is None else [rng.standard_normal(b_shape)]

    def second(lib):
        leaves = [lib.tensor(a, requires_grad=True) for a in arrays]
        try:
            y = getattr(lib.nn.functional, f"conv_transpose{n}d")(*leaves[:2], leaves[2] if b_shape else None,
                                                                  stride, padding, output_padding, groups, dilation)
        except Exception as error:  # noqa: BLE001
            return type(error).__name__
        grads = lib.autograd.grad((y ** 2).sum(), leaves, create_graph=True)
        return [g.detach().numpy() for g in lib.autograd.grad(sum((g * g).sum() for g in grads), leaves)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mine, theirs = second(minigrad), second(torch)
    if isinstance(theirs, str):
        assert mine == theirs
        return
    tol = _tolerance(np.float64, 4 * math.prod(w_shape) * math.prod(x_shape[-n:]))
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m, t, rtol=tol, atol=tol)


@st.composite
def conv_transpose_modules(draw):
    n = draw(st.sampled_from([1, 2]))
    groups = draw(st.integers(1, 2))
    stride, dilation = _size(draw, n, 1, 3), _size(draw, n, 1, 2)
    strides, dilations = ((v,) * n if isinstance(v, int) else v for v in (stride, dilation))
    kwargs = dict(stride=stride, padding=_size(draw, n, 0, 1), dilation=dilation, groups=groups,
                  bias=draw(st.booleans()), padding_mode=draw(st.sampled_from(["zeros"] * 5 + ["reflect", "mirror"])))
    if draw(st.booleans()):
        kwargs["output_padding"] = tuple(draw(st.integers(0, max(s, d) - 1)) for s, d in zip(strides, dilations))
    args = (groups * draw(st.integers(1, 2)) + draw(st.sampled_from([0] * 6 + [1])), groups * draw(st.integers(1, 2)),
            _size(draw, n, 1, 3))
    spatial = tuple(draw(st.integers(2, 5)) for _ in range(n))
    x_shape = _shape(draw, draw(st.booleans()), args[0], spatial)
    output_size = None
    if draw(st.booleans()):  # a size in range, sometimes one past it, sometimes with N and C in front
        output_size = [(i - 1) * s - 2 * p + d * (k - 1) + 1 + draw(st.integers(0, s - (draw(st.integers(0, 9)) > 0)))
                       for i, s, p, d, k in zip(spatial, strides,
                                                (kwargs["padding"],) * n if isinstance(kwargs["padding"], int)
                                                else kwargs["padding"], dilations,
                                                (args[2],) * n if isinstance(args[2], int) else args[2])]
        output_size = list(x_shape[:-n]) + output_size if draw(st.booleans()) else output_size
    return n, args, kwargs, x_shape, output_size


@needs_torch
@FEW
@given(conv_transpose_modules(), st.integers(0, 2 ** 16))
def test_conv_transpose_modules_match_torch(case, seed):
    """Construction (its ValueErrors), repr, state_dict, and forward with torch's weights, output_size included."""
    n, args, kwargs, x_shape, output_size = case
    made = {}
    for lib in (minigrad, torch):
        try:
            made[lib] = getattr(lib.nn, f"ConvTranspose{n}d")(*args, **kwargs).double()
        except ValueError:
            made[lib] = None
    assert (made[minigrad] is None) == (made[torch] is None)
    if made[torch] is None:
        return
    mine, theirs = made[minigrad], made[torch]
    assert repr(mine) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == \
           [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    for name in ("in_channels", "out_channels", "kernel_size", "stride", "padding", "dilation", "output_padding",
                 "groups", "transposed", "padding_mode"):
        assert getattr(mine, name) == getattr(theirs, name), name
    _copy_parameters(mine, theirs)
    x = np.random.default_rng(seed).standard_normal(x_shape)
    _compare(lambda lib, t: (mine if lib is minigrad else theirs)(t, output_size), [x],
             terms=math.prod(theirs.weight.shape))


@needs_torch
@pytest.mark.parametrize("dims", [1, 2])
def test_conv_transpose_initialisation_is_torchs(dims):
    """U(+-1/sqrt(fan_in)) for weight and bias, fan_in = out_channels / groups * prod(kernel_size) (the weight's
    dimension 1, not in_channels as for Conv)."""
    args, kwargs = (48, 8, 3), dict(groups=2)
    bound = 1 / math.sqrt(8 // 2 * 3 ** dims)
    for lib in (minigrad, torch):
        layer = getattr(lib.nn, f"ConvTranspose{dims}d")(*args, **kwargs)
        weight, bias = layer.weight.detach().numpy(), layer.bias.detach().numpy()
        assert weight.shape == (48, 4, *(3,) * dims)
        assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.95 * bound, lib.__name__
        assert np.abs(bias).max() <= bound
        assert abs(weight.std() - bound / math.sqrt(3)) < 0.1 * bound


@pytest.mark.parametrize("transposed", [False, True])
def test_an_empty_batch_has_gradients(transposed):
    """N = 0 runs forward and backward (the kernel's backward once reshaped the empty gradient with a -1)."""
    x = minigrad.zeros(0, 2, 3, 3, dtype=minigrad.float64, requires_grad=True)
    w = minigrad.ones(2, 2, 2, 2, dtype=minigrad.float64, requires_grad=True)
    b = minigrad.ones(2, dtype=minigrad.float64, requires_grad=True)
    y = (F.conv_transpose2d if transposed else F.conv2d)(x, w, b, stride=2)
    assert y.shape == ((0, 2, 6, 6) if transposed else (0, 2, 1, 1))
    y.sum().backward()
    assert x.grad.shape == x.shape and not w.grad.numpy().any() and not b.grad.numpy().any()
