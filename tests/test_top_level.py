"""``minigrad.<name>`` as PyTorch's ``torch.<name>``, for every name the ops declare.

The top-level functions are made from the ops' own declarations
(``@tensor_method(top_level=True)`` in ``minigrad/ops/``), not from a hand-kept
list, so these tests walk the declarations: every such name must exist in
torch, and every one that takes just a tensor must give torch's values,
gradients and ``out=`` behaviour.
"""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import minigrad
from minigrad.ops.registry import TOP_LEVEL

torch = pytest.importorskip("torch")

# Declared one-tensor functions (the method takes only self): exp, sin, floor, relu, ..., exp_.
ONE_TENSOR = sorted(name for name, fn in TOP_LEVEL.items() if list(inspect.signature(fn).parameters) == ["self"])
# Values in (0.1, 0.9): inside the domain of every one of them (log, sqrt, rsqrt, log1p ...).
X = np.random.default_rng(0).uniform(0.1, 0.9, (2, 3))


def test_the_walk_finds_the_declared_functions():
    assert {"exp", "sum", "add", "matmul", "exp_", "eq", "clip"} <= set(TOP_LEVEL)
    assert {"exp", "sin", "floor", "relu", "exp_", "neg"} <= set(ONE_TENSOR)


@pytest.mark.parametrize("name", sorted(TOP_LEVEL))
def test_every_declared_top_level_name_is_torchs(name):
    assert callable(getattr(torch, name, None)), f"minigrad.{name} exists, torch.{name} does not"
    assert callable(getattr(minigrad, name)) and getattr(minigrad, name).__name__ == name


def _run(lib, name: str):
    x = lib.tensor(X, requires_grad=True)
    out = getattr(lib, name)(x * 1 if name.endswith("_") else x)  # (in place on a copy: x stays a leaf)
    grad = None
    if out.requires_grad:
        out.sum().backward()
        grad = x.grad.clone().numpy()  # (clone: torch's gradient of sgn is a ZeroTensor, which has no array)
    return out.detach().numpy(), grad


# In-place forms PyTorch 2.13 cannot differentiate (NotImplementedError); minigrad's gradient is
# that of the out-of-place form.
NO_DERIVATIVE_IN_TORCH = {"asinh_", "arcsinh_", "acosh_", "arccosh_", "atanh_", "arctanh_"}


@pytest.mark.parametrize("name", ONE_TENSOR)
def test_one_tensor_function_matches_torch(name):
    try:
        _run(torch, name.removesuffix("_") if name in NO_DERIVATIVE_IN_TORCH else name)
    except Exception as e:  # noqa: BLE001  (bitwise_not of a float, x.imag of a real x ...: the same refusal)
        with pytest.raises(type(e)):
            _run(minigrad, name)
        return
    mv, mg = _run(minigrad, name)
    if name in NO_DERIVATIVE_IN_TORCH:
        with pytest.raises(NotImplementedError):
            _run(torch, name)
        (tv, _), (_, tg) = _run(torch, name.removesuffix("_")), _run(torch, name.removesuffix("_"))
    else:
        tv, tg = _run(torch, name)
    assert mv.dtype == tv.dtype
    np.testing.assert_allclose(mv, tv, rtol=1e-12, atol=1e-12)
    assert (mg is None) == (tg is None), f"gradient: minigrad {mg}, torch {tg}"
    if mg is not None:
        np.testing.assert_allclose(mg, tg, rtol=1e-12, atol=1e-12)


