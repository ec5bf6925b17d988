"""Part ``linear``: ``LinearFunction``'s gradients, and only the ones that are needed (``_counting_ops``
counts the products and reductions backward runs)."""
from __future__ import annotations

import re

import numpy as np

import minigrad
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s05_custom_functions.probing import (
    F64, _apply, _attempt, _changed, _changed_problem, _const, _leaf, _snapshot, _version_check, _version_problem, _vjp,
)

INPUT_NAMES = ("input", "weight", "bias")
GRAD_HINT = ("with grad = grad_output, the gradient of y that backward receives: grad_input = grad @ weight, "
             "grad_weight = grad.T @ input, grad_bias = grad.sum(0)")


def probe_linear(ns: dict, rng: np.random.Generator) -> dict:
    linear = _apply(ns, "LinearFunction")
    result = {}
    n_in, n_out = (int(v) for v in rng.integers(2, 6, 2))
    n_out += n_out == n_in  # rectangular: a transposed operand shows in the shapes
    sizes = {"rectangular": (int(rng.integers(2, 7)), n_in, n_out), "square": (int(rng.integers(2, 7)), n_in, n_in)}
    for case, (n, n_in, n_out) in sizes.items():
        x, w, b = _leaf(rng.standard_normal((n, n_in))), _leaf(rng.standard_normal((n_out, n_in))), \
            _leaf(rng.standard_normal(n_out))
        g = _const(rng.standard_normal((n, n_out)))

        def run(x=x, w=w, b=b, g=g):
            before = _snapshot(x, w, b)
            y = linear(x, w, b)
            if _changed(before, x, w, b):
                return {"changed": _changed(before, x, w, b)}
            grads = _vjp(y, (x, w, b), g)
            return {"y": y, "grads": grads, "changed": _changed(before, x, w, b)}

        result[case] = {"shapes": [list(x.shape), list(w.shape), list(b.shape)], **_attempt(run)}
    x, w, b = _leaf(rng.standard_normal((3, 2))), _leaf(rng.standard_normal((4, 2))), _leaf(rng.standard_normal(4))
    result["version"] = {
        "input": _attempt(lambda: _version_check(lambda: linear(x, w, b), [x, w, b], x))}
    x, w, b = _leaf(rng.standard_normal((3, 2))), _leaf(rng.standard_normal((4, 2))), _leaf(rng.standard_normal(4))
    result["version"]["weight"] = _attempt(lambda: _version_check(lambda: linear(x, w, b), [x, w, b], w))

    x, w = _leaf(rng.standard_normal((3, 2))), _leaf(rng.standard_normal((4, 2)))
    g = _const(rng.standard_normal((3, 4)))

    def run_no_bias():
        y = linear(x, w, None)
        return {"y": y, "grads": _vjp(y, (x, w), g)}

    result["no_bias"] = _attempt(run_no_bias)
    return result


def _linear_error(error: str, where: str) -> Verdict:
    shape = re.search(r"invalid gradient at index (\d) - got \[([^\]]*)\] but expected shape compatible with \[([^\]]*)\]",
                      error)
    if shape:
        name = INPUT_NAMES[int(shape.group(1))]
        return Verdict(False, f"{where}: your gradient for {name} has shape [{shape.group(2)}], expected "
                              f"[{shape.group(3)}] (the shape of {name}). With y = input @ weight.T + bias: {GRAD_HINT}. "
                              "Check which operand is transposed by matching the shapes")
    if "incorrect number of gradients" in error:
        return Verdict(False, f"{where}: backward must return three gradients, for input, weight and bias (None for "
                              f"a bias that is None). minigrad said: {error}")
    if "NoneType" in error:
        return Verdict(False, f"{where}: {error}. When bias is None, skip adding it in forward and return None for "
                              "it in backward")
    return Verdict(False, f"{where}: your LinearFunction raised {error}")


