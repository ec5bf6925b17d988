"""Optimizer hooks, parameter groups and pickling, and ``optim.swa_utils``, against torch 2.13.

Hooks: the same script runs in both libraries and logs every hook call (which hook, what it
was given); the logs must be equal, in order. swa_utils: AveragedModel over generated models
and sequences of weights, with each averaging function, the averaged values and the
``n_averaged`` buffer; SWALR's learning rates step by step; update_bn's recomputed statistics.
"""
from __future__ import annotations

import copy
import importlib
import inspect
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.nn as nn
import minigrad.optim
from minigrad.optim import optimizer as optimizer_module


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch")


def _outcome(make):
    try:
        make()
    except Exception as error:  # noqa: BLE001 - the exception type is what is compared
        return type(error)
    return None


def _describe(value):
    """A library-free description of what a hook was given, to compare the two logs."""
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [_describe(v) for v in value]
    if isinstance(value, dict):
        return {k: _describe(v) for k, v in value.items()}
    if callable(value) and not isinstance(value, type):
        return "optimizer" if hasattr(value, "param_groups") else "function"
    if hasattr(value, "param_groups"):
        return "optimizer"
    if hasattr(value, "shape"):
        return "tensor", tuple(value.shape)
    return value


# -- step hooks ---------------------------------------------------------------------------------------------------

def _step_hook_script(lib, log: list) -> None:
    """Register global and per-optimizer step hooks, step with and without a closure, replace a closure, remove."""
    p = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.5)
    module = importlib.import_module(f"{lib.__name__}.optim.optimizer")
    handles = [
        module.register_optimizer_step_pre_hook(lambda o, a, k: log.append(("global pre", _describe(a), _describe(k)))),
        module.register_optimizer_step_post_hook(
            lambda o, a, k: log.append(("global post", _describe(a), _describe(k)))),
    ]
    try:
        opt.register_step_post_hook(lambda o, a, k: log.append(("post 1", o is opt, _describe(a), _describe(k))))
        opt.register_step_pre_hook(lambda o, a, k: log.append(("pre 1", o is opt, _describe(a), _describe(k))))
        second = opt.register_step_pre_hook(lambda o, a, k: log.append(("pre 2", _describe(a))))

        def closure():
            log.append("closure")
            opt.zero_grad()
            loss = (p * p).sum() + p.sum()
            loss.backward()
            return loss

        log.append(("loss", float(opt.step(closure))))
        log.append(("p", p.detach().numpy().tolist()))
        p.grad = lib.ones(2)
        log.append(("no closure", opt.step()))
        second.remove()

        def replacement():
            log.append("replacement closure")
            return lib.tensor(7.0)

        opt.register_step_pre_hook(lambda o, a, k: ((a[0],), {"closure": replacement}))
        log.append(("replaced", float(opt.step(closure=closure))))
    finally:
        for handle in handles:
            handle.remove()
    opt.step()  # the global hooks are gone
    log.append("end")


def test_step_hooks_run_as_torchs(torch):
    ours, theirs = [], []
    _step_hook_script(minigrad, ours)
    _step_hook_script(torch, theirs)
    assert ours == theirs
    assert ("global pre", ("tuple", ["optimizer", "function"]), {}) in ours  # args start with the optimizer


def test_a_pre_hook_returning_something_else_is_refused_as_torch(torch):
    def run(lib):
        opt = lib.optim.Adam([lib.zeros(1, requires_grad=True)])
        opt.register_step_pre_hook(lambda o, a, k: "not a pair")
        opt.step()

    assert _outcome(lambda: run(minigrad)) == _outcome(lambda: run(torch)) is RuntimeError


