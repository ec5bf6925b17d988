"""``nn.utils.parametrize`` and ``nn.utils.parametrizations`` against PyTorch's.

The same code runs with both libraries (``L`` is minigrad or torch): generated layers get the
same parametrizations, torch's state_dict (random vectors and bases included) is loaded into
minigrad's, and then values, gradients w.r.t. the original tensors, buffers after training-mode
steps, state_dict keys, reprs, class names, removals and exception types must agree.
"""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
import minigrad.nn as mnn
from minigrad.nn.utils import parametrizations as m_parametrizations
from minigrad.nn.utils import parametrize as m_parametrize

torch = pytest.importorskip("torch")
from torch.nn.utils import parametrizations as t_parametrizations  # noqa: E402
from torch.nn.utils import parametrize as t_parametrize  # noqa: E402

LIBS = {"minigrad": (minigrad, m_parametrize, m_parametrizations), "torch": (torch, t_parametrize, t_parametrizations)}


def arr(t) -> np.ndarray:
    return t.detach().numpy().copy()


def to_minigrad(state: dict) -> dict:
    return {k: minigrad.tensor(arr(v)) for k, v in state.items()}


def same(got, want, rtol=1e-9, atol=1e-10) -> None:
    np.testing.assert_allclose(arr(got), arr(want), rtol=rtol, atol=atol)


def make_layer(L, kind: str, sizes: tuple, bias: bool = True):
    """A float64 layer of ``kind`` (Linear, Conv1d, Conv2d, ConvTranspose1d/2d)."""
    cin, cout, k = sizes
    if kind == "Linear":
        return L.nn.Linear(cin, cout, bias=bias).double()
    return getattr(L.nn, kind)(cin, cout, k, bias=bias).double()


def make_input(kind: str, sizes: tuple, rng) -> np.ndarray:
    cin, _, k = sizes
    shape = {"Linear": (3, cin), "Conv1d": (2, cin, k + 2), "Conv2d": (2, cin, k + 1, k + 2),
             "ConvTranspose1d": (2, cin, 3), "ConvTranspose2d": (2, cin, 2, 3)}[kind]
    return rng.standard_normal(shape)


def state_layout(module) -> list:
    return [(k, tuple(v.shape)) for k, v in module.state_dict().items()]


def pair(kind, sizes, apply):
    """The torch layer and the minigrad layer, parametrized by ``apply(L, P, Ps, layer)``, with
    torch's state loaded into minigrad's."""
    layers = {}
    for name, (L, P, Ps) in LIBS.items():
        layers[name] = make_layer(L, kind, sizes)
        apply(L, P, Ps, layers[name])
    m, t = layers["minigrad"], layers["torch"]
    assert state_layout(m) == state_layout(t)
    m.load_state_dict(to_minigrad(t.state_dict()))
    return m, t


def forward_backward(m, t, x: np.ndarray):
    """One forward and backward in each library; the outputs and every parameter's gradient agree."""
    ym, yt = m(minigrad.tensor(x)), t(torch.tensor(x))
    same(ym, yt)
    weights = np.linspace(-1, 1, ym.numel()).reshape(tuple(ym.shape))
    (ym * minigrad.tensor(weights)).sum().backward()
    (yt * torch.tensor(weights)).sum().backward()
    mp, tp = dict(m.named_parameters()), dict(t.named_parameters())
    assert list(mp) == list(tp)
    for name in tp:
        same(mp[name].grad, tp[name].grad, rtol=1e-7, atol=1e-9)
        mp[name].grad, tp[name].grad = None, None


def same_state(m, t, **tolerances) -> None:
    ms, ts = m.state_dict(), t.state_dict()
    assert list(ms) == list(ts)
    for k in ts:
        same(ms[k], ts[k], **tolerances)


KINDS = ["Linear", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d"]
sizes_st = st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3))


# -- the three parametrizations ------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(KINDS), sizes=sizes_st, dim=st.sampled_from([0, 1, -1, None, 2]),
       leave=st.booleans(), seed=st.integers(0, 2**16))
def test_weight_norm_matches_torch(kind, sizes, dim, leave, seed):
    rng = np.random.default_rng(seed)
    if dim == 2 and kind == "Linear":
        dim = 1
    m, t = pair(kind, sizes, lambda L, P, Ps, layer: Ps.weight_norm(layer, dim=dim))
    assert type(m).__name__ == type(t).__name__ == f"Parametrized{kind}"
    assert repr(m) == repr(t)
    forward_backward(m, t, make_input(kind, sizes, rng))
    same(m.weight, t.weight)
    assert m.parametrizations.weight.original0.shape == t.parametrizations.weight.original0.shape
    for L, P, _ in LIBS.values():
        layer = m if L is minigrad else t
        if leave:
            P.remove_parametrizations(layer, "weight", leave_parametrized=True)
        else:
            with pytest.raises(ValueError):
                P.remove_parametrizations(layer, "weight", leave_parametrized=False)
    if leave:
        assert type(m).__name__ == kind and not hasattr(m, "parametrizations")
        same_state(m, t)