def judge_linear(mine: dict, ref: dict) -> Verdict:
    for case in ("rectangular", "square"):
        m, r = mine[case], ref[case]
        x_shape, w_shape, _ = r["shapes"]
        where = f"with input {x_shape}, weight {w_shape}"
        if "error" in m:
            return _linear_error(m["error"], where)
        problem = _changed_problem("LinearFunction", m["ok"]["changed"], INPUT_NAMES)
        if problem:
            return Verdict(False, problem)
        m, r = m["ok"], r["ok"]
        if not close(m["y"], r["y"]):
            return Verdict(False, f"{where}, the output is {fmt(m['y'])}, expected input @ weight.T + bias = "
                                  f"{fmt(r['y'])}")
        for name, got, want in zip(INPUT_NAMES, m["grads"], r["grads"]):
            if got is None:
                return Verdict(False, f"{where}, no gradient reached {name}, which requires grad")
            if not close(got, want):
                return Verdict(False, f"{where}, the gradient for {name} is {fmt(got)}, expected {fmt(want)}: {GRAD_HINT}")
    m, r = mine["no_bias"], ref["no_bias"]
    if "error" in m:
        return _linear_error(m["error"], "LinearFunction.apply(input, weight, None)")
    if not close(m["ok"]["y"], r["ok"]["y"]) or not all(
            got is not None and close(got, want) for got, want in zip(m["ok"]["grads"], r["ok"]["grads"])):
        return Verdict(False, "LinearFunction.apply(input, weight, None) gave a wrong output or gradients: with no "
                              "bias, y = input @ weight.T")
    for name in ("input", "weight"):
        m, r = mine["version"][name], ref["version"][name]
        if "error" in m:
            return _linear_error(m["error"], f"with {name} changed in place between forward and backward")
        problem = _version_problem("LinearFunction", name, m["ok"], r["ok"])
        if problem:
            return Verdict(False, problem)
    return Verdict(True)


PRODUCTS = ("Mm", "MatMul", "Bmm", "Mv", "Dot", "Einsum", "Tensordot", "Addmm", "Baddbmm", "Linear")
REDUCTIONS = ("Sum", "Mean")


def _counting_ops():
    """A context that counts the operations run (every op goes through Function.apply), by class name."""
    import collections
    import contextlib

    from minigrad.autograd.function import Function as _Base

    @contextlib.contextmanager
    def counting():
        original = _Base.__dict__["apply"]
        seen = collections.Counter()

        def apply(cls, *args, **kwargs):
            seen[cls.__name__] += 1
            return original.__func__(cls, *args, **kwargs)

        _Base.apply = classmethod(apply)
        try:
            yield seen
        finally:
            _Base.apply = original

    return counting()


def probe_linear_skips(ns: dict, rng: np.random.Generator) -> dict:
    cls = ns["LinearFunction"]
    linear = _apply(ns, "LinearFunction")
    result = {}
    cases = {"data": (False, True, True), "frozen": (True, False, False)}
    n, n_in, n_out = (int(v) for v in rng.integers(3, 7, 3))
    for case, needs in cases.items():
        shapes = ((n, n_in), (n_out, n_in), (n_out,))
        x, w, b = (minigrad.tensor(rng.standard_normal(s), dtype=F64, requires_grad=need)
                   for s, need in zip(shapes, needs))
        y = linear(x, w, b)
        with _counting_ops() as seen:
            raw = cls.backward(y.grad_fn, _const(rng.standard_normal((n, n_out))))
        raw = raw if isinstance(raw, tuple) else (raw,)
        result[case] = [g is None for g in raw]
        result[case + "_work"] = {"products": sum(seen[k] for k in PRODUCTS),
                                  "reductions": sum(seen[k] for k in REDUCTIONS)}
    return result


def judge_linear_skips(mine: dict, ref: dict) -> Verdict:
    describe = {
        "data": "input does not require grad (as for a batch of data)",
        "frozen": "weight and bias do not require grad (a frozen layer)",
    }
    for case in ("data", "frozen"):
        got, want = mine[case], ref[case]
        wasted = [INPUT_NAMES[i] for i, (g, w) in enumerate(zip(got, want)) if w and not g]
        if wasted:
            return Verdict(False, f"when {describe[case]}, your backward still computed a gradient for "
                                  f"{' and '.join(wasted)}, which nobody will use. Check ctx.needs_input_grad[i] and "
                                  "return None without computing that gradient")
        missing = [INPUT_NAMES[i] for i, (g, w) in enumerate(zip(got, want)) if g and not w]
        if missing:
            return Verdict(False, f"when {describe[case]}, your backward returned None for {' and '.join(missing)}, "
                                  "which does require grad")
    for case, skipped in (("data", "input"), ("frozen", "weight"), ("frozen", "bias")):
        kind = "reductions" if skipped == "bias" else "products"
        got, want = mine[case + "_work"][kind], ref[case + "_work"][kind]
        if got > want:
            what = "sums" if skipped == "bias" else "matrix products"
            return Verdict(False, f"when {describe[case]}, your backward returned None for {skipped} but still "
                                  f"computed its gradient first ({got} {what}, where {want} would do) and threw it "
                                  f"away: check ctx.needs_input_grad[{INPUT_NAMES.index(skipped)}] *before* "
                                  "computing a gradient, so that the work is skipped")
    return Verdict(True)

