"""normalize, cosine_similarity, pairwise_distance, kl_div, gaussian_nll_loss and their Modules, against torch 2.13.

Generated inputs (float64 and float32; 0-d, empty, broadcast and batched shapes) with zero
slices, equal rows and zero targets planted in them: values and the gradients of both inputs
must be torch's; gradcheck and gradgradcheck in float64; the Modules' reprs; kl_div's reductions,
its warning for "mean" and the legacy arguments; gaussian_nll_loss's variance shapes and values
below eps; the exceptions for bad arguments.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

CALLS = {
    "normalize": lambda F, a, b: F.normalize(a),
    "normalize(p=1, dim=0)": lambda F, a, b: F.normalize(a, 1, 0),
    "normalize(p=3, dim=-1)": lambda F, a, b: F.normalize(a, p=3.0, dim=-1),
    "normalize(p=inf)": lambda F, a, b: F.normalize(a, float("inf"), -1),
    "normalize(eps=0.5)": lambda F, a, b: F.normalize(a, dim=-1, eps=0.5),
    "cosine_similarity": lambda F, a, b: F.cosine_similarity(a, b),
    "cosine_similarity(dim=-1)": lambda F, a, b: F.cosine_similarity(a, b, -1),
    "cosine_similarity(dim=0, eps=0.1)": lambda F, a, b: F.cosine_similarity(a, b, dim=0, eps=0.1),
    "pairwise_distance": lambda F, a, b: F.pairwise_distance(a, b),
    "pairwise_distance(p=1, keepdim)": lambda F, a, b: F.pairwise_distance(a, b, 1.0, keepdim=True),
    "pairwise_distance(p=3, eps=0)": lambda F, a, b: F.pairwise_distance(a, b, p=3.0, eps=0.0),
    "pairwise_distance(p=inf)": lambda F, a, b: F.pairwise_distance(a, b, float("inf")),
    "kl_div batchmean": lambda F, a, b: F.kl_div(a, b.abs(), reduction="batchmean"),
    "kl_div sum": lambda F, a, b: F.kl_div(a, b.abs(), reduction="sum"),
    "kl_div none": lambda F, a, b: F.kl_div(a, b.abs(), reduction="none"),
    "kl_div mean": lambda F, a, b: F.kl_div(a, b.abs()),
    "kl_div log_target": lambda F, a, b: F.kl_div(a, b, reduction="batchmean", log_target=True),
    "kl_div log_target none": lambda F, a, b: F.kl_div(a, b, reduction="none", log_target=True),
}
SHAPES = [((3, 4), (3, 4)), ((5,), (5,)), ((), ()), ((2, 3, 4), (3, 4)), ((0, 4), (0, 4)), ((3, 1), (1, 4)),
          ((2, 3, 2), (2, 3, 2))]


def _inputs(shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if x.ndim >= 2 and x.shape[0] > 1:
        x[0] = 0  # a zero slice (a zero target row, for kl_div)
    elif x.size > 1:
        x.reshape(-1)[0] = 0
    return x


def _run(lib, call, a_data, b_data):
    a = lib.tensor(a_data, requires_grad=True)
    b = lib.tensor(b_data, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = CALLS[call](lib.nn.functional, a, b)
    g = np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(a_data.dtype)
    grads = lib.autograd.grad(y, [a, b], lib.tensor(g), allow_unused=True)
    return (y.detach().numpy(), [None if t is None else t.numpy() for t in grads],
            [(w.category.__name__, str(w.message)) for w in caught if w.category is not RuntimeWarning])


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, str(e).split("\n")[0]


def _close(mine, theirs, dtype, what):
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, what
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 2e-6)
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


CASES = [(call, shapes, dtype) for call in CALLS for shapes in SHAPES for dtype in ("float64", "float32")]


@pytest.mark.parametrize("call,shapes,dtype", CASES)
def test_values_gradients_and_warnings_as_torch(call, shapes, dtype):
    a_data = _inputs(shapes[0], seed=1).astype(dtype)
    b_data = _inputs(shapes[1], seed=2).astype(dtype)
    if "pairwise" in call and a_data.shape == b_data.shape and a_data.size:
        b_data.reshape(-1)[-1] = a_data.reshape(-1)[-1]  # equal entries: the eps keeps the norm smooth
    mine = _outcome(lambda: _run(minigrad, call, a_data, b_data))
    theirs = _outcome(lambda: _run(torch, call, a_data, b_data))
    assert mine[0] == theirs[0], f"minigrad {mine}, torch {theirs}"
    if mine[0] != "ok":
        return
    (value_m, grads_m, warned_m), (value_t, grads_t, warned_t) = mine[1], theirs[1]
    assert warned_m == warned_t  # (NumPy's RuntimeWarning for the mean of an empty tensor left out)
    _close(value_m, value_t, dtype, f"{call} value")
    if call.startswith("kl_div") and "log_target" not in call:
        # The target's gradient where it is 0: torch's is NaN (its xlogy's t / t), minigrad's is 0
        # (0 * log 0 is taken as 0 together with its derivative); compared elsewhere.
        assert np.isnan(grads_t[1][b_data == 0]).all() and (grads_m[1][b_data == 0] == 0).all()
        grads_m[1], grads_t[1] = grads_m[1][b_data != 0], grads_t[1][b_data != 0]
    for i, (gm, gt) in enumerate(zip(grads_m, grads_t, strict=True)):
        if gt is None:
            assert gm is None or not gm.any(), f"{call} gradient {i}"
        else:
            _close(gm, gt, dtype, f"{call} gradient {i}")


@pytest.mark.parametrize("call", list(CALLS))
def test_gradcheck_and_gradgradcheck(call):
    rng = np.random.default_rng(3)
    a = minigrad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    b = minigrad.tensor(rng.uniform(0.2, 1.0, (3, 4)), requires_grad=True)  # (a positive target for kl_div)
    fn = lambda x, y: CALLS[call](minigrad.nn.functional, x, y)  # noqa: E731
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert gradcheck(fn, (a, b), eps=1e-6, atol=1e-5, rtol=1e-4)
        assert gradgradcheck(fn, (a, b), eps=1e-6, atol=1e-5, rtol=1e-4)


BAD = {
    "cosine int": lambda F, lib, a: F.cosine_similarity(a.long(), a.long()),
    "cosine bool": lambda F, lib, a: F.cosine_similarity(a > 0, a > 0),
    "cosine dim out of range": lambda F, lib, a: F.cosine_similarity(a, a, 2),
    "cosine shapes": lambda F, lib, a: F.cosine_similarity(a, a[:, :2]),
    "cosine float32 with float64": lambda F, lib, a: F.cosine_similarity(a, a.float()),
    "cosine int with float": lambda F, lib, a: F.cosine_similarity(a.long(), a),
    "normalize 0-d": lambda F, lib, a: F.normalize(a[0, 0]),
    "normalize 0-d dim 0": lambda F, lib, a: F.normalize(a[0, 0], dim=0),
    "normalize int": lambda F, lib, a: F.normalize(a.long()),
    "normalize out": lambda F, lib, a: F.normalize(a, out=lib.zeros(2, 3, dtype=lib.float64)),
    "pairwise int": lambda F, lib, a: F.pairwise_distance(a.long(), a.long()),
    "pairwise 0-d": lambda F, lib, a: F.pairwise_distance(a[0, 0], a[1, 1]),
    "pairwise shapes": lambda F, lib, a: F.pairwise_distance(a, a[:, :2]),
    "kl_div bad reduction": lambda F, lib, a: F.kl_div(a, a, reduction="batch"),
    "kl_div int": lambda F, lib, a: F.kl_div(a.long(), a.long(), reduction="sum"),
    "kl_div 0-d batchmean": lambda F, lib, a: F.kl_div(a[0, 0], a[1, 1].abs(), reduction="batchmean"),
    "kl_div size_average": lambda F, lib, a: F.kl_div(a, a.abs(), size_average=False),
    "kl_div reduce": lambda F, lib, a: F.kl_div(a, a.abs(), reduce=False),
    "kl_div broadcast": lambda F, lib, a: F.kl_div(a, a[0].abs(), reduction="sum"),
    "kl_div negative target": lambda F, lib, a: F.kl_div(a, a, reduction="none"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_edge_arguments_as_torch(case):
    data = np.arange(6.0).reshape(2, 3) - 2.5

    def run(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = BAD[case](lib.nn.functional, lib, lib.tensor(data))
        return str(out.dtype).split(".")[-1], out.numpy().tolist(), [str(w.message) for w in caught]
    mine, theirs = _outcome(lambda: run(minigrad)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0], f"minigrad {mine}, torch {theirs}"
    if mine[0] == "ok":
        assert mine[1][0] == theirs[1][0] and mine[1][2] == theirs[1][2]
        np.testing.assert_allclose(mine[1][1], theirs[1][1], rtol=1e-6, equal_nan=True)
    elif case.startswith(("cosine int", "cosine bool", "kl_div")):
        assert mine[1] == theirs[1]


MODULES = {
    "CosineSimilarity()": (lambda nn: nn.CosineSimilarity(), "pair"),
    "CosineSimilarity(0, 1e-3)": (lambda nn: nn.CosineSimilarity(dim=0, eps=1e-3), "pair"),
    "PairwiseDistance()": (lambda nn: nn.PairwiseDistance(), "pair"),
    "PairwiseDistance(1, 0.1, True)": (lambda nn: nn.PairwiseDistance(p=1.0, eps=0.1, keepdim=True), "pair"),
    "KLDivLoss()": (lambda nn: nn.KLDivLoss(), "kl"),
    "KLDivLoss(batchmean)": (lambda nn: nn.KLDivLoss(reduction="batchmean"), "kl"),
    "KLDivLoss(sum, log_target)": (lambda nn: nn.KLDivLoss(reduction="sum", log_target=True), "kl"),
    "KLDivLoss(none)": (lambda nn: nn.KLDivLoss(reduction="none"), "kl"),
    "KLDivLoss(size_average=False)": (lambda nn: nn.KLDivLoss(size_average=False), "kl"),
    "KLDivLoss(reduction=bad)": (lambda nn: nn.KLDivLoss(reduction="bad"), "kl"),
}


@pytest.mark.parametrize("name", list(MODULES))
def test_modules_as_torch(name):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)), rng.uniform(0.1, 1.0, (3, 4))

    def run(lib):
        make, kind = MODULES[name]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            layer = make(lib.nn)
            x = lib.tensor(a, requires_grad=True)
            out = _outcome(lambda: layer(x.log_softmax(1) if kind == "kl" else x, lib.tensor(b)).detach().numpy())
        attributes = {k: v for k, v in vars(layer).items() if k in ("dim", "eps", "norm", "keepdim", "reduction",
                                                                     "log_target")}
        return repr(layer), attributes, out, [(w.category.__name__, str(w.message)) for w in caught]
    mine, theirs = run(minigrad), run(torch)
    assert mine[:2] == theirs[:2] and mine[3] == theirs[3]
    assert mine[2][0] == theirs[2][0]
    if mine[2][0] == "ok":
        _close(mine[2][1], theirs[2][1], "float64", name)


# var: its shape, relative to the input's (3, 4), and its values (some below eps, or negative)
VARIANCES = {
    "same shape": lambda rng: rng.uniform(0, 2, (3, 4)),
    "no last dimension": lambda rng: rng.uniform(0, 2, (3,)),
    "shared along dim 0": lambda rng: rng.uniform(0, 2, (1, 4)),
    "shared along dim 1": lambda rng: rng.uniform(0, 2, (3, 1)),
    "below eps": lambda rng: np.where(rng.random((3, 4)) < 0.5, 0.0, 1e-8),
    "float": lambda rng: 0.7,
    "float 0": lambda rng: 0.0,
    "negative float": lambda rng: -1.0,
    "negative entry": lambda rng: rng.uniform(0, 2, (3, 4)) - 0.1 * (rng.random((3, 4)) < 0.2),
    "wrong shape": lambda rng: rng.uniform(0, 2, (4,)),
    "two shared dimensions": lambda rng: rng.uniform(0, 2, (1, 1)),
}
GAUSSIAN = [(var, full, reduction, dtype) for var in VARIANCES for full in (False, True)
            for reduction in ("mean", "sum", "none", "batchmean") for dtype in ("float64", "float32")]


@pytest.mark.parametrize("var,full,reduction,dtype", GAUSSIAN)
def test_gaussian_nll_loss_as_torch(var, full, reduction, dtype):
    rng = np.random.default_rng(len(var) + full)
    mean, target, variance = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), VARIANCES[var](rng)

    def run(lib):
        x = lib.tensor(mean.astype(dtype), requires_grad=True)
        v = lib.tensor(variance.astype(dtype), requires_grad=True) if isinstance(variance, np.ndarray) else variance
        loss = lib.nn.GaussianNLLLoss(full=full, eps=1e-6, reduction=reduction)
        y = loss(x, lib.tensor(target.astype(dtype)), v)
        grads = lib.autograd.grad(y.sum(), [x] + ([v] if not isinstance(v, float) else []))
        return repr(loss), y.detach().numpy(), [g.numpy() for g in grads]
    mine, theirs = _outcome(lambda: run(minigrad)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0], f"minigrad {mine}, torch {theirs}"
    if mine[0] != "ok":
        assert mine[1] == theirs[1]
        return
    assert mine[1][0] == theirs[1][0]
    _close(mine[1][1], theirs[1][1], dtype, "value")
    for gm, gt in zip(mine[1][2], theirs[1][2], strict=True):
        _close(gm, gt, dtype, "gradient")


def test_gaussian_nll_loss_gradcheck_and_gradgradcheck():
    rng = np.random.default_rng(5)
    x, t = (minigrad.tensor(rng.standard_normal((3, 4)), requires_grad=True) for _ in range(2))
    v = minigrad.tensor(rng.uniform(0.5, 2, (3, 1)), requires_grad=True)
    fn = lambda a, b, c: minigrad.nn.functional.gaussian_nll_loss(a, b, c, full=True)  # noqa: E731
    assert gradcheck(fn, (x, t, v), eps=1e-6, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(fn, (x, t, v), eps=1e-6, atol=1e-5, rtol=1e-4)
