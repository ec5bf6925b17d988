"""``minigrad.func`` against ``torch.func``: the same transforms of generated functions, same values."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
import minigrad.func as mfunc

torch = pytest.importorskip("torch")
tfunc = pytest.importorskip("torch.func")

# Smooth elementwise steps and reductions, composed into random scalar and vector functions.
STEPS = {
    "sin": lambda x: x.sin(), "square": lambda x: x * x, "exp_half": lambda x: (x * 0.5).exp(),
    "tanh": lambda x: x.tanh(), "affine": lambda x: x * 1.5 - 0.25, "cube": lambda x: x ** 3,
    "softplus_like": lambda x: (x.exp() + 1.0).log(),
}


def composed(steps: list, reduce: bool):
    def f(x):
        for step in steps:
            x = STEPS[step](x)
        return x.sum() if reduce else x
    return f


def pair_function(steps: list):
    """f(x, y): a scalar depending on both arguments."""
    inner = composed(steps, reduce=False)
    return lambda x, y: (inner(x) * y.cos()).sum()


def same(got, want, rtol=1e-10, atol=1e-12):
    if isinstance(want, dict):
        assert isinstance(got, dict) and got.keys() == want.keys()
        for k in want:
            same(got[k], want[k], rtol, atol)
    elif isinstance(want, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(want), (got, want)
        for g, w in zip(got, want):
            same(g, w, rtol, atol)
    else:
        assert tuple(got.shape) == tuple(want.shape)
        assert got.requires_grad == want.requires_grad
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol, atol=atol)


steps_strategy = st.lists(st.sampled_from(sorted(STEPS)), min_size=1, max_size=3)
size = st.integers(1, 4)


@settings(max_examples=60, deadline=None)
@given(steps=steps_strategy, n=size, seed=st.integers(0, 2**16))
def test_grad_hessian_jacobians_match_torch(steps, n, seed):
    x = np.random.default_rng(seed).uniform(-1, 1, n)
    scalar, vector = composed(steps, True), composed(steps, False)
    for transform in ("grad", "grad_and_value", "hessian", "jacrev", "jacfwd", "grad_of_grad"):
        results = []
        for lib, func in ((minigrad, mfunc), (torch, tfunc)):
            t = lib.from_numpy(x.copy())
            if transform == "grad":
                results.append(func.grad(scalar)(t))
            elif transform == "grad_and_value":
                results.append(func.grad_and_value(scalar)(t))
            elif transform == "hessian":
                results.append(func.hessian(scalar)(t))
            elif transform == "grad_of_grad":
                results.append(func.grad(lambda u: func.grad(scalar)(u).pow(2).sum())(t))
            else:
                results.append(getattr(func, transform)(vector)(t))
        same(*results)


@settings(max_examples=40, deadline=None)
@given(steps=steps_strategy, n=size, argnums=st.sampled_from([0, 1, (0, 1), (1,)]), aux=st.booleans(),
       seed=st.integers(0, 2**16))
def test_argnums_and_has_aux_match_torch(steps, n, argnums, aux, seed):
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    f = pair_function(steps)
    results = []
    for lib, func in ((minigrad, mfunc), (torch, tfunc)):
        g = (lambda a, b: (f(a, b), a * 2)) if aux else f
        results.append(func.grad(g, argnums=argnums, has_aux=aux)(lib.from_numpy(x.copy()), lib.from_numpy(y.copy())))
    same(*results)


@settings(max_examples=40, deadline=None)
@given(steps=steps_strategy, n=size, seed=st.integers(0, 2**16))
def test_vjp_and_jvp_match_torch(steps, n, seed):
    rng = np.random.default_rng(seed)
    x, v = rng.uniform(-1, 1, n), rng.standard_normal(n)
    f = composed(steps, False)
    results = []
    for lib, func in ((minigrad, mfunc), (torch, tfunc)):
        out, vjp_fn = func.vjp(f, lib.from_numpy(x.copy()))
        value, tangent_out = func.jvp(f, (lib.from_numpy(x.copy()),), (lib.from_numpy(v.copy()),))
        results.append((out, vjp_fn(lib.from_numpy(v.copy())), value, tangent_out))
    same(*results)


@settings(max_examples=40, deadline=None)
@given(steps=steps_strategy, batch=st.integers(1, 4), n=size, in_dims=st.sampled_from([(0, 0), (0, None), (1, 0)]),
       out_dims=st.sampled_from([0, 1]), seed=st.integers(0, 2**16))
def test_vmap_matches_torch(steps, batch, n, in_dims, out_dims, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (batch, n) if in_dims[0] == 0 else (n, batch))
    y = rng.uniform(-1, 1, (batch, n) if in_dims[1] == 0 else (n,))
    inner = composed(steps, False)

    def f(a, b):
        return inner(a) * b + a.sum()

    results = []
    for lib, func in ((minigrad, mfunc), (torch, tfunc)):
        results.append(func.vmap(f, in_dims=in_dims, out_dims=out_dims)(lib.from_numpy(x.copy()), lib.from_numpy(y.copy())))
    same(*results)


def _model(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 1)).double()
    with lib.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(lib.linspace(-1, 1, p.numel(), dtype=lib.float64).reshape(p.shape) * (i + 1) * 0.7)
    return model


def test_per_sample_gradients_match_torch():
    """The torch.func tutorial: vmap over grad of a loss of the model's parameters."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((6, 3)), rng.standard_normal((6, 1))
    results = []
    for lib, func in ((minigrad, mfunc), (torch, tfunc)):
        model = _model(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, xi, yi, model=model, func=func):
            return ((func.functional_call(model, p, (xi.unsqueeze(0),)) - yi.unsqueeze(0)) ** 2).mean()

        results.append(func.vmap(func.grad(loss), in_dims=(None, 0, 0))(params, lib.from_numpy(x), lib.from_numpy(y)))
    same(*results)
    # and each per-sample gradient is the ordinary backward of that sample alone
    model = _model(minigrad)
    for i in range(6):
        model.zero_grad()
        ((model(minigrad.from_numpy(x[i:i + 1])) - minigrad.from_numpy(y[i:i + 1])) ** 2).mean().backward()
        for name, p in model.named_parameters():
            np.testing.assert_allclose(results[0][name][i].numpy(), p.grad.numpy(), rtol=1e-12)


