"""Stage 06: gradients through broadcasting.

The learner writes ``unbroadcast(grad, shape)`` (sum a gradient back to an input's
shape, like ``minigrad.ops.broadcast.sum_to``), the Functions ``BroadcastAdd`` and
``BroadcastMul``, and ``BatchedMatMul`` for ``(B, n, k) @ (k, m)`` and
``(B, n, k) @ (B, k, m)``.

minigrad's engine (like PyTorch's) quietly sums a gradient that still has the
broadcast shape back to the input's shape, as a safety net. So the probes also
call the learner's ``backward`` directly on the node (``Cls.backward(out.grad_fn,
grad)``) and look at the shapes it returns, before that net.
"""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.autograd import Function
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Check, Finding, Stage, Verdict, clip, close, expect_tensor, fmt
from minigrad.course.stages.s05_custom_functions import _version_check, _version_problem
from minigrad.ops.broadcast import sum_to

F64 = minigrad.float64


# -- helpers -------------------------------------------------------------------------------
def _leaf(rng: np.random.Generator, shape) -> minigrad.Tensor:
    return minigrad.tensor(rng.standard_normal(shape), dtype=F64, requires_grad=True)


def _const(rng: np.random.Generator, shape) -> minigrad.Tensor:
    return minigrad.tensor(rng.standard_normal(shape), dtype=F64)


def _apply(ns: dict, name: str):
    """``ns[name].apply``, refusing (with a ``Finding`` that says so) anything but a tensor as its result."""
    fn = ns[name]
    apply = getattr(fn, "apply", fn)
    return lambda *args: expect_tensor(apply(*args), f"{name}.apply(...)")


def _error(e: BaseException) -> str:
    return clip(f"{type(e).__name__}: {e}", 300)


def _np_sum_to(array, shape) -> np.ndarray:
    """NumPy's version of sum_to, for judges that name a mistake by recomputing it."""
    array = np.asarray(array, dtype=np.float64)
    lead = array.ndim - len(shape)
    array = array.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and array.shape[i] != 1)
    return array.sum(axis=axes, keepdims=True) if axes else array


def _shape_of(value) -> list:
    return list(np.shape(np.asarray(value, dtype=np.float64)))


def _run_function(ns: dict, name: str, inputs: list, g: minigrad.Tensor) -> dict:
    """Forward, the raw results of the learner's backward, and the engine's gradients."""
    try:
        out = _apply(ns, name)(*inputs)
        raw = ns[name].backward(out.grad_fn, g)
        raw = list(raw) if isinstance(raw, tuple) else [raw]
        for i, r in enumerate(raw):
            if r is not None:
                expect_tensor(r, f"{name}.backward's gradient {i}")
        engine = list(autograd_grad(out, inputs, g, allow_unused=True))
    except (NotImplementedError, Finding):
        raise
    except Exception as e:  # noqa: BLE001 - a shape error is an expected mistake here
        return {"error": _error(e)}
    return {"out": out, "raw": raw, "raw_shapes": [None if r is None else list(r.shape) for r in raw],
            "engine": engine}


# -- unbroadcast ---------------------------------------------------------------------------
LEADING_CASES = [((2, 3, 4), (3, 4)), ((2, 3, 4), (4,)), ((5,), ()), ((2, 3), (2, 3))]
ONES_CASES = [((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 4)), ((2, 3, 4), (2, 1, 4)), ((2, 3, 4), (1, 1, 1)),
              ((4, 3), (4, 1)), ((3, 1, 5), (3, 1, 1))]


def _random_leading(rng: np.random.Generator) -> tuple:
    """A gradient shape and an input shape that broadcasting only extended on the left."""
    grad_shape = tuple(int(n) for n in rng.integers(2, 5, int(rng.integers(2, 5))))
    return grad_shape, grad_shape[int(rng.integers(1, len(grad_shape))):]


def _random_ones(rng: np.random.Generator) -> tuple:
    """A gradient shape and an input shape with stretched 1s (and maybe fewer dimensions)."""
    grad_shape = tuple(int(n) for n in rng.integers(2, 5, int(rng.integers(2, 5))))
    shape = list(grad_shape[int(rng.integers(0, len(grad_shape) - 1)):])
    ones = rng.choice(len(shape), int(rng.integers(1, len(shape) + 1)), replace=False)
    for i in ones:
        shape[i] = 1
    return grad_shape, tuple(shape)


