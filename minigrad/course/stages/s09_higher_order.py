"""Stage 09: higher-order derivatives with ``create_graph=True``.

The learner writes ``second_derivative(f, x)`` (elementwise f''), ``hvp(f, x, v)``
(a Hessian-vector product, the gradient of grad·v), ``hessian(f, x)`` (n HVPs with
the basis vectors) and ``newton_minimize(f, x0, steps)``.

The errors that a missing ``create_graph`` or a detach leads to ("does not require
grad", "appears to not have been used in the graph") and the one of an HVP that
forgets to dot with v ("only for scalar outputs") are caught in the probes and
returned as data, so the judges can name them.
"""
from __future__ import annotations

import contextlib

import numpy as np

import minigrad
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Check, Stage, Verdict, clip, close, expect_tensor, fmt

F64 = minigrad.float64


def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=True)


def _const(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64)


def _attempt(fn) -> dict:
    try:
        return {"ok": fn()}
    except NotImplementedError:
        raise
    except (RuntimeError, TypeError, ValueError) as e:  # np.linalg.LinAlgError is a ValueError
        return {"error": clip(f"{type(e).__name__}: {e}", 400)}


def _tensor_or_none(value, what: str):
    """``value`` if it is a tensor (or None, which the judges name); else a ``Finding`` saying what it is."""
    return None if value is None else expect_tensor(value, what)


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def _graph_advice(error: str, what: str) -> str | None:
    """Feedback for the errors of a gradient that carries no graph, or None."""
    if "does not require grad" in error:
        return (f"{what} raised \"{error}\". The first gradient came back without a graph, so it cannot be "
                "differentiated again: pass create_graph=True to the first grad (and do not detach its result)")
    if "appears to not have been used" in error:
        return (f"{what} raised \"{error}\". The first gradient is not connected to x any more: it was detached, or "
                "computed without create_graph=True. Differentiate the very tensor the first grad returned")
    return None


# -- second_derivative ---------------------------------------------------------------------
FUNCTIONS = {
    "x ** 3": lambda t: t ** 3,
    "tanh(x)": lambda t: t.tanh(),
    "exp(2x)": lambda t: (2 * t).exp(),
    "sigmoid(x)": lambda t: t.sigmoid(),
}


def probe_second_derivative(ns: dict, rng: np.random.Generator) -> dict:
    result = {}
    for name, f in FUNCTIONS.items():
        x = _leaf(rng.uniform(-1.5, 1.5, int(rng.integers(3, 7))))
        (first,) = autograd_grad(f(x).sum(), x)
        result[name] = {"x": x, "first": first, **_attempt(lambda f=f, x=x: _tensor_or_none(
            ns["second_derivative"](f, x), "second_derivative(f, x)"))}
    return result


def judge_second_derivative(mine: dict, ref: dict) -> Verdict:
    for name, r in ref.items():
        m = mine[name]
        what = f"second_derivative(f, x) with f(x) = {name}"
        if "error" in m:
            return Verdict(False, _graph_advice(m["error"], what) or f"{what} raised {m['error']}")
        got, want = m["ok"], r["ok"]
        if got is None:
            return Verdict(False, f"{what} returned None")
        if close(got, want):
            continue
        if close(got, r["first"]):
            return Verdict(False, f"{what} returned {fmt(got)}, the first derivative: differentiate the first "
                                  "gradient g once more, grad(g.sum(), x)")
        if np.allclose(np.asarray(got, dtype=np.float64), 0):
            return Verdict(False, f"{what} returned zeros, expected {fmt(want)}: the first gradient was not recorded "
                                  "(create_graph=True), so nothing connects it to x")
        return Verdict(False, f"{what} at x = {fmt(r['x'])} returned {fmt(got)}, expected {fmt(want)}")
    return Verdict(True)


def probe_second_derivative_clean(ns: dict, rng: np.random.Generator) -> dict:
    x = _leaf(rng.uniform(-1, 1, 4))
    h = ns["second_derivative"](lambda t: t ** 3, x)
    return {"x_grad_is_none": x.grad is None, "keeps_graph": bool(h.requires_grad)}


def judge_second_derivative_clean(mine: dict, ref: dict) -> Verdict:
    if not mine["x_grad_is_none"]:
        return Verdict(False, "after second_derivative(f, x), x.grad is set: you called .backward(), which "
                              "accumulates into .grad. Use minigrad.autograd.grad, which returns the gradient instead")
    if mine["keeps_graph"]:
        return Verdict(False, "the second derivative still requires grad: the second grad was recorded too "
                              "(create_graph=True), which keeps the whole graph alive for nothing. Only the first "
                              "grad needs create_graph=True")
    return Verdict(True)


