"""The margin, ranking, embedding, triplet and Poisson losses and their Modules, against torch 2.13.

hypothesis draws the loss, the shapes (empty batches and unbatched forms included), the
hyperparameters, the reduction (the deprecated size_average/reduce pairs and an invalid string
among them) and the dtype; half the inputs are drawn from a grid of quarters, so the margins land
exactly on their kinks. Both libraries get the same inputs: either both raise, with the same
exception type, or the values, the warnings and the gradients of every float input agree. Then
gradcheck and gradgradcheck in float64, the exceptions for bad targets and weights, and the
Modules' defaults, reprs and buffers.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
from minigrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

REDUCTIONS = [{"reduction": "mean"}, {"reduction": "sum"}, {"reduction": "none"}, {"reduction": "batchmean"},
              {"size_average": False}, {"reduce": False}, {"size_average": True, "reduce": True},
              {"size_average": False, "reduce": False, "reduction": "sum"}]
# the distance functions triplet_margin_with_distance_loss is given (by name: the same in both libraries)
DISTANCES = {
    None: None,
    "cosine": lambda F: lambda a, b: 1.0 - F.cosine_similarity(a, b),
    "l1": lambda F: lambda a, b: (a - b).abs().sum(-1),
    "pairwise p=1": lambda F: lambda a, b: F.pairwise_distance(a, b, 1.0),
}


def _values(draw, rng, shape, grid):
    """Standard normal, or multiples of 1/4 in [-2, 2] (ties and margins met exactly)."""
    if grid:
        return rng.integers(-8, 9, shape) / 4.0
    return rng.standard_normal(shape)


def _signs(rng, shape, zero=False):
    return rng.choice([-1.0, 1.0, 0.0] if zero else [-1.0, 1.0], shape)


@st.composite
def loss_cases(draw):
    """(function name, positional arrays, keyword arguments): arrays of float dtype get gradients."""
    name = draw(st.sampled_from(["margin_ranking_loss", "hinge_embedding_loss", "cosine_embedding_loss",
                                 "soft_margin_loss", "multilabel_soft_margin_loss", "multi_margin_loss",
                                 "multilabel_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
                                 "poisson_nll_loss"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    grid = draw(st.booleans())
    n, c = draw(st.integers(0, 4)), draw(st.integers(1, 5))
    batched = n > 0 or draw(st.booleans())
    rows = (n, c) if batched else (c,)
    kwargs = dict(draw(st.sampled_from(REDUCTIONS)))

    def values(shape):
        return _values(draw, rng, shape, grid)

    if name == "margin_ranking_loss":
        shape = draw(st.sampled_from([(n,), (n, c), ()]))
        other = draw(st.sampled_from([shape, shape[:-1] + (1,) if shape else ()]))
        args = [values(shape), values(other), _signs(rng, shape)]
        kwargs["margin"] = draw(st.sampled_from([0, 0.5, 1.0, -0.25]))
    elif name == "hinge_embedding_loss":
        args = [values(rows), _signs(rng, rows, zero=draw(st.booleans()))]
        kwargs["margin"] = draw(st.sampled_from([1.0, 0.5, 0.0, 2]))
    elif name == "cosine_embedding_loss":
        x1, x2 = values(rows), values(rows)
        if x1.size:
            x1.reshape(-1, c)[0] = 0  # a zero row: its cosine is 0, not NaN
        args = [x1, x2, _signs(rng, rows[:-1], zero=draw(st.booleans()))]
        kwargs["margin"] = draw(st.sampled_from([0, 0.5, -0.5]))
    elif name == "soft_margin_loss":
        args = [values(rows), _signs(rng, rows)]
    elif name == "multilabel_soft_margin_loss":
        args = [values(rows), rng.integers(0, 2, rows).astype(float)]
        if draw(st.booleans()):
            kwargs["weight"] = rng.uniform(0.5, 2.0, (c,))
    elif name == "multi_margin_loss":
        args = [values(rows), rng.integers(0, c, (n,) if batched else ()).astype(np.int64)]
        kwargs.update(p=draw(st.sampled_from([1, 2])), margin=draw(st.sampled_from([1.0, 0.5, 0.0, 2.0])))
        if draw(st.booleans()):
            kwargs["weight"] = rng.uniform(0.5, 2.0, (c,))
    elif name == "multilabel_margin_loss":
        target = np.stack([rng.permutation(c) for _ in range(max(n, 1))])
        for row in target:
            row[rng.integers(0, c + 1):][:1] = -1  # ends the list there; the entries after it are ignored
        args = [values(rows), target[:n] if batched else target[0]]
    elif name in ("triplet_margin_loss", "triplet_margin_with_distance_loss"):
        shape = draw(st.sampled_from([rows, rows, (c,)]))
        args = [values(shape), values(shape), values(draw(st.sampled_from([shape, shape[-1:]])))]
        kwargs.update(margin=draw(st.sampled_from([1.0, 0.5, 2.0])), swap=draw(st.booleans()))
        if name == "triplet_margin_loss":
            kwargs.update(p=draw(st.sampled_from([2, 1, 3.0])), eps=draw(st.sampled_from([1e-6, 0.0, 0.1])))
        else:
            for legacy in ("size_average", "reduce"):
                kwargs.pop(legacy, None)
            kwargs.setdefault("reduction", "mean")
            kwargs["distance_function"] = draw(st.sampled_from(list(DISTANCES)))
    else:  # poisson_nll_loss
        log_input = draw(st.booleans())
        x = values(rows)
        args = [x if log_input else np.abs(x) + draw(st.sampled_from([0.0, 0.5])), rng.poisson(2.0, rows) * 1.0]
        kwargs.update(log_input=log_input, full=draw(st.booleans()), eps=draw(st.sampled_from([1e-8, 0.1])))
    return name, args, kwargs


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, str(e).split("\n")[0]


def _run(lib, name, arrays, kwargs, dtype):
    tensors = [lib.tensor(a.astype(dtype) if a.dtype.kind == "f" else a,
                          requires_grad=a.dtype.kind == "f" and (name, i) != ("soft_margin_loss", 1))
               for i, a in enumerate(arrays)]
    kwargs = dict(kwargs)
    if "weight" in kwargs:
        kwargs["weight"] = lib.tensor(kwargs["weight"].astype(dtype))
    if "distance_function" in kwargs:
        make = DISTANCES[kwargs["distance_function"]]
        kwargs["distance_function"] = make(lib.nn.functional) if make else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = getattr(lib.nn.functional, name)(*tensors, **kwargs)
    g = np.random.default_rng(7).standard_normal(tuple(y.shape)).astype(dtype)
    wanted = [t for t in tensors if t.requires_grad]
    grads = iter(lib.autograd.grad(y, wanted, lib.tensor(g), allow_unused=True)) if wanted else iter(())
    grads = [next(grads) if t.requires_grad else None for t in tensors]
    grads = [None if t is None else t.numpy() for t in grads]
    return (y.detach().numpy(), grads,
            [(w.category.__name__, str(w.message)) for w in caught if w.category is not RuntimeWarning])


def _close(mine, theirs, dtype, what):
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, (what, mine.dtype, theirs.dtype, mine.shape,
                                                                       theirs.shape)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 2e-6)
    if what.startswith("cosine_embedding_loss"):
        rtol *= 1000  # a zero row's gradient is ~1e6 times the others', and so is the rounding in its last bits
    np.testing.assert_allclose(mine, theirs, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


@settings(max_examples=300, deadline=None)
@given(loss_cases(), st.sampled_from(["float64", "float32"]))
def test_losses_match_torch(case, dtype):
    name, arrays, kwargs = case
    if name == "poisson_nll_loss" and kwargs["full"]:
        arrays[1] = np.maximum(arrays[1], 1.0)  # torch's target gradient is NaN at 0 (0 * log 0): not compared
    mine = _outcome(lambda: _run(minigrad, name, arrays, kwargs, dtype))
    theirs = _outcome(lambda: _run(torch, name, arrays, kwargs, dtype))
    assert mine[0] == theirs[0], f"{name} {kwargs}: minigrad {mine}, torch {theirs}"
    if mine[0] != "ok":
        return
    (value_m, grads_m, warned_m), (value_t, grads_t, warned_t) = mine[1], theirs[1]
    assert warned_m == warned_t
    _close(value_m, value_t, dtype, f"{name} value")
    for i, (gm, gt) in enumerate(zip(grads_m, grads_t, strict=True)):
        if gt is None:
            assert gm is None or not gm.any(), f"{name} gradient {i}"
        else:
            _close(gm, gt, dtype, f"{name} gradient {i} {kwargs}")


GRADCHECKS = {
    "margin_ranking_loss": lambda F, a, b, t: F.margin_ranking_loss(a[:, 0], b[:, 0], t.sign()[:, 0], margin=0.3),
    "hinge_embedding_loss": lambda F, a, b, t: F.hinge_embedding_loss(a, t.sign(), margin=2.0),
    "cosine_embedding_loss": lambda F, a, b, t: F.cosine_embedding_loss(a, b, t.sign()[:, 0], margin=-0.9),
    "soft_margin_loss": lambda F, a, b, t: F.soft_margin_loss(a * b, t.detach().sign()),
    "multilabel_soft_margin_loss": lambda F, a, b, t: F.multilabel_soft_margin_loss(a, b.sigmoid()),
    "multi_margin_loss p=2": lambda F, a, b, t: F.multi_margin_loss(a, minigrad.tensor([0, 3, 1]), p=2, margin=3.0),
    "multilabel_margin_loss": lambda F, a, b, t: F.multilabel_margin_loss(
        a, minigrad.tensor([[0, 2, -1, 0], [3, -1, 0, 0], [1, 2, 3, 0]])),
    "triplet_margin_loss swap": lambda F, a, b, t: F.triplet_margin_loss(a, b, t, margin=5.0, swap=True),
    "triplet_margin_with_distance_loss": lambda F, a, b, t: F.triplet_margin_with_distance_loss(
        a, b, t, distance_function=lambda x, y: 1 - F.cosine_similarity(x, y), margin=3.0),
    "poisson_nll_loss full": lambda F, a, b, t: F.poisson_nll_loss(a, b.abs() + 2, full=True),
    "poisson_nll_loss rate": lambda F, a, b, t: F.poisson_nll_loss(a.abs() + 0.5, b, log_input=False),
}


@pytest.mark.parametrize("name", list(GRADCHECKS))
def test_gradcheck_and_gradgradcheck(name):
    rng = np.random.default_rng(3)
    a, b, t = (minigrad.tensor(rng.standard_normal((3, 4)), requires_grad=True) for _ in range(3))
    fn = lambda x, y, z: GRADCHECKS[name](minigrad.nn.functional, x, y, z)  # noqa: E731
    assert gradcheck(fn, (a, b, t), eps=1e-6, atol=1e-5, rtol=1e-4)
    assert gradgradcheck(fn, (a, b, t), eps=1e-6, atol=1e-5, rtol=1e-4)


BAD = {
    "margin_ranking ndim": lambda F, lib, x, t: F.margin_ranking_loss(x, x, x[0]),
    "cosine 2-D target": lambda F, lib, x, t: F.cosine_embedding_loss(x, x, x),
    "cosine 3-D inputs": lambda F, lib, x, t: F.cosine_embedding_loss(x[None], x[None], t.float()),
    "cosine mixed inputs": lambda F, lib, x, t: F.cosine_embedding_loss(x, x[0], t.float()),
    "multi_margin float target": lambda F, lib, x, t: F.multi_margin_loss(x, t.float()),
    "multi_margin 2-D target": lambda F, lib, x, t: F.multi_margin_loss(x, t[:, None]),
    "multi_margin target too big": lambda F, lib, x, t: F.multi_margin_loss(x, t + 4),
    "multi_margin target negative": lambda F, lib, x, t: F.multi_margin_loss(x, t - 4),
    "multi_margin 3-D input": lambda F, lib, x, t: F.multi_margin_loss(x[None], t),
    "multi_margin empty classes": lambda F, lib, x, t: F.multi_margin_loss(x[:, :0], t),
    "multi_margin p=3": lambda F, lib, x, t: F.multi_margin_loss(x, t, p=3),
    "multi_margin 2-D weight": lambda F, lib, x, t: F.multi_margin_loss(x, t, weight=lib.ones(1, 4)),
    "multi_margin short weight": lambda F, lib, x, t: F.multi_margin_loss(x, t, weight=lib.ones(3)),
    "multi_margin weight dtype": lambda F, lib, x, t: F.multi_margin_loss(x.double(), t, weight=lib.ones(4)),
    "multi_margin int input": lambda F, lib, x, t: F.multi_margin_loss(x.long(), t),
    "multi_margin bad reduction": lambda F, lib, x, t: F.multi_margin_loss(x, t, reduction="average"),
    "multilabel_margin float target": lambda F, lib, x, t: F.multilabel_margin_loss(x, x),
    "multilabel_margin 1-D target": lambda F, lib, x, t: F.multilabel_margin_loss(x, t),
    "multilabel_margin target too big": lambda F, lib, x, t: F.multilabel_margin_loss(x, t.expand(4, 3).T + 4),
    "multilabel_margin target below -1": lambda F, lib, x, t: F.multilabel_margin_loss(x[0], t.new_full((4,), -2)),
    "multilabel_margin unbatched 2-D target": lambda F, lib, x, t: F.multilabel_margin_loss(x[0], t[None]),
    "multilabel_soft_margin bad reduction": lambda F, lib, x, t: F.multilabel_soft_margin_loss(x, x, reduction="x"),
    "soft_margin shapes": lambda F, lib, x, t: F.soft_margin_loss(x, x[:, :2]),
    "soft_margin target with grad": lambda F, lib, x, t: F.soft_margin_loss(x, x.sign().requires_grad_()),
    "multi_margin weight with grad": lambda F, lib, x, t: F.multi_margin_loss(
        x, t, weight=lib.ones(4, dtype=lib.float64, requires_grad=True)),
    "triplet ndim": lambda F, lib, x, t: F.triplet_margin_loss(x, x, x[0]),
    "triplet margin 0": lambda F, lib, x, t: F.triplet_margin_loss(x, x, x, margin=0),
    "triplet bad reduction": lambda F, lib, x, t: F.triplet_margin_loss(x, x, x, reduction="avg"),
    "triplet distance ndim": lambda F, lib, x, t: F.triplet_margin_with_distance_loss(x, x[0], x),
    "triplet distance margin": lambda F, lib, x, t: F.triplet_margin_with_distance_loss(x, x, x, margin=-1.0),
    "triplet distance reduction": lambda F, lib, x, t: F.triplet_margin_with_distance_loss(x, x, x, reduction="s"),
    "poisson bad reduction": lambda F, lib, x, t: F.poisson_nll_loss(x, x, reduction="x"),
    "poisson legacy": lambda F, lib, x, t: F.poisson_nll_loss(x, x.abs(), reduce=False),
    "hinge bad reduction": lambda F, lib, x, t: F.hinge_embedding_loss(x, x.sign(), reduction="elementwise"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_arguments_raise_as_torch(case):
    data = np.arange(12.0).reshape(3, 4) / 4 - 1

    def run(lib):
        x, t = lib.tensor(data), lib.tensor([0, 3, 1])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = BAD[case](lib.nn.functional, lib, x, t)
        return out.detach().numpy(), [str(w.message) for w in caught]

    mine, theirs = _outcome(lambda: run(minigrad)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0], f"minigrad {mine}, torch {theirs}"
    if mine[0] == "ok":
        np.testing.assert_allclose(mine[1][0], theirs[1][0], rtol=1e-12)
        assert mine[1][1] == theirs[1][1]


MODULES = [
    ("MarginRankingLoss", (), {}), ("MarginRankingLoss", (0.5,), {"reduction": "sum"}),
    ("HingeEmbeddingLoss", (), {}), ("HingeEmbeddingLoss", (2.0,), {"size_average": False}),
    ("CosineEmbeddingLoss", (), {}), ("CosineEmbeddingLoss", (), {"margin": 0.2, "reduce": False}),
    ("SoftMarginLoss", (), {}), ("SoftMarginLoss", (), {"reduction": "none"}),
    ("MultiLabelSoftMarginLoss", (), {}), ("MultiLabelSoftMarginLoss", (), {"weight": "ones(4)"}),
    ("MultiMarginLoss", (), {}), ("MultiMarginLoss", (2, 0.5), {"weight": "ones(4)", "reduction": "sum"}),
    ("MultiLabelMarginLoss", (), {}), ("MultiLabelMarginLoss", (), {"reduction": "none"}),
    ("TripletMarginLoss", (), {}), ("TripletMarginLoss", (), {"margin": 0.5, "p": 1.0, "eps": 0.0, "swap": True}),
    ("TripletMarginWithDistanceLoss", (), {}), ("TripletMarginWithDistanceLoss", (), {"margin": 2.0, "swap": True}),
    ("PoissonNLLLoss", (), {}), ("PoissonNLLLoss", (False, True), {"eps": 0.5, "reduction": "sum"}),
]


def _forward_inputs(lib, name):
    rng = np.random.default_rng(5)
    x, y, z = (lib.tensor(rng.standard_normal((3, 4))) for _ in range(3))
    signs = lib.tensor(np.array([1.0, -1.0, 1.0]))
    return {
        "MarginRankingLoss": (x[:, 0], y[:, 0], signs), "HingeEmbeddingLoss": (x, y.sign()),
        "CosineEmbeddingLoss": (x, y, signs), "SoftMarginLoss": (x, y.sign()),
        "MultiLabelSoftMarginLoss": (x, (y > 0).double()), "MultiMarginLoss": (x, lib.tensor([0, 3, 1])),
        "MultiLabelMarginLoss": (x, lib.tensor([[0, 2, -1, 0], [3, -1, 0, 0], [1, 2, 3, 0]])),
        "TripletMarginLoss": (x, y, z), "TripletMarginWithDistanceLoss": (x, y, z),
        "PoissonNLLLoss": (x.abs(), y.abs().round()),
    }[name]


@pytest.mark.parametrize("name,args,kwargs", MODULES)
def test_loss_modules_as_torch(name, args, kwargs):
    def build(lib):
        options = {k: lib.ones(4, dtype=lib.float64) if v == "ones(4)" else v for k, v in kwargs.items()}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            module = getattr(lib.nn, name)(*args, **options)
        loss = module(*_forward_inputs(lib, name))
        attributes = {a: getattr(module, a) for a in ("reduction", "margin", "p", "eps", "swap", "log_input", "full")
                      if hasattr(module, a)}
        return (repr(module), list(module.state_dict()), attributes, loss.numpy(),
                [str(w.message) for w in caught])

    mine, theirs = build(minigrad), build(torch)
    assert mine[:3] == theirs[:3]
    np.testing.assert_allclose(mine[3], theirs[3], rtol=1e-12)
    assert mine[4] == theirs[4]


def test_triplet_with_distance_module_holds_its_distance():
    """The default distance is a PairwiseDistance sub-module (in the repr, as in PyTorch); a function
    given is used as it is."""
    assert isinstance(minigrad.nn.TripletMarginWithDistanceLoss().distance_function, minigrad.nn.PairwiseDistance)
    calls = []
    loss = minigrad.nn.TripletMarginWithDistanceLoss(distance_function=lambda a, b: calls.append(1) or (a - b).abs()
                                                     .sum(-1), swap=True)
    x = minigrad.ones(2, 3)
    loss(x, x, x * 2)
    assert len(calls) == 3
    with pytest.raises(ValueError, match="margin"):
        minigrad.nn.TripletMarginWithDistanceLoss(margin=0.0)