def _probe_unbroadcast(ns: dict, rng: np.random.Generator, cases) -> dict:
    results = []
    for grad_shape, shape in cases:
        g = _const(rng, grad_shape)
        try:
            out = ns["unbroadcast"](g, shape)
        except NotImplementedError:
            raise
        except Exception as e:  # noqa: BLE001
            results.append({"grad_shape": list(grad_shape), "shape": list(shape), "error": _error(e)})
            continue
        out = expect_tensor(out, f"unbroadcast(grad of shape {list(grad_shape)}, {tuple(shape)})")
        results.append({"grad_shape": list(grad_shape), "shape": list(shape), "out_shape": list(out.shape),
                        "out": out, "grad": g})
    return {"cases": results, "differentiable": _differentiable(ns, rng, cases[0])}


def _differentiable(ns: dict, rng: np.random.Generator, case) -> dict:
    """Whether unbroadcast's result can be differentiated again (stage 09 needs it): it must be made
    of tensor operations, so that it has a history when its input requires grad, and its own gradient
    (gradgradcheck's question) must be right."""
    grad_shape, shape = case
    g = _leaf(rng, grad_shape)
    w = _const(rng, shape)
    try:
        out = ns["unbroadcast"](g, shape)
        if not isinstance(out, minigrad.Tensor) or out.grad_fn is None:
            return {"history": False}
        (gg,) = autograd_grad((out * w).sum(), g, allow_unused=True)
    except Exception as e:  # noqa: BLE001 - the values are judged elsewhere; this asks one question
        return {"history": True, "error": _error(e)}
    return {"history": True, "grad": gg}


def probe_leading(ns: dict, rng: np.random.Generator) -> dict:
    return _probe_unbroadcast(ns, rng, LEADING_CASES + [_random_leading(rng), _random_leading(rng)])


def probe_ones(ns: dict, rng: np.random.Generator) -> dict:
    return _probe_unbroadcast(ns, rng, ONES_CASES + [_random_ones(rng), _random_ones(rng)])


def _judge_unbroadcast(mine: dict, ref: dict, advice: str) -> Verdict:
    for m, r in zip(mine["cases"], ref["cases"]):
        call = f"unbroadcast(grad of shape {r['grad_shape']}, {tuple(r['shape'])})"
        if "error" in m:
            return Verdict(False, f"{call} raised {m['error']}")
        want = r["shape"]
        if m["out_shape"] != want:
            if m["out_shape"] == [n for n in want if n != 1] and len(want) > 0:
                return Verdict(False, f"{call} returned shape {m['out_shape']}, expected {want}: the stretched "
                                      "dimensions disappeared. Sum them with keepdim=True, so that they stay as "
                                      "size-1 dimensions")
            return Verdict(False, f"{call} returned shape {m['out_shape']}, expected {want}. {advice}")
        if not close(m["out"], r["out"]):
            got, want = np.asarray(m["out"], dtype=np.float64), np.asarray(r["out"], dtype=np.float64)
            ratio = np.divide(got, want, out=np.full(got.shape, np.nan), where=np.abs(want) > 1e-9)
            scale = float(np.nanmean(ratio)) if np.isfinite(ratio).any() else 1.0
            uses = round(1 / scale) if scale > 0 else 0
            if uses > 1 and close(got * uses, want):
                return Verdict(False, f"{call} has the right shape, and the values {fmt(m['out'])} are the expected "
                                      f"{fmt(r['out'])} divided by {uses}: you averaged (mean) where the gradients "
                                      "must be added. Each element of the input receives one gradient from every "
                                      "place it was used in, and its gradient is their sum: use .sum(...), not "
                                      ".mean(...)")
            if np.allclose(ratio[np.isfinite(ratio)], scale, rtol=1e-6) and not np.isclose(scale, 1.0):
                return Verdict(False, f"{call} has the right shape, and its values are the expected ones times "
                                      f"{np.nanmean(ratio):.4g}: the axes are right, the scale is not (grad's "
                                      "entries must be added up as they are: no mean, no factor)")
            return Verdict(False, f"{call} has the right shape but the values {fmt(m['out'])}, expected "
                                  f"{fmt(r['out'])}: you summed over the wrong axes. {advice}")
    diff = mine["differentiable"]
    if not diff["history"]:
        return Verdict(False, "unbroadcast(grad, shape) of a grad that requires grad returned a tensor with no "
                              "history (no grad_fn): it went through NumPy (.numpy(), np.sum...) and back. A "
                              "gradient computed that way cannot be differentiated again (gradgradcheck fails, "
                              "and stage 09 needs it): use tensor operations, grad.sum(dim=..., keepdim=True)")
    if "error" in diff:
        return Verdict(False, f"differentiating unbroadcast's result again raised {diff['error']}: use tensor "
                              "operations only (grad.sum(dim=..., keepdim=True)), so that its gradient exists")
    if diff["grad"] is None or not close(diff["grad"], ref["differentiable"]["grad"]):
        return Verdict(False, "the gradient of unbroadcast's result with respect to grad is wrong "
                              "(gradgradcheck's question): use tensor operations only, grad.sum(dim=..., "
                              "keepdim=True)")
    return Verdict(True)


