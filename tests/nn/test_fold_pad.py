"""The padding layers, pixel_shuffle/unshuffle, channel_shuffle, unfold/fold and the channel dropouts,
against PyTorch.

Hypothesis draws shapes and arguments, some invalid, and runs the same float64 inputs through both
libraries with test_nn_more_layers' harness: both raise the same exception type, or the values, the
node and the gradients agree. The modules' reprs and (empty) state_dicts are torch's. The dropouts are
random, so their tests check the mask's structure (one draw per channel), its scale and eval()'s identity.
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
from tests.nn.test_conv1d_and_pools import _compare, needs_torch

try:
    import torch
except ImportError:  # the comparisons skip; the checks without torch still run
    torch = None

FEW = settings(max_examples=60, deadline=None)


def _module(lib, name: str, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(lib.nn, name)(*args)


def _same_module(name: str, *args):
    """The module built in both libraries, with the same repr and state_dict; (None, None) if both refuse."""
    made = {}
    for lib in (minigrad, torch):
        try:
            made[lib] = _module(lib, name, *args)
        except (ValueError, TypeError) as error:
            made[lib] = type(error)
    mine, theirs = made[minigrad], made[torch]
    if isinstance(theirs, type):
        assert mine is theirs
        return None, None
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict()) == []
    return mine, theirs


def _shape(draw, ndims: tuple, low: int = 1, high: int = 5) -> tuple:
    return tuple(draw(st.integers(low, high)) for _ in range(draw(st.sampled_from(ndims))))


# -- padding ----------------------------------------------------------------------------------------
PADS = ["ZeroPad1d", "ZeroPad2d", "ConstantPad1d", "ConstantPad2d", "ReflectionPad1d", "ReflectionPad2d",
        "ReplicationPad1d", "ReplicationPad2d", "CircularPad1d", "CircularPad2d"]


@needs_torch
@settings(max_examples=120, deadline=None)
@given(st.sampled_from(PADS), st.data(), st.integers(0, 2 ** 16))
def test_padding_modules_match_torch(name, data, seed):
    draw = data.draw
    dims = int(name[-2])
    size = draw(st.sampled_from([1, 2 * dims, 2 * dims, 2 * dims + 1]))  # one int for all sides, or a list
    padding = draw(st.integers(0, 3)) if size == 1 else tuple(draw(st.integers(-1, 3)) for _ in range(size))
    args = (padding, draw(st.sampled_from([0.0, 2.5, -1]))) if name.startswith("Constant") else (padding,)
    mine, theirs = _same_module(name, *args)
    assert mine.padding == theirs.padding
    shape = _shape(draw, (dims, dims + 1, dims + 2, dims + 3), 1, 4)
    # (circular padding's node is PyTorch's CopySlices, minigrad's IndexBackward0: times 1, both are Mul's)
    call = (lambda m, t: m(t) * 1) if name.startswith("Circular") else (lambda m, t: m(t))
    _compare(lambda lib, t: call(mine if lib is minigrad else theirs, t),
             [np.random.default_rng(seed).standard_normal(shape)])


# -- pixel and channel shuffles ---------------------------------------------------------------------
@needs_torch
@FEW
@given(st.sampled_from(["pixel_shuffle", "pixel_unshuffle", "channel_shuffle"]), st.data(), st.integers(0, 2 ** 16))
def test_shuffles_match_torch(name, data, seed):
    draw = data.draw
    factor = draw(st.integers(1, 3)) if draw(st.integers(0, 9)) else draw(st.sampled_from([0, -1]))
    size = max(factor, 1)  # (of the shape's dimensions that a valid factor divides)
    batch = _shape(draw, (0, 1, 2) if name != "channel_shuffle" else (1, 2), 1, 2)
    if name == "pixel_shuffle":
        shape = (*batch, size ** 2 * draw(st.integers(1, 2)) + (draw(st.integers(0, 9)) == 0), *_shape(draw, (2,)))
    elif name == "pixel_unshuffle":
        shape = (*batch, draw(st.integers(1, 2)), *(size * draw(st.integers(1, 2)) + (draw(st.integers(0, 14)) == 0)
                                                   for _ in range(2)))
    else:
        shape = (*batch[:1], size * draw(st.integers(1, 2)) + (draw(st.integers(0, 9)) == 0), *_shape(draw, (0, 1, 2)))
    x = np.random.default_rng(seed).standard_normal(shape)
    _compare(lambda lib, t: getattr(lib.nn.functional, name)(t, factor), [x])
    module = {"pixel_shuffle": "PixelShuffle", "pixel_unshuffle": "PixelUnshuffle", "channel_shuffle": "ChannelShuffle"}
    mine, theirs = _same_module(module[name], factor)
    _compare(lambda lib, t: (mine if lib is minigrad else theirs)(t), [x])


def test_pixel_unshuffle_undoes_pixel_shuffle():
    x = minigrad.arange(2 * 18 * 2 * 3.0).reshape(2, 18, 2, 3)
    assert minigrad.equal(F.pixel_unshuffle(F.pixel_shuffle(x, 3), 3), x)
    assert minigrad.equal(F.channel_shuffle(F.channel_shuffle(x, 3), 6), x)  # (3 groups of 6, then 6 of 3)


def test_the_factors_must_be_ints():
    x = minigrad.zeros(1, 4, 2, 2)
    for fn in (F.pixel_shuffle, F.pixel_unshuffle, F.channel_shuffle):
        with pytest.raises(TypeError, match="must be int, not float"):
            fn(x, 2.0)


# -- unfold and fold ----------------------------------------------------------------------------------
@st.composite
def block_sizes(draw):
    """kernel_size, dilation, padding and stride, as one int or a pair, sometimes invalid."""
    sizes = []
    for low, high in ((1, 3), (1, 2), (0, 2), (1, 3)):
        values = tuple(draw(st.integers(low, high)) for _ in range(2))
        sizes.append(values[0] if values[0] == values[1] and draw(st.booleans()) else values)
    broken = draw(st.sampled_from([None] * 12 + [0, 1, 2, 3, "length"]))
    if broken == "length":
        sizes[0] = (2,) * draw(st.sampled_from([1, 3]))
    elif broken is not None:
        sizes[broken] = -1 if broken == 2 else 0
    return sizes


def _pairs(sizes) -> list:
    return [(s, s) if isinstance(s, int) else s for s in sizes]


@needs_torch
@FEW
@given(block_sizes(), st.data(), st.integers(0, 2 ** 16))
def test_unfold_matches_torch(sizes, data, seed):
    draw = data.draw
    shape = _shape(draw, (2, 3, 3, 4, 4, 5), 1, 6)
    if len(shape) >= 3 and draw(st.integers(0, 9)) == 0:
        shape = shape[:-3] + (0,) + shape[-2:]
    x = np.random.default_rng(seed).standard_normal(shape)
    _compare(lambda lib, t: lib.nn.functional.unfold(t, *sizes), [x], terms=4)
    mine, theirs = _same_module("Unfold", *sizes)
    _compare(lambda lib, t: (mine if lib is minigrad else theirs)(t), [x], terms=4)


@needs_torch
@FEW
@given(block_sizes(), st.data(), st.integers(0, 2 ** 16))
def test_fold_matches_torch(sizes, data, seed):
    """Columns for an output_size drawn first, so that most calls are valid; some have one block too many."""
    draw = data.draw
    output_size = tuple(draw(st.integers(1, 6)) for _ in range(2))
    kernel, dilation, padding, stride = _pairs(sizes)
    blocks = [(n + 2 * p - d * (k - 1) - 1) // s + 1 if k > 0 and s > 0 else 1
              for n, k, d, p, s in zip(output_size, kernel, dilation, padding, stride)]
    channels = draw(st.integers(1, 2)) * math.prod(kernel[:2]) + (draw(st.integers(0, 14)) == 0)
    length = max(math.prod(blocks), 1) + (draw(st.integers(0, 14)) == 0)
    shape = (*_shape(draw, (0, 1, 1, 2), 0, 2), channels, length)
    size = output_size[0] if output_size[0] == output_size[1] and draw(st.booleans()) else output_size
    x = np.random.default_rng(seed).standard_normal(shape)
    _compare(lambda lib, t: lib.nn.functional.fold(t, size, *sizes), [x], terms=math.prod(kernel[:2]))
    mine, theirs = _same_module("Fold", size, *sizes)
    _compare(lambda lib, t: (mine if lib is minigrad else theirs)(t), [x], terms=math.prod(kernel[:2]))


def test_fold_and_unfold_gradcheck_to_second_order():
    rng = np.random.default_rng(0)
    x = minigrad.tensor(rng.standard_normal((2, 2, 4, 5)), requires_grad=True)
    cols = minigrad.tensor(rng.standard_normal((1, 6, 4)), requires_grad=True)
    for fn, leaf in ((lambda t: F.unfold(t, (2, 3), 2, 1, (2, 1)) ** 2, x), (lambda t: F.fold(t, (4, 5), (1, 3), 1, 0, 2) ** 2, cols)):
        assert gradcheck(fn, [leaf], eps=1e-6, atol=1e-5, rtol=1e-3)
        assert gradgradcheck(fn, [leaf], eps=1e-6, atol=1e-5, rtol=1e-3)


def test_unfold_then_matmul_is_conv2d():
    """What unfold is for: a conv2d as one matrix product with the columns."""
    rng = np.random.default_rng(1)
    x, w = minigrad.tensor(rng.standard_normal((2, 3, 5, 6))), minigrad.tensor(rng.standard_normal((4, 3, 2, 3)))
    y = (w.reshape(4, -1) @ F.unfold(x, (2, 3), padding=1, stride=2)).reshape(2, 4, 3, 3)
    np.testing.assert_allclose(y.numpy(), F.conv2d(x, w, padding=1, stride=2).numpy(), rtol=1e-12, atol=1e-12)


# -- channel dropout ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name, shape", [("Dropout1d", (6, 40, 3)), ("Dropout1d", (40, 3)), ("Dropout2d", (6, 40, 2, 3)),
                                         ("Dropout2d", (6, 40, 3))])
@pytest.mark.filterwarnings("ignore:dropout2d")
def test_channel_dropout_zeroes_whole_channels(name, shape):
    minigrad.manual_seed(0)
    layer = getattr(nn, name)(p=0.25)
    x = minigrad.ones(shape, dtype=minigrad.float64, requires_grad=True)
    y = layer(x)
    y.sum().backward()
    planes = y.detach().numpy().reshape(-1, math.prod(shape[-1 if len(shape) == 2 else 2:]))
    assert set(np.unique(planes)) <= {0.0, 1 / 0.75}
    assert (planes == planes[:, :1]).all()  # one draw per channel
    assert 0.55 < (planes[:, 0] > 0).mean() < 0.95
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())  # d(x * mask)/dx is the mask
    layer.eval()
    assert layer(x) is x or minigrad.equal(layer(x), x)


@pytest.mark.parametrize("fn", [F.dropout1d, F.dropout2d])
def test_channel_dropout_edges(fn):
    x = minigrad.ones(2, 3, 4, 5)[..., 0] if fn is F.dropout1d else minigrad.ones(2, 3, 4, 5)
    assert fn(x, 0.5, training=False) is x
    assert fn(x, 0.0) is x
    assert not fn(x, 1.0).numpy().any()
    y = x.clone()
    assert fn(y, 1.0, inplace=True) is y and not y.numpy().any()
    with pytest.raises(ValueError, match="between 0 and 1"):
        fn(x, 1.5)


@needs_torch
@pytest.mark.parametrize("name", ["dropout1d", "dropout2d"])
@pytest.mark.parametrize("ndim", [0, 1, 2, 3, 4, 5])
@pytest.mark.parametrize("p", [0.5, 1.0])
def test_channel_dropout_refuses_and_warns_as_torch(name, ndim, p):
    outcomes = []
    for lib in (minigrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                shape = getattr(lib.nn.functional, name)(lib.ones((2,) * ndim), p).shape
            except RuntimeError:
                shape = None
        outcomes.append((None if shape is None else tuple(shape), len(caught)))
    assert outcomes[0] == outcomes[1]


@needs_torch
@pytest.mark.parametrize("name", ["Dropout1d", "Dropout2d"])
@pytest.mark.parametrize("args", [(), (0.3,), (0.3, True), (1.5,)])
def test_channel_dropout_modules_are_torchs(name, args):
    _same_module(name, *args)