# The other arguments of every other declared function, for the out= check ("x": the input again,
# "xT": its transpose, ...).
OTHER_ARGS = {
    "multiply": (2.0,), "subtract": (1.0,), "divide": (2.0,), "greater": (0.5,), "greater_equal": (0.5,),
    "less": (0.5,), "less_equal": (0.5,), "not_equal": (0.5,), "clip_": (0.2, 0.8), "round_": (),
    "logaddexp": ("x",), "logaddexp2": ("x",), "xlogy": ("x",), "xlogy_": ("x",), "float_power": (2.0,),
    "heaviside": ("x",), "copysign": ("x",), "nextafter": ("x",), "ldexp": ("x",), "ldexp_": ("x",),
    "mvlgamma": (1,), "gcd": ("x",), "lcm": ("x",), "gcd_": ("x",), "lcm_": ("x",), "bitwise_and": ("x",),
    "bitwise_or": ("x",), "bitwise_xor": ("x",), "bitwise_left_shift": ("x",), "bitwise_right_shift": ("x",),
    "igamma": ("x",), "igammac": ("x",),
    "add": (1.0,), "sub": (1.0,), "mul": (2.0,), "div": (2.0,), "remainder": (2.0,), "fmod": (2.0,),
    "floor_divide": (2.0,), "eq": (0.5,), "ne": (0.5,), "lt": (0.5,), "le": (0.5,), "gt": (0.5,), "ge": (0.5,),
    "isclose": ("x",), "allclose": ("x",), "equal": ("x",), "matmul": ("xT",), "mm": ("xT",), "mv": ("v",),
    "bmm": ("batch",), "sum": (1,), "prod": (1,), "mean": (1,), "max": (), "min": (), "argmax": (), "argmin": (),
    "all": (), "any": (), "norm": (), "std": (), "var": (), "round": (), "cumsum": (1,), "logsumexp": (1,),
    "softmax": (1,), "log_softmax": (1,), "chunk": (2, 1), "split": (2, 1), "unbind": (1,), "gather": (1, "index"),
    "scatter_add": (1, "index", "x"), "index_select": (0, "rows"), "masked_fill": ("mask", 0.0), "flip": ((0,),),
    "roll": (1,), "narrow": (1, 0, 2), "select": (1, 0), "broadcast_to": ((2, 2, 3),), "reshape": ((3, 2),),
    "flatten": (), "transpose": (0, 1), "permute": ((1, 0),), "squeeze": (), "unsqueeze": (0,), "topk": (1,),
    "sort": (), "argsort": (), "tril": (), "triu": (), "clamp": (0.2, 0.8), "clip": (0.2, 0.8),
    "fill_": (1.0,), "clamp_": (0.2, 0.8),
    "atan2": ("x",), "arctan2": ("x",),
    "dot": ("v",), "outer": ("v",), "inner": ("x",), "diag": (), "diagonal": (), "kron": ("x",), "addmm": ("x", "xT"),
    "amax": (1,), "amin": (1,), "cumprod": (1,), "cummax": (1,), "cummin": (1,), "count_nonzero": (), "nansum": (1,),
    "nanmean": (1,),
    "pinverse": (), "cholesky": (), "qr": (), "svd": (), "matrix_power": (2,),
    "median": (), "nanmedian": (), "kthvalue": (1,), "mode": (), "quantile": (0.5,), "nanquantile": (0.5,),
    "aminmax": (), "cov": (), "histogram": (3,), "dist": ("x",), "logcumsumexp": (1,), "renorm": (2, 0, 1.0),
    "multinomial": (1,), "bernoulli": (), "poisson": (), "is_same_size": ("x",),
    "logit": (), "logit_": (), "hypot": ("x",), "lerp": ("x", 0.5), "clamp_min": (0.5,), "clamp_max": (0.5,),
    "clamp_min_": (0.5,), "clamp_max_": (0.5,), "minimum": ("x",), "fmax": ("x",), "fmin": ("x",),
    "logical_and": ("x",), "logical_or": ("x",), "logical_xor": ("x",), "nan_to_num": (), "nan_to_num_": (),
    "movedim": (0, 1), "moveaxis": (0, 1), "swapaxes": (0, 1), "swapdims": (0, 1), "rot90": (), "tile": ((2,),),
    "repeat_interleave": (2,), "masked_select": ("mask",), "take": ("rows",), "nonzero": (), "true_divide": (2.0,),
    "scatter": (1, "index", "x"), "scatter_reduce": (1, "index", "x", "amax"), "index_add": (0, "pair", "x"),
    "index_copy": (0, "pair", "x"), "index_fill": (1, "rows", 0.5), "index_reduce": (0, "pair", "x", "prod"),
    "index_put": ("indices", "v"), "index_put_": ("indices", "v"), "put": ("pair", "two"),
    "masked_scatter": ("mask", "x"), "take_along_dim": ("index", 1), "diagonal_scatter": ("two",),
    "select_scatter": ("v", 0, 0), "slice_scatter": ("x",), "tensor_split": (2,), "hsplit": (3,), "vsplit": (2,),
    "dsplit": (1,), "split_with_sizes": ([1, 1],), "unflatten": (1, (3, 1)), "diff": (), "cross": ("x", 1),
    "unique": (), "unique_consecutive": (), "bincount": (), "histc": (),
    "addcmul": ("x", "x"), "addcdiv": ("x", "x"), "addmv": ("x", "v"), "addmv_": ("x", "v"), "addr": ("two", "v"),
    "addbmm": ("batch", "batch"), "baddbmm": ("batch", "batch"), "vdot": ("v",), "ger": ("v",), "diag_embed": (),
    "diagflat": (1,), "narrow_copy": (1, 0, 2), "unsafe_chunk": (2, 1), "unsafe_split": (2, 1),
    "unsafe_split_with_sizes": ([1, 1],), "hardshrink": (0.3,), "prelu": ("v",),
    "as_strided": ((2, 2), (1, 2), 1), "as_strided_scatter": ("two", (2,), (2,), 1),
}


