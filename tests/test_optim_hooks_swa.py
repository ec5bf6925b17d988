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
        module.register_optimizer_step_post_hook(lambda o, a, k: log.append(("global post", _describe(a), _describe(k)))),
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
        assert callable(getattr(optimizer_module, name)) and name in importlib.import_module("torch.optim.optimizer").__all__


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


def test_param_groups_pickling_and_repr_are_torchs(torch):
    ours, theirs = [], []
    _group_script(minigrad, ours)
    _group_script(torch, theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b

