"""Stage 01: derivatives by finite differences, and a gradient checker.

The learner writes ``numerical_derivative(f, x, eps)`` (a central difference for
a function of one float), ``numerical_gradient(f, x, eps)`` (the same, one element
of a float64 tensor at a time) and ``gradient_check(f, x, eps, atol, rtol)``, which
compares minigrad's backward with their numerical gradient: the idea behind
``minigrad.autograd.gradcheck``.

The probes hand the learner functions that watch how they are called (which
dtype, how many elements perturbed at once), so a judge can name the mistake
instead of only reporting wrong numbers.
"""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.course.checks import Check, Stage, Verdict, close, fmt


# -- numerical_derivative -----------------------------------------------------------------
SCALAR_FUNCTIONS = {
    "x**3 - 2*x": (lambda x: x**3 - 2 * x, lambda x: 3 * x**2 - 2),
    "sin(x)": (math.sin, math.cos),
    "exp(x)": (math.exp, math.exp),
    "log(x)": (math.log, lambda x: 1 / x),
}


def probe_derivative_values(ns: dict, rng: np.random.Generator) -> dict:
    cases = []
    for name, (f, df) in SCALAR_FUNCTIONS.items():
        x = float(rng.uniform(0.5, 2.0) if name == "log(x)" else rng.uniform(-2.0, 2.0))
        cases.append({"f": name, "x": x, "value": float(ns["numerical_derivative"](f, x)), "true": df(x)})
    return {"cases": cases}


def judge_derivative_values(mine: dict, ref: dict) -> Verdict:
    for case, expected in zip(mine["cases"], ref["cases"]):
        got, want, x = case["value"], expected["value"], case["x"]
        if close(got, want, rtol=1e-4, atol=1e-4):
            continue
        where = f"for f(x) = {case['f']} at x = {fmt(x)} your derivative is {fmt(got)}, expected {fmt(want)}"
        if want and close(got / want, 2.0, rtol=1e-3):
            return Verdict(False, f"{where}: twice too big. The two points x - eps and x + eps are 2*eps apart, "
                                  "so divide the difference by 2 * eps")
        if want and close(got / want, -1.0, rtol=1e-3):
            return Verdict(False, f"{where}: the sign is flipped. Subtract f(x - eps) from f(x + eps), not the other way")
        return Verdict(False, f"{where}. Use (f(x + eps) - f(x - eps)) / (2 * eps)")
    return Verdict(True)


def probe_derivative_central(ns: dict, rng: np.random.Generator) -> dict:
    x = float(rng.uniform(1.0, 2.0))
    values = [float(ns["numerical_derivative"](lambda t: t**3, x, eps=eps)) for eps in (1e-2, 1e-3)]
    return {"x": x, "values": values, "true": 3 * x**2}


def judge_derivative_central(mine: dict, ref: dict) -> Verdict:
    if close(mine["values"], ref["values"], rtol=1e-9, atol=1e-9):
        return Verdict(True)
    x, true = mine["x"], mine["true"]
    (big, small), (want_big, want_small) = mine["values"], ref["values"]
    errors = [abs(v - true) for v in (big, small)]
    intro = f"for f(x) = x**3 at x = {fmt(x)} (true derivative {fmt(true, 6)})"
    if errors[0] == errors[1] == 0 or big == small:
        return Verdict(False, f"{intro} you return {fmt(big, 6)} with eps=0.01 and with eps=0.001: "
                              "your function ignores its eps argument; use the eps it is given")
    ratio = errors[0] / errors[1] if errors[1] else math.inf
    if 5 < ratio < 20:
        return Verdict(False, f"{intro}, shrinking eps from 0.01 to 0.001 shrank your error only {ratio:.0f}x "
                              f"(from {fmt(errors[0])} to {fmt(errors[1])}): a one-sided difference (f(x + eps) - f(x)) / eps "
                              "has an error proportional to eps. The central difference "
                              "(f(x + eps) - f(x - eps)) / (2 * eps) cancels that term: its error shrinks 100x "
                              f"(here to eps**2 = {fmt(want_big - true)} and {fmt(want_small - true)})")
    return Verdict(False, f"{intro} with eps=0.01 you return {fmt(big, 8)}, expected {fmt(want_big, 8)} "
                          "(= 3x**2 + eps**2: the central difference (f(x + eps) - f(x - eps)) / (2 * eps) of a cubic)")


