"""affine_grid, grid_sample (bilinear, nearest, bicubic), interpolate's bicubic / trilinear / area /
nearest-exact / antialiased (bilinear, bicubic, lanczos) modes and max_unpool, against PyTorch.

Hypothesis draws shapes, modes, padding modes, align_corners, sizes and dtypes (some arguments invalid) and
runs the same inputs through both libraries (``compare``): both raise the same exception type, or the values,
the indices and the gradient of every float input agree (float64 to a few ulps per term, float32 to its own
epsilon). The modules' reprs and state_dicts are torch's. gradcheck and gradgradcheck run without torch.
``compare`` is shared with test_nn_3d and test_ctc_loss.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:  # the comparisons skip; the checks without torch still run
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the [torch] extra)")
FEW = settings(max_examples=40, deadline=None, derandomize=True)


# -- the harness: the same call in both libraries ------------------------------------------------
def _run(lib, fn, inputs: list, dtype: str) -> dict:
    """``fn(lib, *tensors)``: float arrays become leaves of ``dtype`` that need a gradient, integer arrays
    int64 tensors, anything else is passed as it is; then backward with a fixed random upstream gradient."""
    tensors = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) if isinstance(a, np.ndarray)
               and a.dtype.kind == "f" else lib.tensor(a) if isinstance(a, np.ndarray) else a for a in inputs]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            out = fn(lib, *tensors)
        except Exception as error:  # noqa: BLE001  (the type is what is compared)
            return {"raised": type(error).__name__, "message": str(error)}
    values, indices = out if isinstance(out, tuple) else (out, None)
    result = {"raised": None, "values": values.detach().numpy(), "indices": None if indices is None else
              indices.numpy()}
    if values.requires_grad and values.numel():
        upstream = np.random.default_rng(0).standard_normal(tuple(values.shape))
        values.backward(lib.tensor(upstream, dtype=getattr(lib, dtype)))
    result["grads"] = [t.grad.numpy() if getattr(t, "requires_grad", False) and t.grad is not None else None
                       for t in tensors if isinstance(t, lib.Tensor) and t.is_leaf]
    return result


def compare(fn, inputs: list, dtype: str = "float64", terms: int = 1) -> dict:
    """Both raise the same exception type, or the values, indices and gradients agree; returns torch's result.

    The tolerance is a few epsilons of ``dtype`` per term of the longest sum (``terms``).
    """
    mine, theirs = _run(minigrad, fn, inputs, dtype), _run(torch, fn, inputs, dtype)
    assert mine["raised"] == theirs["raised"], (mine.get("message"), theirs.get("message"))
    if theirs["raised"]:
        return theirs
    tol = 64 * np.finfo(np.dtype(dtype)).eps * max(1, terms)
    assert mine["values"].shape == theirs["values"].shape
    np.testing.assert_allclose(mine["values"], theirs["values"], rtol=tol, atol=tol)
    if theirs["indices"] is not None:
        np.testing.assert_array_equal(mine["indices"], theirs["indices"])
    assert len(mine["grads"]) == len(theirs["grads"])
    for m, t in zip(mine["grads"], theirs["grads"]):
        assert (m is None) == (t is None)
        if t is not None:
            np.testing.assert_allclose(m, t, rtol=tol, atol=tol, err_msg="gradient")
    return theirs


def same_module(name: str, *args, **kwargs):
    """The module built in both libraries, with the same repr, state_dict keys and shapes; the pair."""
    mine, theirs = getattr(minigrad.nn, name)(*args, **kwargs), getattr(torch.nn, name)(*args, **kwargs)
    assert repr(mine) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in mine.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    return mine, theirs


def _normal(draw, shape: tuple, scale: float = 1.0) -> np.ndarray:
    return np.random.default_rng(draw(st.integers(0, 2 ** 16))).standard_normal(shape) * scale


# -- affine_grid and grid_sample ----------------------------------------------------------------------
@st.composite
def grid_samples(draw):
    dims = draw(st.sampled_from([2, 2, 3]))
    batch, channels = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(dims))
    points = tuple(draw(st.integers(1, 4)) for _ in range(dims))
    x = _normal(draw, (batch, channels, *spatial))
    grid = _normal(draw, (batch, *points, dims), draw(st.sampled_from([0.6, 1.4])))
    mode = draw(st.sampled_from(["bilinear", "nearest"] + ["bicubic"] * (dims == 2)))
    padding_mode = draw(st.sampled_from(["zeros", "border", "reflection"]))
    broken = draw(st.sampled_from([None] * 12 + ["mode", "padding_mode", "last", "batch", "ndim"]))
    if broken == "mode":
        mode = draw(st.sampled_from(["linear", "area", "bicubic3d"]))
        if mode == "bicubic3d":
            mode = "bicubic" if dims == 3 else "cubic"
    elif broken == "padding_mode":
        padding_mode = "circular"
    elif broken == "last":
        grid = grid[..., :1]
    elif broken == "batch":
        grid = np.concatenate([grid, grid])
    elif broken == "ndim":
        grid = grid[:, 0]
    return x, grid, mode, padding_mode, draw(st.booleans()), draw(st.sampled_from(["float64", "float32"]))


@needs_torch
@FEW
@given(grid_samples())
def test_grid_sample_matches_torch(case):
    x, grid, mode, padding_mode, align_corners, dtype = case
    compare(lambda lib, x, g: lib.nn.functional.grid_sample(x, g, mode, padding_mode, align_corners), [x, grid],
            dtype, terms=(16 if mode == "bicubic" else 1) * (8 if dtype == "float32" else 1))


@needs_torch
@FEW
@given(st.integers(0, 2 ** 16), st.sampled_from([4, 5]), st.booleans(), st.sampled_from(["float64", "float32"]),
       st.sampled_from([None] * 6 + ["rows", "size", "zero", "batch"]))
def test_affine_grid_matches_torch(seed, ndim, align_corners, dtype, broken):
    rng = np.random.default_rng(seed)
    rows = ndim - 2
    size = [int(n) for n in rng.integers(1, 5, ndim)]
    theta = rng.standard_normal((size[0], rows, rows + 1))
    if broken == "rows":
        theta = theta[:, :, :rows]
    elif broken == "size":
        size = size[:3]
    elif broken == "zero":
        size[-1] = 0
    compare(lambda lib, t: lib.nn.functional.affine_grid(t, size, align_corners), [theta], dtype,
            terms=4 if dtype == "float32" else 1)


@needs_torch
def test_grid_sample_and_affine_grid_refusals_match_torch():
    x, grid = np.zeros((1, 2, 3, 3)), np.zeros((1, 2, 2, 2))
    compare(lambda lib, x, g: lib.nn.functional.grid_sample(x, g.float(), align_corners=False), [x, grid])
    compare(lambda lib, x, g: lib.nn.functional.grid_sample(x[..., :0], g, align_corners=False), [x, grid])
    compare(lambda lib, t: lib.nn.functional.affine_grid(t.long(), [1, 1, 2, 2], False), [np.zeros((1, 2, 3))])
    with pytest.warns(UserWarning, match="align_corners=False"):
        F.grid_sample(minigrad.zeros(1, 1, 2, 2), minigrad.zeros(1, 1, 1, 2))


def test_a_spatial_transformer_with_the_identity_reads_the_image_back():
    """affine_grid of the identity, sampled bilinearly without align_corners, hits every pixel's centre."""
    x = minigrad.randn(2, 3, 4, 5)
    theta = minigrad.tensor([[[1.0, 0, 0], [0, 1, 0]]] * 2)
    out = F.grid_sample(x, F.affine_grid(theta, [2, 3, 4, 5], align_corners=False), align_corners=False)
    np.testing.assert_allclose(out.numpy(), x.numpy(), rtol=1e-6, atol=1e-6)


