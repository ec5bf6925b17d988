"""The rest of ``nn.Module`` against PyTorch 2.13: the hooks of every module, the state_dict hooks,
``_load_from_state_dict`` / ``_save_to_state_dict``, extra state, ``load_state_dict(strict, assign)``,
and the small methods (to_empty, half, compile, call_super_init, pickling, dir).

Generated cases: a small model (Linear, BatchNorm1d, InstanceNorm1d, nested Sequential, a custom
module with persistent and non-persistent buffers and, sometimes, extra state), hooks registered on
drawn sub-modules (some removed again), and a drawn change to its state_dict (keys dropped, added,
renamed, a wrong shape, a non-tensor, metadata dropped or from an older version). Both libraries
must call the same hooks in the same order with the same arguments and end with the same keys,
values, missing/unexpected keys, exception types and messages.
"""
from __future__ import annotations

import copy
import importlib
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("lib", [minigrad, torch], ids=["minigrad", "torch"])


def _globals(lib):
    """Where each library keeps the hooks of every module (torch.nn.modules.module's path in both)."""
    return importlib.import_module(f"{lib.__name__}.nn.modules.module")


@pytest.fixture(autouse=True)
def _forget_the_kind_of_global_backward_hook():
    """The kind of the global backward hooks (full or not) outlives their handles in both libraries."""
    yield
    torch.nn.modules.module._global_is_full_backward_hook = None
    importlib.import_module("minigrad.nn.hooks")._global_is_full_backward_hook = None


def _numpy(x):
    return x.detach().numpy().copy() if hasattr(x, "detach") else x


# -- the models ------------------------------------------------------------------------------------
LAYERS = ("linear", "linear_nobias", "bn", "bn_plain", "in_tracking", "custom", "custom_extra", "seq")


def build(lib, kinds: list, seed: int):
    """The same model in ``lib``: a Sequential of ``kinds`` (all of width 3), drawn weights."""
    nn = lib.nn

    class Custom(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.register_buffer("scale", lib.ones(3, dtype=lib.float64))
            self.register_buffer("cache", lib.zeros(3, dtype=lib.float64), persistent=False)

        def forward(self, x):
            return self.lin(x) * self.scale

    class CustomExtra(Custom):
        def __init__(self):
            super().__init__()
            self.note = {"steps": 3}

        def get_extra_state(self):
            return dict(self.note)

        def set_extra_state(self, state):
            self.note = dict(state)

    def layer(kind):
        return {"linear": lambda: nn.Linear(3, 3), "linear_nobias": lambda: nn.Linear(3, 3, bias=False),
                "bn": lambda: nn.BatchNorm1d(3), "bn_plain": lambda: nn.BatchNorm1d(3, affine=False),
                "in_tracking": lambda: nn.InstanceNorm1d(3, track_running_stats=True), "custom": Custom,
                "custom_extra": CustomExtra,
                "seq": lambda: nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.Tanh(), nn.Linear(3, 3)))}[kind]()

    model = nn.Sequential(*[layer(k) for k in kinds]).double()
    rng = np.random.default_rng(seed)
    with lib.no_grad():
        for _, t in sorted(model.state_dict(keep_vars=True).items()):
            if hasattr(t, "dtype") and t.dtype == lib.float64:
                t.copy_(lib.from_numpy(rng.standard_normal(tuple(t.shape))))
    return model


def run_forward_backward(lib, model, seed: int):
    x = lib.from_numpy(np.random.default_rng(seed).standard_normal((2, 3, 3))).requires_grad_()
    out = model(x)
    out.pow(2).sum().backward()
    return _numpy(out), _numpy(x.grad)


def comparable(sd: dict) -> dict:
    return {k: (_numpy(v) if hasattr(v, "detach") else v) for k, v in sd.items()}


def assert_same(a, b, where=""):
    if isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), f"{where}: {list(a)} vs {list(b)}"
        for k in a:
            assert_same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), f"{where}: {a!r} vs {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, f"{where}: {a!r} vs {b!r}"
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=where)
    else:
        assert a == b, f"{where}: {a!r} vs {b!r}"