# -- numerical_gradient -------------------------------------------------------------------
def watched(x0: np.ndarray, fn):
    """``fn`` wrapped so that the probe learns how the learner called it."""
    seen = {"calls": 0, "dtypes": set(), "max_changed": 0, "recording": 0}

    def f(t):
        seen["calls"] += 1
        seen["recording"] += minigrad.is_grad_enabled()
        seen["dtypes"].add(str(t.dtype).replace("minigrad.", ""))
        values = t.detach().numpy()
        if values.shape == x0.shape:
            seen["max_changed"] = max(seen["max_changed"], int(np.count_nonzero(values != x0)))
        return fn(t)

    return f, seen


def separable(w: np.ndarray):
    """A function whose partial derivatives don't depend on the other elements."""
    W = minigrad.tensor(w)
    return lambda t: (t.tanh() * W).sum() + (t * t * t).sum() / 3


def probe_gradient_values(ns: dict, rng: np.random.Generator) -> dict:
    x0 = rng.standard_normal((3, 4))
    f, seen = watched(x0, separable(rng.standard_normal((3, 4))))
    grad = ns["numerical_gradient"](f, minigrad.tensor(x0.copy()))
    grad = np.asarray(grad.detach().numpy() if isinstance(grad, minigrad.Tensor) else grad, dtype=np.float64)
    return {"grad": grad, "shape": list(grad.shape), "dtypes": sorted(seen["dtypes"]),
            "max_changed": seen["max_changed"], "calls": seen["calls"]}


def judge_gradient_values(mine: dict, ref: dict) -> Verdict:
    if "float32" in mine["dtypes"]:
        return Verdict(False, "your numerical_gradient called f on a float32 tensor. float32 keeps about 7 digits: "
                              "with eps = 1e-6, x + eps is rounded to a neighbouring float32 and f(x + eps) - f(x - eps) "
                              "keeps only a digit or two. Perturb x itself, which is float64")
    if mine["shape"] != ref["shape"]:
        return Verdict(False, f"your gradient has shape {mine['shape']}; x has shape {ref['shape']}: "
                              "return one partial derivative per element of x, shaped like x")
    if close(mine["grad"], ref["grad"], rtol=1e-5, atol=1e-6):
        return Verdict(True)
    flat = np.asarray(mine["grad"]).ravel()
    if mine["max_changed"] > 1 and np.allclose(flat, flat[0]):
        return Verdict(False, f"every element of your gradient is {fmt(float(flat[0]))}, the sum of all the elements "
                              f"of the true gradient {fmt(ref['grad'])}: f was called with {mine['max_changed']} elements of x changed at once. "
                              "Perturb one element at a time: that element's difference quotient is its partial derivative")
    want = np.asarray(ref["grad"]).ravel()
    if np.allclose(flat, 2 * want, rtol=1e-4, atol=1e-6):
        return Verdict(False, f"your gradient {fmt(mine['grad'])} is twice the expected {fmt(ref['grad'])}: "
                              "divide by 2 * eps, the distance between x - eps and x + eps")
    return Verdict(False, f"for f(x) = sum(tanh(x) * w) + sum(x**3) / 3 your gradient is {fmt(mine['grad'])}, "
                          f"expected {fmt(ref['grad'])}")


def probe_gradient_contract(ns: dict, rng: np.random.Generator) -> dict:
    """What numerical_gradient returns, and whether f ran with gradient recording off."""
    x0 = rng.standard_normal((2, 3))
    f, seen = watched(x0, separable(rng.standard_normal((2, 3))))
    grad = ns["numerical_gradient"](f, minigrad.tensor(x0.copy()))
    is_tensor = isinstance(grad, minigrad.Tensor)
    return {"type": type(grad).__name__, "tensor": is_tensor,
            "dtype": str(grad.dtype).replace("minigrad.", "") if is_tensor else None,
            "recording": seen["recording"], "calls": seen["calls"]}