# -- hvp -----------------------------------------------------------------------------------
def probe_hvp_quadratic(ns: dict, rng: np.random.Generator) -> dict:
    n = int(rng.integers(3, 7))
    m = rng.standard_normal((n, n))
    a = m + m.T
    b = rng.standard_normal(n)
    a_t, b_t = _const(a), _const(b)

    def f(x):  # not x @ (A @ x): minigrad's Dot backward (1-D @ 1-D) fails on the 0-d gradient
        return 0.5 * (x * (a_t @ x)).sum() + (b_t * x).sum()

    x, v = _leaf(rng.standard_normal(n)), _const(rng.standard_normal(n))
    result = {"A": a, "v": v, **_attempt(lambda: _tensor_or_none(ns["hvp"](f, x, v), "hvp(f, x, v)"))}
    if "ok" in result:  # a second call on the same x, as hessian makes: nothing of the first may remain
        if result["ok"] is not None:
            result["ok"] = result["ok"].detach().clone()  # x.grad itself, if hvp returned it: the next call adds into it
        v2 = _const(rng.standard_normal(n))
        result.update({"x_grad": x.grad, "v2": v2,
                       "again": _attempt(lambda: _tensor_or_none(ns["hvp"](f, x, v2), "hvp(f, x, v)"))})
    return result


def _hvp_error(error: str) -> str:
    if "scalar outputs" in error:
        return (f"hvp raised \"{error}\": grad needs a scalar to differentiate. Take the dot product of the gradient "
                "with v, (g * v).sum() with g = grad(f(x), x, create_graph=True), and differentiate that")
    return _graph_advice(error, "hvp(f, x, v)") or f"hvp(f, x, v) raised {error}"


def judge_hvp_quadratic(mine: dict, ref: dict) -> Verdict:
    if "error" in mine:
        return Verdict(False, _hvp_error(mine["error"]))
    a, v = np.asarray(ref["A"]), np.asarray(ref["v"])
    got, want = mine["ok"], ref["ok"]
    if got is None:
        return Verdict(False, "hvp returned None")
    if np.shape(got) != np.shape(want):
        return Verdict(False, f"hvp returned shape {list(np.shape(got))}, expected {list(np.shape(want))} (the shape "
                              "of x): differentiate the scalar (g * v).sum(), with g the gradient of f made with "
                              "create_graph=True")
    if close(got, want):
        again = mine["again"]
        if mine["x_grad"] is not None:
            return Verdict(False, "hvp wrote x.grad: you called .backward(), which adds into x.grad, so a second call "
                                  "on the same x adds the first one's result to its own (and hessian calls hvp n "
                                  "times on one x). Use grad(...), which returns the gradient and leaves x.grad alone")
        if "error" in again or again["ok"] is None or not close(again["ok"], ref["again"]["ok"]):
            said = again.get("error") or fmt(again.get("ok"))
            return Verdict(False, f"a second hvp(f, x, v) on the same x gave {said}, expected A v = "
                                  f"{fmt(ref['again']['ok'])}: each call must start afresh from x (hessian calls hvp "
                                  "n times on one x)")
        return Verdict(True)
    if close(got, a @ np.ones_like(v)):
        return Verdict(False, f"for f(x) = ½ xᵀAx + bᵀx, hvp gave {fmt(got)} = A · 1 (the row sums of A), expected "
                              f"A v = {fmt(want)}: you differentiated g.sum() instead of the dot product (g * v).sum() "
                              "(g: the gradient of f, made with create_graph=True)")
    return Verdict(False, f"for f(x) = ½ xᵀAx + bᵀx the Hessian is A, so hvp should give A v = {fmt(want)}; "
                          f"yours gave {fmt(got)}")


def probe_hvp_rosenbrock(ns: dict, rng: np.random.Generator) -> dict:
    x = _leaf(rng.uniform(-1.5, 1.5, 2))
    v = _const(rng.standard_normal(2))
    return {"x": x, "v": v, **_attempt(lambda: _tensor_or_none(ns["hvp"](rosenbrock, x, v), "hvp(f, x, v)"))}