def judge_leading(mine: list, ref: list) -> Verdict:
    return _judge_unbroadcast(mine, ref, "Broadcasting lines shapes up from the right and adds dimensions on the "
                                         "left: sum grad over its first grad.ndim − len(shape) dimensions")


def judge_ones(mine: list, ref: list) -> Verdict:
    return _judge_unbroadcast(mine, ref, "The dimensions of shape line up with the *last* dimensions of grad: "
                                         "remove the leading dimensions first (or offset the indices by "
                                         "grad.ndim − len(shape)), then sum, with keepdim=True, each dimension "
                                         "where shape has 1 and grad has more")


# -- BroadcastAdd and BroadcastMul -------------------------------------------------------
def _random_pair(rng: np.random.Generator) -> tuple:
    """Two shapes that broadcast together: each dimension of the result kept by one or both, or
    stretched from 1, and one of them maybe shorter."""
    out = [int(n) for n in rng.integers(2, 5, int(rng.integers(2, 4)))]
    a, b = [], []
    for n in out:
        kind = int(rng.integers(0, 3))  # 0: both n; 1: a stretched; 2: b stretched
        a.append(1 if kind == 1 else n)
        b.append(1 if kind == 2 else n)
    if a == out and b == out:
        b[0] = 1
    return tuple(a), tuple(b[int(rng.integers(0, len(b))):] or b)


def _probe_binary(ns: dict, rng: np.random.Generator, name: str, cases) -> dict:
    results = []
    for shape_a, shape_b in list(cases) + [_random_pair(rng)]:
        a, b = _leaf(rng, shape_a), _leaf(rng, shape_b)
        out_shape = np.broadcast_shapes(shape_a, shape_b)
        g = _const(rng, out_shape)
        results.append({"a": a, "b": b, "g": g, "shapes": [list(shape_a), list(shape_b)],
                        "out_shape": list(out_shape), **_run_function(ns, name, [a, b], g)})
    return {"cases": results, **_saved_and_twice(ns, rng, name, ((3, 1), (4,)))}


def _saved_and_twice(ns: dict, rng: np.random.Generator, name: str, shapes) -> dict:
    """Whether the Function's backward notices an input changed in place (it does for tensors kept with
    save_for_backward), and whether its gradient can be differentiated again (gradgradcheck)."""
    from minigrad.autograd import gradgradcheck

    apply = _apply(ns, name)
    a, b = _leaf(rng, shapes[0]), _leaf(rng, shapes[1])
    try:
        version = {"a": _version_check(lambda: apply(a, b), [a, b], a)}
        a, b = _leaf(rng, shapes[0]), _leaf(rng, shapes[1])
        version["b"] = _version_check(lambda: apply(a, b), [a, b], b)
    except (NotImplementedError, Finding):
        raise
    except Exception as e:  # noqa: BLE001 - judged by the values already
        version = {"error": _error(e)}
    a, b = _leaf(rng, shapes[0]), _leaf(rng, shapes[1])
    try:
        twice = bool(gradgradcheck(apply, (a, b), raise_exception=False))
    except (NotImplementedError, Finding):
        raise
    except Exception as e:  # noqa: BLE001
        twice = _error(e)
    return {"version": version, "twice": twice}