def judge_gradient_contract(mine: dict, ref: dict) -> Verdict:
    if not mine["tensor"]:
        return Verdict(False, f"numerical_gradient returned a {mine['type']}: return a minigrad tensor, "
                              "minigrad.tensor(array) of your float64 array")
    if mine["dtype"] != "float64":
        return Verdict(False, f"numerical_gradient returned a {mine['dtype']} tensor: return a float64 tensor (the "
                              "differences of nearby values need float64's 16 digits; keep the array float64)")
    if mine["recording"]:
        return Verdict(False, f"f ran {mine['recording']} of {mine['calls']} times with gradient recording on: run "
                              "the evaluations inside `with minigrad.no_grad():`, so that no graph is built for "
                              "numbers that only feed a difference quotient")
    return Verdict(True)


def probe_gradient_restores(ns: dict, rng: np.random.Generator) -> dict:
    x0 = rng.standard_normal((2, 5))
    x = minigrad.tensor(x0.copy())
    ns["numerical_gradient"](separable(rng.standard_normal((2, 5))), x)
    after = x.detach().numpy()
    return {"changed": int(np.count_nonzero(after != x0)), "max_change": float(np.abs(after - x0).max())}


def judge_gradient_restores(mine: dict, ref: dict) -> Verdict:
    if mine["changed"] == 0:
        return Verdict(True)
    change = mine["max_change"]
    if change < 1e-12:
        return Verdict(False, f"after numerical_gradient, {mine['changed']} of x's 10 elements differ from before, "
                              f"by up to {fmt(change)}: x + eps - eps is not exactly x in floating point. "
                              "Keep the original value and put it back")
    return Verdict(False, f"after numerical_gradient, {mine['changed']} of x's 10 elements have changed, by up to "
                          f"{fmt(change)} (that's eps): put each element back to its original value after perturbing it. "
                          "Otherwise every later partial derivative is measured at the wrong point, and the caller's x is damaged")


# -- gradient_check -------------------------------------------------------------------------
class ForgetsTheTwo(Function):
    """x**2 with a wrong derivative: x instead of 2x."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * x


class SlightlyOff(Function):
    """1000 x**3, with a derivative 0.02% too big: within rtol=1e-3, far outside atol=1e-5."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return 1000 * x * x * x

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        return grad * 3000 * x * x * (1 + 2e-4)


class AlmostFlat(Function):
    """1e-8 x, whose backward says 0: off by 1e-8, below atol=1e-5."""

    @staticmethod
    def forward(ctx, x):
        return x * 1e-8

    @staticmethod
    def backward(ctx, grad):
        return grad * 0


def _run_check(ns: dict, fn, x: np.ndarray, **tolerances) -> dict:
    result = ns["gradient_check"](fn, minigrad.tensor(x.copy()), **tolerances)
    try:
        ok, error = result
    except (TypeError, ValueError):
        return {"shape_ok": False, "got": type(result).__name__}
    return {"shape_ok": True, "ok": bool(ok), "error": float(error)}


def _not_a_pair(result: dict) -> Verdict | None:
    if not result["shape_ok"]:
        return Verdict(False, f"gradient_check returned a {result['got']}; return a pair (ok, max_error)")
    return None


def probe_accepts_correct(ns: dict, rng: np.random.Generator) -> dict:
    found = {"result": _run_check(ns, separable(rng.standard_normal((3, 4))), rng.standard_normal((3, 4)))}
    w = minigrad.tensor(rng.standard_normal(3), requires_grad=True)
    try:  # f does not use x: backward leaves the leaf's grad None, and the gradient is 0
        found["constant"] = _run_check(ns, lambda t: (w * w).sum(), rng.standard_normal(3))
    except (AttributeError, TypeError, ValueError) as e:
        found["constant"] = {"crashed": f"{type(e).__name__}: {e}"[:200]}
    return found