GRADCHECKS = {  # name: (function of the leaves, leaf shapes)
    "grid_sample bilinear zeros": (lambda x, g: F.grid_sample(x, g, align_corners=False), [(2, 2, 3, 4), (2, 3, 2, 2)]),
    "grid_sample bilinear border corners": (lambda x, g: F.grid_sample(x, g, padding_mode="border", align_corners=True),
                                            [(1, 2, 3, 3), (1, 2, 3, 2)]),
    "grid_sample reflection": (lambda x, g: F.grid_sample(x, g, padding_mode="reflection", align_corners=False),
                               [(1, 1, 3, 4), (1, 3, 3, 2)]),
    "grid_sample bicubic reflection": (lambda x, g: F.grid_sample(x, g, "bicubic", "reflection", align_corners=True),
                                       [(1, 2, 3, 4), (1, 2, 2, 2)]),
    "grid_sample trilinear": (lambda x, g: F.grid_sample(x, g, align_corners=False),
                              [(1, 2, 2, 3, 2), (1, 2, 1, 2, 3)]),
    "affine_grid": (lambda t: F.affine_grid(t, [2, 1, 3, 4], align_corners=False) ** 2, [(2, 2, 3)]),
    "interpolate bicubic": (lambda x: F.interpolate(x, size=(4, 3), mode="bicubic"), [(1, 2, 3, 2)]),
    "interpolate antialiased bicubic": (lambda x: F.interpolate(x, size=(2, 5), mode="bicubic", antialias=True),
                                        [(1, 2, 5, 3)]),
    "interpolate trilinear": (lambda x: F.interpolate(x, scale_factor=1.5, mode="trilinear"), [(1, 1, 2, 2, 3)]),
    "max_unpool2d": (lambda x: F.max_unpool2d(x, minigrad.tensor([[[[0, 3], [9, 14]]]]), 2), [(1, 1, 2, 2)]),
}