def _call(lib, name: str, **out):
    x = lib.tensor(X)
    named = {"x": x, "xT": x.T * 1, "v": lib.ones(3, dtype=lib.float64), "batch": x[None] * 1,
             "index": lib.zeros(2, 1, dtype=lib.int64), "rows": lib.tensor([0]), "mask": x > 0.5,
             "pair": lib.tensor([1, 0]), "indices": (lib.tensor([1, 0]),),
             "two": lib.tensor([0.5, 0.25], dtype=lib.float64)}
    args = [named.get(a, a) if isinstance(a, str) else a for a in OTHER_ARGS.get(name, ())]
    return getattr(lib, name)(x[None] * 1 if name == "bmm" else x, *args, **out)


def _takes_out(lib, name: str) -> bool:
    try:
        _call(lib, name, out=lib.zeros(0, dtype=lib.float64))  # (empty: resized without a warning)
    except TypeError:
        return False
    except RuntimeError:  # (an out= of the wrong shape or dtype: it was taken)
        pass
    return True


def test_every_declared_function_has_arguments_for_the_out_check():
    assert set(TOP_LEVEL) - set(ONE_TENSOR) - set(OTHER_ARGS) == set()


@pytest.mark.parametrize("name", sorted(TOP_LEVEL) + ["detach", "numel", "is_floating_point"])
def test_out_is_accepted_where_torch_accepts_it(name):
    assert _takes_out(minigrad, name) == _takes_out(torch, name)


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "bool"])
def test_an_out_of_the_wrong_dtype_is_refused_as_in_torch(name, dtype):
    outcomes = [_outcome(lambda: getattr(lib, name)(lib.tensor(X), out=lib.zeros(2, 3, dtype=getattr(lib, dtype))))
                for lib in (minigrad, torch)]
    assert outcomes[0][0] == outcomes[1][0]


OUT_CALLS = ["{}(x, out=o)", "{}(x, 1, out=o)", "{}(x, dim=1, out=o)", "{}(x, 1, True, out=o)",
             "{}(x, None, out=o)", "{}(x, dim=None, out=o)"]


# (prod with dim=None is left out: minigrad's prod takes it, torch's refuses it, out= or not)
@pytest.mark.parametrize("name, call", [(n, c) for n in ("sum", "prod", "mean") for c in OUT_CALLS
                                        if not (n == "prod" and "None" in c)])