def judge_accepts_correct(mine: dict, ref: dict) -> Verdict:
    result = mine["result"]
    if (bad := _not_a_pair(result)) is not None:
        return bad
    if not result["ok"]:
        return Verdict(False, f"gradient_check said not ok (max_error {fmt(result['error'])}) for minigrad's own "
                              "tanh, * and sum, whose gradients are right: compare |analytical - numerical| "
                              "with atol + rtol * |numerical|, element by element (analytical: the gradient backward "
                              "gives; numerical: your finite differences)")
    if not (0 <= result["error"] < 1e-5):
        return Verdict(False, f"for a correct function your max_error is {fmt(result['error'])}, expected about "
                              f"{fmt(ref['result']['error'])}: return the largest |analytical - numerical|")
    constant = mine["constant"]
    said = "for f(t) = (w * w).sum(), which does not use t, "
    if "crashed" in constant:
        return Verdict(False, f"{said}gradient_check raised {constant['crashed']}: backward reached no leaf, so "
                              "leaf.grad is None; the analytical gradient is then zero (np.zeros(x.shape))")
    if (bad := _not_a_pair(constant)) is not None:
        return bad
    if isinstance(constant["error"], float) and math.isnan(constant["error"]):
        return Verdict(False, f"{said}gradient_check's max_error is nan: 0 / 0, so you returned the relative "
                              "difference |analytical - numerical| / |numerical|. max_error is the largest absolute "
                              "difference |analytical - numerical|")
    if not constant["ok"] and constant["error"] == 0:
        return Verdict(False, f"{said}gradient_check said not ok with max_error 0: both gradients are zero. A purely "
                              "relative test fails where the gradient is 0 (0 / 0 is nan, and nan <= rtol is False): "
                              "compare |analytical - numerical| with atol + rtol * |numerical|")
    if not constant["ok"] or not close(constant["error"], ref["constant"]["error"]):
        return Verdict(False, f"{said}gradient_check gave ({constant['ok']}, {fmt(constant['error'])}), expected "
                              f"(True, {fmt(ref['constant']['error'])}): both gradients are zero")
    return Verdict(True)


def probe_fresh_leaf(ns: dict, rng: np.random.Generator) -> dict:
    """gradient_check twice on the caller's tensor x: what happens to x, and the second answer."""
    values = rng.standard_normal((2, 3))
    f = separable(rng.standard_normal((2, 3)))
    x = minigrad.tensor(values.copy(), requires_grad=True)
    first = ns["gradient_check"](f, x)
    second = ns["gradient_check"](f, x)
    return {"grad_left": x.grad is not None, "requires_grad": x.requires_grad,
            "values_kept": bool(np.array_equal(x.detach().numpy(), values)),
            "first": [bool(first[0]), float(first[1])], "second": [bool(second[0]), float(second[1])],
            "error_type": type(first[1]).__name__}


def judge_fresh_leaf(mine: dict, ref: dict) -> Verdict:
    fresh = ("make a fresh leaf, leaf = x.detach().clone().requires_grad_(), and call backward on f(leaf): "
             "the caller's x must come out exactly as it went in")
    if mine["grad_left"] or not mine["second"][0]:
        second = f"({mine['second'][0]}, {fmt(mine['second'][1])})"
        return Verdict(False, f"gradient_check on a tensor x that requires grad left x.grad set, and a second call "
                              f"on the same x returned {second}: backward added into the caller's x.grad, which "
                              f"then holds the sum of both calls' gradients. {fresh[0].upper() + fresh[1:]}")
    if not mine["values_kept"]:
        return Verdict(False, f"gradient_check changed the values of the caller's x: {fresh}")
    if mine["error_type"] != "float":
        return Verdict(False, f"max_error is a {mine['error_type']}: return it as a Python float, "
                              "float(error.max())")
    return Verdict(True)


def probe_rejects_wrong(ns: dict, rng: np.random.Generator) -> dict:
    x = rng.uniform(0.5, 2.0, 5)
    return {"result": _run_check(ns, lambda t: ForgetsTheTwo.apply(t).sum(), x), "x": x}


