"""ModuleList, Sequential, ModuleDict, ParameterList, ParameterDict and Unflatten against torch 2.13.

Random sequences of the containers' list and dict operations run in both libraries; after each
step the outcome (a value, or the exception's type and message), the repr, the parameter names,
the ``state_dict`` keys and the length must agree. Each parameter or layer gets its own shape, so
the names and the repr say which one sits where. Then what a model with containers must do: the
optimizer, ``state_dict`` round trips, ``to``, ``zero_grad``.
"""
from __future__ import annotations

import re
from collections import OrderedDict

import numpy as np
import pytest

import minigrad

torch = pytest.importorskip("torch")

STEPS = 12


def _value(lib, k: int):
    """The k-th new item: a tensor of shape (k + 1,) (float64 every third), a Parameter, or a plain object."""
    kind = k % 4
    if kind == 3:
        return f"object{k}"
    dtype = lib.float64 if k % 3 == 0 else lib.float32
    t = lib.zeros(k + 1, dtype=dtype)
    return lib.nn.Parameter(t) if kind == 1 else t


def _layer(lib, k: int):
    return lib.nn.Linear(k + 1, 1) if k % 2 else lib.nn.ReLU()


def _list_op(rng) -> tuple:
    """One operation on a list-like container; indices from -5 to 5, sometimes out of range."""
    i = int(rng.integers(-5, 6))
    choices = ["append", "extend", "getitem", "setitem", "slice", "iadd", "len", "iter"]
    choices += ["insert", "pop", "delitem", "delslice", "add", "mul", "imul"]
    op = choices[int(rng.integers(len(choices)))]
    if op in ("slice", "delslice"):
        return op, slice(*(int(v) if v is not None else None for v in rng.choice([None, -2, 0, 1, 3], 3)))
    return op, i


def _run_list(lib, kind: str, ops: list, make) -> list:
    nn = lib.nn
    container = {"ModuleList": nn.ModuleList, "Sequential": nn.Sequential, "ParameterList": nn.ParameterList}[kind]()
    model = nn.Module()
    model.items = container
    counter = iter(range(1000))
    trace = []
    for op, arg in ops:
        def step():
            if op == "append":
                return container.append(make(lib, next(counter))) is container
            if op in ("extend", "iadd"):
                new = [make(lib, next(counter)) for _ in range(2)]
                if op == "extend":
                    return container.extend(new) is container
                if kind == "Sequential":
                    new = nn.Sequential(*new)
                before = container
                container.__iadd__(new)
                return container is before
            if op == "add":
                other = [make(lib, next(counter))]
                combined = container + (nn.Sequential(*other) if kind == "Sequential" else other)
                return _observe(combined)
            if op in ("mul", "imul"):  # (Sequential's: the others refuse, as in torch)
                factor = [2, 0, 1.5, 3][arg % 4]
                if op == "mul":
                    return _observe(container * factor if arg % 2 else factor * container)
                before = container
                container.__imul__(factor)
                return container is before
            if op == "getitem":
                return _describe(container[arg])
            if op == "setitem":
                container[arg] = make(lib, next(counter))
                return None
            if op == "slice":
                return _observe(container[arg])
            if op == "len":
                return len(container)
            if op == "iter":
                return [_describe(v) for v in container]
            if op == "insert":
                if kind == "ModuleList":  # (torch's ModuleList.insert misfiles an index outside 0..len)
                    return container.insert(arg % (len(container) + 1), make(lib, next(counter)))
                return container.insert(arg, make(lib, next(counter))) is container
            if op == "pop":
                return _describe(container.pop(arg))
            del container[arg]
            return None
        trace.append((op, _outcome(step), _observe(model)))
    return trace


def _describe(value):
    if hasattr(value, "shape"):
        return ("tensor", type(value).__name__, tuple(value.shape), str(value.dtype).split(".")[-1])
    if hasattr(value, "named_parameters"):
        return ("module", _normal(repr(value)))
    return ("object", value)


def _normal(text: str) -> str:
    """minigrad's repr is torch's with its own module name. (Module.add_module names a tensor that is
    not a Module by its class, torch by its type string: "Tensor" / "torch.FloatTensor is not a
    Module subclass"; that message is Module's, not the containers', so it is not compared here.)"""
    return re.sub(r"\S+ is not a Module subclass", "_ is not a Module subclass", text.replace("torch.", "minigrad."))


def _observe(module) -> tuple:
    return (_normal(repr(module)), [n for n, _ in module.named_parameters()], list(module.state_dict()),
            len(module) if hasattr(module, "__len__") else None)


def _outcome(fn):
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001  (the type and message are what is compared)
        return type(e).__name__, _normal(str(e))


LIST_CASES = [(kind, seed) for kind in ("ModuleList", "Sequential", "ParameterList") for seed in range(8)]