def test_weight_norm_loads_the_old_weight_g_weight_v_checkpoint():
    """A state_dict saved with the older ``nn.utils.weight_norm`` loads into the parametrized layer."""
    with pytest.warns(FutureWarning):
        old = torch.nn.utils.weight_norm(torch.nn.Linear(3, 4).double())
    state = to_minigrad(old.state_dict())
    assert sorted(state) == ["bias", "weight_g", "weight_v"]
    m = m_parametrizations.weight_norm(mnn.Linear(3, 4).double())
    m.load_state_dict(state)
    same(m.weight, old.weight)
    assert sorted(state) == ["bias", "weight_g", "weight_v"]  # the caller's dict is left alone
    nested = mnn.Sequential(mnn.Tanh(), m_parametrizations.weight_norm(mnn.Linear(3, 4).double()))
    nested.load_state_dict({f"1.{k}": v for k, v in state.items()})  # the hook renames under its prefix
    assert list(nested.state_dict()) == ["1.bias", "1.parametrizations.weight.original0",
                                         "1.parametrizations.weight.original1"]
    same(nested[1].weight, old.weight)


@settings(max_examples=25, deadline=None)
@given(kind=st.sampled_from(KINDS), sizes=sizes_st, n_power_iterations=st.integers(1, 3),
       eps=st.sampled_from([1e-12, 1e-3]), dim=st.sampled_from([None, 0, 1, -1]), steps=st.integers(1, 3),
       seed=st.integers(0, 2**16))
def test_spectral_norm_matches_torch(kind, sizes, n_power_iterations, eps, dim, steps, seed):
    rng = np.random.default_rng(seed)
    m, t = pair(kind, sizes, lambda L, P, Ps, layer: Ps.spectral_norm(layer, n_power_iterations=n_power_iterations,
                                                                     eps=eps, dim=dim))
    assert repr(m) == repr(t)
    assert m.parametrizations.weight[0].dim == t.parametrizations.weight[0].dim
    for _ in range(steps):  # each training-mode read moves u and v by n_power_iterations steps
        forward_backward(m, t, make_input(kind, sizes, rng))
        same_state(m, t, rtol=1e-7, atol=1e-9)
    m.eval(), t.eval()
    u = arr(m.parametrizations.weight[0]._u)
    forward_backward(m, t, make_input(kind, sizes, rng))
    np.testing.assert_array_equal(arr(m.parametrizations.weight[0]._u), u)  # eval: no power iteration
    back = t_parametrizations.spectral_norm(make_layer(torch, kind, sizes), n_power_iterations=n_power_iterations,
                                            eps=eps, dim=dim).eval()
    back.load_state_dict({k: torch.tensor(arr(v)) for k, v in m.state_dict().items()})  # the way back
    same(m.weight, back.weight)
    for L, P, _ in LIBS.values():
        P.remove_parametrizations(m if L is minigrad else t, "weight")
    same_state(m, t, rtol=1e-7, atol=1e-9)


@settings(max_examples=25, deadline=None)
@given(rows=st.integers(1, 4), cols=st.integers(1, 4), orthogonal_map=st.sampled_from([None, "matrix_exp", "cayley",
                                                                                        "householder"]),
       use_trivialization=st.booleans(), seed=st.integers(0, 2**16))
def test_orthogonal_matches_torch(rows, cols, orthogonal_map, use_trivialization, seed):
    rng = np.random.default_rng(seed)
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if rows == cols else "householder"  # (the default)
    if not use_trivialization and orthogonal_map in ("matrix_exp", "cayley"):
        orthogonal_map = "householder"  # (their right_inverse needs the base: NotImplementedError, tested below)
    m, t = pair("Linear", (cols, rows, 1), lambda L, P, Ps, layer: Ps.orthogonal(
        layer, orthogonal_map=orthogonal_map, use_trivialization=use_trivialization))
    assert repr(m) == repr(t)
    same(m.weight, t.weight, atol=1e-9)
    w = arr(m.weight)
    small = min(rows, cols)
    gram = w.T @ w if rows >= cols else w @ w.T
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-9)
    forward_backward(m, t, make_input("Linear", (cols, rows, 1), rng))
    target = np.linalg.qr(rng.standard_normal((max(rows, cols), small)))[0]
    target = target if rows >= cols else target.T
    for layer, L in ((m, minigrad), (t, torch)):
        layer.weight = L.tensor(target)  # assigning: right_inverse
    same(m.weight, t.weight, atol=1e-9)
    same(m.weight, torch.tensor(target), atol=1e-9)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("use_trivialization", [True, False])
