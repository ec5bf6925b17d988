"""pdist, rrelu, alpha dropout, local response norm, LP pools, gumbel_softmax, Softmax2d, the deprecated
upsample names and the *_with_indices pools, against torch 2.13.

The deterministic functions: hypothesis draws shapes and hyperparameters (some invalid) and both
libraries get the same float64 or float32 input, half of it on a grid of quarters (equal rows and
ties); either both raise the same exception type, or the values, the warnings and the gradients
agree. The random ones (rrelu and the alpha dropouts while training, gumbel_softmax) are checked
for their structure and their distribution, not for torch's random stream; where a random layer is
deterministic (evaluation, p = 0 or 1, lower == upper) it is compared with torch exactly.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
INF = float("inf")


@st.composite
def calls(draw):
    """(description, function of (F, x), input array): the function returns the output to compare."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    grid = draw(st.booleans())

    def values(shape, positive=False):
        x = rng.integers(-8, 9, shape) / 4.0 if grid else rng.standard_normal(shape)
        return np.abs(x) + 0.25 if positive else x

    kind = draw(st.sampled_from(["pdist", "rrelu", "lrn", "lp_pool1d", "lp_pool2d", "softmax2d", "upsample",
                                 "with_indices", "alpha_dropout"]))
    if kind == "pdist":
        p = draw(st.sampled_from([2, 1, 0, 0.5, 1.5, 3.0, INF, -1.0]))
        # (no empty (0, M) input here: torch 2.13's pdist backward crashes on it; see the test below)
        shape = draw(st.sampled_from([(draw(st.integers(1, 5)), draw(st.integers(1, 4))), (3,), (2, 2, 2)]))
        return f"pdist p={p}", lambda F, x: F.pdist(x, p) if p != 2 else F.pdist(x), values(shape)
    if kind == "rrelu":
        lower, upper = draw(st.sampled_from([(1 / 8, 1 / 3), (0.0, 0.5), (0.2, 0.2), (0.5, 0.1)]))
        inplace = draw(st.booleans())
        shape = draw(st.sampled_from([(3, 4), (), (2, 0)]))
        return (f"rrelu eval {lower} {upper} inplace={inplace}",
                lambda F, x: F.rrelu(x * 1, lower, upper, False, inplace), values(shape))
    if kind == "lrn":
        shape = (draw(st.integers(1, 2)), draw(st.integers(1, 6))) + tuple(
            draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 3))))
        size = draw(st.integers(0, 6))
        alpha, beta, k = draw(st.sampled_from([(1e-4, 0.75, 1.0), (0.5, 0.5, 2.0), (1.0, 1.5, 0.5)]))
        return (f"local_response_norm {size} {alpha} {beta} {k}",
                lambda F, x: F.local_response_norm(x, size, alpha, beta, k), values(shape))
    if kind in ("lp_pool1d", "lp_pool2d"):
        n = 1 if kind == "lp_pool1d" else 2
        norm = draw(st.sampled_from([2, 1, 3, 1.5, INF, -INF]))
        kernel = draw(st.integers(1, 3)) if n == 1 else draw(st.sampled_from([2, (1, 2), (2, 3)]))
        stride = draw(st.sampled_from([None, 1, 2]))
        ceil_mode = draw(st.booleans())
        shape = ((2,) if draw(st.booleans()) else ()) + (2,) + tuple(draw(st.integers(1, 5)) for _ in range(n))
        fn = getattr(minigrad.nn.functional, kind).__name__
        return (f"{fn} {norm} {kernel} {stride} {ceil_mode}",
                lambda F, x: getattr(F, fn)(x, norm, kernel, stride, ceil_mode),
                values(shape, positive=norm == 1.5))
    if kind == "softmax2d":
        shape = draw(st.sampled_from([(2, 3, 2, 2), (3, 2, 4), (3, 4), (1, 2, 1, 1, 2)]))
        return "Softmax2d", lambda F, x: (minigrad if F is minigrad.nn.functional else torch).nn.Softmax2d()(x), \
            values(shape)
    if kind == "upsample":
        name = draw(st.sampled_from(["upsample", "upsample_nearest", "upsample_bilinear"]))
        size, scale = draw(st.sampled_from([(4, None), (None, 2), ((3, 5), None), (None, None)]))
        shape = draw(st.sampled_from([(1, 2, 2, 3), (2, 1, 3, 3)]))
        if name == "upsample":
            mode = draw(st.sampled_from(["nearest", "bilinear"]))
            return f"upsample {mode} {size} {scale}", lambda F, x: F.upsample(x, size, scale, mode), values(shape)
        return f"{name} {size} {scale}", lambda F, x: getattr(F, name)(x, size, scale), values(shape)
    if kind == "with_indices":
        name = draw(st.sampled_from(["max_pool1d_with_indices", "max_pool2d_with_indices",
                                     "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices"]))
        spatial = 1 if "1d" in name else 2
        shape = (2, 3) + (4,) * spatial
        flag = draw(st.booleans())  # ignored: the pair is returned either way
        if name.startswith("adaptive"):
            return name, lambda F, x: getattr(F, name)(x, 2, return_indices=flag), values(shape)
        return name, lambda F, x: getattr(F, name)(x, 2, 1, return_indices=flag), values(shape)
    # alpha_dropout / feature_alpha_dropout where they are deterministic
    name = draw(st.sampled_from(["alpha_dropout", "feature_alpha_dropout"]))
    p, training = draw(st.sampled_from([(0.5, False), (0.0, True), (1.0, True), (1.5, False), (-0.1, True)]))
    shape = draw(st.sampled_from([(2, 3), (4,), (2, 3, 2)]))
    return f"{name} p={p} training={training}", lambda F, x: getattr(F, name)(x * 1, p, training), values(shape)


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, str(e).split("\n")[0]


