"""Stage 05: custom Functions with ``ctx``, and the older instance-style Function.

The learner writes static-method Functions (``Exp``, ``Sigmoid``, ``MulConstant``,
``ReLU``, ``LinearFunction``, ``SinCos``, ``MaxWithMask``), then the instance-style
``StatefulSigmoid`` of MegEngine and PyTorch 0.x with a per-call helper, and plugs
``LinearFunction`` into a ``TinyMLP`` module.

Gradients are compared in float64 as vector-Jacobian products (a random upstream
gradient), against reference Functions written here. Errors that minigrad raises
for a malformed backward (wrong number of gradients, a gradient for a constant, a
gradient of the wrong shape) are caught in the probes and returned as data, so the
judges can name the mistake.
"""
from __future__ import annotations

import re

import numpy as np

import minigrad
from minigrad import nn
from minigrad.autograd import Function, StatefulFunction
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Check, Finding, Stage, Verdict, clip, close, expect_tensor, fmt
from minigrad.course.stages.s03_save_for_backward import _kind as _saved_kind
from minigrad.course.stages.s03_save_for_backward import saved_problem

F64 = minigrad.float64


# -- helpers for probes --------------------------------------------------------------------
def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64, requires_grad=True)


def _const(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=F64)


def _apply(ns: dict, name: str, outputs: int = 1):
    """``ns[name].apply``; a stub for a name not yet defined is called as it is (and raises).

    A call that returns something else than one tensor (``outputs=1``) or a pair of tensors raises
    ``checks.Finding`` saying what it returned, so that a tuple is never shown as if it were values.
    """
    fn = ns[name]
    apply = getattr(fn, "apply", fn)

    def call(*args):
        result = apply(*args)
        what = f"{name}.apply(...)"
        if outputs == 1:
            return expect_tensor(result, what)
        if not isinstance(result, tuple) or len(result) != outputs:
            kind = type(result).__name__ + (f" of {len(result)}" if isinstance(result, (tuple, list)) else "")
            raise Finding(f"{what} returned a {kind}, where a tuple of {outputs} tensors was expected")
        return tuple(expect_tensor(r, f"{what}[{i}]") for i, r in enumerate(result))

    return call


def _snapshot(*tensors) -> list:
    """The values of the caller's tensors, to tell afterwards whether a Function changed them in place."""
    return [t.detach().numpy().copy() for t in tensors]


def _changed(before: list, *tensors) -> list:
    """Which of ``tensors`` (by position) no longer hold the values ``_snapshot`` recorded."""
    return [i for i, (b, t) in enumerate(zip(before, tensors))
            if b.shape != tuple(t.shape) or not np.array_equal(b, t.detach().numpy(), equal_nan=True)]


def _version_check(run, inputs, change) -> dict:
    """Run a Function, change ``change`` (one of its inputs) in place before backward, and report
    whether backward noticed, as it does for a tensor kept by ``ctx.save_for_backward``.

    ``run() -> (out, ctx)``. Also records what the node kept: how many saved tensors, and the names
    of ctx attributes that hold one of the inputs."""
    out = run()
    node = out.grad_fn
    attributes = sorted(k for k, v in vars(node).items() if not k.startswith("_")
                        and any(v is t for t in inputs))
    saved = len(node.saved_tensors) if node is not None else 0
    with minigrad.no_grad():
        change.add_(1.0)
    try:
        _vjp(out, list(inputs), _const(np.ones(tuple(out.shape))))
    except RuntimeError as e:
        noticed = "modified by an inplace operation" in str(e)
        return {"noticed": noticed, "saved": saved, "attributes": attributes,
                "error": None if noticed else clip(f"{type(e).__name__}: {e}", 300)}
    return {"noticed": False, "saved": saved, "attributes": attributes, "error": None}


def _version_problem(name: str, what: str, mine: dict, ref: dict) -> str | None:
    if not ref["noticed"] or mine["noticed"]:
        return None
    kept = (f" you kept it as ctx.{mine['attributes'][0]}" if mine["attributes"] else
            " your Function did not save it with ctx.save_for_backward")
    return (f"{name}'s backward did not notice that {what} was changed in place between forward and backward:"
            f"{kept}. Tensors that backward needs go through ctx.save_for_backward(...) and come back from "
            "ctx.saved_tensors, so that minigrad (like PyTorch) can check that they are unchanged; attributes "
            "of ctx are for values that are not tensors")


