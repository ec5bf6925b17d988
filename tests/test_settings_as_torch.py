"""The switches at the top of reproducible scripts, and small helpers, side by side with torch.

Deterministic algorithms (and their debug mode), float32 matmul precision, anomaly mode,
backends.cudnn, compile, typename, asarray, frombuffer and utils.hooks: each value is accepted
or refused as torch accepts or refuses it (same exception type, torch's message within
minigrad's), and what is read back after a sequence of calls is what torch reads back.
"""
from __future__ import annotations

import array
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad

torch = pytest.importorskip("torch")
LIBS = (minigrad, torch)
ODD_VALUES = [True, False, 1, 0, None, "x", np.bool_(True), 1.0]


@pytest.fixture(autouse=True)
def restored():
    yield
    for lib in LIBS:
        lib.use_deterministic_algorithms(False)
        lib.set_float32_matmul_precision("highest")
        lib.set_anomaly_enabled(False)
        cudnn = lib.backends.cudnn
        cudnn.deterministic, cudnn.benchmark, cudnn.enabled, cudnn.allow_tf32 = False, False, True, True


def outcome(fn):
    """(exception type name, message) or ("ok", result, warning messages)."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fn()
    except Exception as error:
        return type(error).__name__, str(error)
    return "ok", result, [str(w.message).split(";")[0] for w in caught]


def same(mine, theirs, *, prefix: bool = True):
    """Same outcome; an error's message is torch's (after its function's name), or starts with it."""
    assert mine[0] == theirs[0], (mine, theirs)
    if mine[0] == "ok":
        assert mine[1:] == theirs[1:], (mine, theirs)
    else:
        text, mine_text = (" ".join(m.split()) for m in (theirs[1].split("(): ", 1)[-1].strip().rstrip("."), mine[1]))
        assert text in mine_text if prefix else mine_text == " ".join(theirs[1].split()), (mine, theirs)


def deterministic_state(lib):
    return (lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled(),
            lib.get_deterministic_debug_mode())


calls = st.one_of(
    st.tuples(st.just("use"), st.sampled_from(ODD_VALUES), st.sampled_from([None] + ODD_VALUES)),
    st.tuples(st.just("debug"), st.sampled_from([0, 1, 2, 3, -1, True, "default", "warn", "error", "Warn", 1.0, None])),
    st.tuples(st.just("precision"), st.sampled_from(["highest", "high", "medium", "HIGH", "low", "", 1, None])),
    st.tuples(st.just("anomaly"), st.sampled_from(ODD_VALUES), st.sampled_from([None] + ODD_VALUES)),
)


def call(lib, spec):
    kind, *args = spec
    if kind == "use":
        mode, warn_only = args
        return lambda: lib.use_deterministic_algorithms(mode, **({} if warn_only is None else {"warn_only": warn_only}))
    if kind == "debug":
        return lambda: lib.set_deterministic_debug_mode(args[0])
    if kind == "precision":
        return lambda: lib.set_float32_matmul_precision(args[0])
    enabled, check_nan = args
    return lambda: lib.set_anomaly_enabled(enabled, *(() if check_nan is None else (check_nan,)))


@settings(max_examples=150, deadline=None)
@given(st.lists(calls, min_size=1, max_size=6))
def test_sequences_of_settings_as_torch(sequence):
    for spec in sequence:
        mine, theirs = (outcome(call(lib, spec)) for lib in LIBS)
        same(mine, theirs, prefix=spec[0] in ("use", "anomaly"))
        if mine[0] == "ok" and mine[2]:  # (a refused precision warns: the same words)
            assert mine[2][0].split(" ")[0] == theirs[2][0].split(" ")[0]
        assert deterministic_state(minigrad) == deterministic_state(torch)
        assert minigrad.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
        assert minigrad.is_anomaly_enabled() == torch.is_anomaly_enabled()
        assert minigrad.is_anomaly_check_nan_enabled() == torch.is_anomaly_check_nan_enabled()


def test_warn_only_is_keyword_only():
    for lib in LIBS:
        with pytest.raises(TypeError):
            lib.use_deterministic_algorithms(True, True)


@pytest.mark.parametrize("name", ["deterministic", "benchmark", "enabled", "allow_tf32"])
def test_cudnn_switches_as_torch(name):
    mine, theirs = minigrad.backends.cudnn, torch.backends.cudnn
    assert getattr(mine, name) == getattr(theirs, name)
    for value in ODD_VALUES:
        same(*(outcome(lambda: setattr(lib.backends.cudnn, name, value)) for lib in LIBS), prefix=False)
        assert getattr(mine, name) == getattr(theirs, name)


def test_cudnn_is_not_available_and_keeps_other_attributes():
    assert minigrad.backends.cudnn.is_available() is torch.backends.cudnn.is_available() is False
    assert minigrad.backends.cudnn.version() is torch.backends.cudnn.version() is None
    assert minigrad.backends.cudnn.benchmark_limit == torch.backends.cudnn.benchmark_limit


COMPILE_CASES = [dict(), dict(mode="max-autotune"), dict(mode="lite"), dict(mode="fast"), dict(mode=3),
                 dict(mode="default", options={}), dict(backend="eager", mode="fast"), dict(fullgraph=True),
                 dict(dynamic=False), dict(disable=True), dict(options={"a": 1}, backend="eager")]


@pytest.mark.parametrize("kwargs", COMPILE_CASES)
def test_compile_returns_the_model_and_refuses_as_torch(kwargs):
    outcomes = []
    for lib in LIBS:
        def f(x):
            return x * 2
        result = outcome(lambda: lib.compile(f, **kwargs))
        outcomes.append(result)
        if lib is minigrad and result[0] == "ok":
            assert result[1] is f  # (torch wraps it: minigrad has no compiler)
            assert lib.compile(**kwargs)(f) is f
    same(outcomes[0][:1] + outcomes[0][1:2] if outcomes[0][0] != "ok" else ("ok",),
         outcomes[1][:2] if outcomes[1][0] != "ok" else ("ok",), prefix=False)


def test_compile_refuses_what_torch_refuses():
    for lib in LIBS:
        with pytest.raises(AssertionError, match="A callable function is expected"):
            lib.compile(3)
        with pytest.raises(RuntimeError, match="Model can't be None"):
            lib.compile()(None)
    model = minigrad.nn.Linear(2, 2)
    assert minigrad.compile(model) is model and model.compile() is None


@pytest.mark.parametrize("make", ["lib.tensor([1, 2])", "lib.ones(2)", "lib.ones(2, dtype=lib.float64)",
                                  "lib.nn.Parameter", "lib.nn.Linear(2, 2)", "lib.nn.Linear", "3", "int", "len",
                                  "lib.tensor([True])", "lib.nn.functional.relu"])
def test_typename_as_torch(make):
    mine, theirs = (lib.typename(eval(make)) for lib in LIBS)
    assert mine == theirs.replace("torch.", "minigrad.")


ASARRAY_CASES = [
    ("t", {}), ("t", {"copy": True}), ("t", {"copy": False}), ("t", {"dtype": "float64"}),
    ("t", {"dtype": "float64", "copy": False}), ("t", {"requires_grad": True}), ("t", {"requires_grad": False}),
    ("w", {}), ("w", {"requires_grad": False}), ("w", {"copy": True}), ("w", {"dtype": "float64"}),
    ("y", {}), ("y", {"requires_grad": False}), ("y", {"copy": True}), ("y", {"copy": True, "requires_grad": False}),
    ("i", {"requires_grad": True}), ("a", {}), ("a", {"copy": True}), ("a", {"dtype": "float32"}),
    ("a", {"dtype": "float32", "copy": False}), ("a", {"dtype": "float64", "copy": False}),
    ("a", {"requires_grad": True}), ("ai", {}), ("a_reversed", {}), ("a_reversed", {"copy": True}),
    ("list", {}), ("list", {"copy": False}), ("list", {"dtype": "float64"}), ("ints", {}),
    ("ints", {"requires_grad": True}), ("number", {}), ("number", {"copy": False}), ("bool", {}),
    ("np_scalar", {}), ("np_scalar", {"copy": False}), ("np_scalar", {"dtype": "float64"}), ("np_0d", {}),
    ("np_0d", {"copy": False}),
    ("bytearray", {"dtype": "int32"}), ("bytearray", {}), ("bytearray", {"copy": True, "dtype": "int32"}),
    ("short_bytes", {}), ("memoryview", {}), ("array_i", {"dtype": "int32"}), ("array_i", {}),
    ("nested", {}), ("string", {}), ("none", {}), ("t", {"device": "cpu"}),
]


def asarray_input(name, lib):
    return {
        "t": lambda: lib.tensor([1.0, 2.0]), "w": lambda: lib.ones(2, requires_grad=True),
        "y": lambda: lib.ones(2, requires_grad=True) * 2, "i": lambda: lib.tensor([1, 2]),
        "a": lambda: np.array([1.0, 2.0]), "ai": lambda: np.array([1, 2], dtype=np.int32),
        "a_reversed": lambda: np.array([1.0, 2.0])[::-1], "list": lambda: [1.0, 2.0], "ints": lambda: [1, 2],
        "number": lambda: 3.5, "bool": lambda: True, "np_scalar": lambda: np.float32(2.5),
        "np_0d": lambda: np.array(3.0), "bytearray": lambda: bytearray(b"\x01\x00\x00\x00\x02\x00\x00\x00"),
        "short_bytes": lambda: b"ab", "memoryview": lambda: memoryview(bytearray(8)),
        "array_i": lambda: array.array("i", [1, 2]), "nested": lambda: [[1, 2], [3, 4]],
        "ragged": lambda: [[1, 2], [3]], "string": lambda: "abc", "none": lambda: None,
    }[name]()


def describe(result, source):
    """What can be compared across libraries: values, dtype, grad state, identity, shared memory."""
    values = result.detach().numpy().copy()
    shares = None
    if isinstance(source, np.ndarray) or hasattr(source, "detach"):
        before = np.array(source.detach().numpy() if hasattr(source, "detach") else source, copy=True)
        with (torch.no_grad() if isinstance(result, torch.Tensor) else minigrad.no_grad()):
            result.detach().add_(1) if result.dtype.is_floating_point else None
        after = np.array(source.detach().numpy() if hasattr(source, "detach") else source, copy=True)
        shares = bool((before != after).any()) if result.dtype.is_floating_point else None
    return (values.tolist(), str(result.dtype).split(".")[1], result.requires_grad, result.is_leaf,
            result.grad_fn is not None, result is source, shares)


@pytest.mark.parametrize("name, kwargs", ASARRAY_CASES)
def test_asarray_as_torch(name, kwargs):
    outcomes = []
    for lib in LIBS:
        source = asarray_input(name, lib)
        options = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        result = outcome(lambda: lib.asarray(source, **options))
        outcomes.append(("ok", describe(result[1], source)) if result[0] == "ok" else result)
        if result[0] == "ok" and name in ("t", "w", "y"):
            outcomes[-1] += (source.requires_grad,)  # (requires_grad= may change a leaf in place)
    same(*outcomes)


FROMBUFFER_CASES = [
    ("bytearray", {"dtype": "float32"}), ("bytearray", {"dtype": "int32", "count": 1, "offset": 4}),
    ("bytearray", {"dtype": "int32", "count": 3}), ("bytearray", {"dtype": "int32", "offset": 8}),
    ("bytearray", {"dtype": "int32", "offset": -1}), ("bytearray", {"dtype": "int32", "count": 0}),
    ("bytearray", {"dtype": "int32", "count": -2}), ("empty", {"dtype": "int32"}),
    ("bytearray", {"dtype": "uint8", "offset": 3}), ("seven", {"dtype": "int32"}),
    ("seven", {"dtype": "int32", "offset": 1}), ("bytes", {"dtype": "uint8"}), ("list", {"dtype": "uint8"}),
    ("ndarray", {"dtype": "float64"}), ("bytearray", {"dtype": "float32", "requires_grad": True}),
    ("bytearray", {"dtype": "int32", "requires_grad": True}), ("bytearray", {"dtype": "int32", "count": 1.0}),
    ("strided", {"dtype": "uint8"}), ("bytearray", {"dtype": "float64"}),
]


@pytest.mark.parametrize("name, kwargs", FROMBUFFER_CASES)
def test_frombuffer_as_torch(name, kwargs):
    outcomes = []
    for lib in LIBS:
        source = {"bytearray": lambda: bytearray(range(1, 9)), "empty": lambda: bytearray(),
                  "seven": lambda: bytearray(7),
                  "bytes": lambda: b"abcd", "list": lambda: [1, 2], "ndarray": lambda: np.arange(4.0),
                  "strided": lambda: memoryview(bytearray(16))[::2]}[name]()
        options = {k: getattr(lib, v) if k == "dtype" else v for k, v in kwargs.items()}
        result = outcome(lambda: lib.frombuffer(source, **options))
        if result[0] != "ok":
            outcomes.append(result)
            continue
        t = result[1]
        if name in ("bytearray", "ndarray"):  # shares the buffer's memory
            with (torch.no_grad() if lib is torch else minigrad.no_grad()):
                t[0] = 0
        outcomes.append(("ok", t.detach().numpy().tolist(), str(t.dtype).split(".")[1], t.requires_grad,
                         bytes(source) if name != "ndarray" else source.tolist()))
    same(*outcomes)


def test_removable_handle_at_torch_path():
    from minigrad.utils.hooks import RemovableHandle
    assert RemovableHandle is minigrad.autograd.graph.RemovableHandle
    handle = minigrad.ones(1, requires_grad=True).register_hook(lambda g: g)
    assert isinstance(handle, minigrad.utils.hooks.RemovableHandle)
    assert hasattr(torch.utils.hooks, "RemovableHandle")