def _saved_and_twice_problem(name: str, mine: dict, ref: dict) -> Verdict:
    if "error" not in mine["version"] and "error" not in ref["version"]:
        for label in ("a", "b"):
            problem = _version_problem(name, label, mine["version"][label], ref["version"][label])
            if problem:
                return Verdict(False, problem)
    if ref["twice"] is True and mine["twice"] is not True:
        said = f" (it raised {mine['twice']})" if isinstance(mine["twice"], str) else ""
        return Verdict(False, f"gradgradcheck fails for {name}{said}: its backward's gradients cannot be "
                              "differentiated again. Compute them with tensor operations only (no .numpy(), no "
                              "NumPy functions), through unbroadcast")
    return Verdict(True)


ADD_CASES = [((2, 3, 4), (3, 1)), ((5, 1), (1, 4))]
MUL_CASES = [((4, 1, 3), (5, 3)), ((2, 3), (3,))]


def probe_add(ns: dict, rng: np.random.Generator) -> list:
    return _probe_binary(ns, rng, "BroadcastAdd", ADD_CASES)


def probe_mul(ns: dict, rng: np.random.Generator) -> list:
    return _probe_binary(ns, rng, "BroadcastMul", MUL_CASES)


def _judge_binary(mine: dict, ref: dict, name: str, symbol: str) -> Verdict:
    for m, r in zip(mine["cases"], ref["cases"]):
        shape_a, shape_b = r["shapes"]
        where = f"{name}.apply(a, b) with a {shape_a} and b {shape_b}"
        if "error" in m:
            return Verdict(False, f"{where} raised {m['error']}")
        if not close(m["out"], r["out"]):
            return Verdict(False, f"{where} gave {fmt(m['out'])}, expected a {symbol} b = {fmt(r['out'])}")
        if len(m["raw_shapes"]) != 2:
            return Verdict(False, f"{where}: backward returned {len(m['raw_shapes'])} gradient(s); return two, for a and b")
        for label, got_shape, want in zip("ab", m["raw_shapes"], (shape_a, shape_b)):
            if got_shape is None:
                return Verdict(False, f"{where}: backward returned None for {label}, which requires grad")
            if got_shape != want:
                unreduced = got_shape == r["out_shape"]
                return Verdict(False, f"{where}: backward returned a gradient of shape {got_shape} for {label}, "
                                      f"whose shape is {want}" + (
                                          ": that is the output's shape, not reduced. minigrad's engine (like "
                                          "PyTorch's) would quietly sum it back for you, as a safety net, but a "
                                          "backward must return each input's shape: "
                                          f"unbroadcast(..., {label}.shape)" if unreduced else
                                          ": sum it back with unbroadcast(..., "f"{label}.shape)"))
        a, b, g = (np.asarray(r[k], dtype=np.float64) for k in "abg")
        for i, label in enumerate("ab"):
            got, want = m["raw"][i], r["raw"][i]
            if close(got, want):
                continue
            if symbol == "*":
                swapped = _np_sum_to(g * (a if label == "a" else b), (shape_a, shape_b)[i])
                if close(got, swapped):
                    return Verdict(False, f"{where}: the gradient for {label} is {fmt(got)}, expected {fmt(want)}: "
                                          f"you multiplied grad by {label} itself (grad: the gradient backward "
                                          "receives). The derivative of a · b with "
                                          "respect to a is b: grad_a = unbroadcast(grad * b, a.shape), and the "
                                          "other way round for b")
                if close(got, _np_sum_to(g, (shape_a, shape_b)[i])):
                    return Verdict(False, f"{where}: the gradient for {label} is the summed grad alone (grad: the "
                                          "gradient backward receives): multiply "
                                          f"by the other operand before summing")
            return Verdict(False, f"{where}: the gradient for {label} is {fmt(got)}, expected {fmt(want)}")
    return _saved_and_twice_problem(name, mine, ref)


def judge_add(mine: list, ref: list) -> Verdict:
    return _judge_binary(mine, ref, "BroadcastAdd", "+")


def judge_mul(mine: list, ref: list) -> Verdict:
    return _judge_binary(mine, ref, "BroadcastMul", "*")


# -- BatchedMatMul -------------------------------------------------------------------------
SHARED_CASES = [((3, 2, 4), (4, 5)), ((2, 3, 3), (3, 3))]
BATCHED_CASES = [((3, 2, 4), (3, 4, 5)), ((2, 4), (3, 4, 5))]
MATMUL_HINT = ("For C = A @ B with A (n, k), B (k, m), and grad_C the gradient backward receives for C: "
               "grad_A = grad_C @ Bᵀ, shapes (n, m) @ (m, k) = (n, k), and grad_B = Aᵀ @ grad_C, "
               "(k, n) @ (n, m) = (k, m); transpose the last two dimensions with .transpose(-1, -2)")