def outcome(fn):
    """``("ok", value)`` or ``(exception type name, message)``, with the library's name taken out."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 (the comparison is the point)
        return type(e).__name__, str(e).replace("torch.Tensor or Tensor-like object", "a Tensor")


models = st.lists(st.sampled_from(LAYERS), min_size=1, max_size=3)


# -- the hooks of every module ---------------------------------------------------------------------
GLOBAL_HOOKS = ("pre", "fwd", "fwd_kw", "fwd_always", "bpre", "bfull", "bold")


def register_global(lib, kinds: list, log: list) -> list:
    """Hooks of every module; each logs (kind, module class, what it saw)."""
    g, handles = _globals(lib), []
    for n, kind in enumerate(kinds):
        tag = f"{kind}{n}"

        def shapes(ts):
            return [None if t is None else tuple(t.shape) for t in (ts if isinstance(ts, tuple) else (ts,))]

        if kind == "pre":
            handles.append(g.register_module_forward_pre_hook(
                lambda m, args, tag=tag: log.append((tag, type(m).__name__, shapes(args)))))
        elif kind in ("fwd", "fwd_always"):
            handles.append(g.register_module_forward_hook(
                lambda m, args, out, tag=tag: log.append((tag, type(m).__name__, shapes(out))),
                always_call=kind == "fwd_always"))
        elif kind == "fwd_kw":
            handles.append(g.register_module_forward_hook(
                lambda m, args, kwargs, out, tag=tag: log.append((tag, type(m).__name__, sorted(kwargs))),
                with_kwargs=True))
        elif kind == "bpre":
            handles.append(g.register_module_full_backward_pre_hook(
                lambda m, go, tag=tag: log.append((tag, type(m).__name__, [_numpy(t) for t in go]))))
        else:
            register = g.register_module_full_backward_hook if kind == "bfull" else g.register_module_backward_hook
            try:
                handles.append(register(
                    lambda m, gi, go, tag=tag: log.append((tag, type(m).__name__, [_numpy(t) for t in gi + go]))))
            except RuntimeError as e:  # both kinds at once: refused
                log.append((tag, "refused", str(e)))
    return handles


def global_run(lib, kinds, global_kinds, local_kind, removed, seed):
    model = build(lib, kinds, seed)
    log = []
    handles = register_global(lib, global_kinds, log)
    if local_kind:
        inner = model[0]
        handles.append(inner.register_forward_hook(lambda m, a, o: log.append(("local", type(m).__name__))))
        handles.append(inner.register_full_backward_hook(lambda m, gi, go: log.append(("local_b", type(m).__name__))))
    for i in removed:
        if i < len(handles):
            handles[i].remove()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = run_forward_backward(lib, model, seed)
    finally:
        for h in handles:
            h.remove()
    return log, values


@settings(max_examples=40, deadline=None)
@given(kinds=models, global_kinds=st.lists(st.sampled_from(GLOBAL_HOOKS), max_size=4), local_kind=st.booleans(),
       removed=st.lists(st.integers(0, 5), max_size=2), seed=st.integers(0, 2**16))
def test_global_hooks_match_torch(kinds, global_kinds, local_kind, removed, seed):
    got = global_run(minigrad, kinds, global_kinds, local_kind, removed, seed)
    want = global_run(torch, kinds, global_kinds, local_kind, removed, seed)
    assert_same(got, want, "calls and values")
    assert not minigrad.nn.hooks.global_call_hooks  # every handle removed: back to the fast path


@LIBS
def test_global_always_call_hook_runs_when_forward_raises(lib):
    class Boom(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    seen = []
    handle = _globals(lib).register_module_forward_hook(lambda m, a, out: seen.append(out), always_call=True)
    try:
        with pytest.raises(ValueError, match="boom"):
            Boom()(lib.ones(1))
    finally:
        handle.remove()
    assert seen == [None]


def test_global_pre_hook_replaces_the_input_before_the_modules_own():
    got = {}
    for lib in (minigrad, torch):
        lin = lib.nn.Linear(2, 2)
        order = []
        lin.register_forward_pre_hook(lambda m, args: order.append(("own", _numpy(args[0]).tolist())))
        handle = _globals(lib).register_module_forward_pre_hook(lambda m, args: (args[0] * 2,))
        try:
            lin(lib.ones(1, 2))
        finally:
            handle.remove()
        got[lib.__name__] = order
    assert got["minigrad"] == got["torch"] == [("own", [[2.0, 2.0]])]


def test_registration_hooks_match_torch():
    """The registration hooks see (and may replace) every parameter, buffer and sub-module as it is
    registered, by register_* or by assignment."""
    logs = {}
    for lib in (minigrad, torch):
        g, nn, log = _globals(lib), lib.nn, []
        handles = [
            g.register_module_parameter_registration_hook(lambda m, n, v: log.append(("p", type(m).__name__, n))),
            g.register_module_buffer_registration_hook(
                lambda m, n, v: log.append(("b", type(m).__name__, n, v is None))
                or (lib.full((3,), 7.0) if n == "running_var" else None)),
            g.register_module_module_registration_hook(
                lambda m, n, v: log.append(("m", type(m).__name__, n)) or (nn.Identity() if n == "swap" else None)),
        ]
        try:
            model = build(lib, ["linear_nobias", "bn", "custom"], 0)
            model.swap = nn.Tanh()
            model[2].scale = lib.zeros(3)  # an existing buffer, assigned
            model[2].lin = None
            model.add_module("extra", None)
        finally:
            for h in handles:
                h.remove()
        log.append(type(model.swap).__name__)
        log.append(_numpy(model[1].running_var).tolist())
        logs[lib.__name__] = log
    assert logs["minigrad"] == logs["torch"]


def test_registration_refusals_match_torch():
    messages = {}
    for lib in (minigrad, torch):
        lin = lib.nn.Linear(2, 2)
        calls = [lambda: lin.add_module("a.b", None), lambda: lin.add_module("", None),
                 lambda: lin.add_module("weight", None), lambda: lin.add_module(3, None),
                 lambda: lin.register_buffer("a.b", None), lambda: lin.register_buffer("", None),
                 lambda: lin.register_buffer("forward", None), lambda: lin.register_buffer(3, None),
                 lambda: lin.register_parameter("a.b", None), lambda: lin.register_parameter("training", None),
                 lambda: lin.register_buffer("x", 3)]
        messages[lib.__name__] = [outcome(call) for call in calls]
    assert messages["minigrad"] == [(kind, text.replace("torch Tensor", "minigrad Tensor"))
                                    for kind, text in messages["torch"]]


@LIBS
def test_global_full_and_old_backward_hooks_do_not_mix(lib):
    g = _globals(lib)
    handle = g.register_module_full_backward_hook(lambda m, gi, go: None)
    try:
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full backward hooks"):
            g.register_module_backward_hook(lambda m, gi, go: None)
    finally:
        handle.remove()


# -- state_dict and its hooks ----------------------------------------------------------------------
SD_HOOKS = ("pre", "post", "private_none", "private_new")


def register_state_dict_hooks(lib, model, spec, log):
    handles = []
    modules = list(model.modules())
    for n, (kind, where) in enumerate(spec):
        m = modules[where % len(modules)]
        tag = f"{kind}{n}"
        if kind == "pre":
            handles.append(m.register_state_dict_pre_hook(
                lambda mod, prefix, keep_vars, tag=tag: log.append((tag, type(mod).__name__, prefix, keep_vars))))
        elif kind == "post":
            def post(mod, sd, prefix, meta, tag=tag):
                log.append((tag, type(mod).__name__, prefix, dict(meta), list(sd)))
                sd[prefix + tag] = lib.zeros(1)

            handles.append(m.register_state_dict_post_hook(post))
        else:
            def private(mod, sd, prefix, meta, tag=tag, kind=kind):
                log.append((tag, type(mod).__name__, prefix))
                if kind == "private_new":
                    return OrderedDict((k, v) for k, v in sd.items() if not k.endswith("bias"))
                return None

            handles.append(m._register_state_dict_hook(private))
    return handles


def state_dict_run(lib, kinds, spec, removed, keep_vars, prefix, seed):
    model = build(lib, kinds, seed)
    log = []
    handles = register_state_dict_hooks(lib, model, spec, log)
    for i in removed:
        if i < len(handles):
            handles[i].remove()
    sd = model.state_dict(prefix=prefix, keep_vars=keep_vars)
    meta = dict(getattr(sd, "_metadata", {}))
    grads = sorted(k for k, v in sd.items() if hasattr(v, "requires_grad") and v.requires_grad)
    return log, comparable(sd), meta, grads


@settings(max_examples=40, deadline=None)
@given(kinds=models, spec=st.lists(st.tuples(st.sampled_from(SD_HOOKS), st.integers(0, 8)), max_size=4),
       removed=st.lists(st.integers(0, 4), max_size=2), keep_vars=st.booleans(),
       prefix=st.sampled_from(["", "net."]), seed=st.integers(0, 2**16))
def test_state_dict_hooks_match_torch(kinds, spec, removed, keep_vars, prefix, seed):
    got = state_dict_run(minigrad, kinds, spec, removed, keep_vars, prefix, seed)
    want = state_dict_run(torch, kinds, spec, removed, keep_vars, prefix, seed)
    assert_same(got, want, "log, state_dict, metadata, requires_grad")


@LIBS
def test_state_dict_argument_forms(lib):
    model = build(lib, ["linear", "bn"], 1)
    destination = OrderedDict()
    assert model.state_dict(destination=destination) is destination and "0.weight" in destination
    assert not hasattr(destination, "_metadata")  # only a dict state_dict made itself gets one
    with pytest.warns(FutureWarning, match="Positional args are being deprecated"):
        positional = model.state_dict(None, "top.", True)
    assert list(positional) == ["top." + k for k in model.state_dict()]
    assert positional["top.0.weight"] is model[0].weight
    assert model.state_dict()["0.weight"] is not model[0].weight


@LIBS
def test_public_post_hook_must_return_none(lib):
    lin = lib.nn.Linear(2, 2)

    def hook(m, sd, prefix, meta):
        return sd

    lin.register_state_dict_post_hook(hook)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        lin.state_dict()
    with pytest.raises(RuntimeError, match="Cannot register the same function"):
        lin._register_state_dict_hook(hook)


# -- load_state_dict -------------------------------------------------------------------------------
CHANGES = ("none", "drop", "add_top", "add_nested", "add_child", "shape", "not_tensor", "no_metadata",
           "version1", "drop_nbt_v1", "drop_nbt_v2", "drop_extra", "scalar_1d", "in_stats")
LOAD_HOOKS = ("pre", "pre_private", "pre_rename", "post", "post_clear", "post_add")


def changed(lib, model, change: str, where: int, seed: int):
    """The model's state_dict (from a model with other values) with one drawn change."""
    sd = build(lib, [type_kind(m) for m in model], seed + 1).state_dict()
    keys = list(sd)
    key = keys[where % len(keys)] if keys else None
    nbt = [k for k in keys if k.endswith("num_batches_tracked")]
    if change == "drop" and key:
        del sd[key]
    elif change == "add_top":
        sd["stray"] = lib.zeros(2)
    elif change == "add_nested":
        sd[f"{len(model) - 1}.stray"] = lib.zeros(2)
    elif change == "add_child":
        sd["99.weight"] = lib.zeros(2)
    elif change == "shape" and key:
        sd[key] = lib.zeros(5)
    elif change == "not_tensor" and key:
        sd[key] = 3
    elif change == "no_metadata":
        sd = dict(sd)
    elif change == "version1":
        for meta in sd._metadata.values():
            meta["version"] = 1
    elif change in ("drop_nbt_v1", "drop_nbt_v2") and nbt:
        del sd[nbt[where % len(nbt)]]
        if change == "drop_nbt_v1":
            sd._metadata[nbt[where % len(nbt)].rpartition(".")[0]]["version"] = 1
    elif change == "drop_extra":
        for k in [k for k in keys if k.endswith("_extra_state")]:
            del sd[k]
    elif change == "scalar_1d" and nbt:
        sd[nbt[0]] = sd[nbt[0]].reshape(1)
    elif change == "in_stats":  # running statistics where a layer keeps none, no metadata (PyTorch < 0.4)
        sd = dict(sd)
        sd["0.running_mean"] = lib.zeros(3, dtype=lib.float64)
    return sd


