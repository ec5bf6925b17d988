"""Module hooks (forward, forward pre-, full backward and backward pre-hooks) against PyTorch.

Generated cases: a module (one input, two inputs and a number, a tuple output, a Sequential
with hooks on the inside too), which inputs require grad, and a list of hooks, each of which
records what it saw and may replace it. minigrad and torch must call the same hooks in the
same order with the same values, and give the same outputs and gradients.
"""
from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
import minigrad.nn as mnn

torch = pytest.importorskip("torch")


def _numpy(x):
    if x is None or not hasattr(x, "detach"):
        return x
    return x.detach().numpy().copy()


def _scaled(values, factor):
    return tuple(v * factor if hasattr(v, "detach") else v for v in values)


def build(lib, kind: str, weights: list):
    """The same module in ``lib`` (minigrad or torch), with weights from ``weights``."""
    nn = lib.nn

    class TwoInputs(nn.Module):
        def forward(self, x, y, scale):
            return (x * y).tanh() * scale

    class TupleOut(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            h = self.lin(x)
            return h.relu(), h * 2

    module = {"linear": lambda: nn.Linear(3, 2), "two": TwoInputs, "tuple": TupleOut,
              "seq": lambda: nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))}[kind]()
    module = module.double()
    with lib.no_grad():
        for p, w in zip(module.parameters(), weights):
            p.copy_(lib.from_numpy(w.copy()))
    return module


HOOKS = ("pre", "pre_kw", "fwd", "fwd_kw", "bpre", "bfull")


def register(lib, module, spec: list, log: list) -> list:
    """Register the hooks of ``spec`` ((kind, replaces, prepend) triples); each logs what it sees."""
    handles = []
    for n, (kind, replaces, prepend) in enumerate(spec):
        tag = f"{kind}{n}"

        def pre(m, args, tag=tag, replaces=replaces):
            log.append((tag, [_numpy(a) for a in args]))
            return _scaled(args, 2.0) if replaces else None

        def pre_kw(m, args, kwargs, tag=tag, replaces=replaces):
            log.append((tag, [_numpy(a) for a in args], sorted(kwargs)))
            return (_scaled(args, 0.5), kwargs) if replaces else None

        def fwd(m, args, out, tag=tag, replaces=replaces):
            log.append((tag, [_numpy(a) for a in args], [_numpy(o) for o in (out if isinstance(out, tuple) else (out,))]))
            if not replaces:
                return None
            return _scaled(out, 3.0) if isinstance(out, tuple) else out * 3.0

        def fwd_kw(m, args, kwargs, out, tag=tag, replaces=replaces):
            log.append((tag, sorted(kwargs)))
            return None

        def bpre(m, grad_output, tag=tag, replaces=replaces):
            log.append((tag, [_numpy(g) for g in grad_output]))
            return _scaled(grad_output, 2.0) if replaces else None

        def bfull(m, grad_input, grad_output, tag=tag, replaces=replaces):
            log.append((tag, [_numpy(g) for g in grad_input], [_numpy(g) for g in grad_output]))
            return _scaled(grad_input, 0.25) if replaces else None

        if kind == "pre":
            handles.append(module.register_forward_pre_hook(pre, prepend=prepend))
        elif kind == "pre_kw":
            handles.append(module.register_forward_pre_hook(pre_kw, prepend=prepend, with_kwargs=True))
        elif kind == "fwd":
            handles.append(module.register_forward_hook(fwd, prepend=prepend))
        elif kind == "fwd_kw":
            handles.append(module.register_forward_hook(fwd_kw, prepend=prepend, with_kwargs=True))
        elif kind == "bpre":
            handles.append(module.register_full_backward_pre_hook(bpre, prepend=prepend))
        else:
            handles.append(module.register_full_backward_hook(bfull, prepend=prepend))
    return handles