def judge_rejects_wrong(mine: dict, ref: dict) -> Verdict:
    result, expected = mine["result"], ref["result"]
    if (bad := _not_a_pair(result)) is not None:
        return bad
    if result["ok"]:
        return Verdict(False, "gradient_check said ok for x**2 with a backward that returns x instead of 2x: "
                              "it must compare your numerical gradient with the one backward computes "
                              "(call f on a leaf that requires grad, .backward(), read leaf.grad)")
    if not close(result["error"], expected["error"], rtol=1e-4) and close(result["error"], 0.5, rtol=1e-3):
        return Verdict(False, f"for x**2 with a backward returning x, your max_error is 0.5, expected "
                              f"{fmt(expected['error'])}: you returned the relative difference |analytical - numerical| "
                              "/ |numerical| (x / 2x = 0.5 everywhere). max_error is the largest absolute difference "
                              "|analytical - numerical|; the tolerance already scales with the gradient")
    if not close(result["error"], expected["error"], rtol=1e-4):
        return Verdict(False, f"for x**2 with a backward returning x, your max_error is {fmt(result['error'])}, expected "
                              f"{fmt(expected['error'])} (the largest |x|, since 2x - x = x): "
                              "return the largest absolute difference |analytical - numerical|")
    return Verdict(True)


def probe_tolerance(ns: dict, rng: np.random.Generator) -> dict:
    big = rng.uniform(1.0, 2.0, 4)
    small = rng.standard_normal(4)
    slightly_off = lambda t: SlightlyOff.apply(t).sum()  # noqa: E731
    almost_flat = lambda t: AlmostFlat.apply(t).sum()  # noqa: E731
    return {
        "relative_ok": _run_check(ns, slightly_off, big),
        "absolute_ok": _run_check(ns, almost_flat, small),
        "tight_rtol": _run_check(ns, slightly_off, big, rtol=1e-5),
        "tight_atol": _run_check(ns, almost_flat, small, atol=1e-10),
    }


def judge_tolerance(mine: dict, ref: dict) -> Verdict:
    for key in mine:
        if (bad := _not_a_pair(mine[key])) is not None:
            return bad
    rel, ab = mine["relative_ok"], mine["absolute_ok"]
    if not rel["ok"]:
        return Verdict(False, f"for 1000 x**3, whose gradient goes up to {fmt(ref['relative_ok']['error'] / 2e-4)}, a backward "
                              f"0.02% too big was rejected (max_error {fmt(rel['error'])}). A relative error of 2e-4 is "
                              "below rtol = 1e-3: the tolerance must grow with the gradient, "
                              "|analytical - numerical| <= atol + rtol * |numerical|, element by element")
    if not ab["ok"]:
        return Verdict(False, f"for 1e-8 * x, a backward that says 0 was rejected: it is off by {fmt(ab['error'])}, below "
                              "atol = 1e-5. A purely relative test fails wherever the true gradient is (nearly) zero: "
                              "use |analytical - numerical| <= atol + rtol * |numerical|")
    if mine["tight_rtol"]["ok"]:
        return Verdict(False, "gradient_check(f, x, rtol=1e-5) still accepted a backward that is 0.02% off: "
                              "use the rtol you are given, not a fixed number")
    if mine["tight_atol"]["ok"]:
        return Verdict(False, "gradient_check(f, x, atol=1e-10) still accepted a backward that is off by 1e-8: "
                              "use the atol you are given, not a fixed number")
    return Verdict(True)