def type_kind(m) -> str:
    """The LAYERS name of a built layer (to build the same model again with other values)."""
    name = type(m).__name__
    if name == "Linear":
        return "linear" if m.bias is not None else "linear_nobias"
    if name == "BatchNorm1d":
        return "bn" if m.affine else "bn_plain"
    return {"InstanceNorm1d": "in_tracking", "Custom": "custom", "CustomExtra": "custom_extra", "Sequential": "seq"}[name]


def register_load_hooks(lib, model, spec, log):
    modules = list(model.modules())
    handles = []
    for n, (kind, where) in enumerate(spec):
        m = modules[where % len(modules)]
        tag = f"{kind}{n}"
        if kind == "pre":
            handles.append(m.register_load_state_dict_pre_hook(
                lambda mod, sd, prefix, meta, strict, missing, unexpected, errors, tag=tag:
                log.append((tag, type(mod).__name__, prefix, sorted(meta.items()), strict, sorted(sd),
                            list(missing), list(unexpected)))))
        elif kind == "pre_private":
            handles.append(m._register_load_state_dict_pre_hook(
                lambda sd, prefix, meta, strict, missing, unexpected, errors, tag=tag:
                log.append((tag, prefix, sorted(sd)))))
        elif kind == "pre_rename":  # an older layout: "old_<name>" keys renamed before loading
            def rename(mod, sd, prefix, *rest, tag=tag):
                for k in [k for k in sd if k.startswith(prefix + "old_")]:
                    sd[prefix + k[len(prefix) + 4:]] = sd.pop(k)
                log.append((tag, prefix))

            handles.append(m.register_load_state_dict_pre_hook(rename))
        else:
            def post(mod, incompatible, tag=tag, kind=kind):
                log.append((tag, type(mod).__name__, list(incompatible.missing_keys),
                            list(incompatible.unexpected_keys)))
                if kind == "post_clear":
                    incompatible.missing_keys.clear()
                elif kind == "post_add":
                    incompatible.unexpected_keys.append("made_up")

            handles.append(m.register_load_state_dict_post_hook(post))
    return handles