def test_hooks_run_once_when_a_subclass_step_calls_super():
    class Clipped(minigrad.optim.SGD):
        def step(self, closure=None):
            for group in self.param_groups:
                for p in group["params"]:
                    p.grad = p.grad.clamp(-1, 1)
            return super().step(closure)

    p = nn.Parameter(minigrad.zeros(1))
    opt = Clipped([p], lr=1.0)
    calls = []
    opt.register_step_pre_hook(lambda o, a, k: calls.append("pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("post"))
    p.grad = minigrad.tensor([5.0])
    opt.step()
    assert calls == ["pre", "post"] and p.item() == -1.0


# -- state_dict hooks ---------------------------------------------------------------------------------------------

def _state_dict_hook_script(lib, log: list) -> None:
    p = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = lib.ones(2)
    opt.step()

    opt.register_state_dict_pre_hook(lambda o: log.append("pre a"))
    opt.register_state_dict_pre_hook(lambda o: log.append("pre b"), prepend=True)
    opt.register_state_dict_post_hook(lambda o, sd: log.append(("post a", sorted(sd))))
    first = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": log.append("post b") or 1},
                                              prepend=True)
    saved = opt.state_dict()
    log.append(("saved", sorted(saved), saved["extra"], saved["param_groups"][0]["lr"]))
    first.remove()
    log.append(("saved again", sorted(opt.state_dict())))

    def pre_load(o, sd):
        log.append(("pre load", sorted(sd), sd is saved))
        sd["param_groups"][0]["lr"] = 0.25  # the hook may change what is loaded
        return {"state": sd["state"], "param_groups": sd["param_groups"]}

    opt.register_load_state_dict_pre_hook(pre_load)
    opt.register_load_state_dict_pre_hook(lambda o, sd: log.append(("pre load first", sorted(sd))), prepend=True)
    opt.register_load_state_dict_post_hook(lambda o: log.append(("post load", o.param_groups[0]["lr"])))
    opt.register_load_state_dict_post_hook(lambda o: log.append("post load first"), prepend=True)
    opt.load_state_dict(saved)
    log.append(("lr", opt.param_groups[0]["lr"], sorted(opt.state_dict()["state"][0])))


def test_state_dict_hooks_run_as_torchs(torch):
    ours, theirs = [], []
    _state_dict_hook_script(minigrad, ours)
    _state_dict_hook_script(torch, theirs)
    assert ours == theirs
    assert ours.index("pre b") < ours.index("pre a")  # prepend


def test_hook_signatures_and_module_names_are_torchs(torch):
    names = ["register_step_pre_hook", "register_step_post_hook", "register_state_dict_pre_hook",
             "register_state_dict_post_hook", "register_load_state_dict_pre_hook",
             "register_load_state_dict_post_hook", "add_param_group", "zero_grad", "state_dict", "load_state_dict"]
    for name in names:
        ours = inspect.signature(getattr(minigrad.optim.Optimizer, name)).parameters
        theirs = inspect.signature(getattr(torch.optim.Optimizer, name)).parameters
        assert [(p.name, p.default) for p in ours.values()] == [(p.name, p.default) for p in theirs.values()], name
    for name in ("register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"):
        assert callable(getattr(optimizer_module, name))
        assert name in importlib.import_module("torch.optim.optimizer").__all__


# -- parameter groups, pickling, repr ------------------------------------------------------------------------------

def _group_script(lib, log: list) -> None:
    def param():
        return lib.zeros(2, requires_grad=True)

    opt = lib.optim.SGD([("w", param()), ("b", param())], lr=0.1)
    log.append(("named", opt.state_dict()["param_groups"], repr(opt)))
    group = {"params": [("c", param())], "lr": 0.5}
    opt.add_param_group(group)
    log.append(("same dict", opt.param_groups[-1] is group, sorted(group)))
    for bad in ({"params": {param()}}, {"params": [param()]}, {"params": [("d", param()), param()]},
                {"params": opt.param_groups[0]["params"][:1]}, [param()]):
        log.append(("refused", _outcome(lambda: opt.add_param_group(bad))))
    log.append(("two groups", opt.state_dict()["param_groups"]))

    p = param()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.optim.SGD([p, p], lr=0.1)
    log.append(("duplicate", [str(w.message) for w in caught]))

    plain = lib.optim.Adam([param()], lr=0.01)
    plain.register_step_pre_hook(lambda o, a, k: None)
    log.append(("getstate", sorted(plain.__getstate__())))
    restored = pickle.loads(pickle.dumps(plain)) if lib is minigrad else copy.deepcopy(plain)
    log.append(("restored", repr(restored), len(restored._optimizer_step_pre_hooks)))

    q = param()
    opt = lib.optim.SGD([q], lr=0.1)
    (q * 2).sum().backward()
    opt.zero_grad(set_to_none=False)
    log.append(("zeroed", q.grad.numpy().tolist()))
    opt.zero_grad()
    log.append(("none", q.grad))


def test_a_required_hyperparameter_must_be_set_in_every_group(torch):
    """Older custom optimizers declare ``lr=required`` (from the optimizer module) as PyTorch's SGD once did."""
    for lib in (minigrad, torch):
        module = importlib.import_module(f"{lib.__name__}.optim.optimizer")

        class Plain(module.Optimizer):
            def __init__(self, params, lr=module.required):
                super().__init__(params, dict(lr=lr))

        assert repr(module.required) == "<required parameter>"
        assert Plain([{"params": [lib.zeros(1, requires_grad=True)], "lr": 0.1}]).param_groups[0]["lr"] == 0.1
        assert _outcome(lambda: Plain([lib.zeros(1, requires_grad=True)])) is ValueError


def test_param_groups_pickling_and_repr_are_torchs(torch):
    ours, theirs = [], []
    _group_script(minigrad, ours)
    _group_script(torch, theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b



# -- swa_utils -----------------------------------------------------------------------------------------------------

from minigrad.optim import swa_utils  # noqa: E402 - the section's subject


def _model(lib, dtype: str, features: int, hidden: int):
    dtype = getattr(lib, dtype)
    return lib.nn.Sequential(lib.nn.Linear(features, hidden, dtype=dtype), lib.nn.BatchNorm1d(hidden, dtype=dtype),
                             lib.nn.Linear(hidden, 1, dtype=dtype))


def _load(lib, model, values: dict) -> None:
    """Set every parameter and buffer of ``model`` to ``values`` (NumPy arrays by state_dict key)."""
    model.load_state_dict({key: lib.tensor(value) for key, value in values.items()})


def _random_state(rng, model) -> dict:
    state = {}
    for key, value in model.state_dict().items():
        array = value.numpy()
        if array.dtype.kind == "f":
            state[key] = rng.normal(size=array.shape).astype(array.dtype)
        else:
            state[key] = rng.integers(0, 50, size=array.shape).astype(array.dtype)
    return state


AVERAGING = ["none", "swa", "ema", "swa multi", "ema multi", "custom"]


def _averaging(module, kind: str, decay: float) -> dict:
    return {
        "none": {},
        "swa": dict(avg_fn=module.get_swa_avg_fn()),
        "ema": dict(avg_fn=module.get_ema_avg_fn(decay)),
        "swa multi": dict(multi_avg_fn=module.get_swa_multi_avg_fn()),
        "ema multi": dict(multi_avg_fn=module.get_ema_multi_avg_fn(decay)),
        "custom": dict(avg_fn=lambda averaged, current, n: 0.25 * averaged + 0.75 * current + n),
    }[kind]


@pytest.mark.parametrize("kind", AVERAGING)
@settings(max_examples=8, deadline=None)
@given(decay=st.sampled_from([0.0, 0.5, 0.9, 0.999, 1.0]), use_buffers=st.booleans(),
       dtype=st.sampled_from(["float64", "float32"]), updates=st.integers(1, 5), seed=st.integers(0, 2**16),
       sizes=st.tuples(st.integers(1, 3), st.integers(1, 4)))
def test_averaged_model_matches_torch(torch, kind, decay, use_buffers, dtype, updates, seed, sizes):
    """The averaged parameters and buffers and n_averaged after each update, from the same weights in both.

    To the last bits: the running mean by lerp (``swa multi``) moves by ``1 / (n + 1)`` rounded to float32
    as in PyTorch, even for float64 weights.
    """
    rng = np.random.default_rng(seed)
    model, tmodel = _model(minigrad, dtype, *sizes), _model(torch, dtype, *sizes)
    _load(torch, tmodel, {k: v.numpy() for k, v in model.state_dict().items()})
    ours = swa_utils.AveragedModel(model, use_buffers=use_buffers, **_averaging(swa_utils, kind, decay))
    theirs = torch.optim.swa_utils.AveragedModel(tmodel, use_buffers=use_buffers,
                                                 **_averaging(torch.optim.swa_utils, kind, decay))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    tol = 4 * np.finfo(dtype).eps
    for _ in range(updates):
        state = _random_state(rng, model)
        _load(minigrad, model, state)
        _load(torch, tmodel, state)
        outcome = _outcome(lambda: ours.update_parameters(model))
        assert outcome == _outcome(lambda: theirs.update_parameters(tmodel))
        if outcome is not None:  # the running mean of integer buffers, kept in place: refused by both
            assert (kind, use_buffers) == ("swa multi", True)
            return
        expected = theirs.state_dict()
        for key, value in ours.state_dict().items():
            want = expected[key].numpy()
            assert value.numpy().dtype == want.dtype, key
            # The EMA of an integer buffer is computed in float32 and truncated: PyTorch multiplies a long tensor by
            # a Python float in float32 (float32(29) * float32(0.9)), minigrad in float64 then rounds, so a value
            # close to an integer may truncate to its neighbour.
            atol = 1 if want.dtype.kind == "i" and kind == "ema multi" else tol
            np.testing.assert_allclose(value.numpy(), want, rtol=tol, atol=atol, err_msg=key)
    assert ours.n_averaged.item() == updates
    x = rng.normal(size=(4, sizes[0])).astype(dtype)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(minigrad.tensor(x)).detach().numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), rtol=1e3 * tol, atol=1e3 * tol)