@pytest.mark.parametrize("kind,seed", LIST_CASES)
def test_list_containers_follow_torch_step_by_step(kind, seed):
    rng = np.random.default_rng(seed)
    ops = [_list_op(rng) for _ in range(STEPS)]
    make = _value if kind == "ParameterList" else _layer
    mine, theirs = _run_list(minigrad, kind, ops, make), _run_list(torch, kind, ops, make)
    for step, (m, t) in enumerate(zip(mine, theirs, strict=True)):
        assert m == t, f"step {step} {ops[step]}:\nminigrad {m}\ntorch    {t}"


def _dict_op(rng) -> tuple:
    choices = ["setitem", "getitem", "delitem", "pop", "update_dict", "update_ordered", "update_pairs", "contains",
               "keys", "items", "values", "len", "iter", "clear", "update_bad", "update_short"]
    extra = ["get", "setdefault", "popitem", "copy", "or", "ior", "reversed", "fromkeys", "bad_key"]
    op = (choices + extra)[int(rng.integers(len(choices) + len(extra)))]
    return op, str(rng.choice(["a", "b", "c", "z"]))


def _run_dict(lib, kind: str, ops: list) -> list:
    nn = lib.nn
    container = {"ModuleDict": nn.ModuleDict, "ParameterDict": nn.ParameterDict}[kind]()
    make = _layer if kind == "ModuleDict" else _value
    model = nn.Module()
    model.items = container
    counter = iter(range(1000))
    trace = []
    pair = lambda key: (key, make(lib, next(counter)))  # noqa: E731
    for op, key in ops:
        if kind == "ModuleDict" and op in ("get", "setdefault", "popitem", "copy", "or", "ior", "reversed",
                                           "fromkeys", "bad_key"):
            op = "len"  # (ParameterDict's extra dict methods: ModuleDict has none)

        def step():
            if op == "setitem":
                container[key] = make(lib, next(counter))
                return None
            if op == "getitem":
                return _describe(container[key])
            if op == "delitem":
                del container[key]
                return None
            if op == "pop":
                return _describe(container.pop(key))
            if op == "update_dict":
                return container.update(dict([pair("b"), pair(key), pair("a")]))
            if op == "update_ordered":
                return container.update(OrderedDict([pair("b"), pair(key)]))
            if op == "update_pairs":
                return container.update([pair("c"), list(pair(key))])
            if op == "update_bad":
                return container.update(3)
            if op == "update_short":
                return container.update([pair("a"), (key,)])
            if op == "contains":
                return key in container
            if op in ("keys", "iter", "reversed"):
                return list({"keys": container.keys, "iter": lambda: iter(container),
                             "reversed": lambda: reversed(container)}[op]())
            if op == "items":
                return [(k, _describe(v)) for k, v in container.items()]
            if op == "values":
                return [_describe(v) for v in container.values()]
            if op == "len":
                return len(container)
            if op == "clear":
                return container.clear()
            if op == "get":
                return _describe(container.get(key, "missing"))
            if op == "setdefault":
                return _describe(container.setdefault(key, make(lib, next(counter))))
            if op == "popitem":
                k, v = container.popitem()
                return k, _describe(v)
            if op == "copy":
                return _observe(container.copy())
            if op == "or":
                return _observe(container | nn.ParameterDict(OrderedDict([pair(key)])))
            if op == "ior":
                container.__ior__(nn.ParameterDict(OrderedDict([pair(key)])))
                return None
            if op == "fromkeys":
                return _observe(container.fromkeys(["p", key], make(lib, next(counter))))
            return container[3]  # bad_key
        trace.append((op, _outcome(step), _observe(model)))
    return trace


@pytest.mark.parametrize("kind,seed", [(kind, seed) for kind in ("ModuleDict", "ParameterDict") for seed in range(8)])
def test_dict_containers_follow_torch_step_by_step(kind, seed):
    rng = np.random.default_rng(100 + seed)
    ops = [_dict_op(rng) for _ in range(STEPS)]
    mine, theirs = _run_dict(minigrad, kind, ops), _run_dict(torch, kind, ops)
    for step, (m, t) in enumerate(zip(mine, theirs, strict=True)):
        assert m == t, f"step {step} {ops[step]}:\nminigrad {m}\ntorch    {t}"