def reference() -> dict:
    def numerical_derivative(f, x, eps=1e-6):
        return (f(x + eps) - f(x - eps)) / (2 * eps)

    def numerical_gradient(f, x, eps=1e-6):
        values = x.detach().numpy()
        grad = np.zeros_like(values)
        with minigrad.no_grad():
            for i in np.ndindex(values.shape):
                original = values[i]
                values[i] = original + eps
                plus = f(x).item()
                values[i] = original - eps
                minus = f(x).item()
                values[i] = original
                grad[i] = (plus - minus) / (2 * eps)
        return minigrad.tensor(grad)

    def gradient_check(f, x, eps=1e-6, atol=1e-5, rtol=1e-3):
        leaf = x.detach().clone().requires_grad_()
        f(leaf).backward()
        analytical = np.zeros(x.shape) if leaf.grad is None else leaf.grad.numpy()
        numerical = numerical_gradient(f, x.detach().clone(), eps).numpy()
        error = np.abs(analytical - numerical)
        return bool(np.all(error <= atol + rtol * np.abs(numerical))), float(error.max())

    return {"numerical_derivative": numerical_derivative, "numerical_gradient": numerical_gradient,
            "gradient_check": gradient_check}


# The mistakes the feedback names (issue 28), each by the name of its catalogued mutant: a phrase
# appears only for that mistake's results (tests/course/test_mutants.py: no mutant is told another's).
DIAGNOSES = {
    "crashes_without_a_gradient": "backward reached no leaf, so",
    "forward_difference": "shrank your error only 10x",
    "divides_by_eps": "divide the difference by 2 * eps",
    "ignores_eps": "ignores its eps argument",
    "not_restoring": "(that's eps)",
    "restores_by_arithmetic": "Keep the original value and put it back",
    "all_elements_at_once": "elements of x changed at once",
    "float32": "float32",
    "absolute_error_only": "the tolerance must grow with the gradient",
    "relative_error_only": "A purely relative test fails",
    "never_calls_backward": "said ok for x**2",
    "backward_into_the_callers_x": "backward added into the caller's x.grad",
    "max_error_as_a_numpy_number": "return it as a Python float",
    "evaluations_recorded": "inside `with minigrad.no_grad():`",
    "returns_a_numpy_array": "returned a ndarray: return a minigrad tensor",
    "max_relative_error": "you returned the relative difference",
}


STAGE = Stage(
    number="01",
    name="derivatives",
    title="Derivatives by finite differences, and a gradient checker",
    parts={
        "numerical_derivative": ("numerical_derivative",),
        "numerical_gradient": ("numerical_gradient",),
        "gradient_check": ("gradient_check",),
    },
    checks=(
        Check("derivative_values", 1, "central differences of x**3 - 2x, sin, exp, log", probe_derivative_values,
              judge_derivative_values, part="numerical_derivative"),
        Check("derivative_central", 2, "a central difference: error shrinks like eps**2", probe_derivative_central,
              judge_derivative_central, needs=("derivative_values",), part="numerical_derivative"),
        Check("gradient_values", 2, "the gradient of a tensor function, one element at a time in float64",
              probe_gradient_values, judge_gradient_values, part="numerical_gradient"),
        Check("gradient_restores", 1, "x is left exactly as it was", probe_gradient_restores,
              judge_gradient_restores, needs=("gradient_values",), part="numerical_gradient"),
        Check("gradient_contract", 1, "a float64 tensor, from evaluations inside no_grad", probe_gradient_contract,
              judge_gradient_contract, needs=("gradient_values",), part="numerical_gradient"),
        Check("check_accepts_correct", 1, "a correct backward passes, with a tiny max_error", probe_accepts_correct,
              judge_accepts_correct, needs=("gradient_values",), part="gradient_check"),
        Check("check_rejects_wrong", 1, "a wrong backward fails, with the right max_error", probe_rejects_wrong,
              judge_rejects_wrong, needs=("gradient_values",), part="gradient_check"),
        Check("check_fresh_leaf", 1, "backward runs on a fresh leaf: the caller's x is untouched, a second "
              "call agrees; max_error is a float", probe_fresh_leaf, judge_fresh_leaf,
              needs=("check_accepts_correct",), part="gradient_check"),
        Check("check_tolerance", 2, "|a - n| <= atol + rtol * |n|, with the atol and rtol given", probe_tolerance,
              judge_tolerance, needs=("check_accepts_correct", "check_rejects_wrong"), part="gradient_check"),
    ),
    reference=reference,
)