def load_run(lib, kinds, change, where, spec, removed, strict, assign, rename, seed):
    model = build(lib, kinds, seed)
    sd = changed(lib, model, change, where, seed)
    if rename and sd:
        k = list(sd)[where % len(sd)]
        head, _, tail = k.rpartition(".")
        sd[f"{head}.old_{tail}" if head else f"old_{tail}"] = sd.pop(k)
    given_keys = list(sd)
    log = []
    handles = register_load_hooks(lib, model, spec, log)
    for i in removed:
        if i < len(handles):
            handles[i].remove()
    result = outcome(lambda: model.load_state_dict(sd, strict=strict, assign=assign))
    if result[0] == "ok":
        result = ("ok", [list(result[1].missing_keys), list(result[1].unexpected_keys), repr(result[1])])
    state = comparable(model.state_dict(keep_vars=True))
    flags = [(k, v.requires_grad) for k, v in model.state_dict(keep_vars=True).items() if hasattr(v, "requires_grad")]
    shared = [k for k, v in model.state_dict(keep_vars=True).items()
              if k in sd and hasattr(v, "detach") and v is sd[k]]
    extra = [getattr(m, "note", None) for m in model.modules()]
    return result, log, state, flags, shared, given_keys == list(sd), extra


@settings(max_examples=60, deadline=None)
@given(kinds=models, change=st.sampled_from(CHANGES), where=st.integers(0, 20),
       spec=st.lists(st.tuples(st.sampled_from(LOAD_HOOKS), st.integers(0, 8)), max_size=3),
       removed=st.lists(st.integers(0, 3), max_size=1), strict=st.booleans(), assign=st.booleans(),
       rename=st.booleans(), seed=st.integers(0, 2**16))