def run(lib, kind, weights, inputs, requires, spec, inner_spec, removed, weight_out):
    """Forward and backward with the hooks; everything that can be compared, as NumPy."""
    module = build(lib, kind, weights)
    log = []
    handles = register(lib, module, spec, log)
    if kind == "seq":
        handles += register(lib, module[0], inner_spec, log)
    for i in removed:
        if i < len(handles):
            handles[i].remove()
    xs = [lib.from_numpy(a.copy()).requires_grad_(r) for a, r in zip(inputs, requires)]
    args = (xs[0], xs[1], 1.5) if kind == "two" else (xs[0],)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = module(*args)
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum((o * lib.from_numpy(weight_out[: o.numel()].reshape(o.shape).copy())).sum() for o in outs)
        if loss.requires_grad:
            loss.backward()
    firing = any("Full backward hook is firing" in str(w.message) for w in caught)
    params = [_numpy(p.grad) for p in module.parameters()]
    return log, [_numpy(o) for o in outs], [_numpy(x.grad) for x in xs], params, firing


def assert_same(a, b, where=""):
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), f"{where}: {a!r} vs {b!r}"
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=where)
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


hook_specs = st.lists(st.tuples(st.sampled_from(HOOKS), st.booleans(), st.booleans()), max_size=4)


@settings(max_examples=150, deadline=None)
@given(kind=st.sampled_from(["linear", "two", "tuple", "seq"]), spec=hook_specs, inner_spec=hook_specs,
       requires=st.tuples(st.booleans(), st.booleans()), removed=st.lists(st.integers(0, 7), max_size=2),
       seed=st.integers(0, 2**16))
def test_hooks_match_torch(kind, spec, inner_spec, requires, removed, seed):
    rng = np.random.default_rng(seed)
    weights = [rng.standard_normal(s) for s in ((4, 3), (4,), (2, 4), (2,))] if kind == "seq" else \
        [rng.standard_normal(s) for s in ((3, 3), (3,))] if kind == "tuple" else \
        [rng.standard_normal(s) for s in ((2, 3), (2,))]
    inputs = [rng.standard_normal((2, 3)), rng.standard_normal((2, 3))]
    weight_out = rng.standard_normal(16)
    got = run(minigrad, kind, weights, inputs, requires, spec, inner_spec, removed, weight_out)
    want = run(torch, kind, weights, inputs, requires, spec, inner_spec, removed, weight_out)
    for name, g, w in zip(("hook calls", "outputs", "input grads", "parameter grads", "firing warning"), got, want):
        assert_same(g, w, name)


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_wrong_number_of_gradients_is_an_error(lib):
    lin = lib.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_input"):
        lin(lib.randn(2, 3, requires_grad=True)).sum().backward()
    lin = lib.nn.Linear(3, 2)
    lin.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_output"):
        lin(lib.randn(2, 3, requires_grad=True)).sum().backward()


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_full_and_old_backward_hooks_do_not_mix(lib):
    lin = lib.nn.Linear(3, 2)
    lin.register_full_backward_hook(lambda m, gi, go: None)
    with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
        lin.register_backward_hook(lambda m, gi, go: None)


def test_old_backward_hook_sees_the_last_node():
    """register_backward_hook: the gradients of the node that made the output (for a module of
    one op, the module's own gradients)."""
    seen = {}
    for lib in (minigrad, torch):
        calls = []
        for layer in (lib.nn.Tanh(), lib.nn.Softplus(beta=2.0)):
            layer.register_backward_hook(lambda m, gi, go: calls.append([_numpy(g) for g in gi + go]))
            x = lib.from_numpy(np.linspace(-1, 1, 6).reshape(2, 3)).requires_grad_()
            layer(x).pow(2).sum().backward()
            calls.append(_numpy(x.grad))
        seen[lib.__name__] = calls
    assert_same(seen["minigrad"], seen["torch"], "register_backward_hook")


def test_forward_pre_hook_must_return_args_and_kwargs():
    for lib in (minigrad, torch):
        lin = lib.nn.Linear(3, 2)
        lin.register_forward_pre_hook(lambda m, a, k: a, with_kwargs=True)
        with pytest.raises(RuntimeError, match="forward pre-hook must return None or a tuple"):
            lin(lib.randn(2, 3))


def test_always_call_hook_runs_when_forward_raises():
    for lib in (minigrad, torch):
        lin = lib.nn.Linear(3, 2)
        calls = []
        lin.register_forward_hook(lambda m, a, out: calls.append(out), always_call=True)
        lin.register_forward_hook(lambda m, a, out: calls.append("plain"))
        with pytest.raises(RuntimeError):
            lin(lib.randn(2, 5))
        assert calls == [None], lib.__name__