def test_averaged_model_refusals_are_torchs(torch):
    for lib, module in ((minigrad, swa_utils), (torch, torch.optim.swa_utils)):
        model = lib.nn.Linear(2, 2)
        assert _outcome(lambda: module.AveragedModel(model, avg_fn=module.get_swa_avg_fn(),
                                                     multi_avg_fn=module.get_swa_multi_avg_fn())) is AssertionError
        for make in (module.get_ema_avg_fn, module.get_ema_multi_avg_fn):
            assert _outcome(lambda: make(1.5)) is ValueError
            assert _outcome(lambda: make(-0.1)) is ValueError
    assert [n for n in swa_utils.__all__] == torch.optim.swa_utils.__all__
    for name in swa_utils.__all__:
        ours, theirs = inspect.signature(getattr(swa_utils, name)), inspect.signature(
            getattr(torch.optim.swa_utils, name))
        assert [(p.name, p.default) for p in ours.parameters.values()] == [
            (p.name, p.default) for p in theirs.parameters.values()], name


def test_the_first_update_copies_and_the_running_mean_is_the_mean():
    model = minigrad.nn.Linear(1, 1, bias=False, dtype=minigrad.float64)
    averaged = swa_utils.AveragedModel(model)
    for value in (1.0, 2.0, 6.0):
        with minigrad.no_grad():
            model.weight.fill_(value)
        averaged.update_parameters(model)
    assert averaged.module.weight.item() == 3.0 and averaged.n_averaged.item() == 3
    assert averaged.module.weight is not model.weight  # a deep copy