def test_load_state_dict_matches_torch(kinds, change, where, spec, removed, strict, assign, rename, seed):
    if change == "in_stats":
        kinds = ["bn_plain" if k == "in_tracking" else k for k in kinds]
        kinds[0] = "linear"  # "0.running_mean": unexpected for a Linear
    got = load_run(minigrad, kinds, change, where, spec, removed, strict, assign, rename, seed)
    want = load_run(torch, kinds, change, where, spec, removed, strict, assign, rename, seed)
    assert_same(got, want, "outcome, hook calls, state, requires_grad, assigned, caller's keys, extra state")


@LIBS
def test_instance_norm_refuses_old_running_stats(lib):
    layer = lib.nn.InstanceNorm1d(3)
    with pytest.raises(RuntimeError, match="Unexpected running stats buffer"):
        layer.load_state_dict({"running_mean": lib.zeros(3), "running_var": lib.ones(3)}, strict=False)


@LIBS
def test_load_from_state_dict_override_reads_an_older_layout(lib):
    """A layer renames what an older version saved, as PyTorch's own layers do."""
    class Scale(lib.nn.Module):
        _version = 2

        def __init__(self):
            super().__init__()
            self.gain = lib.nn.Parameter(lib.ones(2))

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, *args):
            if local_metadata.get("version", 1) < 2 and prefix + "g" in state_dict:
                state_dict[prefix + "gain"] = state_dict.pop(prefix + "g")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, *args)

    model = lib.nn.Sequential(Scale())
    old = OrderedDict([("0.g", lib.full((2,), 3.0))])
    old._metadata = OrderedDict([("0", {"version": 1})])
    assert repr(model.load_state_dict(old)) == "<All keys matched successfully>"
    assert model[0].gain.tolist() == [3.0, 3.0]
    assert model.state_dict()._metadata["0"] == {"version": 2}