def _probe_matmul(ns: dict, rng: np.random.Generator, cases) -> dict:
    results = []
    for shape_a, shape_b in cases:
        a, b = _leaf(rng, shape_a), _leaf(rng, shape_b)
        out_shape = np.broadcast_shapes(shape_a[:-2], shape_b[:-2]) + (shape_a[-2], shape_b[-1])
        g = _const(rng, out_shape)
        results.append({"shapes": [list(shape_a), list(shape_b)], **_run_function(ns, "BatchedMatMul", [a, b], g)})
    return {"cases": results, **_saved_and_twice(ns, rng, "BatchedMatMul", ((2, 3, 2), (2, 4)))}


def _sizes(rng: np.random.Generator, count: int) -> list:
    """``count`` distinct sizes from 2 to 6, so that a transposed operand shows in the shapes."""
    return [int(n) for n in rng.choice(np.arange(2, 7), count, replace=False)]


def probe_matmul_shared(ns: dict, rng: np.random.Generator) -> dict:
    batch, n, k, m = _sizes(rng, 4)
    return _probe_matmul(ns, rng, SHARED_CASES + [((batch, n, k), (k, m)), ((2, batch, n, k), (k, m))])


def probe_matmul_batched(ns: dict, rng: np.random.Generator) -> dict:
    batch, n, k, m = _sizes(rng, 4)
    return _probe_matmul(ns, rng, BATCHED_CASES + [((batch, n, k), (batch, k, m)), ((n, k), (batch, k, m))])


def judge_matmul(mine: dict, ref: dict) -> Verdict:
    for m, r in zip(mine["cases"], ref["cases"]):
        shape_a, shape_b = r["shapes"]
        where = f"BatchedMatMul.apply(a, b) with a {shape_a} and b {shape_b}"
        if "error" in m:
            return Verdict(False, f"{where} raised {m['error']}. {MATMUL_HINT}")
        if not close(m["out"], r["out"]):
            return Verdict(False, f"{where} gave {fmt(m['out'])}, expected a @ b = {fmt(r['out'])}")
        for label, got_shape, want in zip("ab", m["raw_shapes"], (shape_a, shape_b)):
            if got_shape is None:
                return Verdict(False, f"{where}: backward returned None for {label}, which requires grad")
            if got_shape != want:
                if got_shape[-2:] == want[-2:]:
                    shared = int(np.prod(got_shape[:-2])) // max(int(np.prod(want[:-2])), 1)
                    return Verdict(False, f"{where}: the gradient for {label} has shape {got_shape}, expected "
                                          f"{want}: {label} was shared by all {shared} matrices of the batch, so "
                                          "its gradient is the sum over the batch dimension. Reduce it with "
                                          f"unbroadcast(..., {label}.shape)")
                return Verdict(False, f"{where}: the gradient for {label} has shape {got_shape}, expected {want}. "
                                      f"{MATMUL_HINT}")
        for label, got, want in zip("ab", m["raw"], r["raw"]):
            if not close(got, want):
                return Verdict(False, f"{where}: the gradient for {label} is {fmt(got)}, expected {fmt(want)}. "
                                      f"{MATMUL_HINT}")
    return _saved_and_twice_problem("BatchedMatMul", mine, ref)


# -- all three together --------------------------------------------------------------------
def probe_composite(ns: dict, rng: np.random.Generator) -> dict:
    add, mul, matmul = (_apply(ns, n) for n in ("BroadcastAdd", "BroadcastMul", "BatchedMatMul"))
    x, w, bias, scale = _leaf(rng, (2, 3, 4)), _leaf(rng, (4, 5)), _leaf(rng, (5,)), _leaf(rng, (2, 1, 1))
    g = _const(rng, (2, 3, 5))
    out = mul(add(matmul(x, w), bias).tanh(), scale)
    grads = autograd_grad(out, (x, w, bias, scale), g, allow_unused=True)
    return {"out": out, "grads": dict(zip(("x", "w", "bias", "scale"), grads))}