def judge_hvp_rosenbrock(mine: dict, ref: dict) -> Verdict:
    if "error" in mine:
        return Verdict(False, _hvp_error(mine["error"]))
    if mine["ok"] is None or not close(mine["ok"], ref["ok"]):
        return Verdict(False, f"on the Rosenbrock function at x = {fmt(ref['x'])}, hvp(f, x, v) with v = "
                              f"{fmt(ref['v'])} gave {fmt(mine['ok'])}, expected {fmt(ref['ok'])}")
    return Verdict(True)


@contextlib.contextmanager
def _counting(ns: dict, name: str, module=None):
    """Count calls of ``ns[name]`` (and of ``module.<name>``) made while the block runs."""
    calls = [0]
    original = ns.get(name)
    original_attr = getattr(module, name, None) if module is not None else None

    def wrap(fn):
        def counted(*args, **kwargs):
            calls[0] += 1
            return fn(*args, **kwargs)
        return counted

    if callable(original):
        ns[name] = wrap(original)
    if callable(original_attr):
        setattr(module, name, wrap(original_attr))
    try:
        yield calls
    finally:
        if callable(original):
            ns[name] = original
        if callable(original_attr):
            setattr(module, name, original_attr)


def _globals_of(fn, ns: dict) -> dict:
    """The globals ``fn`` looks its names up in (the notebook's, even when ``ns`` is a copy)."""
    found = getattr(fn, "__globals__", None)
    return found if isinstance(found, dict) else ns


HVP_SIZE = 8


def probe_hvp_passes(ns: dict, rng: np.random.Generator) -> dict:
    """How many times hvp calls grad for an 8-dimensional x: two, whatever n, if it never forms H."""
    import minigrad.autograd as autograd_module

    x, v = _leaf(rng.standard_normal(HVP_SIZE)), _const(rng.standard_normal(HVP_SIZE))
    with _counting(_globals_of(ns["hvp"], ns), "grad", autograd_module) as calls:
        ns["hvp"](lambda t: (t.tanh() * t).sum(), x, v)
    return {"grad_calls": calls[0]}


def judge_hvp_passes(mine: dict, ref: dict) -> Verdict:
    if mine["grad_calls"] <= 3:
        return Verdict(True)
    return Verdict(False, f"hvp called grad {mine['grad_calls']} times for an x of {HVP_SIZE} numbers: it builds the "
                          "Hessian, one row or column per call, which is what an HVP avoids. Two passes, whatever n: "
                          "g = grad(f(x), x, create_graph=True), then grad((g * v).sum(), x)")


def probe_hessian_columns(ns: dict, rng: np.random.Generator) -> dict:
    x = _leaf(rng.uniform(-1.5, 1.5, 3))
    with _counting(_globals_of(ns["hessian"], ns), "hvp") as calls:
        ns["hessian"](_cubic, x)
    return {"hvp_calls": calls[0], "n": 3}


def judge_hessian_columns(mine: dict, ref: dict) -> Verdict:
    if mine["hvp_calls"] == mine["n"]:
        return Verdict(True)
    return Verdict(False, f"hessian(f, x) for x of {mine['n']} numbers called your hvp {mine['hvp_calls']} time(s), "
                          f"expected {mine['n']}: column i is hvp(f, x, eᵢ), one call per column")


# -- hessian -------------------------------------------------------------------------------
def _cubic(x):
    return x[0] * x[1] * x[2] + x[0] ** 2 * x[2] + (0.5 * x[1]).exp()


def probe_hessian(ns: dict, rng: np.random.Generator) -> dict:
    result = {}
    for name, f, n in (("Rosenbrock", rosenbrock, 2), ("x0·x1·x2 + x0²·x2 + exp(x1/2)", _cubic, 3)):
        x = _leaf(rng.uniform(-1.5, 1.5, n))
        (g,) = autograd_grad(f(x), x)
        result[name] = {"x": x, "g": g, **_attempt(lambda f=f, x=x: _tensor_or_none(ns["hessian"](f, x),
                                                                                    "hessian(f, x)"))}
    return result


def judge_hessian(mine: dict, ref: dict) -> Verdict:
    for name, r in ref.items():
        m = mine[name]
        what = f"hessian(f, x) for f = {name} at x = {fmt(r['x'])}"
        if "error" in m:
            return Verdict(False, f"{what} raised {m['error']}")
        got, want = m["ok"], r["ok"]
        if np.shape(got) != np.shape(want):
            return Verdict(False, f"{what} has shape {list(np.shape(got))}, expected {list(np.shape(want))}: one "
                                  "column H eᵢ per coordinate, stacked with minigrad.stack(columns, 1)")
        if close(got, want):
            continue
        g = np.asarray(r["g"], dtype=np.float64)
        if close(got, np.outer(g, g)):
            return Verdict(False, f"{what} is g gᵀ, the outer product of the gradient with itself: that uses the "
                                  "gradient twice, not the second derivatives. Column i is hvp(f, x, eᵢ)")
        return Verdict(False, f"{what} is {fmt(got)}, expected {fmt(want)}: column i is hvp(f, x, eᵢ), with eᵢ "
                              "the i-th basis vector")
    return Verdict(True)