@LIBS
def test_extra_state_without_setter_is_unexpected(lib):
    lin = lib.nn.Linear(2, 2)
    sd = lin.state_dict()
    sd["_extra_state"] = {"a": 1}
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        lin.load_state_dict(sd)
    with pytest.raises(RuntimeError, match="get_extra_state"):
        lin.get_extra_state()


# -- the small methods -----------------------------------------------------------------------------
def test_public_methods_have_torchs_signatures():
    """Every public method of torch.nn.Module exists, with the same parameter names, kinds and defaults
    (forward aside: PyTorch's placeholder takes ``*input``)."""
    import inspect

    differ = []
    for name in dir(torch.nn.Module):
        theirs = getattr(torch.nn.Module, name)
        if name.startswith("_") or name == "forward" or not callable(theirs) or isinstance(theirs, type):
            continue
        ours = getattr(minigrad.nn.Module, name)
        params = [[(p.name, p.kind, p.default) for p in inspect.signature(f).parameters.values()]
                  for f in (theirs, ours)]
        if params[0] != params[1]:
            differ.append((name, params))
    assert differ == []


@LIBS
def test_modules_keeps_duplicates_when_asked(lib):
    shared = lib.nn.Linear(1, 1)
    model = lib.nn.Sequential(shared, shared)
    assert len(list(model.modules())) == 2 and len(list(model.modules(remove_duplicate=False))) == 3


@LIBS
def test_to_empty_keeps_shapes_dtypes_and_objects(lib):
    model = build(lib, ["linear", "bn", "seq"], 2)
    params = list(model.parameters())
    before = comparable(model.state_dict())
    described = [(k, tuple(v.shape), v.dtype, v.requires_grad) for k, v in model.state_dict(keep_vars=True).items()]
    assert model[2].to_empty(device="cpu", recurse=False) is model[2]
    assert_same(comparable(model.state_dict()), before, "recurse=False touches no sub-module")
    assert model.to_empty(device="cpu") is model
    assert list(model.parameters()) == params or lib is torch  # (minigrad keeps the objects)
    after = [(k, tuple(v.shape), v.dtype, v.requires_grad) for k, v in model.state_dict(keep_vars=True).items()]
    assert after == described


def test_half_converts_and_bfloat16_is_refused():
    lin = minigrad.nn.Linear(2, 2)
    with pytest.raises(TypeError, match="no bfloat16 dtype .*model.half"):
        lin.bfloat16()
    assert lin.weight.dtype == minigrad.float32
    assert lin.half() is lin and lin.weight.dtype == lin.bias.dtype == minigrad.float16


@pytest.mark.parametrize("method", ["cuda", "xpu", "ipu", "mtia"])
def test_accelerators_are_refused_as_in_a_cpu_build(method):
    """torch's CPU build raises AssertionError (RuntimeError for ipu); minigrad's error is both."""
    for lib in (minigrad, torch):
        with pytest.raises((AssertionError, RuntimeError)):
            getattr(lib.nn.Linear(2, 2), method)()


@LIBS
def test_share_memory_compile_and_class_attributes(lib):
    lin = lib.nn.Linear(2, 2)
    assert lin.share_memory() is lin
    x = lib.ones(1, 2)
    before = _numpy(lin(x))
    if lib is minigrad:  # (torch's compile needs a compiler toolchain: its contract is checked here)
        assert lin.compile(mode="max-autotune", fullgraph=True) is None
    np.testing.assert_array_equal(_numpy(lin(x)), before)
    assert lib.nn.Module.dump_patches is False and lib.nn.Module._version == 1
    assert lib.nn.BatchNorm1d._version == 2 and lib.nn.Module.call_super_init is False
    assert lib.nn.Module.T_destination.__bound__ is not None
    assert lin._get_name() == "Linear"