def test_orthogonal_of_a_batch_matches_torch(orthogonal_map, use_trivialization):
    rng = np.random.default_rng(1)
    stack, target = rng.standard_normal((2, 4, 3)), np.linalg.qr(rng.standard_normal((2, 4, 3)))[0]
    got = {}
    for L, P, Ps in LIBS.values():
        layer = L.nn.Linear(1, 1)
        layer.register_parameter("stack", L.nn.Parameter(L.tensor(stack)))
        Ps.orthogonal(layer, "stack", orthogonal_map=orthogonal_map, use_trivialization=use_trivialization)
        got[L] = [arr(layer.stack)]  # (the base's completing columns are random: values only)
        if orthogonal_map == "householder" or use_trivialization:
            layer.stack = L.tensor(target)
            got[L] += [arr(layer.stack), arr(layer.parametrizations.stack.original)]
    for g, w in zip(got[minigrad], got[torch]):
        np.testing.assert_allclose(g, w, atol=1e-9)


def test_orthogonal_batched_weight_and_refusals():
    for L, P, Ps in LIBS.values():
        layer = L.nn.Linear(3, 3).double()
        layer.register_parameter("stack", L.nn.Parameter(L.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)))))
        Ps.orthogonal(layer, "stack", orthogonal_map="cayley")
        q = layer.stack.detach().numpy()
        np.testing.assert_allclose(q @ q.transpose(0, 2, 1), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-9)
        with pytest.raises(ValueError):
            Ps.orthogonal(L.nn.Linear(3, 3), "bias")
        with pytest.raises(ValueError):
            Ps.orthogonal(L.nn.Linear(3, 3), orthogonal_map="qr")
        with pytest.raises(ValueError):
            Ps.orthogonal(L.nn.Linear(3, 3), "nothing")
        layer = Ps.orthogonal(L.nn.Linear(3, 3), use_trivialization=False)
        with pytest.raises(NotImplementedError):
            layer.weight = L.eye(3)
        with pytest.raises(ValueError):
            layer.parametrizations.weight[0].right_inverse(L.eye(2))
        with pytest.raises(ValueError):
            Ps.spectral_norm(L.nn.Linear(3, 3), n_power_iterations=0)
        with pytest.raises(IndexError):
            Ps.spectral_norm(L.nn.Linear(3, 3), dim=2)
        with pytest.raises(ValueError):
            Ps.spectral_norm(L.nn.Linear(3, 3), "nothing")