@pytest.mark.parametrize("name", GRADCHECKS)
def test_gradcheck_and_gradgradcheck(name):
    """Finite differences, without torch: with respect to the input and the grid, to the second order."""
    fn, shapes = GRADCHECKS[name]
    rng = np.random.default_rng(len(name))
    leaves = [minigrad.tensor(rng.standard_normal(shape) * 0.8, dtype=minigrad.float64, requires_grad=True)
              for shape in shapes]
    assert gradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(fn, leaves, eps=1e-6, atol=1e-5, rtol=1e-3)


# -- interpolate ---------------------------------------------------------------------------------------
@st.composite
def interpolations(draw):
    mode = draw(st.sampled_from(["bicubic", "trilinear", "area", "nearest-exact", "nearest", "bilinear", "lanczos"]))
    ndim = {"bicubic": 4, "trilinear": 5, "bilinear": 4, "lanczos": 4}.get(mode) or draw(st.sampled_from([3, 4, 5]))
    if draw(st.integers(0, 9)) == 0:  # a rank the mode does not take
        ndim = draw(st.sampled_from([3, 4, 5]))
    spatial = tuple(draw(st.integers(1, 5)) for _ in range(ndim - 2))
    x = _normal(draw, (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *spatial))
    if draw(st.booleans()):
        size, scale = tuple(draw(st.integers(1, 7)) for _ in spatial), None
    else:
        size, scale = None, tuple(draw(st.sampled_from([0.5, 0.8, 1.0, 1.5, 2.0, 2.7])) for _ in spatial)
    align = draw(st.sampled_from([None, False, True])) if mode in ("bicubic", "trilinear", "bilinear") else \
        draw(st.sampled_from([None] * 8 + [True]))
    antialias = mode == "lanczos" or mode in ("bilinear", "bicubic") and draw(st.booleans())
    return x, size, scale, mode, align, antialias, draw(st.sampled_from(["float64", "float32"]))


@needs_torch
@FEW
@given(interpolations())
def test_interpolate_modes_match_torch(case):
    x, size, scale, mode, align_corners, antialias, dtype = case
    compare(lambda lib, x: lib.nn.functional.interpolate(x, size, scale, mode, align_corners, antialias=antialias),
            [x], dtype, terms=16 if dtype == "float32" else 4)