def test_ensemble_with_stack_module_state_matches_torch():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((5, 3))
    results = []
    for lib, func in ((minigrad, mfunc), (torch, tfunc)):
        models = []
        for k in range(3):
            model = _model(lib)
            with lib.no_grad():
                for p in model.parameters():
                    p.mul_(k + 1)
            models.append(model)
        params, buffers = func.stack_module_state(models)
        out = func.vmap(lambda p, b, d, m=models[0], func=func: func.functional_call(m, (p, b), (d,)),
                        in_dims=(0, 0, None))(params, buffers, lib.from_numpy(data))
        results.append((out, {k: v for k, v in params.items()}))
        assert all(v.is_leaf and v.requires_grad for v in params.values())
    same(*results)


@pytest.mark.parametrize("func", [mfunc, tfunc], ids=["minigrad", "torch"])
def test_errors(func):
    lib = minigrad if func is mfunc else torch
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        func.grad(lambda x: x * 2)(lib.ones(3))
    with pytest.raises(ValueError, match="same size in the mapped dimension"):
        func.vmap(lambda a, b: a + b)(lib.ones(2, 3), lib.ones(3, 3))
    with pytest.raises(ValueError, match="in_dims is not compatible"):
        func.vmap(lambda a, b: a + b, in_dims=(0,))(lib.ones(2), lib.ones(2))
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        func.vmap(lambda a, b: a * b)(lib.ones(2), 3.0)
    with pytest.raises(RuntimeError, match="Expected at least one model"):
        func.stack_module_state([])


def test_functional_call_takes_several_dicts_and_the_old_place_warns():
    model = _model(minigrad)
    params = {k: v * 0 for k, v in model.named_parameters()}
    out = mfunc.functional_call(model, (params, {}), (minigrad.ones(2, 3, dtype=minigrad.float64),))
    assert out.tolist() == [[0.0], [0.0]]
    with pytest.warns(FutureWarning, match="Please use `torch.func.functional_call`"):
        minigrad.nn.utils.stateless.functional_call(model, params, (minigrad.ones(2, 3, dtype=minigrad.float64),))