def _changed_problem(name: str, changed: list, labels=("x",)) -> str | None:
    if not changed:
        return None
    which = " and ".join(labels[i] for i in changed)
    return (f"{name} changed its caller's {which} in place (its values differ after the call): a Function "
            "must not modify its inputs, which the caller keeps using. Compute a new tensor instead "
            "(out-of-place operations: x * (x > 0), x.exp(), not x.clamp_(...), x.exp_() or x[...] = ...)")


def _vjp(outputs, inputs, grads) -> list:
    """The gradients of ``sum(outputs * grads)`` for each input (None if none reached it)."""
    return list(autograd_grad(outputs, inputs, grads, allow_unused=True))


def _attempt(fn) -> dict:
    """``{"ok": fn()}``, or ``{"error": message}`` for the errors a malformed Function raises."""
    try:
        return {"ok": fn()}
    except NotImplementedError:
        raise
    except (RuntimeError, TypeError) as e:
        return {"error": clip(f"{type(e).__name__}: {e}", 400)}


def _array(value) -> np.ndarray:
    return np.asarray(value, dtype=np.float64)


# -- Exp and Sigmoid -----------------------------------------------------------------------
def probe_exp_sigmoid(ns: dict, rng: np.random.Generator) -> dict:
    result = {}
    for name in ("Exp", "Sigmoid"):
        x = _leaf(rng.uniform(-3, 3, 6))
        g = _const(rng.standard_normal(6))
        before = _snapshot(x)
        y = _apply(ns, name)(x)
        if _changed(before, x):
            return {**result, name: {"changed": _changed(before, x)}}
        (gx,) = _vjp(y, x, g)
        result[name] = {"x": before[0], "g": g, "y": y, "grad": gx, "changed": _changed(before, x)}
    return result


G = " (g: the gradient backward receives, grad_output)"
AB = " (a, b: fixed random weights)"


def judge_exp_sigmoid(mine: dict, ref: dict) -> Verdict:
    for name in ("Exp", "Sigmoid"):
        problem = _changed_problem(name, mine.get(name, {}).get("changed"))
        if problem:
            return Verdict(False, problem)
    for name, formula in (("Exp", "g · eˣ (g: the gradient backward receives, grad_output; eˣ: the output y)"),
                          ("Sigmoid", "g · s · (1 − s) (g: the gradient backward receives, grad_output; "
                                      "s = sigmoid(x): the output)")):
        m, r = mine[name], ref[name]
        x, g, y = _array(r["x"]), _array(r["g"]), _array(r["y"])
        if not close(m["y"], r["y"]):
            return Verdict(False, f"{name}.apply(x) with x = {fmt(r['x'])} gave {fmt(m['y'])}, expected {fmt(r['y'])}: "
                                  "check the forward formula")
        if m["grad"] is None:
            return Verdict(False, f"no gradient reached x through {name}: backward must return grad_output times "
                                  "the derivative, one tensor for the one input")
        if close(m["grad"], r["grad"]):
            continue
        if name == "Sigmoid" and close(m["grad"], g * x * (1 - x)):
            return Verdict(False, f"Sigmoid's gradient is g · x · (1 − x) = {fmt(m['grad'])}{G}, expected "
                                  f"{fmt(r['grad'])}: "
                                  "you used the input x where the output s = sigmoid(x) was needed. Save the output "
                                  "in forward (ctx.save_for_backward(s)) and use s · (1 − s)")
        if name == "Sigmoid" and close(m["grad"], g * y):
            return Verdict(False, f"Sigmoid's gradient is g · s{G}, with s = sigmoid(x) the saved output: the "
                                  "derivative of sigmoid is s · (1 − s), you left out the (1 − s)")
        if name == "Exp" and close(m["grad"], g * np.exp(y)):
            return Verdict(False, f"Exp's gradient is g · exp(eˣ) = {fmt(m['grad'])}{G}, expected g · eˣ = "
                                  f"{fmt(r['grad'])}: you saved the output eˣ and exponentiated it again. The saved "
                                  "output already is the derivative: return grad_output * y")
        return Verdict(False, f"{name}'s gradient at x = {fmt(r['x'])} is {fmt(m['grad'])}, expected {formula} = "
                              f"{fmt(r['grad'])}")
    return Verdict(True)