def judge_composite(mine: dict, ref: dict) -> Verdict:
    if not close(mine["out"], ref["out"]):
        return Verdict(False, f"tanh(x @ w + bias) * scale with your Functions gave {fmt(mine['out'])}, expected "
                              f"{fmt(ref['out'])}")
    for name, got in mine["grads"].items():
        want = ref["grads"][name]
        if got is None or not close(got, want):
            return Verdict(False, f"in tanh(x @ w + bias) * scale, with x (2, 3, 4), w (4, 5), bias (5,) and "
                                  f"scale (2, 1, 1), the gradient for {name} is {fmt(got)}, expected {fmt(want)}")
    return Verdict(True)


# -- the reference -------------------------------------------------------------------------
def unbroadcast(grad, shape):
    return sum_to(grad, tuple(shape))


class BroadcastAdd(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.shapes = a.shape, b.shape
        return a + b

    @staticmethod
    def backward(ctx, grad):
        shape_a, shape_b = ctx.shapes
        return unbroadcast(grad, shape_a), unbroadcast(grad, shape_b)


class BroadcastMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return unbroadcast(grad * b, a.shape), unbroadcast(grad * a, b.shape)


class BatchedMatMul(Function):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a @ b

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        return (unbroadcast(grad @ b.transpose(-1, -2), a.shape),
                unbroadcast(a.transpose(-1, -2) @ grad, b.shape))


def reference() -> dict:
    return {"unbroadcast": unbroadcast, "BroadcastAdd": BroadcastAdd, "BroadcastMul": BroadcastMul,
            "BatchedMatMul": BatchedMatMul}


UNBROADCAST = ("unbroadcast_leading", "unbroadcast_ones")

DIAGNOSES = {  # the phrase the feedback says for each known mistake (tests/mutants/s06_broadcasting.py)
    "unbroadcast_without_keepdim": "Sum them with keepdim=True",
    "add_returns_unreduced_gradients": "that is the output's shape, not reduced",
    "mul_multiplies_by_the_same_operand": "you multiplied grad by a itself",
    "matmul_does_not_sum_over_the_batch": "shared by all 3 matrices of the batch",
    "unbroadcast_in_numpy": "it went through NumPy",
    "unbroadcast_averages_the_stretched_dimensions": "divided by 4: you averaged (mean)",
    "unbroadcast_averages_the_leading_dimensions": "divided by 2: you averaged (mean)",
    "mul_keeps_its_inputs_as_ctx_attributes": "BroadcastMul's backward did not notice",
    "matmul_keeps_its_inputs_as_ctx_attributes": "BatchedMatMul's backward did not notice",
    "mul_gradients_through_numpy": "gradgradcheck fails for BroadcastMul",
    "matmul_returns_a_tuple": "returned a tuple of 1 (Tensor), where one tensor was expected",
}

STAGE = Stage(
    number="06",
    name="broadcasting",
    title="Gradients through broadcasting",
    parts={
        "unbroadcast": ("unbroadcast",),
        "add_mul": ("BroadcastAdd", "BroadcastMul"),
        "batched_matmul": ("BatchedMatMul",),
    },
    checks=(
        Check("unbroadcast_leading", 1, "unbroadcast sums over added leading dimensions", probe_leading,
              judge_leading, part="unbroadcast"),
        Check("unbroadcast_ones", 2, "unbroadcast sums over stretched size-1 dimensions, keeping them",
              probe_ones, judge_ones, part="unbroadcast"),
        Check("add_grads", 1, "BroadcastAdd returns gradients of its inputs' shapes", probe_add, judge_add,
              needs=UNBROADCAST, part="add_mul"),
        Check("mul_grads", 2, "BroadcastMul: each input's gradient uses the other input", probe_mul, judge_mul,
              needs=UNBROADCAST, part="add_mul"),
        Check("matmul_shared", 2, "(B, n, k) @ (k, m): the shared matrix's gradient sums over the batch",
              probe_matmul_shared, judge_matmul, needs=UNBROADCAST, part="batched_matmul"),
        Check("matmul_batched", 1, "(B, n, k) @ (B, k, m) and (n, k) @ (B, k, m)", probe_matmul_batched,
              judge_matmul, needs=UNBROADCAST, part="batched_matmul"),
        Check("composite_grads", 1, "tanh(x @ w + bias) * scale with your three Functions", probe_composite,
              judge_composite, needs=("add_grads", "mul_grads", "matmul_shared"), part="batched_matmul"),
    ),
    reference=reference,
)