@pytest.mark.parametrize("kind", ["ParameterList", "ParameterDict", "ModuleDict", "ModuleList"])
def test_constructors_and_calls(kind):
    def run(lib):
        nn = lib.nn
        cls = getattr(nn, kind)
        out = []
        item = lib.nn.ReLU() if kind.startswith("Module") else lib.ones(1)
        for arg in ([], {}, None, 3, [3], lib.ones(2), "ab", [("a", item)], {"b": item, "a": item}):
            def make():
                made = cls(arg) if arg is not None else cls()
                return _observe(made)
            out.append(_outcome(make))
        out.append(_outcome(lambda: cls()(lib.ones(1))))
        return out
    assert run(minigrad) == run(torch)


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)])
            self.heads = nn.ModuleDict({"b": nn.Linear(2, 1), "a": nn.Linear(2, 1)})
            self.scales = nn.ParameterList([nn.Parameter(lib.ones(2)), lib.full((2,), 0.5)])
            self.shifts = nn.ParameterDict({"b": lib.zeros(1), "a": lib.ones(1)})

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            for s in self.scales:
                x = x * s
            return self.heads["a"](x) + self.heads["b"](x) + self.shifts["a"] - self.shifts["b"]
    return Net()


def test_a_model_with_containers_trains_saves_and_loads_as_torch():
    torch.manual_seed(0)
    theirs, mine = _net(torch), _net(minigrad)
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()] == [
        "layers.0.weight", "layers.0.bias", "layers.2.weight", "layers.2.bias", "heads.b.weight", "heads.b.bias",
        "heads.a.weight", "heads.a.bias", "scales.0", "scales.1", "shifts.a", "shifts.b"]
    assert _normal(repr(theirs)) == repr(mine)
    state = {k: minigrad.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    assert tuple(mine.load_state_dict(state)) == ([], [])
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out_t, out_m = theirs(torch.tensor(x)), mine(minigrad.tensor(x))
    np.testing.assert_allclose(out_m.detach().numpy(), out_t.detach().numpy(), rtol=1e-5, atol=1e-6)
    out_t.sum().backward(), out_m.sum().backward()
    for (name, p_m), (_, p_t) in zip(mine.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(p_m.grad.numpy(), p_t.grad.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    opt = minigrad.optim.SGD(mine.parameters(), lr=0.1)
    opt.step()
    before = {k: v.numpy().copy() for k, v in mine.state_dict().items()}
    mine.zero_grad()
    assert all(p.grad is None for p in mine.parameters())
    again = _net(minigrad)
    again.load_state_dict(mine.state_dict())
    assert all(np.array_equal(v.numpy(), before[k]) for k, v in again.state_dict().items())
    again.double()
    assert {str(p.dtype) for p in again.parameters()} == {"minigrad.float64"}
    again.to(minigrad.float32)
    assert {str(p.dtype) for p in again.parameters()} == {"minigrad.float32"}


def test_parameters_put_in_the_containers_are_the_same_objects():
    p = minigrad.nn.Parameter(minigrad.ones(2))
    plist, pdict = minigrad.nn.ParameterList([p]), minigrad.nn.ParameterDict({"p": p})
    assert plist[0] is p and pdict["p"] is p and list(plist.parameters()) == [p]
    t = minigrad.ones(2)
    wrapped = minigrad.nn.ParameterList([t])[0]
    assert isinstance(wrapped, minigrad.nn.Parameter) and wrapped.requires_grad


UNFLATTEN = [(dim, sizes, shape) for shape in [(6,), (2, 6), (2, 0, 3), (4, 6, 1), ()]
             for dim in (-1, 0, 1, 3) for sizes in [(2, 3), (-1, 3), (3, -1, 1), [2, 2], (0, -1), (-1, -1)]]


@pytest.mark.parametrize("dim,sizes,shape", UNFLATTEN)
def test_unflatten_as_torch(dim, sizes, shape):
    def run(lib):
        x = lib.ones(shape, dtype=lib.float64, requires_grad=True)
        layer = lib.nn.Unflatten(dim, sizes)
        y = layer(x)
        (y * lib.arange(y.numel(), dtype=lib.float64).reshape(y.shape)).sum().backward()
        return repr(layer), tuple(y.shape), x.grad.numpy().tolist()
    mine, theirs = _outcome(lambda: run(minigrad)), _outcome(lambda: run(torch))
    assert mine[0] == theirs[0]
    if mine[0] == "ok":
        assert mine == theirs


@pytest.mark.parametrize("sizes", [3, (2, 2.0), "ab", None])
def test_unflatten_refuses_sizes_as_torch(sizes):
    assert _outcome(lambda: minigrad.nn.Unflatten(1, sizes)) == _outcome(lambda: torch.nn.Unflatten(1, sizes))


@pytest.mark.parametrize("kind", ["ModuleDict", "ParameterDict"])
@pytest.mark.parametrize("key", ["x.y", "", 3, "training"])
@pytest.mark.parametrize("value", ["layer", "tensor"])
def test_dict_containers_refuse_keys_as_torch(kind, key, value):
    """The exception's type (torch's messages add the key, minigrad's Module says the rule)."""
    def run(lib):
        container = getattr(lib.nn, kind)()
        container[key] = lib.nn.ReLU() if value == "layer" else lib.ones(1)
    assert _outcome(lambda: run(minigrad))[0] == _outcome(lambda: run(torch))[0]