def _run(lib, fn, data):
    x = lib.tensor(data, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(lib.nn.functional, x)
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(7)
    g = lib.tensor(rng.standard_normal(tuple(outs[0].shape)).astype(data.dtype))
    grad, = lib.autograd.grad(outs[0], [x], g, allow_unused=True)
    return ([o.detach().numpy() for o in outs], None if grad is None else grad.numpy(),
            [(w.category.__name__, str(w.message)) for w in caught if w.category is not RuntimeWarning])


def _close(mine, theirs, dtype, what):
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, (what, mine.shape, theirs.shape)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (1e-5, 1e-6)
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


@settings(max_examples=200, deadline=None)
@given(calls(), st.sampled_from(["float64", "float32"]))
def test_deterministic_functions_match_torch(call, dtype):
    what, fn, data = call
    data = data.astype(dtype)
    mine, theirs = _outcome(lambda: _run(minigrad, fn, data)), _outcome(lambda: _run(torch, fn, data))
    assert mine[0] == theirs[0], f"{what}: minigrad {mine}, torch {theirs}"
    if mine[0] != "ok":
        return
    (outs_m, grad_m, warned_m), (outs_t, grad_t, warned_t) = mine[1], theirs[1]
    assert warned_m == warned_t, what
    for m, t in zip(outs_m, outs_t, strict=True):
        _close(m, t, dtype, f"{what} value")
    if grad_t is None:
        assert grad_m is None or not grad_m.any(), what
    else:
        _close(grad_m, grad_t, dtype, f"{what} gradient")


def test_pdist_of_no_rows_or_one_row_is_empty():
    for rows in (0, 1):
        x = minigrad.zeros(rows, 3, requires_grad=True)
        y = minigrad.nn.functional.pdist(x)
        assert tuple(y.shape) == tuple(torch.pdist(torch.zeros(rows, 3)).shape) == (0,)
        y.sum().backward()
        assert tuple(x.grad.shape) == (rows, 3) and not x.grad.numpy().any()


GRADCHECKS = {
    "pdist": lambda F, x: F.pdist(x),
    "pdist p=3": lambda F, x: F.pdist(x, 3.0),
    "rrelu eval": lambda F, x: F.rrelu(x),
    "local_response_norm": lambda F, x: F.local_response_norm(x.reshape(1, 4, 3), 3, alpha=0.5, k=1.5),
    "lp_pool1d": lambda F, x: F.lp_pool1d(x.reshape(1, 4, 3), 2.0, 2, 1),
    "lp_pool2d p=3": lambda F, x: F.lp_pool2d(x.reshape(1, 3, 4) + 3, 3.0, 2, 1),
    "gumbel_softmax (a fixed draw)": lambda F, x: (minigrad.manual_seed(0), F.gumbel_softmax(x, tau=0.5))[1],
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck_and_gradgradcheck(name):
    x = minigrad.tensor(np.random.default_rng(3).standard_normal((4, 3)), requires_grad=True)
    fn = lambda t: GRADCHECKS[name](minigrad.nn.functional, t)  # noqa: E731
    assert gradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(fn, (x,), eps=1e-6, atol=1e-5, rtol=1e-4)


# -- the random functions ---------------------------------------------------------
def test_rrelu_training_draws_one_slope_per_negative_element():
    minigrad.manual_seed(0)
    data = np.random.default_rng(1).standard_normal((200, 100))
    x = minigrad.tensor(data, requires_grad=True)
    y = minigrad.nn.functional.rrelu(x, 0.1, 0.3, training=True)
    y.sum().backward()
    out, grad, negative = y.detach().numpy(), x.grad.numpy(), data <= 0
    assert (out[~negative] == data[~negative]).all() and (grad[~negative] == 1).all()
    slopes = out[negative] / data[negative]
    np.testing.assert_allclose(grad[negative], slopes, rtol=1e-12)  # the gradient is the slope drawn
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and abs(slopes.std() - 0.2 / math.sqrt(12)) < 0.005  # uniform
    assert len(np.unique(slopes)) > 0.99 * slopes.size


@pytest.mark.parametrize("inplace", [False, True])
def test_rrelu_with_equal_bounds_and_rrelu_module_modes_match_torch(inplace):
    """lower == upper leaves nothing to chance in training; evaluation is leaky_relu at the middle slope."""
    data = np.random.default_rng(2).standard_normal((3, 5))

    def run(lib, module_mode):
        x = lib.tensor(data, requires_grad=True)
        if module_mode is None:
            y = lib.nn.functional.rrelu(x * 1, 0.25, 0.25, True, inplace)
        else:
            layer = lib.nn.RReLU(0.1, 0.4, inplace)
            getattr(layer, module_mode)()
            y = layer(x * 1)
            if module_mode == "train":
                return repr(layer), y.detach().numpy() / data
        y.backward(lib.ones_like(y))
        return y.detach().numpy(), x.grad.numpy()

    for mode in (None, "eval"):
        mine, theirs = run(minigrad, mode), run(torch, mode)
        for m, t in zip(mine, theirs):
            np.testing.assert_allclose(m, t, rtol=1e-12)
    (repr_m, slopes_m), (repr_t, _) = run(minigrad, "train"), run(torch, "train")
    assert repr_m == repr_t
    negative = data <= 0
    assert ((slopes_m[negative] >= 0.1) & (slopes_m[negative] <= 0.4)).all() and (slopes_m[~negative] == 1).all()


def test_rrelu_in_place_and_errors_as_torch():
    for lib in (minigrad, torch):
        x = lib.tensor([-2.0, 3.0])
        assert lib.nn.functional.rrelu_(x, training=True) is x and x[1].item() == 3.0 and -0.67 < x[0].item() < -0.25
        with pytest.raises(RuntimeError, match="Lower bound"):
            lib.nn.functional.rrelu(x, 0.5, 0.1)
        leaf = lib.tensor([-1.0], requires_grad=True)
        with pytest.raises(RuntimeError):
            lib.nn.functional.rrelu_(leaf, training=True)


@pytest.mark.parametrize("p", [0.2, 0.5, 0.8])
def test_alpha_dropout_keeps_zero_mean_and_unit_variance(p):
    """Each element is a * x + alpha * a * p (kept) or alpha * a * (p - 1) (dropped), dropped with
    probability p; a standard normal input stays standard normal in mean and variance."""
    minigrad.manual_seed(1)
    data = np.random.default_rng(4).standard_normal(200_000)
    x = minigrad.tensor(data, requires_grad=True)
    y = minigrad.nn.functional.alpha_dropout(x, p, training=True)
    y.backward(minigrad.ones_like(y))
    alpha = 1.7580993408473766
    a = 1 / math.sqrt((alpha ** 2 * p + 1) * (1 - p))
    out, grad = y.detach().numpy(), x.grad.numpy()
    dropped = np.isclose(out, alpha * a * (p - 1), rtol=0, atol=1e-12) & (grad == 0)
    np.testing.assert_allclose(out[~dropped], a * data[~dropped] + alpha * a * p, rtol=1e-12)
    assert (grad[~dropped] == a).all()
    assert abs(dropped.mean() - p) < 0.005
    assert abs(out.mean()) < 0.01 and abs(out.var() - 1) < 0.02
    t = torch.nn.functional.alpha_dropout(torch.tensor(data), p, training=True)
    assert abs(t.mean().item()) < 0.01 and abs(t.var().item() - 1) < 0.02  # (torch's, the same way)


def test_feature_alpha_dropout_drops_whole_channels():
    minigrad.manual_seed(2)
    x = minigrad.tensor(np.random.default_rng(5).standard_normal((64, 32, 3, 2)), requires_grad=True)
    y = minigrad.nn.FeatureAlphaDropout(0.3)(x)
    y.backward(minigrad.ones_like(y))
    grad = x.grad.numpy().reshape(64, 32, -1)
    assert (grad == grad[..., :1]).all()  # one draw per (sample, channel)
    assert abs((grad[..., 0] == 0).mean() - 0.3) < 0.05
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        minigrad.nn.functional.feature_alpha_dropout(minigrad.ones(4), 0.5, True)


@pytest.mark.parametrize("name", ["AlphaDropout", "FeatureAlphaDropout"])
def test_alpha_dropout_modules_as_torch(name):
    for args in [(), (0.2,), (0.7, True)]:
        layers = getattr(minigrad.nn, name)(*args), getattr(torch.nn, name)(*args)
        assert repr(layers[0]) == repr(layers[1])
        for lib, layer in zip((minigrad, torch), layers):
            x = lib.ones(2, 3, 4)
            assert layer.eval()(x) is x  # the identity in evaluation: the input itself
    with pytest.raises(ValueError, match="between 0 and 1"):
        getattr(minigrad.nn, name)(1.5)


def test_gumbel_softmax_samples_the_categorical_distribution():
    """Hard samples (one-hot, with the soft sample's gradient) fall in class i with probability
    softmax(logits)_i; a small tau makes the soft samples nearly one-hot."""
    F = minigrad.nn.functional
    probs = np.array([0.5, 0.3, 0.15, 0.05])
    logits = minigrad.tensor(np.tile(np.log(probs), (40_000, 1)), requires_grad=True)
    minigrad.manual_seed(3)
    soft = F.gumbel_softmax(logits, tau=0.5)
    minigrad.manual_seed(3)
    hard = F.gumbel_softmax(logits, tau=0.5, hard=True)
    s, h = soft.detach().numpy(), hard.detach().numpy()
    np.testing.assert_allclose(s.sum(1), 1, rtol=1e-12)
    assert set(np.unique(h)) == {0.0, 1.0} and (h.sum(1) == 1).all()
    assert (h.argmax(1) == s.argmax(1)).all()
    np.testing.assert_allclose(h.mean(0), probs, atol=0.01)
    g = minigrad.tensor(np.random.default_rng(6).standard_normal(s.shape))
    grad_soft, = minigrad.autograd.grad(soft, [logits], g)
    grad_hard, = minigrad.autograd.grad(hard, [logits], g)
    np.testing.assert_allclose(grad_hard.numpy(), grad_soft.numpy(), rtol=1e-10, atol=1e-12)
    cold = F.gumbel_softmax(logits[:1000].detach(), tau=0.01, dim=1).numpy()
    assert (cold.max(1) > 0.99).mean() > 0.95


@pytest.mark.parametrize("case", ["eps", "dim", "int", "0-d hard", "dim 0 hard"])
def test_gumbel_softmax_arguments_as_torch(case):
    def run(lib):
        logits = lib.tensor([[1.0, 2.0, 0.5], [0.0, 0.0, 3.0]])
        F = lib.nn.functional
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = {"eps": lambda: F.gumbel_softmax(logits, eps=1e-5),
                   "dim": lambda: F.gumbel_softmax(logits, dim=2),
                   "int": lambda: F.gumbel_softmax(logits.long()),
                   "0-d hard": lambda: F.gumbel_softmax(logits[0, 0], hard=True),
                   "dim 0 hard": lambda: F.gumbel_softmax(logits, hard=True, dim=0)}[case]()
        return tuple(out.shape), out.sum(0).detach().numpy(), [str(w.message) for w in caught]

    mine, theirs = _outcome(lambda: run(minigrad)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0], f"minigrad {mine}, torch {theirs}"
    if mine[0] == "ok":
        assert mine[1][0] == theirs[1][0] and mine[1][2] == theirs[1][2]
        if case != "eps":
            np.testing.assert_allclose(mine[1][1], theirs[1][1], rtol=1e-6)


MODULES = [("RReLU", ()), ("RReLU", (0.1, 0.2)), ("RReLU", (0.1, 0.2, True)), ("Softmax2d", ()),
           ("LocalResponseNorm", (3,)), ("LocalResponseNorm", (2, 1e-3, 0.5, 2.0)),
           ("LPPool1d", (2, 3)), ("LPPool1d", (1.5, 2, 1, True)), ("LPPool2d", (2, 2)), ("LPPool2d", (3, (2, 1), 1))]


@pytest.mark.parametrize("name,args", MODULES)
def test_modules_as_torch(name, args):
    data = np.abs(np.random.default_rng(8).standard_normal((2, 3, 4, 4))) + 0.1

    def run(lib):
        layer = getattr(lib.nn, name)(*args).eval()
        x = lib.tensor(data[:, :, 0] if name == "LPPool1d" else data)
        return repr(layer), list(layer.state_dict()), layer(x).numpy()

    mine, theirs = run(minigrad), run(torch)
    assert mine[:2] == theirs[:2]
    np.testing.assert_allclose(mine[2], theirs[2], rtol=1e-10)


# -- embedding_bag ------------------------------------------------------------------
@st.composite
def bags(draw):
    """(table, tensors, keyword arguments), with at most one fault (torch's checks run in an order of their own)."""
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    rows, dim = draw(st.integers(1, 6)), draw(st.integers(1, 3))
    mode = draw(st.sampled_from(["mean", "sum", "max"]))
    kwargs = {"mode": mode}
    fault = draw(st.sampled_from([None] * 12 + ["first", "order", "end", "index", "offsets dtype", "weights"]))
    if draw(st.booleans()):
        n = draw(st.integers(0, 8))
        index = rng.integers(0, rows, n)
        kwargs["include_last_offset"] = last = draw(st.booleans())
        # (at least one bag with include_last_offset: torch 2.13's max mode crashes on none, see below)
        offsets = np.sort(rng.integers(0, n + 1, draw(st.integers(1 + last, 4))))
        offsets[0] = 0
        if last:  # the documented CSR form: the last offset is the input's length (torch's modes disagree otherwise)
            offsets[-1] = n
        if fault == "first":
            offsets[0] = 1
        elif fault == "order" and n:
            offsets = np.array([0, n, n - 1])
            kwargs["unordered"] = True  # torch 2.13 reads out of bounds on such offsets: minigrad must refuse them
        elif fault == "end":
            offsets[-1] = n + 1
        arrays = {"input": index, "offsets": offsets.astype(np.float64 if fault == "offsets dtype" else np.int64)}
    else:
        arrays = {"input": rng.integers(0, rows, (draw(st.integers(0, 3)), draw(st.integers(1, 3))))}
    if fault == "index" and arrays["input"].size:
        arrays["input"].reshape(-1)[-1] = draw(st.sampled_from([rows, -1]))
    if draw(st.booleans()):
        kwargs["padding_idx"] = draw(st.integers(-rows, rows - 1))
    if mode == "sum" and draw(st.booleans()) or fault == "weights":
        arrays["per_sample_weights"] = rng.standard_normal(arrays["input"].shape)
    if fault is None and draw(st.integers(0, 3)) == 0:
        kwargs["max_norm"] = draw(st.sampled_from([1.0, 0.5]))
        kwargs["norm_type"] = draw(st.sampled_from([2.0, 1.0]))
    weight = rng.integers(-8, 9, (rows, dim)) / 4.0 if draw(st.booleans()) else rng.standard_normal((rows, dim))
    return weight, arrays, kwargs


def _bag(lib, weight, arrays, kwargs, dtype):
    w = lib.tensor(weight.astype(dtype), requires_grad=True)
    tensors = {k: lib.tensor(v.astype(dtype) if k == "per_sample_weights" else v,
                             requires_grad=k == "per_sample_weights") for k, v in arrays.items()}
    if "max_norm" in kwargs:  # the renorm writes into the table, which must not be a leaf that requires grad
        w = w.detach().clone().requires_grad_()
    out = lib.nn.functional.embedding_bag(tensors.pop("input"), w, **tensors, **kwargs)
    g = lib.tensor(np.random.default_rng(9).standard_normal(tuple(out.shape)).astype(dtype))
    inputs = [w] + [t for t in tensors.values() if t.requires_grad]
    grads = lib.autograd.grad(out, inputs, g, allow_unused=True)
    return [out.detach().numpy(), w.detach().numpy()] + [None if t is None else t.numpy() for t in grads]


@settings(max_examples=200, deadline=None)
@given(bags(), st.sampled_from(["float64", "float32"]))
def test_embedding_bag_matches_torch(case, dtype):
    weight, arrays, kwargs = case
    if kwargs.pop("unordered", False):
        with pytest.raises(RuntimeError, match="non-decreasing"):
            _bag(minigrad, weight, arrays, kwargs, dtype)
        return
    mine = _outcome(lambda: _bag(minigrad, weight, arrays, kwargs, dtype))
    theirs = _outcome(lambda: _bag(torch, weight, arrays, kwargs, dtype))
    assert mine[0] == theirs[0], f"{kwargs}: minigrad {mine}, torch {theirs}"
    if mine[0] == "ok":
        for i, (m, t) in enumerate(zip(mine[1], theirs[1], strict=True)):
            if t is None:
                assert m is None or not m.any()
            else:
                _close(m, t, dtype, f"embedding_bag {kwargs} output {i}")


def test_embedding_bag_with_no_bags():
    F, table = minigrad.nn.functional, minigrad.ones(3, 2, requires_grad=True)
    for mode in ("sum", "mean", "max"):
        out = F.embedding_bag(minigrad.tensor([0, 1]), table, minigrad.tensor([0]), mode=mode, include_last_offset=True)
        assert tuple(out.shape) == (0, 2)
        assert tuple(F.embedding_bag(minigrad.tensor([0, 1]), table, minigrad.tensor([], dtype=minigrad.int64),
                                     mode=mode).shape) == (0, 2)
    with pytest.raises(RuntimeError, match="at least 1"):
        F.embedding_bag(minigrad.tensor([0, 1]), table, minigrad.tensor([], dtype=minigrad.int64),
                        include_last_offset=True)


def test_embedding_bag_module_as_torch():
    table = np.random.default_rng(10).standard_normal((5, 3))
    for kwargs in [{}, {"mode": "sum", "padding_idx": -1}, {"mode": "max", "max_norm": 1.0, "norm_type": 1.0},
                   {"include_last_offset": True, "padding_idx": 2}]:
        def run(lib):
            bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(table), freeze=False, **kwargs)
            fresh = lib.nn.EmbeddingBag(5, 3, **kwargs)
            offsets = [0, 2, 5] if "include_last_offset" in kwargs else [0, 2, 2]
            out = bag(lib.tensor([0, 2, 4, 1, 3]), lib.tensor(offsets))
            padding = fresh.weight[fresh.padding_idx].detach().numpy() if fresh.padding_idx is not None else None
            return (repr(bag), repr(fresh), list(bag.state_dict()), bag.weight.requires_grad, padding,
                    out.detach().numpy())

        mine, theirs = run(minigrad), run(torch)
        assert mine[:4] == theirs[:4]
        if mine[4] is not None:
            assert not mine[4].any() and not theirs[4].any()
        np.testing.assert_allclose(mine[5], theirs[5], rtol=1e-12)
    for lib in (minigrad, torch):
        with pytest.raises(AssertionError):
            lib.nn.EmbeddingBag(5, 3, padding_idx=5)