@needs_torch
@pytest.mark.parametrize("ndim", [2, 3, 4, 5, 6])
def test_interpolate_refusals_match_torch(ndim):
    """Each mode at each rank, with and without antialias and align_corners: torch's exception type, or its
    values."""
    shape = (1, 1, 2, 2, 2, 2)[:ndim]
    x = np.arange(float(np.prod(shape))).reshape(shape)
    for mode in ("nearest", "linear", "bilinear", "bicubic", "trilinear", "area", "nearest-exact", "lanczos", "cubic"):
        for antialias in (False, True):
            for align_corners in (None, True):
                compare(lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode=mode,
                                                                     align_corners=align_corners,
                                                                     antialias=antialias), [x], terms=8)


@needs_torch
@pytest.mark.parametrize("name, args", [("Upsample", dict(scale_factor=2, mode="bicubic")),
                                        ("Upsample", dict(size=(2, 3, 4), mode="trilinear", align_corners=True)),
                                        ("Upsample", dict(scale_factor=1.5, mode="nearest-exact")),
                                        ("UpsamplingNearest2d", dict(size=3)),
                                        ("UpsamplingBilinear2d", dict(scale_factor=2))])
def test_upsample_modules_match_torch(name, args):
    mine, theirs = same_module(name, **args)
    x = np.random.default_rng(0).standard_normal((1, 2, 2, 3, 2)[:5 if args.get("mode") == "trilinear" else 4])
    np.testing.assert_allclose(mine(minigrad.tensor(x)).numpy(), theirs(torch.tensor(x)).numpy(), rtol=1e-12)


# -- max_unpool ----------------------------------------------------------------------------------------
@st.composite
def unpools(draw):
    n = draw(st.sampled_from([1, 2, 3]))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(n))
    stride = tuple(draw(st.integers(1, 3)) for _ in range(n))
    padding = tuple(draw(st.integers(0, k // 2)) for k in kernel)
    spatial = tuple(draw(st.integers(k, k + 4)) for k in kernel)
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 2)), *spatial)[draw(st.integers(0, 1)):]
    x = np.random.default_rng(draw(st.integers(0, 99))).permutation(int(np.prod(shape))).reshape(shape) * 0.1
    pooled = [(s + 2 * p - k) // st_ + 1 for s, k, st_, p in zip(spatial, kernel, stride, padding)]
    default = [(o - 1) * st_ + k - 2 * p for o, k, st_, p in zip(pooled, kernel, stride, padding)]
    output_size = draw(st.sampled_from([None, "fits", "leading", "bad"]))
    if output_size == "fits":  # the pool's own input size, when that is one an unpool may give
        output_size = [s if d - st_ < s < d + st_ else d for s, d, st_ in zip(spatial, default, stride)]
    elif output_size == "leading":
        output_size = [*shape[:-n], *default][-n - 2:] if len(shape) == n + 2 else default
    elif output_size == "bad":
        output_size = [d + st_ for d, st_ in zip(default, stride)]
    broken = draw(st.sampled_from([None] * 8 + ["int32"]))
    return n, x, kernel, stride, padding, output_size, broken


@needs_torch
@FEW
@given(unpools())
def test_max_unpool_matches_torch(case):
    n, x, kernel, stride, padding, output_size, broken = case

    def unpool(lib, x):
        F_ = lib.nn.functional
        pooled, indices = getattr(F_, f"max_pool{n}d")(x, kernel, stride, padding, return_indices=True)
        if broken == "int32":
            indices = indices.int()
        return getattr(F_, f"max_unpool{n}d")(pooled * 2, indices, kernel, stride, padding, output_size)
    compare(unpool, [x])


@needs_torch
@pytest.mark.parametrize("n", [1, 2, 3])
def test_max_unpool_modules_match_torch(n):
    mine, theirs = same_module(f"MaxUnpool{n}d", 2, padding=0)
    same_module(f"MaxUnpool{n}d", (3,) * n, (2,) * n, 1)
    x = np.random.default_rng(n).permutation(4 ** (n + 1)).reshape(1, 4, *(4,) * n) * 1.0
    outs = []
    for lib, layer in ((minigrad, mine), (torch, theirs)):
        pooled, indices = getattr(lib.nn, f"MaxPool{n}d")(2, return_indices=True)(lib.tensor(x))
        outs.append(layer(pooled, indices, output_size=[5] * n).numpy())
    np.testing.assert_array_equal(*outs)