def probe_exp_sigmoid_saved(ns: dict, rng: np.random.Generator) -> dict:
    """What Exp and Sigmoid save for backward, classified as stage 03 does (input, output, other)."""
    found = {}
    for name in ("Exp", "Sigmoid"):
        x = _leaf(rng.uniform(-3, 3, 5))
        out = _apply(ns, name)(x)
        found[name] = [_saved_kind(s, [x], out) for s in out.grad_fn.saved_tensors]
    return found


def judge_exp_sigmoid_saved(mine: dict, ref: dict) -> Verdict:
    for name in ("Exp", "Sigmoid"):
        problem = saved_problem(name, mine[name], ref[name])
        if problem:
            return Verdict(False, problem)
    return Verdict(True)


def probe_own_sigmoid(ns: dict, rng: np.random.Generator) -> int:
    """How many times Sigmoid's forward and backward ran minigrad's own sigmoid (x.sigmoid(), F.sigmoid...)."""
    from minigrad.ops import elementwise

    original = elementwise.Sigmoid.__dict__["forward"]
    calls = [0]

    def counted(*args, **kwargs):
        calls[0] += 1
        return original.__func__(*args, **kwargs)

    x = _leaf(rng.uniform(-3, 3, 5))
    elementwise.Sigmoid.forward = staticmethod(counted)
    try:
        y = _apply(ns, "Sigmoid")(x)
        _vjp(y, x, _const(np.ones(5)))
    finally:
        elementwise.Sigmoid.forward = original
    return calls[0]


def judge_own_sigmoid(mine: int, ref: int) -> Verdict:
    if mine == 0:
        return Verdict(True)
    return Verdict(False, "your Sigmoid runs minigrad's own sigmoid (x.sigmoid(), or F.sigmoid): the worksheet asks "
                          "you to write the formula, 1 / (1 + (-x).exp()), so that your Function computes it")


# -- MulConstant ---------------------------------------------------------------------------
def probe_mul_constant(ns: dict, rng: np.random.Generator) -> dict:
    x = _leaf(rng.standard_normal(4))
    g = _const(rng.standard_normal(4))
    c = float(rng.choice([-2.5, 0.5, 3.0]))

    def run():
        y = _apply(ns, "MulConstant")(x, c)
        (gx,) = _vjp(y, x, g)
        return {"y": y, "grad": gx}

    return {"c": c, "x": x, **_attempt(run)}


def judge_mul_constant(mine: dict, ref: dict) -> Verdict:
    c = ref["c"]
    if "error" in mine:
        error = mine["error"]
        if "incorrect number of gradients" in error:
            got = re.search(r"got (\d+)", error)
            got = got.group(1) if got else "too few"
            return Verdict(False, f"MulConstant's backward returned {got} gradient(s), but forward took 2 arguments "
                                  f"(x and c = {c:g}): minigrad raised \"incorrect number of gradients\". Return one "
                                  "per forward argument, None for the constant: `return grad_output * ctx.c, None`")
        if "different than None" in error:
            return Verdict(False, f"backward returned a gradient for c = {c:g}, a Python float: an argument that is "
                                  "not a tensor has no gradient, so its entry must be None")
        if "save_for_backward" in error:
            return Verdict(False, f"save_for_backward(..., c) failed because c = {c:g} is not a tensor: keep plain "
                                  "values as attributes of ctx (ctx.c = c)")
        return Verdict(False, f"MulConstant.apply(x, {c:g}) and its backward raised {error}")
    out = mine["ok"]
    if not close(out["y"], ref["ok"]["y"]):
        return Verdict(False, f"MulConstant.apply(x, {c:g}) gave {fmt(out['y'])}, expected {fmt(ref['ok']['y'])}")
    if out["grad"] is None or not close(out["grad"], ref["ok"]["grad"]):
        return Verdict(False, f"with c = {c:g} the gradient for x is {fmt(out['grad'])}, expected grad_output · c = "
                              f"{fmt(ref['ok']['grad'])}")
    return Verdict(True)