def test_out_with_and_without_a_dim_as_in_torch(name, call):
    """PyTorch's sum and prod without a dim are an overload that takes no out= (mean's takes it)."""
    outcomes = []
    for lib in (minigrad, torch):
        x, o = lib.tensor(X), lib.zeros(0, dtype=lib.float64)
        outcomes.append(_outcome(lambda: eval(call.format(f"lib.{name}"))))
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "ok":
        np.testing.assert_allclose(outcomes[0][1], outcomes[1][1], rtol=1e-12)


@pytest.mark.parametrize("name", [n for n in ONE_TENSOR if _takes_out(torch, n)])
def test_out_writes_into_the_given_tensor(name):
    results = []
    for lib in (minigrad, torch):
        dtype = lib.bool if name in ("isposinf", "isneginf", "signbit") else lib.float64  # (only a bool out=)
        x, out = lib.tensor(X), lib.zeros(2, 3, dtype=dtype)
        if name == "bitwise_not":  # (refused for a float x, out= or not)
            x, out = (x * 10).long(), out.long()
        if name == "inverse":  # (of a square matrix)
            x, out = x[:, :2] + lib.eye(2, dtype=lib.float64), lib.zeros(2, 2, dtype=dtype)
        returned = getattr(lib, name)(x, out=out)
        assert returned is out
        results.append(out.numpy())
    np.testing.assert_allclose(*results, rtol=1e-12, atol=1e-12)


# -- an input that is not a tensor ------------------------------------------------------------------
def _outcome(fn):
    """("ok", values) or (exception type name, None)."""
    try:
        result = fn()
    except Exception as e:  # noqa: BLE001  (the type is what is compared)
        return type(e).__name__, None
    return "ok", np.asarray(result.detach().numpy() if hasattr(result, "detach") else result)


def _call_with_input(lib, name: str, input):
    x = lib.tensor(X)
    named = {"x": x, "xT": x.T * 1, "v": lib.ones(3, dtype=lib.float64), "batch": x[None] * 1,
             "index": lib.zeros(2, 1, dtype=lib.int64), "rows": lib.tensor([0]), "mask": x > 0.5,
             "pair": lib.tensor([1, 0]), "indices": (lib.tensor([1, 0]),),
             "two": lib.tensor([0.5, 0.25], dtype=lib.float64)}
    args = [named.get(a, a) if isinstance(a, str) else a for a in OTHER_ARGS.get(name, ())]
    if name in ("add", "sub", "mul", "div", "true_divide", "remainder", "fmod", "floor_divide", "eq", "ne", "lt", "le",
                "gt", "ge", "multiply", "subtract", "divide", "greater", "greater_equal", "less", "less_equal",
                "not_equal", "float_power"):
        args[0] = x  # (a number as input, a tensor as other: the overload PyTorch may have)
    return getattr(lib, name)(input, *args)


# PyTorch's norm and split are Python functions that fail with AttributeError on a non-tensor
# input; minigrad's TypeError says the same more plainly.
PYTHON_LEVEL_IN_TORCH = {"norm", "split"}


@pytest.mark.parametrize("input", [2.0, 3, [1.0, 2.0], np.ones(3)], ids=["float", "int", "list", "ndarray"])
@pytest.mark.parametrize("name", sorted(TOP_LEVEL) + ["detach", "numel", "is_floating_point"])
def test_an_input_that_is_not_a_tensor_is_refused_as_in_torch(name, input):
    mine = _outcome(lambda: _call_with_input(minigrad, name, input))
    theirs = _outcome(lambda: _call_with_input(torch, name, input))
    if name in PYTHON_LEVEL_IN_TORCH and theirs[0] == "AttributeError":
        theirs = ("TypeError", None)
    assert mine[0] == theirs[0], f"minigrad.{name}({input!r}, ...): {mine[0]}, torch: {theirs[0]}"
    if mine[0] == "ok":
        np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)