# -- newton_minimize -----------------------------------------------------------------------
def probe_newton_quadratic(ns: dict, rng: np.random.Generator) -> dict:
    n = 3
    m = rng.standard_normal((n, n))
    a = m @ m.T + 3 * np.eye(n)
    b = rng.standard_normal(n)
    a_t, b_t = _const(a), _const(b)

    def f(x):  # not x @ (A @ x): see probe_hvp_quadratic
        return 0.5 * (x * (a_t @ x)).sum() - (b_t * x).sum()

    start = rng.standard_normal(n)
    x0 = _const(start.copy())
    result = _attempt(lambda: ns["newton_minimize"](f, x0, 1))
    return {"x0": start, "minimum": np.linalg.solve(a, b), "x0_changed": bool(np.any(x0.detach().numpy() != start)),
            "x0_requires_grad": x0.requires_grad, **result}


def judge_newton_quadratic(mine: dict, ref: dict) -> Verdict:
    if "error" in mine:
        return Verdict(False, f"newton_minimize on a quadratic raised {mine['error']}")
    x0, x_star = np.asarray(ref["x0"]), np.asarray(ref["minimum"])
    got = mine["ok"]
    if got is None or np.shape(got) != x_star.shape:
        return Verdict(False, f"newton_minimize returned {fmt(got)}: return the final x, a tensor of x0's shape")
    if mine["x0_changed"] or mine["x0_requires_grad"]:
        return Verdict(False, "newton_minimize changed the caller's x0 (its values, or made it require grad): never "
                              "change x0 itself; start from a fresh leaf, x = x0.detach().clone().requires_grad_()")
    if close(got, ref["ok"]):
        return Verdict(True)
    if close(got, 2 * x0 - x_star):
        return Verdict(False, f"on a quadratic, one Newton step from x0 = {fmt(x0.tolist())} should land on the minimum "
                              f"{fmt(x_star.tolist())}; yours went to {fmt(got)}, as far on the other side: the step "
                              "has the wrong sign. x_new = x − H⁻¹ g (H: the Hessian at x, g: the gradient at x)")
    if close(got, x0):
        return Verdict(False, "after one step, x is still x0: update x and return the updated x")
    return Verdict(False, f"on a quadratic ½ xᵀAx − bᵀx, one Newton step from x0 = {fmt(x0.tolist())} should land on "
                          f"the minimum A⁻¹b = {fmt(x_star.tolist())}; yours gave {fmt(got)}. Solve H s = g and step "
                          "x − s (H: the Hessian at x, g: the gradient at x)")


def probe_newton_rosenbrock(ns: dict, rng: np.random.Generator) -> dict:
    x0 = _const([-1.2, 1.0])
    start = rosenbrock(x0).item()

    def run():
        x = ns["newton_minimize"](rosenbrock, x0, 8)
        return {"x": x, "f": rosenbrock(x.detach()).item()}

    return {"start": start, "x0_after": x0, **_attempt(run)}


def judge_newton_rosenbrock(mine: dict, ref: dict) -> Verdict:
    if not close(mine["x0_after"], ref["x0_after"]):
        return Verdict(False, f"newton_minimize changed x0 itself (now {fmt(mine['x0_after'])}): work on a copy, "
                              "x = x0.detach().clone()")
    if "error" in mine:
        return Verdict(False, f"newton_minimize on the Rosenbrock function raised {mine['error']}")
    got, want = mine["ok"], ref["ok"]
    if close(got["x"], want["x"], rtol=1e-6, atol=1e-8):
        return Verdict(True)
    if got["f"] > ref["start"]:
        return Verdict(False, f"after 8 Newton steps from (-1.2, 1) the Rosenbrock function rose from "
                              f"{ref['start']:.4g} to {got['f']:.4g}: the steps go uphill. x_new = x − H⁻¹ g (H: the Hessian "
                              "at x, g: the gradient at x)")
    return Verdict(False, f"after 8 Newton steps from (-1.2, 1), x = {fmt(got['x'])} (f = {got['f']:.3g}), expected "
                          f"{fmt(want['x'])}, the minimum (1, 1)")