# -- ReLU ----------------------------------------------------------------------------------
def probe_relu(ns: dict, rng: np.random.Generator) -> dict:
    n = int(rng.integers(6, 11))
    # zeros, and values on both sides of 0 near it and far from it (a mask x > 1 or x > -1 shows)
    near = [rng.uniform(0.05, 0.9), -rng.uniform(0.05, 0.9)]
    values = np.concatenate([[0.0, 0.0], near, rng.uniform(1.1, 2.5, n // 2), -rng.uniform(1.1, 2.5, n - n // 2)])
    x = _leaf(rng.permutation(values))
    g = _const(rng.standard_normal(len(values)))
    before = _snapshot(x)
    relu = _apply(ns, "ReLU")
    y = relu(x)
    if _changed(before, x):
        return {"changed": _changed(before, x)}
    (gx,) = _vjp(y, x, g)
    changed = _changed(before, x)
    z = _leaf(rng.standard_normal(5))
    return {"x": before[0], "g": g, "y": y, "grad": gx, "changed": changed,
            "version": _version_check(lambda: relu(z), [z], z) if not changed else None}


def judge_relu(mine: dict, ref: dict) -> Verdict:
    x, g = _array(ref["x"]), _array(ref["g"])
    problem = _changed_problem("ReLU", mine["changed"])
    if problem:
        return Verdict(False, problem)
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"ReLU.apply(x) with x = {fmt(ref['x'])} gave {fmt(mine['y'])}, expected {fmt(ref['y'])}")
    got = mine["grad"]
    if got is None:
        return Verdict(False, "no gradient reached x through ReLU: backward must return grad_output * mask")
    if close(got, ref["grad"]):
        problem = _version_problem("ReLU", "its input x", mine["version"], ref["version"])
        return Verdict(False, problem) if problem else Verdict(True)
    if close(got, g * (x >= 0)):
        at_zero = fmt(_array(got)[x == 0].tolist())
        return Verdict(False, f"where x = 0 your gradient is {at_zero}, expected [0, 0]: you used the mask x >= 0. "
                              "At 0 ReLU has no derivative, and the convention (PyTorch's and minigrad's) is 0: "
                              "use x > 0")
    if close(got, g * (x <= 0)) or close(got, g * (x < 0)):
        return Verdict(False, "ReLU's gradient flows where x is negative and is blocked where x is positive: "
                              "the mask is inverted. The gradient passes where x > 0")
    if close(got, g * (g > 0)) or close(got, np.maximum(g, 0)):
        return Verdict(False, "ReLU's gradient keeps the positive entries of grad_output: the mask must come from "
                              "the input x (x > 0), not from the incoming gradient")
    if close(got, g):
        return Verdict(False, "ReLU's backward returned grad_output unchanged: multiply it by the mask (x > 0)")
    return Verdict(False, f"with x = {fmt(ref['x'])} and grad_output = {fmt(ref['g'])}, ReLU's gradient is "
                          f"{fmt(got)}, expected grad_output · (x > 0) = {fmt(ref['grad'])}")


# -- LinearFunction ------------------------------------------------------------------------
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


# -- SinCos --------------------------------------------------------------------------------
def probe_sin_cos(ns: dict, rng: np.random.Generator) -> dict:
    sin_cos = _apply(ns, "SinCos", outputs=2)
    x = _leaf(rng.uniform(-3, 3, 6))
    a, b = _const(rng.standard_normal(6)), _const(rng.standard_normal(6))
    s, c = sin_cos(x)
    (both,) = _vjp((s, c), x, (a, b))
    s2, _ = sin_cos(x)
    (sin_only,) = _vjp(s2, x, a)
    return {"x": x, "a": a, "b": b, "s": s, "c": c, "both": both, "sin_only": sin_only}


def judge_sin_cos(mine: dict, ref: dict) -> Verdict:
    x, a, b = _array(ref["x"]), _array(ref["a"]), _array(ref["b"])
    if not (close(mine["s"], ref["s"]) and close(mine["c"], ref["c"])):
        return Verdict(False, f"SinCos.apply(x) gave ({fmt(mine['s'])}, {fmt(mine['c'])}), expected "
                              f"(sin x, cos x) = ({fmt(ref['s'])}, {fmt(ref['c'])})")
    got = mine["both"]
    if got is None:
        return Verdict(False, "no gradient reached x through SinCos")
    if not close(got, ref["both"]):
        if close(got, a * np.cos(x)):
            return Verdict(False, f"with loss = (a·sin x + b·cos x).sum(){AB}, x's gradient is a·cos x = {fmt(got)}: "
                                  "your backward ignored the gradient of the second output. backward receives one "
                                  "gradient per output (grad_sin, grad_cos); x gets the sum of both contributions")
        if close(got, -b * np.sin(x)):
            return Verdict(False, "your backward ignored the gradient of the first output (sin): x gets "
                                  "grad_sin · cos x − grad_cos · sin x (grad_sin, grad_cos: the gradients backward "
                                  "receives for sin x and cos x)")
        if close(got, a * np.cos(x) + b * np.sin(x)):
            return Verdict(False, "the cos part has the wrong sign: d(cos x)/dx = −sin x")
        return Verdict(False, f"with loss = (a·sin x + b·cos x).sum(){AB}, x's gradient is {fmt(got)}, expected "
                              f"a·cos x − b·sin x = {fmt(ref['both'])}")
    if mine["sin_only"] is None or not close(mine["sin_only"], ref["sin_only"]):
        return Verdict(False, f"when only sin is used, in (a·sin x).sum(){AB}, x's gradient is "
                              f"{fmt(mine['sin_only'])}, expected a·cos x = "
                              f"{fmt(ref['sin_only'])}: the unused output's gradient arrives as zeros")
    return Verdict(True)


# -- MaxWithMask ---------------------------------------------------------------------------
def probe_max_with_mask(ns: dict, rng: np.random.Generator) -> dict:
    x = _leaf(rng.standard_normal((4, 5)))
    a = _const(rng.standard_normal(4))
    values, mask = _apply(ns, "MaxWithMask", outputs=2)(x)
    (gx,) = _vjp(values, x, a) if values.requires_grad else (None,)
    return {"values": values, "mask": mask, "values_requires_grad": values.requires_grad,
            "mask_requires_grad": mask.requires_grad, "grad": gx}


def judge_max_with_mask(mine: dict, ref: dict) -> Verdict:
    if not close(mine["values"], ref["values"]):
        return Verdict(False, f"the row maxima are {fmt(mine['values'])}, expected {fmt(ref['values'])}")
    if not close(mine["mask"], ref["mask"]):
        return Verdict(False, f"the mask is {fmt(mine['mask'])}, expected a one-hot float mask of each row's maximum "
                              f"{fmt(ref['mask'])}")
    if mine["mask_requires_grad"]:
        return Verdict(False, "the mask requires grad, so anything computed from it is recorded in the graph, and "
                              "mask.numpy() refuses to run. A mask is piecewise constant: it has no useful gradient. "
                              "Call ctx.mark_non_differentiable(mask) in forward")
    if not mine["values_requires_grad"]:
        return Verdict(False, "the maxima don't require grad: mark only the mask as non-differentiable")
    if mine["grad"] is None or not close(mine["grad"], ref["grad"]):
        return Verdict(False, f"with loss = (a · values).sum() (a: fixed random weights, one per row), x's gradient is "
                              f"{fmt(mine['grad'])}, expected "
                              f"{fmt(ref['grad'])}: each row's gradient goes to the position of its maximum "
                              "(grad_values[:, None] * mask, with grad_values the gradient backward receives for "
                              "values)")
    return Verdict(True)


# -- StatefulSigmoid ---------------------------------------------------------------------
def probe_stateful(ns: dict, rng: np.random.Generator) -> dict:
    instance = ns["StatefulSigmoid"]()
    x, g = _leaf(rng.uniform(-3, 3, 5)), _const(rng.standard_normal(5))
    y = instance(x)
    (gx,) = _vjp(y, x, g)
    a, b = _leaf(rng.uniform(-3, 3, 4)), _leaf(rng.uniform(-3, 3, 4))
    ga, gb = _const(rng.standard_normal(4)), _const(rng.standard_normal(4))

    def twice():
        ya, yb = ns["stateful_sigmoid"](a), ns["stateful_sigmoid"](b)
        return _vjp((ya, yb), (a, b), (ga, gb))

    return {"stateful": isinstance(instance, StatefulFunction), "x": x, "y": y, "grad": gx, "twice": _attempt(twice)}


def judge_stateful(mine: dict, ref: dict) -> Verdict:
    if not mine["stateful"]:
        return Verdict(False, "StatefulSigmoid must subclass minigrad.autograd.StatefulFunction, with "
                              "forward(self, x) and backward(self, dy) keeping their state on self")
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"StatefulSigmoid()(x) gave {fmt(mine['y'])}, expected {fmt(ref['y'])}")
    if mine["grad"] is None or not close(mine["grad"], ref["grad"]):
        return Verdict(False, f"StatefulSigmoid's gradient is {fmt(mine['grad'])}, expected {fmt(ref['grad'])}: "
                              "keep the output on self in forward (self.y = ...) and return dy * y * (1 - y)")
    twice = mine["twice"]
    if "error" in twice:
        if "already called once" in twice["error"]:
            return Verdict(False, "the second call of stateful_sigmoid reused the instance of the first, and "
                                  "minigrad refused: that instance's self.y belongs to the first call's node, and a "
                                  "second forward would overwrite it before backward. Create a new "
                                  "StatefulSigmoid() inside stateful_sigmoid, once per call")
        return Verdict(False, f"calling stateful_sigmoid twice in one graph raised {twice['error']}")
    for name, got, want in zip("ab", twice["ok"], ref["twice"]["ok"]):
        if got is None or not close(got, want):
            return Verdict(False, f"with stateful_sigmoid used on a and on b in one graph, {name}'s gradient is "
                                  f"{fmt(got)}, expected {fmt(want)}: each call needs its own instance")
    return Verdict(True)


# -- TinyMLP -------------------------------------------------------------------------------
MLP_SHAPES = {"w1": (6, 3), "b1": (6,), "w2": (2, 6), "b2": (2,)}


def probe_mlp(ns: dict, rng: np.random.Generator) -> dict:
    big = ns["TinyMLP"](64, 128, 32)  # how the worksheet's text says to start: shapes, scales, zero biases
    start = {}
    for name, fan_in in (("w1", 64), ("b1", None), ("w2", 128), ("b2", None)):
        p = getattr(big, name, None)
        if p is None or not hasattr(p, "shape"):
            continue
        values = np.asarray(p.detach().numpy(), dtype=np.float64)
        start[name] = {"shape": list(values.shape),
                       "scale": float(values.std() * fan_in ** 0.5) if fan_in else float(np.abs(values).max(initial=0))}
    model = ns["TinyMLP"](3, 6, 2)
    registered = sorted(name for name, _ in model.named_parameters())
    for name, shape in MLP_SHAPES.items():
        setattr(model, name, nn.Parameter(_const(rng.standard_normal(shape))))
    x, g = _const(rng.standard_normal((7, 3))), _const(rng.standard_normal((7, 2)))
    y = model(x)
    grads = _vjp(y, [getattr(model, name) for name in MLP_SHAPES], g)
    return {"n_params": len(list(model.parameters())), "registered": registered, "y": y, "grads": grads,
            "last_node": y.grad_fn.name() if y.grad_fn is not None else None, "start": start}


def judge_mlp(mine: dict, ref: dict) -> Verdict:
    missing = [name for name in ref["registered"] if name not in mine["registered"]]
    if missing:
        return Verdict(False, f"TinyMLP(3, 6, 2).parameters() does not list {' and '.join(missing)} (it lists "
                              f"{mine['registered'] or 'nothing'}): an optimizer updates only what parameters() "
                              f"lists, so {' and '.join(missing)} would never train. Wrap each tensor in "
                              "nn.Parameter(...) when you assign it to self")
    if mine["last_node"] != ref["last_node"]:
        return Verdict(False, f"TinyMLP's output was made by {mine['last_node']}, not by your LinearFunction "
                              f"({ref['last_node']}): compute each layer with LinearFunction.apply(h, weight, bias)")
    if not close(mine["y"], ref["y"]):
        extra = (f" It has {mine['n_params']} parameters, expected 4: use exactly the attributes w1, b1, w2, b2."
                 if mine["n_params"] != ref["n_params"] else "")
        return Verdict(False, f"with the parameters set to known values, TinyMLP gave {fmt(mine['y'])}, expected "
                              f"{fmt(ref['y'])}: forward is relu(x @ w1.T + b1) @ w2.T + b2.{extra}")
    for name, got, want in zip(MLP_SHAPES, mine["grads"], ref["grads"]):
        if got is None or not close(got, want):
            return Verdict(False, f"TinyMLP's gradient for {name} is {fmt(got)}, expected {fmt(want)}")
    fan_in = {"w1": 64, "w2": 128}
    for name, want in ref["start"].items():
        got = mine["start"].get(name)
        where = f"TinyMLP(64, 128, 32) starts {name}"
        if got is None:
            return Verdict(False, f"{where} as something that is not a tensor")
        if got["shape"] != want["shape"]:
            return Verdict(False, f"{where} with shape {tuple(got['shape'])}, expected {tuple(want['shape'])}: a "
                                  "weight is (out_features, in_features), since LinearFunction computes x @ weight.T")
        if name.startswith("b") and got["scale"] != 0:
            return Verdict(False, f"{where} with values up to {got['scale']:.3g} in absolute value: start the biases "
                                  "at zero (minigrad.zeros)")
        if name.startswith("w") and not 0.85 <= got["scale"] <= 1.15:  # std * sqrt(n) is 1, within sampling
            n = fan_in[name]
            return Verdict(False, f"{where} with a standard deviation of {got['scale'] / n ** 0.5:.3g}, expected "
                                  f"about {n ** -0.5:.3g}: randn(...) * {n} ** -0.5, one over the "
                                  "square root of the layer's number of inputs, so the outputs start small")
    return Verdict(True)


# -- the reference -------------------------------------------------------------------------
class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y


class Sigmoid(Function):
    @staticmethod
    def forward(ctx, x):
        s = 1 / (1 + (-x).exp())
        ctx.save_for_backward(s)
        return s

    @staticmethod
    def backward(ctx, grad):
        (s,) = ctx.saved_tensors
        return grad * s * (1 - s)


class MulConstant(Function):
    @staticmethod
    def forward(ctx, x, c):
        ctx.c = c
        return x * c

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.c, None


class ReLU(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * (x > 0)

    @staticmethod
    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        return grad * (x > 0)


class LinearFunction(Function):
    @staticmethod
    def forward(ctx, x, weight, bias=None):
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        y = x @ weight.T
        return y if bias is None else y + bias

    @staticmethod
    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        need_x, need_w = ctx.needs_input_grad[:2]
        grad_x = grad @ weight if need_x else None
        grad_w = grad.T @ x if need_w else None
        grad_b = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b


class SinCos(Function):
    @staticmethod
    def forward(ctx, x):
        array = x.detach().numpy()
        s, c = minigrad.tensor(np.sin(array)), minigrad.tensor(np.cos(array))
        ctx.save_for_backward(s, c)
        return s, c

    @staticmethod
    def backward(ctx, grad_s, grad_c):
        s, c = ctx.saved_tensors
        return grad_s * c - grad_c * s


class MaxWithMask(Function):
    @staticmethod
    def forward(ctx, x):
        values = x.max(dim=1).values
        mask = (x == values.unsqueeze(1)).to(x.dtype)
        ctx.mark_non_differentiable(mask)
        ctx.save_for_backward(mask)
        return values, mask

    @staticmethod
    def backward(ctx, grad_values, grad_mask):
        (mask,) = ctx.saved_tensors
        return grad_values.unsqueeze(1) * mask


class StatefulSigmoid(StatefulFunction):
    def forward(self, x):
        self.y = 1 / (1 + (-x).exp())
        return self.y

    def backward(self, dy):
        return dy * self.y * (1 - self.y)


def stateful_sigmoid(x):
    return StatefulSigmoid()(x)


class TinyMLP(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.w1 = nn.Parameter(minigrad.randn(n_hidden, n_in) * n_in ** -0.5)
        self.b1 = nn.Parameter(minigrad.zeros(n_hidden))
        self.w2 = nn.Parameter(minigrad.randn(n_out, n_hidden) * n_hidden ** -0.5)
        self.b2 = nn.Parameter(minigrad.zeros(n_out))

    def forward(self, x):
        h = ReLU.apply(LinearFunction.apply(x, self.w1, self.b1))
        return LinearFunction.apply(h, self.w2, self.b2)


def reference() -> dict:
    return {
        "Exp": Exp, "Sigmoid": Sigmoid, "MulConstant": MulConstant, "ReLU": ReLU,
        "LinearFunction": LinearFunction, "SinCos": SinCos, "MaxWithMask": MaxWithMask,
        "StatefulSigmoid": StatefulSigmoid, "stateful_sigmoid": stateful_sigmoid, "TinyMLP": TinyMLP,
    }


# The mistakes the feedback names (issue 28), each by the name of its catalogued mutant: a phrase
# appears only for that mistake's results (tests/course/test_mutants.py: no mutant is told another's).
DIAGNOSES = {
    "gradient_for_the_constant": "must be None",
    "constant_in_save_for_backward": "keep plain values as attributes of ctx",
    "sigmoid_saves_input": "you used the input x where the output s = sigmoid(x) was needed",
    "exp_saves_input_and_recomputes_exp": "Exp saved ['input'], expected ['output']: the derivative of exp is exp itself",
    "sigmoid_calls_minigrads_sigmoid": "your Sigmoid runs minigrad's own sigmoid",
    "exp_of_the_saved_output": "exponentiated it again",
    "relu_mask_includes_zero": "use x > 0",
    "relu_mask_from_the_gradient": "not from the incoming gradient",
    "linear_computes_every_gradient": "still computed a gradient for input",
    "sin_cos_ignores_the_cos_gradient": "ignored the gradient of the second output",
    "forgot_mark_non_differentiable": "ctx.mark_non_differentiable(mask)",
    "stateful_reuses_one_instance": "Create a new StatefulSigmoid() inside stateful_sigmoid",
    "relu_clamps_the_callers_tensor": "ReLU changed its caller's x in place",
    "exp_exponentiates_its_input_in_place": "Exp changed its caller's x in place",
    "relu_keeps_its_input_as_a_ctx_attribute": "you kept it as ctx.x",
    "linear_keeps_its_inputs_as_ctx_attributes": "you kept it as ctx.input",
    "linear_computes_every_gradient_then_drops_the_unneeded": "returned None for input but still computed its gradient first",
    "linear_computes_the_bias_gradient_then_drops_it": "returned None for bias but still computed its gradient first",
    "relu_returns_a_tuple": "returned a tuple of 1 (Tensor), where one tensor was expected",
    "mlp_first_weight_is_not_a_parameter": "does not list w1",
}


STAGE = Stage(
    number="05",
    name="custom_functions",
    title="Custom Functions with ctx",
    parts={
        "exp_sigmoid": ("Exp", "Sigmoid"),
        "mul_constant": ("MulConstant",),
        "relu": ("ReLU",),
        "linear": ("LinearFunction",),
        "sin_cos": ("SinCos",),
        "max_with_mask": ("MaxWithMask",),
        "stateful": ("StatefulSigmoid", "stateful_sigmoid"),
        "mlp": ("TinyMLP",),
    },
    checks=(
        Check("exp_sigmoid", 2, "Exp and Sigmoid: values and gradients", probe_exp_sigmoid, judge_exp_sigmoid,
              part="exp_sigmoid"),
        Check("exp_sigmoid_saved", 1, "Exp and Sigmoid save their output, as their derivatives need",
              probe_exp_sigmoid_saved, judge_exp_sigmoid_saved, needs=("exp_sigmoid",), part="exp_sigmoid"),
        Check("sigmoid_own_formula", 1, "Sigmoid computes 1 / (1 + e⁻ˣ) itself, without minigrad's sigmoid",
              probe_own_sigmoid, judge_own_sigmoid, part="exp_sigmoid"),
        Check("mul_constant", 1, "MulConstant: a None gradient for the constant", probe_mul_constant,
              judge_mul_constant, part="mul_constant"),
        Check("relu_mask", 1, "ReLU: the gradient passes where x > 0", probe_relu, judge_relu, part="relu"),
        Check("linear_grads", 2, "LinearFunction: output and gradients of input, weight, bias", probe_linear,
              judge_linear, part="linear"),
        Check("linear_skips_work", 1, "LinearFunction computes only the gradients that are needed",
              probe_linear_skips, judge_linear_skips, needs=("linear_grads",), part="linear"),
        Check("sin_cos", 1, "SinCos: both outputs' gradients reach x", probe_sin_cos, judge_sin_cos, part="sin_cos"),
        Check("max_with_mask", 1, "MaxWithMask: gradient to the maxima, mask non-differentiable",
              probe_max_with_mask, judge_max_with_mask, part="max_with_mask"),
        Check("stateful_sigmoid", 2, "instance-style StatefulSigmoid, one fresh instance per call", probe_stateful,
              judge_stateful, part="stateful"),
        Check("tiny_mlp", 1, "TinyMLP runs on your LinearFunction", probe_mlp, judge_mlp,
              needs=("linear_grads", "relu_mask"),
              part="mlp"),
    ),
    reference=reference,
)