# -- register_parametrization itself -------------------------------------------------------
def parametrizations_of(L):
    """The documentation's examples, written once for either library."""

    class Symmetric(L.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class RankOne(L.nn.Module):
        def forward(self, x, y):
            return x.unsqueeze(-1) @ y.unsqueeze(-2)

        def right_inverse(self, Z):
            return Z[:, 0].clone(), Z[0, :].clone()

    class Double(L.nn.Module):  # no right_inverse: the original keeps its value
        def forward(self, X):
            return 2 * X

    class Flatten(L.nn.Module):  # changes the shape: only with unsafe=True
        def forward(self, X):
            return X.reshape(-1)

    return Symmetric, RankOne, Double, Flatten


@settings(max_examples=15, deadline=None)
@given(n=st.integers(1, 4), chain=st.lists(st.sampled_from(["Symmetric", "Double"]), min_size=1, max_size=3),
       on_buffer=st.booleans(), seed=st.integers(0, 2**16))
def test_register_parametrization_matches_torch(n, chain, on_buffer, seed):
    rng = np.random.default_rng(seed)
    w, b, x = rng.standard_normal((n, n)), rng.standard_normal(n), rng.standard_normal((2, n))
    value = rng.standard_normal((n, n))
    value = value + value.T
    results = {}
    for name, (L, P, _) in LIBS.items():
        classes = dict(zip(["Symmetric", "RankOne", "Double", "Flatten"], parametrizations_of(L)))
        layer = L.nn.Linear(n, n).double()
        with L.no_grad():
            layer.weight.copy_(L.tensor(w))
            layer.bias.copy_(L.tensor(b))
        if on_buffer:
            layer.register_buffer("scale", L.tensor(w[0].copy()))
            P.register_parametrization(layer, "scale", classes["Double"]())
        for c in chain:
            assert P.register_parametrization(layer, "weight", classes[c]()) is layer
        out = layer(L.tensor(x))
        out.sum().backward()
        original = layer.parametrizations.weight.original
        record = {"out": arr(out), "grad": arr(original.grad), "name": type(layer).__name__, "repr": repr(layer),
                  "layout": state_layout(layer), "before": P.type_before_parametrizations(layer).__name__,
                  "is": [P.is_parametrized(layer, name) for name in (None, "weight", "bias")]}
        if "Double" not in chain:
            layer.weight = L.tensor(value)  # through every right_inverse, last first
            record["assigned"] = arr(layer.weight)
        else:
            with pytest.raises(RuntimeError):
                layer.weight = L.tensor(value)
        P.remove_parametrizations(layer, "weight", leave_parametrized=True)
        record["removed"] = (type(layer).__name__, state_layout(layer), arr(layer.weight),
                             isinstance(layer.weight, L.nn.Parameter), layer.weight is original)
        results[name] = record
    got, want = results["minigrad"], results["torch"]
    for key in want:
        if isinstance(want[key], np.ndarray):
            np.testing.assert_allclose(got[key], want[key], rtol=1e-9, atol=1e-12)
        elif key == "removed":
            assert got[key][:2] == want[key][:2] and got[key][3:] == want[key][3:]
            np.testing.assert_allclose(got[key][2], want[key][2], rtol=1e-9)
        else:
            assert got[key] == want[key], key


def test_several_originals_cache_copy_and_refusals():
    for L, P, _ in LIBS.values():
        Symmetric, RankOne, Double, Flatten = parametrizations_of(L)
        layer = P.register_parametrization(L.nn.Linear(3, 3).double(), "weight", RankOne())
        originals = layer.parametrizations.weight
        assert [k for k, _ in layer.named_parameters()] == ["bias", "parametrizations.weight.original0",
                                                           "parametrizations.weight.original1"]
        assert isinstance(originals.original0, L.nn.Parameter) and not hasattr(originals, "original")
        with pytest.raises(ValueError):  # several tensors cannot be left unparametrized
            P.remove_parametrizations(layer, "weight", leave_parametrized=False)
        calls = []
        originals[0].register_forward_hook(lambda *args: calls.append(1))
        with P.cached():
            first, second = layer.weight, layer.weight
        assert first is second and len(calls) == 1
        assert layer.weight is not first and len(calls) == 2
        twin = copy.deepcopy(layer)
        assert type(twin) is type(layer) and twin.weight.shape == layer.weight.shape
        with pytest.raises(RuntimeError):
            pickle.dumps(layer)
        with pytest.raises(ValueError):  # no such tensor
            P.register_parametrization(L.nn.Linear(3, 3), "nothing", Double())
        with pytest.raises(ValueError):  # shape changed without unsafe
            P.register_parametrization(L.nn.Linear(3, 3), "weight", Flatten())
        flat = P.register_parametrization(L.nn.Linear(3, 3), "weight", Flatten(), unsafe=True)
        assert tuple(flat.weight.shape) == (9,)
        with pytest.raises(ValueError):  # a second one may not change the shape either
            P.register_parametrization(P.register_parametrization(L.nn.Linear(3, 3), "weight", Double()),
                                       "weight", Flatten())
        with pytest.raises(ValueError):
            P.remove_parametrizations(L.nn.Linear(3, 3), "weight")
        with pytest.raises(KeyError):  # the property owns the name now
            layer.weight = L.nn.Parameter(L.zeros(3, 3))
        P.remove_parametrizations(layer, "weight")
        assert type(layer) is L.nn.Linear and isinstance(layer.weight, L.nn.Parameter)


def test_remove_keeps_the_original_tensor_object():
    """``leave_parametrized=False`` restores the original values; either way the optimizer's tensor stays."""
    for L, P, _ in LIBS.values():
        _, _, Double, _ = parametrizations_of(L)
        layer = L.nn.Linear(2, 2)
        before = layer.weight
        values = arr(before)
        P.register_parametrization(layer, "weight", Double())
        P.remove_parametrizations(layer, "weight", leave_parametrized=False)
        assert layer.weight is before
        np.testing.assert_array_equal(arr(layer.weight), values)
        P.register_parametrization(layer, "weight", Double())
        P.remove_parametrizations(layer, "weight")
        assert layer.weight is before
        np.testing.assert_array_equal(arr(layer.weight), 2 * values)


def test_transfer_parametrizations_and_params():
    for L, P, Ps in LIBS.values():
        source = Ps.weight_norm(L.nn.Linear(3, 2))
        target = P.transfer_parametrizations_and_params(source, L.nn.Linear(3, 2))
        assert type(target).__name__ == "ParametrizedLinear"
        assert target.parametrizations.weight.original0 is source.parametrizations.weight.original0
        np.testing.assert_array_equal(arr(target.weight), arr(source.weight))