def test_a_removed_hook_forgets_its_options():
    lin = mnn.Linear(3, 2)
    handle = lin.register_forward_hook(lambda m, a, k, out: None, with_kwargs=True, always_call=True)
    handle.remove()
    assert not lin._forward_hooks and not lin._forward_hooks_with_kwargs and not lin._forward_hooks_always_called


def test_hooks_survive_deepcopy_and_old_pickles_load():
    lin = mnn.Linear(3, 2)
    calls = []
    lin.register_forward_hook(lambda m, a, out: calls.append(1))
    copy.deepcopy(lin)(minigrad.randn(1, 3))
    assert calls == [1]
    plain = mnn.Linear(3, 2)
    state = plain.__dict__.copy()
    for name in [n for n in state if "hook" in n]:
        del state[name]  # as a module pickled before minigrad had hooks
    old = mnn.Linear.__new__(mnn.Linear)
    old.__setstate__(state)
    assert old(minigrad.ones(1, 3)).shape == (1, 2)
    assert pickle.loads(pickle.dumps(plain))(minigrad.ones(1, 3)).shape == (1, 2)


def test_activation_and_gradient_recorder():
    """The classroom use: a forward hook on each layer keeps its activation, a backward hook the
    gradient norm reaching it; compared with torch on the same weights."""
    results = {}
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(s) for s in ((4, 3), (4,), (2, 4), (2,))]
    x = rng.standard_normal((5, 3))
    for lib in (minigrad, torch):
        model = build(lib, "seq", weights)
        acts, norms = {}, {}
        for name, layer in model.named_children():
            layer.register_forward_hook(lambda m, a, out, name=name: acts.__setitem__(name, _numpy(out)))
            layer.register_full_backward_hook(
                lambda m, gi, go, name=name: norms.__setitem__(name, float(go[0].norm())))
        model(lib.from_numpy(x.copy())).sum().backward()
        results[lib.__name__] = (acts, norms)
    (acts, norms), (t_acts, t_norms) = results["minigrad"], results["torch"]
    assert acts.keys() == t_acts.keys() == {"0", "1", "2"}
    for k in acts:
        np.testing.assert_allclose(acts[k], t_acts[k], rtol=1e-12)
        assert norms[k] == pytest.approx(t_norms[k], rel=1e-12)


def test_get_submodule_parameter_buffer_match_torch():
    for lib in (minigrad, torch):
        nn = lib.nn
        model = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.BatchNorm1d(3), nn.ReLU()))
        assert model.get_submodule("1.0") is model[1][0]
        assert model.get_submodule("") is model
        assert model.get_parameter("0.weight") is model[0].weight
        assert model.get_buffer("1.0.running_mean") is model[1][0].running_mean
        for call, arg, message in ((model.get_submodule, "2", "has no attribute `2`"),
                                   (model.get_submodule, "0.weight", "`weight` is not an nn.Module"),
                                   (model.get_parameter, "1.0.running_mean", "`running_mean` is not an nn.Parameter"),
                                   (model.get_buffer, "0.weight", "`weight` is not a buffer")):
            with pytest.raises(AttributeError, match=message):
                call(arg)
        model.set_submodule("1.1", nn.Tanh())
        assert type(model[1][1]).__name__ == "Tanh"
        with pytest.raises(AttributeError):
            model.set_submodule("1.5", nn.Tanh(), strict=True)
        model.register_module("extra", nn.Identity())
        assert [n for n, _ in model.named_children()][-1] == "extra"


@pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])
def test_remove_duplicate_false_lists_shared_members_again(lib):
    nn = lib.nn
    shared = nn.Linear(2, 2)
    model = nn.Sequential(shared, shared)
    assert [n for n, _ in model.named_modules(remove_duplicate=False)] == ["", "0", "1"]
    assert [n for n, _ in model.named_parameters(remove_duplicate=False)] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert [n for n, _ in model.named_parameters()] == ["0.weight", "0.bias"]