@LIBS
def test_call_super_init(lib):
    class Base:
        def __init__(self, width=1):
            self.width = width

    class Plain(lib.nn.Module):
        pass

    class Cooperative(lib.nn.Module, Base):
        call_super_init = True

    with pytest.raises(TypeError, match="unexpected keyword argument 'width'"):
        Plain(width=3)
    with pytest.raises(TypeError, match="takes 1 positional argument but 2 were given"):
        Plain(3)
    assert Cooperative(width=3).width == 3


def test_repr_uses_get_name_and_keeps_blank_lines_blank():
    reprs = {}
    for lib in (minigrad, torch):
        class Named(lib.nn.Module):
            def _get_name(self):
                return "Renamed"

            def extra_repr(self):
                return "first\n\nthird"

        outer = lib.nn.Sequential(lib.nn.Linear(1, 1))
        outer.add_module("inner", Named())
        reprs[lib.__name__] = repr(outer)
    assert reprs["minigrad"] == reprs["torch"]


def test_dir_lists_the_same_instance_names():
    names = {}
    for lib in (minigrad, torch):
        model = build(lib, ["linear", "custom"], 0)
        model.add_module("head", lib.nn.Linear(3, 1))
        model.register_buffer("steps", lib.zeros(1))
        model.note = 1
        names[lib.__name__] = [n for n in dir(model) if n not in dir(type(model)) and not n.startswith("_")]
    assert names["minigrad"] == names["torch"] == ["head", "note", "steps", "training"]


@LIBS
def test_pickle_and_deepcopy_keep_hooks_and_state(lib):
    model = build(lib, ["linear", "bn"], 3)
    model.register_forward_hook(_record)
    model.register_state_dict_pre_hook(_state_pre)
    state = model.__getstate__()
    assert state is not model.__dict__ and state["_parameters"] is model.__dict__["_parameters"]
    for clone in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        assert len(clone._forward_hooks) == 1 and len(clone._state_dict_pre_hooks) == 1
        assert_same(comparable(clone.state_dict()), comparable(model.state_dict()), "clone")
    old = model.__getstate__()
    for name in ("_state_dict_hooks", "_state_dict_pre_hooks", "_load_state_dict_pre_hooks",
                 "_load_state_dict_post_hooks", "_forward_hooks_always_called", "_backward_pre_hooks"):
        del old[name]  # a module pickled before these existed
    revived = object.__new__(type(model))
    revived.__setstate__(old)
    assert revived.state_dict().keys() == model.state_dict().keys()


def _record(module, args, output):
    return None


def _state_pre(module, prefix, keep_vars):
    return None


def test_linear_forward_uses_what_attribute_lookup_finds():
    """Linear's forward reads its registered parameters directly (a speed path); whatever
    self.weight and self.bias are otherwise (a plain tensor set after deleting the parameter, a
    subclass's property, bias=False's None) must still be what it uses."""
    x = minigrad.randn(4, 3)
    lin = minigrad.nn.Linear(3, 2)
    b = lin.bias.detach().numpy()
    np.testing.assert_allclose(lin(x).detach().numpy(), x.numpy() @ lin.weight.detach().numpy().T + b, rtol=1e-6)
    del lin.weight
    lin.weight = minigrad.full((2, 3), 2.0)  # a plain tensor: an attribute, not a parameter
    np.testing.assert_allclose(lin(x).detach().numpy(), x.numpy() @ np.full((3, 2), 2.0) + b, rtol=1e-6)
    no_bias = minigrad.nn.Linear(3, 2, bias=False)
    np.testing.assert_allclose(no_bias(x).detach().numpy(), x.numpy() @ no_bias.weight.detach().numpy().T,
                               rtol=1e-6)

    class Doubled(minigrad.nn.Linear):
        pass

    d = Doubled(3, 2)
    Doubled.weight = property(lambda self: self._parameters["weight"] * 2)  # (afterwards, as parametrize does)
    np.testing.assert_allclose(d(x).detach().numpy(),
                               x.numpy() @ (2 * d._parameters["weight"].detach().numpy()).T + d.bias.detach().numpy(),
                               rtol=1e-6)
