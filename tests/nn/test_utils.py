"""``minigrad.nn.utils`` against ``torch.nn.utils``: generated cases, same values, gradients and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
import minigrad.nn as mnn

torch = pytest.importorskip("torch")

NORMS = [1.0, 2.0, 3.5, 0.5, 0.0, float("inf"), float("-inf")]


def grads_case(draw_shapes, rng, dtypes):
    return [None if shape is None else rng.standard_normal(shape).astype(dtype) * rng.choice([1e-3, 1.0, 50.0])
            for shape, dtype in zip(draw_shapes, dtypes)]


def with_grads(lib, arrays):
    """Parameters (leaves) whose .grad is each array (None: no gradient)."""
    params = []
    for a in arrays:
        shape, dtype = ((2,), np.float32) if a is None else (a.shape, a.dtype)
        p = lib.zeros(shape, dtype=getattr(lib, np.dtype(dtype).name), requires_grad=True)
        if a is not None:
            p.grad = lib.from_numpy(a.copy())
        params.append(p)
    return params


shapes = st.lists(st.one_of(st.none(), st.tuples(st.integers(1, 4), st.integers(1, 3))), min_size=0, max_size=4)


@settings(max_examples=120, deadline=None)
@given(shape_list=shapes, norm_type=st.sampled_from(NORMS), max_norm=st.sampled_from([0.01, 1.0, 5.0, 1e6]),
       mixed=st.booleans(), seed=st.integers(0, 2**16))
def test_clip_grad_norm_matches_torch(shape_list, norm_type, max_norm, mixed, seed):
    rng = np.random.default_rng(seed)
    dtypes = [np.float32 if (i % 2 or not mixed) else np.float64 for i in range(len(shape_list))]
    arrays = grads_case(shape_list, rng, dtypes)
    results = []
    for lib in (minigrad, torch):
        params = with_grads(lib, arrays)
        total = lib.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        results.append((total.numpy().copy(), str(total.dtype).split(".")[-1],
                        [None if p.grad is None else p.grad.numpy().copy() for p in params]))
    (got_total, got_dtype, got_grads), (want_total, want_dtype, want_grads) = results
    assert got_dtype == want_dtype
    np.testing.assert_allclose(got_total, want_total, rtol=1e-5)
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if g is not None:
            assert g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=2e-6 if g.dtype == np.float32 else 1e-12, atol=1e-30)


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_nonfinite_norm_is_refused_when_asked(lib, bad):
    params = with_grads(lib, [np.array([1.0, bad], np.float32)])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        lib.nn.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
    total = lib.nn.utils.clip_grad_norm_(params, 1.0)  # by default: scaled by the non-finite norm anyway
    assert not np.isfinite(total.item())


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_clip_grad_norm_edge_cases(lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        total = lib.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    assert total.item() == 0.0 and str(total.dtype).endswith("float32")
    assert any("empty generator" in str(w.message) for w in caught)
    p = with_grads(lib, [np.array([3.0, 4.0])])[0]
    total = lib.nn.utils.clip_grad_norm_(p, 1.0)  # a single tensor, not a list
    assert total.item() == 5.0
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-6)
    assert not total.requires_grad
    with pytest.warns(FutureWarning):
        lib.nn.utils.clip_grad_norm(p, 1.0)


# (torch's clip_grad_value_ fails an internal check when no parameter has a gradient; minigrad does nothing)
@settings(max_examples=60, deadline=None)
@given(shape_list=shapes.filter(lambda s: any(shape is not None for shape in s)), clip=st.sampled_from([0.0, 0.1, 1.0, 3]), seed=st.integers(0, 2**16))
def test_clip_grad_value_matches_torch(shape_list, clip, seed):
    rng = np.random.default_rng(seed)
    arrays = grads_case(shape_list, rng, [np.float64] * len(shape_list))
    results = []
    for lib in (minigrad, torch):
        params = with_grads(lib, arrays)
        assert lib.nn.utils.clip_grad_value_(params, clip) is None
        results.append([None if p.grad is None else p.grad.numpy().copy() for p in params])
    got, want = results
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_array_equal(g, w)


def test_parameters_to_vector_and_back_match_torch():
    results = []
    for lib in (minigrad, torch):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Linear(2, 1)).double()
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(lib.arange(p.numel(), dtype=lib.float64).reshape(p.shape) + i)
        vec = lib.nn.utils.parameters_to_vector(model.parameters())
        (vec * vec).sum().backward()  # recorded: the gradient reaches the parameters
        new = lib.arange(vec.numel(), dtype=lib.float64) * -1.0
        lib.nn.utils.vector_to_parameters(new, model.parameters())
        new[0] = 100.0  # the parameters share new's memory
        results.append((vec.detach().numpy().copy(), [p.grad.numpy().copy() for p in model.parameters()],
                        [p.detach().numpy().copy() for p in model.parameters()]))
        with pytest.raises(TypeError, match="expected torch.Tensor, but got: list"):
            lib.nn.utils.vector_to_parameters([1.0], model.parameters())
    for got, want in zip(*results):
        for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
            np.testing.assert_array_equal(g, w)


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(0, 4), min_size=1, max_size=4), feature=st.sampled_from([(), (2,), (2, 3)]),
       batch_first=st.booleans(), padding_value=st.sampled_from([0.0, -1.5]),
       side=st.sampled_from(["right", "left"]), seed=st.integers(0, 2**16))
def test_pad_sequence_matches_torch(lengths, feature, batch_first, padding_value, side, seed):
    rng = np.random.default_rng(seed)
    arrays = [rng.standard_normal((n, *feature)) for n in lengths]
    weight = rng.standard_normal(4 * 4 * 6)
    out = {}
    for lib in (minigrad, torch):
        seqs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
        padded = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=padding_value,
                                               padding_side=side)
        (padded * lib.from_numpy(weight[: padded.numel()].reshape(padded.shape).copy())).sum().backward()
        values = padded.detach().numpy().copy()  # (torch's unpad_sequence transposes its argument in place)
        unpadded = lib.nn.utils.rnn.unpad_sequence(padded, lib.tensor(lengths), batch_first=batch_first) \
            if side == "right" else []
        out[lib.__name__] = (values, [s.grad.numpy() for s in seqs], [u.detach().numpy() for u in unpadded])
    for got, want in zip(out["minigrad"], out["torch"]):
        for g, w in zip(got if isinstance(got, list) else [got], want if isinstance(want, list) else [want]):
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_pad_sequence_errors(lib):
    with pytest.raises(RuntimeError, match="padding_side"):
        lib.nn.utils.rnn.pad_sequence([lib.ones(2)], padding_side="middle")
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        lib.nn.utils.rnn.pad_sequence([])


def _net(lib):
    nn = lib.nn
    lib.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Tanh(), nn.Linear(4, 2)).double()
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.linspace(-1, 1, p.numel(), dtype=lib.float64).reshape(p.shape) * (i + 1))
    return model


@settings(max_examples=40, deadline=None)
@given(names=st.sets(st.sampled_from(["0.weight", "0.bias", "1.weight", "3.weight", "1.running_mean"])),
       train=st.booleans(), seed=st.integers(0, 2**16))
def test_functional_call_matches_torch(names, train, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, 3))
    shapes = {k: tuple(v.shape) for k, v in _net(minigrad).state_dict().items()}
    arrays = {n: rng.standard_normal(shapes[n]) for n in sorted(names)}
    out = {}
    for lib in (minigrad, torch):
        model = _net(lib).train(train)
        before = {k: v.detach().numpy().copy() for k, v in model.named_parameters()}
        given_tensors = {n: lib.from_numpy(a.copy()).requires_grad_("running" not in n) for n, a in arrays.items()}
        y = (minigrad.func if lib is minigrad else torch.func).functional_call(model, given_tensors, (lib.from_numpy(x.copy()),))
        y.pow(2).sum().backward()
        after = {k: v.detach().numpy() for k, v in model.named_parameters()}
        for k in after:
            np.testing.assert_array_equal(after[k], before[k])  # the module's own tensors are unchanged
        out[lib.__name__] = (y.detach().numpy(), {n: None if t.grad is None else t.grad.numpy()
                                                  for n, t in given_tensors.items()},
                             {n: None if p.grad is None else p.grad.numpy() for n, p in model.named_parameters()})
    got, want = out["minigrad"], out["torch"]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    for g, w in zip(got[1:], want[1:]):
        assert g.keys() == w.keys()
        for k in g:
            assert (g[k] is None) == (w[k] is None), k
            if g[k] is not None:
                np.testing.assert_allclose(g[k], w[k], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_functional_call_strict_ties_and_restores(lib):
    nn = lib.nn
    model = _net(lib)
    with pytest.raises(RuntimeError, match="Missing key"):
        (minigrad.func if lib is minigrad else torch.func).functional_call(model, {"0.weight": lib.zeros(4, 3, dtype=lib.float64)},
                                               (lib.ones(2, 3, dtype=lib.float64),), strict=True)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        (minigrad.func if lib is minigrad else torch.func).functional_call(model, ({"0.bias": lib.zeros(4)}, {"0.bias": lib.zeros(4)}),
                                               (lib.ones(2, 3),))
    first, second = nn.Linear(2, 2, bias=False), nn.Linear(2, 2, bias=False)
    second.weight = first.weight  # one Parameter under two names
    tied = nn.Sequential(first, second)
    y = (minigrad.func if lib is minigrad else torch.func).functional_call(tied, {"0.weight": lib.eye(2) * 2}, (lib.ones(1, 2),))
    assert y.tolist() == [[4.0, 4.0]]  # both uses took the new weight
    y = (minigrad.func if lib is minigrad else torch.func).functional_call(tied, {"0.weight": lib.eye(2) * 2}, (lib.ones(1, 2),),
                                               tie_weights=False)
    assert y.tolist() != [[4.0, 4.0]]
    original = model[0].weight
    with pytest.raises(RuntimeError):
        (minigrad.func if lib is minigrad else torch.func).functional_call(model, {"0.weight": lib.zeros(4, 5, dtype=lib.float64)},
                                               (lib.ones(2, 3, dtype=lib.float64),))
    assert model[0].weight is original  # restored after forward raised


def test_clip_grad_norm_in_a_training_loop():
    """The use: a model whose gradient explodes still takes steps of length at most lr * max_norm."""
    minigrad.manual_seed(0)
    model = mnn.Linear(4, 1)
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1)
    x, y = minigrad.randn(16, 4) * 1e3, minigrad.randn(16, 1)
    for _ in range(3):
        before = minigrad.nn.utils.parameters_to_vector(model.parameters()).detach().clone()
        opt.zero_grad()
        ((model(x) - y) ** 2).mean().backward()
        total = mnn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        opt.step()
        step = minigrad.nn.utils.parameters_to_vector(model.parameters()).detach() - before
        assert total.item() > 1.0
        assert step.norm().item() <= 0.1 * (1.0 + 1e-5)