# -- the reference -------------------------------------------------------------------------
def second_derivative(f, x):
    (g,) = autograd_grad(f(x).sum(), x, create_graph=True)
    (h,) = autograd_grad(g.sum(), x)
    return h


def hvp(f, x, v):
    (g,) = autograd_grad(f(x), x, create_graph=True)
    (hv,) = autograd_grad((g * v).sum(), x)
    return hv


def hessian(f, x):
    basis = minigrad.eye(x.numel(), dtype=x.dtype)
    return minigrad.stack([hvp(f, x, basis[i]) for i in range(x.numel())], 1)


def newton_minimize(f, x0, steps):
    x = x0.detach().clone()
    for _ in range(steps):
        x.requires_grad_()
        (g,) = autograd_grad(f(x), x)
        step = np.linalg.solve(hessian(f, x).numpy(), g.numpy())
        x = x.detach() - minigrad.tensor(step, dtype=x.dtype)
    return x


def reference() -> dict:
    return {"second_derivative": second_derivative, "hvp": hvp, "hessian": hessian,
            "newton_minimize": newton_minimize}


DIAGNOSES = {  # the phrase the feedback says for each known mistake (tests/mutants/s09_higher_order.py)
    "forgot_create_graph": "pass create_graph=True to the first grad",
    "detached_between_the_two_grads": "not connected to x any more",
    "second_grad_also_records": "Only the first grad needs create_graph=True",
    "hvp_not_dotted_with_v": "Take the dot product of the gradient with v",
    "hvp_ignores_v": "instead of the dot product (g * v).sum()",
    "hessian_uses_the_gradient_twice": "uses the gradient twice",
    "newton_step_sign_error": "the step has the wrong sign",
    "hvp_forms_the_hessian": "it builds the Hessian, one row or column per call",
    "newton_makes_the_callers_x0_require_grad": "never change x0 itself",
    "hvp_through_backward_and_x_grad": "hvp wrote x.grad: you called .backward()",
    "hessian_returned_as_a_list": "where one tensor was expected",
}

STAGE = Stage(
    number="09",
    name="higher_order",
    title="Higher-order derivatives",
    parts={
        "second_derivative": ("second_derivative",),
        "hvp": ("hvp",),
        "hessian": ("hessian",),
        "newton": ("newton_minimize",),
    },
    checks=(
        Check("second_derivative", 2, "f''(x) of four elementwise functions", probe_second_derivative,
              judge_second_derivative, part="second_derivative"),
        Check("second_derivative_clean", 1, "no .grad written, no graph kept", probe_second_derivative_clean,
              judge_second_derivative_clean, needs=("second_derivative",), part="second_derivative"),
        Check("hvp_quadratic", 2, "on ½ xᵀAx + bᵀx, hvp(f, x, v) = A v", probe_hvp_quadratic, judge_hvp_quadratic,
              part="hvp"),
        Check("hvp_rosenbrock", 1, "hvp on the Rosenbrock function", probe_hvp_rosenbrock, judge_hvp_rosenbrock,
              needs=("hvp_quadratic",), part="hvp"),
        Check("hvp_two_passes", 1, "hvp never forms the Hessian: two calls of grad, whatever n", probe_hvp_passes,
              judge_hvp_passes, needs=("hvp_quadratic",), part="hvp"),
        Check("hessian", 1, "the Hessian from n Hessian-vector products", probe_hessian, judge_hessian,
              needs=("hvp_quadratic",), part="hessian"),
        Check("hessian_columns", 1, "hessian calls your hvp once per column", probe_hessian_columns,
              judge_hessian_columns, needs=("hessian",), part="hessian"),
        Check("newton_quadratic", 1, "one Newton step lands on a quadratic's minimum", probe_newton_quadratic,
              judge_newton_quadratic, needs=("hessian",), part="newton"),
        Check("newton_rosenbrock", 2, "8 Newton steps reach the Rosenbrock minimum", probe_newton_rosenbrock,
              judge_newton_rosenbrock, needs=("hessian",), part="newton"),
    ),
    reference=reference,
    forbidden={  # minigrad.autograd.functional computes what each part asks for (vjp is grad: allowed)
        part: tuple(f"minigrad.autograd.functional.{name}" for name in ("hvp", "vhp", "jvp", "hessian", "jacobian"))
        for part in ("second_derivative", "hvp", "hessian", "newton")
    },
)
