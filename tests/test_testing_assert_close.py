"""minigrad.testing.assert_close against torch.testing.assert_close, on generated inputs.

Hypothesis draws pairs (tensors of every minigrad dtype and small shapes, perturbed around the
tolerances, with NaN and infinities; Python numbers and NumPy scalars; NumPy arrays; None;
parameters; lists, tuples and dicts of these; mismatched types, shapes and dtypes) and options
(tolerances, one of them alone, equal_nan, the check_* flags, msg). Both libraries must pass or
fail alike, with the same exception type and the same message once 'torch.' reads 'minigrad.'.
make_tensor's ranges, shapes and refusals are compared the same way.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad
import minigrad.testing

torch = pytest.importorskip("torch")

DTYPES = ["float32", "float64", "int32", "int64", "uint8", "bool"]
SPECIAL = [np.nan, np.inf, -np.inf, 0.0]


def build(plan, lib):
    """The object a plan describes, made with ``lib`` (a tensor plan holds its NumPy data)."""
    kind = plan[0]
    if kind == "tensor":
        _, array, view, parameter = plan
        t = lib.from_numpy(np.array(array))
        if view == "t" and t.ndim == 2:
            t = t.t()
        elif view == "step" and t.ndim >= 1:
            t = t[..., ::2]
        return lib.nn.Parameter(t) if parameter else t
    if kind == "value":  # numbers, NumPy scalars and arrays, None, strings: the same object for both
        return plan[1]
    if kind == "list":
        return [build(p, lib) for p in plan[1]]
    if kind == "tuple":
        return tuple(build(p, lib) for p in plan[1])
    return {k: build(p, lib) for k, p in plan[1].items()}


@st.composite
def arrays(draw, dtype=None, shape=None):
    dtype = dtype or draw(st.sampled_from(DTYPES + ["float32", "float64"] * 2))
    shape = shape if shape is not None else tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int32", "int64"):
        return rng.integers(-20, 20, shape).astype(dtype)
    if dtype == "uint8":
        return rng.integers(0, 256, shape).astype(dtype)
    values = rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 4)
    if values.size and draw(st.booleans()):
        values.flat[rng.integers(values.size)] = draw(st.sampled_from(SPECIAL))
    return values.astype(dtype)


@st.composite
def perturbed(draw, array):
    """``array`` moved by multiples of the default tolerances (some close, some just not), or
    changed in one element: to a special value, or by one for integers."""
    out = array.copy()
    if out.size == 0 or draw(st.integers(0, 4)) == 0:
        return out
    kind = out.dtype.kind
    if kind == "b":
        out.flat[draw(st.integers(0, out.size - 1))] ^= True
        return out
    if kind in "iu":
        i = draw(st.integers(0, out.size - 1))
        out.flat[i] = (int(out.flat[i]) + draw(st.sampled_from([1, 2, 255]))) % 256 if kind == "u" else out.flat[i] + 1
        return out
    rtol, atol = {np.float32: (1.3e-6, 1e-5), np.float64: (1e-7, 1e-7)}[out.dtype.type]
    k = draw(st.sampled_from([0, 0.5, 0.9, 0.99, 1.01, 1.1, 2, 100, -0.9, -1.1]))
    where = draw(st.integers(0, out.size - 1)) if draw(st.booleans()) else slice(None)
    with np.errstate(all="ignore"):
        moved = out.astype(np.float64) + k * (atol + rtol * np.abs(out.astype(np.float64)))
    out.flat[where] = moved.flat[where]
    if draw(st.integers(0, 5)) == 0:
        out.flat[draw(st.integers(0, out.size - 1))] = draw(st.sampled_from(SPECIAL))
    return out


@st.composite
def tensor_pairs(draw):
    array = draw(arrays())
    expected = draw(perturbed(array))
    change = draw(st.sampled_from(["none"] * 6 + ["dtype", "shape", "view"]))
    view, expected_view = draw(st.sampled_from(["none", "t", "step"])), None
    if change == "dtype":
        with np.errstate(all="ignore"):
            expected = expected.astype(draw(st.sampled_from(DTYPES)))
    elif change == "shape":
        expected = draw(arrays(dtype=str(array.dtype)))
    elif change == "view":
        expected_view = draw(st.sampled_from(["none", "t", "step"]))
    parameter = array.dtype.kind == "f" and draw(st.integers(0, 5)) == 0
    return (("tensor", array, view, parameter),
            ("tensor", expected, view if expected_view is None else expected_view, False))


numbers = st.one_of(st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True, width=64),
                    st.sampled_from([1.0, 1.0 + 1e-8, 1.0 + 1e-6, 0.0, -0.0, 1 + 2j, 1 + 2.0000001j, True, False,
                                     np.float32(1.0), np.float64(1.0 + 1e-7), np.int64(1), np.bool_(True), None]))


@st.composite
def number_pairs(draw):
    a = draw(numbers)
    if draw(st.booleans()):
        return ("value", a), ("value", draw(numbers))
    if isinstance(a, (bool, np.bool_)) or a is None:
        return ("value", a), ("value", a)
    scale = draw(st.sampled_from([0, 1e-9, 1e-7, 2e-7, 1e-5, 1e-3]))
    return ("value", a), ("value", a + scale * (1 + abs(a)) if np.isfinite(a) else a)


@st.composite
def mixed_pairs(draw):
    """Pairs whose types differ: NumPy arrays against tensors, numbers or lists, strings."""
    array = draw(arrays(dtype=draw(st.sampled_from(DTYPES))))
    other = draw(st.sampled_from(["array", "tensor", "number", "list", "string"]))
    left = ("value", array)
    if other == "array":
        return left, ("value", draw(perturbed(array)))
    if other == "tensor":
        return left, ("tensor", array, "none", False)
    if other == "number":
        return ("tensor", np.asarray(1.5, dtype=np.float32), "none", False), ("value", 1.5)
    if other == "list":
        return ("list", [("value", 1.0), ("value", 2.0)]), ("tensor", np.array([1.0, 2.0]), "none", False)
    return ("value", "ab"), ("value", "ab")


leaf_pairs = st.one_of(tensor_pairs(), number_pairs(), mixed_pairs())


@st.composite
def nested_pairs(draw, depth=2):
    if depth == 0 or draw(st.integers(0, 2)) > 0:
        return draw(leaf_pairs)
    n = draw(st.integers(0, 3))
    children = [draw(nested_pairs(depth - 1)) for _ in range(n)]
    kind = draw(st.sampled_from(["list", "tuple", "dict"]))
    if kind == "dict":
        keys = draw(st.lists(st.sampled_from("abcd"), min_size=n, max_size=n, unique=True))
        actual = {k: c[0] for k, c in zip(keys, children)}
        expected = {k: c[1] for k, c in zip(keys, children)}
        if draw(st.integers(0, 5)) == 0:  # a missing or extra key
            (expected.pop if expected and draw(st.booleans()) else expected.setdefault)(
                next(iter(expected)) if expected else "z", ("value", 1))
        return ("dict", actual), ("dict", expected)
    actual, expected = [c[0] for c in children], [c[1] for c in children]
    if draw(st.integers(0, 5)) == 0:
        expected = expected[:-1]
    other = draw(st.sampled_from(["list", "tuple"])) if draw(st.booleans()) else kind
    return (kind, actual), (other, expected)




@st.composite
def tolerances(draw):
    """Mostly the defaults; sometimes both tolerances; rarely one alone (a ValueError)."""
    choice = draw(st.integers(0, 9))
    if choice < 6:
        return {}
    if choice < 9:
        return {"rtol": draw(st.sampled_from([0, 0.0, 1e-6, 1e-3, 0.5])),
                "atol": draw(st.sampled_from([0, 0.0, 1e-8, 1e-5, 1]))}
    return draw(st.sampled_from([{"rtol": 1e-3}, {"atol": 1e-5}]))


flags = st.fixed_dictionaries({}, optional={
    "equal_nan": st.booleans(), "check_dtype": st.booleans(), "check_stride": st.booleans(),
    "allow_subclasses": st.booleans(), "check_device": st.booleans(), "check_layout": st.booleans()})
messages = st.sampled_from([{}] * 5 + [{"msg": "custom message"}, {"msg": "header"}])
options = st.builds(lambda *parts: {k: v for part in parts for k, v in part.items()}, tolerances(), flags, messages)


def outcome(fn, lib):
    """(exception type name, message in minigrad's spelling) or None if no exception."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except Exception as error:
        text = str(error).replace("torch.", "minigrad.").replace("<class 'minigrad.core.tensor.Tensor'>",
                                                                 "<class 'minigrad.Tensor'>")
        return type(error).__name__, text
    return None


def same_outcome(plans, opts):
    results = []
    for lib in (minigrad, torch):
        kwargs = dict(opts)
        if kwargs.get("msg") == "header":  # a callable msg wraps the generated message
            kwargs["msg"] = lambda generated: f"Header\n\n{generated}"
        actual, expected = build(plans[0], lib), build(plans[1], lib)
        results.append(outcome(lambda: lib.testing.assert_close(actual, expected, **kwargs), lib))
    mine, theirs = results
    if theirs is not None and theirs[0] == "RuntimeError":  # (an internal failure: its text is each library's)
        assert mine is not None and mine[0] == "RuntimeError", (mine, theirs)
        return
    assert mine == theirs


@settings(max_examples=400, deadline=None)
@given(tensor_pairs(), options)
def test_tensor_pairs_as_torch(plans, opts):
    same_outcome(plans, opts)


@settings(max_examples=200, deadline=None)
@given(nested_pairs(), options)
def test_numbers_sequences_and_mappings_as_torch(plans, opts):
    same_outcome(plans, opts)


@pytest.mark.parametrize("dtype", DTYPES)
def test_default_tolerances_as_torch(dtype):
    """Just inside and just outside each dtype's default tolerance: both libraries agree."""
    rtol, atol = {"float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7)}.get(dtype, (0, 0))
    base = np.array([0.0, 1.0, 100.0, -3.0]).astype(dtype)
    for k in (0.5, 0.99, 1.5):
        moved = base.astype(np.float64) + k * (atol + rtol * np.abs(base.astype(np.float64))) + (k > 1)
        same_outcome((("tensor", base, "none", False), ("tensor", moved.astype(dtype), "none", False)), {})


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32"])
@pytest.mark.parametrize("tolerances", [{}, {"rtol": 1e-3, "atol": 1e-6}, {"rtol": 0.0, "atol": 3.0},
                                        {"rtol": 1e-7, "atol": 0.0}])
def test_each_element_at_the_boundary_as_torch(dtype, tolerances):
    """Hundreds of values a few ulps either side of ``atol + rtol * |expected|``, in one tensor: the
    mismatch count in the message shows any element judged otherwise than PyTorch judges it."""
    rng = np.random.default_rng(0)
    rtol, atol = tolerances.get("rtol", 1.3e-6), tolerances.get("atol", 1e-5)
    if dtype.startswith("float"):
        expected = (rng.standard_normal(400) * 10.0 ** rng.integers(-6, 6, 400)).astype(dtype)
        edge = (np.abs(expected) + (atol + rtol * np.abs(expected)).astype(dtype)).astype(dtype)
        actual = np.nextafter(edge, np.inf * rng.choice([-1, 1], 400)).astype(dtype)
        actual = np.where(rng.random(400) < 0.5, edge, actual) * np.sign(expected)
    else:
        expected = rng.integers(-2**30, 2**30, 400).astype(dtype)
        actual = (expected + rng.integers(-200, 200, 400)).astype(dtype)
    same_outcome((("tensor", actual.astype(dtype), "none", False), ("tensor", expected, "none", False)),
                 tolerances)


def test_the_message_of_the_docs():
    with pytest.raises(AssertionError) as caught:
        minigrad.testing.assert_close(minigrad.tensor([1.0, 4.0, 3.0]), minigrad.tensor([1.0, 2.0, 3.0]))
    assert str(caught.value) == ("Tensor-likes are not close!\n\nMismatched elements: 1 / 3 (33.3%)\n"
                                 "Greatest absolute difference: 2.0 at index (1,) (up to 1e-05 allowed)\n"
                                 "Greatest relative difference: 1.0 at index (1,) (up to 1.3e-06 allowed)")


@settings(max_examples=60, deadline=None)
@given(shape=st.lists(st.integers(0, 3), max_size=3), dtype=st.sampled_from(DTYPES),
       low=st.sampled_from([None, -3, 0, 0.5, 2, 1e40, float("nan")]),
       high=st.sampled_from([None, -2, 1, 2, 5.5, 1e40]), noncontiguous=st.booleans(),
       exclude_zero=st.booleans(), requires_grad=st.booleans())
def test_make_tensor_as_torch(shape, dtype, low, high, noncontiguous, exclude_zero, requires_grad):
    """Same shape, dtype, requires_grad and contiguity, values inside PyTorch's range (or the same refusal)."""
    made = []
    for lib in (minigrad, torch):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                made.append(lib.testing.make_tensor(*shape, dtype=getattr(lib, dtype), device="cpu", low=low,
                                                    high=high, noncontiguous=noncontiguous,
                                                    exclude_zero=exclude_zero, requires_grad=requires_grad))
        except Exception as error:
            made.append((type(error).__name__, str(error).replace("torch.", "minigrad.")))
    mine, theirs = made
    if isinstance(theirs, tuple):
        assert mine == theirs
        return
    assert tuple(mine.shape) == tuple(theirs.shape) and str(mine.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
    assert mine.requires_grad == theirs.requires_grad
    assert mine.is_contiguous() == theirs.is_contiguous()
    lo = {"bool": 0, "uint8": 0}.get(dtype, -9) if low is None else low
    hi = {"bool": 2, "uint8": 10}.get(dtype, 9 if dtype.startswith("float") else 10) if high is None else high
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype) if dtype != "bool" else None
    if info is not None:
        lo, hi = min(max(lo, info.min), info.max), min(max(hi, info.min), info.max + 1)
    values = mine.detach().numpy().astype(np.float64)
    tiny = np.finfo(dtype).tiny if exclude_zero and info is not None and dtype.startswith("float") else 0
    assert ((values >= np.ceil(lo) if not dtype.startswith("float") else values >= lo) | (values == tiny)).all()
    assert ((values < np.ceil(hi)) if not dtype.startswith("float") else (values <= hi)).all()
    if exclude_zero:
        assert not (mine == 0).any()


def test_make_tensor_shape_forms_and_dtype_refusal():
    for shape in ((2, 3), [2, 3], minigrad.Size([2, 3])):
        assert minigrad.testing.make_tensor(shape, dtype=minigrad.float32, device="cpu").shape == (2, 3)
    with pytest.raises(TypeError, match="not supported by minigrad.testing.make_tensor"):
        minigrad.testing.make_tensor(2, dtype=torch.float16, device="cpu")


def test_assert_allclose_warns_and_compares_as_torch():
    for lib in (minigrad, torch):
        with pytest.warns(FutureWarning, match="assert_allclose"):
            lib.testing.assert_allclose([1.0, float("nan")], lib.tensor([1.00001, float("nan")]))
        with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="Tensor-likes are not close"):
            lib.testing.assert_allclose(lib.tensor([1.0, 2.0]), [1.0, 2.1])