@settings(max_examples=40, deadline=None)
@given(lrs=st.lists(st.sampled_from([0.1, 0.5, 1.0, 0.03]), min_size=1, max_size=3),
       swa_lr=st.sampled_from([0.05, 0.2, 1.0]) | st.lists(st.sampled_from([0.05, 0.2]), min_size=1, max_size=3),
       anneal_epochs=st.sampled_from([0, 1, 2, 5, -1, 1.5]), anneal_strategy=st.sampled_from(["cos", "linear", "exp"]),
       steps=st.integers(1, 12), reload_at=st.none() | st.integers(0, 12))
def test_swalr_matches_torch(torch, lrs, swa_lr, anneal_epochs, anneal_strategy, steps, reload_at):
    def build(lib, module):
        params = [{"params": [lib.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
        optimizer = lib.optim.SGD(params)
        return optimizer, module.SWALR(optimizer, swa_lr, anneal_epochs=anneal_epochs,
                                       anneal_strategy=anneal_strategy)

    made = {}
    for lib, module in ((minigrad, swa_utils), (torch, torch.optim.swa_utils)):
        made[lib] = _outcome(lambda: made.__setitem__(module, build(lib, module)))
    assert made[minigrad] == made[torch]
    if made[minigrad] is not None:
        return
    (optimizer, ours), (toptimizer, theirs) = made[swa_utils], made[torch.optim.swa_utils]
    assert ours.get_last_lr() == theirs.get_last_lr()
    for i in range(steps):
        if i == reload_at:
            saved, tsaved = pickle.loads(pickle.dumps(ours.state_dict())), theirs.state_dict()
            assert {k: v for k, v in saved.items()} == {k: v for k, v in tsaved.items()
                                                       if k != "_get_lr_called_within_step"}
            optimizer, ours = build(minigrad, swa_utils)
            ours.load_state_dict(saved)
            for group, tgroup in zip(optimizer.param_groups, toptimizer.param_groups):
                group["lr"] = tgroup["lr"]
        optimizer.step()
        toptimizer.step()
        ours.step()
        theirs.step()
        assert ours.get_last_lr() == theirs.get_last_lr()
        assert [g["lr"] for g in optimizer.param_groups] == [g["lr"] for g in toptimizer.param_groups]
        assert [g["swa_lr"] for g in optimizer.param_groups] == [g["swa_lr"] for g in toptimizer.param_groups]


def _bn_model(lib, dtype):
    dtype = getattr(lib, dtype)
    return lib.nn.Sequential(
        lib.nn.Conv2d(2, 3, 1, dtype=dtype), lib.nn.BatchNorm2d(3, momentum=0.3, dtype=dtype),
        lib.nn.InstanceNorm2d(3, track_running_stats=True, dtype=dtype), lib.nn.Flatten(),
        lib.nn.Linear(12, 4, dtype=dtype), lib.nn.BatchNorm1d(4, dtype=dtype),
    )


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), batches=st.lists(st.integers(2, 4), min_size=1, max_size=4),
       pairs=st.booleans(), training=st.booleans())
def test_update_bn_matches_torch(torch, seed, batches, pairs, training):
    """Fresh statistics of every batch norm as the plain average over the loader; InstanceNorm left alone."""
    rng = np.random.default_rng(seed)
    model, tmodel = _bn_model(minigrad, "float64"), _bn_model(torch, "float64")
    state = _random_state(rng, model)
    _load(minigrad, model, state)
    _load(torch, tmodel, state)
    data = [rng.normal(size=(n, 2, 2, 2)) for n in batches]
    loader = [(minigrad.tensor(x), minigrad.tensor(0)) if pairs else minigrad.tensor(x) for x in data]
    tloader = [(torch.tensor(x), torch.tensor(0)) if pairs else torch.tensor(x) for x in data]
    model.train(training)
    tmodel.train(training)
    swa_utils.update_bn(loader, model)
    torch.optim.swa_utils.update_bn(tloader, tmodel)
    assert model.training == tmodel.training == training
    assert [getattr(m, "momentum", None) for m in model] == [getattr(m, "momentum", None) for m in tmodel]
    expected = tmodel.state_dict()
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), expected[key].numpy(), rtol=1e-12, atol=1e-12, err_msg=key)
    assert model[2].num_batches_tracked.item() == state["2.num_batches_tracked"]  # the InstanceNorm's


def test_update_bn_without_batch_norm_does_nothing():
    model = minigrad.nn.Linear(2, 2)
    calls = []
    swa_utils.update_bn(iter(lambda: calls.append(1), None), model)
    assert calls == []


def test_swalr_and_the_old_base_class_name_are_schedulers(torch):
    from minigrad.optim import lr_scheduler

    assert issubclass(lr_scheduler._LRScheduler, lr_scheduler.LRScheduler)
    assert issubclass(swa_utils.SWALR, lr_scheduler.LRScheduler)
    assert [c.__name__ for c in lr_scheduler._LRScheduler.__mro__[:2]] == [
        c.__name__ for c in torch.optim.lr_scheduler._LRScheduler.__mro__[:2]]