def test_the_refusal_names_the_argument_and_the_fix():
    with pytest.raises(TypeError, match=r"exp\(\): argument 'input' \(position 1\) must be Tensor, not numpy.ndarray: wrap"):
        minigrad.exp(np.ones(2))
    with pytest.raises(TypeError, match=r"sum\(\): argument 'input' \(position 1\) must be Tensor, not list"):
        minigrad.sum([1.0, 2.0])


# -- the operators' other operand, for every binary operator ------------------------------------------
class _Reflects:
    """A foreign type that implements the reflected operators: Python must get to try them."""

    def __array__(self, dtype=None, copy=None):  # (NumPy would otherwise take it as an object scalar)
        raise TypeError("not an array")


for _op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul"):
    setattr(_Reflects, f"__r{_op}__", lambda self, other, _op=_op: f"r{_op}")

OPERATORS = ("+", "-", "*", "/", "//", "%", "**", "@")
OTHERS = {"ndarray": lambda: np.full((2, 2), 2.0), "list": lambda: [2.0, 2.0], "str": lambda: "a",
          "reflects": _Reflects, "number": lambda: 2, "tensor": None}


@pytest.mark.parametrize("other", sorted(OTHERS))
@pytest.mark.parametrize("op", OPERATORS)
def test_an_operators_other_operand_is_treated_as_in_torch(op, other):
    outcomes = []
    for lib in (minigrad, torch):
        x = lib.tensor([[5.0, -3.0], [1.5, 2.0]], dtype=lib.float64)
        y = x * 0 + 2 if OTHERS[other] is None else OTHERS[other]()
        outcomes.append([_outcome(lambda: eval(f"x {op} y")), _outcome(lambda: eval(f"y {op} x"))])
    for (mine, theirs), side in zip(zip(*outcomes), ("x op other", "other op x")):
        assert mine[0] == theirs[0], f"{side} with {op} and a {other}: minigrad {mine[0]}, torch {theirs[0]}"
        if mine[0] == "ok":
            np.testing.assert_array_equal(mine[1], theirs[1])


@pytest.mark.parametrize("method", ["add", "sub", "mul", "div", "remainder", "floor_divide", "fmod", "pow"])
@pytest.mark.parametrize("other", ["ndarray", "list", "str"])
def test_a_method_form_refuses_what_the_operator_would_pass_on(method, other):
    for lib in (minigrad, torch):
        with pytest.raises(TypeError):
            getattr(lib.tensor([5.0, -3.0]), method)(OTHERS[other]())


@pytest.mark.parametrize("name", ["add", "sub"])
@pytest.mark.parametrize("dtype", ["float64", "int64", "bool"])
@pytest.mark.parametrize("alpha", [1, 2, -0.5, True, False, "a"])
@pytest.mark.parametrize("form", ["method", "function", "number_first"])
def test_alpha_of_add_and_sub_as_in_torch(name, dtype, alpha, form):
    """``x.add(y, alpha=a)`` is x + a * y, with PyTorch's refusals of alpha for the result's dtype."""
    outcomes = []
    for lib in (minigrad, torch):
        x = lib.tensor([[1, 0, 1]], dtype=getattr(lib, dtype))
        y = lib.tensor([[1], [0]], dtype=getattr(lib, dtype))
        call = {"method": lambda: getattr(x, name)(y, alpha=alpha),
                "function": lambda: getattr(lib, name)(x, y, alpha=alpha),
                "number_first": lambda: getattr(lib, name)(3, y, alpha=alpha)}[form]
        outcomes.append(_outcome(call))
    assert outcomes[0][0] == outcomes[1][0]
    if outcomes[0][0] == "ok":
        assert outcomes[0][1].dtype == outcomes[1][1].dtype
        np.testing.assert_array_equal(outcomes[0][1], outcomes[1][1])


def test_alpha_is_keyword_only_and_differentiable():
    for lib in (minigrad, torch):
        x, y = lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor([3.0, 4.0], requires_grad=True)
        with pytest.raises(TypeError):
            x.add(y, 2)
        x.sub(y, alpha=3).sum().backward()
        assert x.grad.tolist() == [1.0, 1.0] and y.grad.tolist() == [-3.0, -3.0]
