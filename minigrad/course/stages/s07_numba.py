"""Stage 07: fused kernels with Numba, wrapped in Functions.

The learner writes ``sigmoid_forward(x)`` and ``sigmoid_backward(y, grad)`` (one loop
each), the fused ``cross_entropy_forward(logits, targets) -> (loss, log_probs)`` and
``cross_entropy_backward(log_probs, targets, grad_scalar)`` over (N, C) logits, and the
Functions ``Sigmoid`` and ``CrossEntropy`` around them (backward ``@once_differentiable``).
The names and signatures are those of ``minigrad.kernels``, whose NumPy references in
``minigrad/kernels/reference.py`` are this stage's reference.

Kernels are probed in float32 and float64, on odd shapes and non-contiguous views, and
watched for writing into their inputs. A data race in a ``prange`` loop is looked for in
two ways, because a race only shows when two threads really run at once (the grader's
sandbox gives Numba one thread, and a busy laptop may not overlap them either):

- statically, in Numba's own IR of every ``parallel=True`` function the wrapper reaches:
  a ``prange`` loop that writes an array element whose position does not depend on the
  loop variable (``acc[0] += ...``) is a race; a scalar ``total += ...`` is a reduction,
  which Numba privatises per thread;
- dynamically: the forward runs three times on 200,000 rows and must give the
  reference loss each time.
"""
from __future__ import annotations

import contextlib
import functools
import inspect

import numpy as np

import minigrad
from minigrad.autograd import Function, once_differentiable
from minigrad.autograd import grad as autograd_grad
from minigrad.course.checks import Check, Stage, Verdict, clip, close, fmt
from minigrad.kernels import reference as kref

DTYPES = (np.float64, np.float32)


@contextlib.contextmanager
def _one_thread():
    """Numba's parallel loops on one thread, for the checks of values: a race is ce_no_race's
    business alone, and shows up in the others only by chance."""
    import numba

    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(threads)


def _single_threaded(probe):
    @functools.wraps(probe)
    def wrapper(ns, rng):
        with _one_thread():
            return probe(ns, rng)

    return wrapper


# -- inputs ---------------------------------------------------------------------------------
def _cases(rng: np.random.Generator, dtype, scale: float = 3.0) -> list[tuple[str, np.ndarray]]:
    """Arrays of ``dtype``: odd shapes, two non-contiguous views, and large magnitudes."""
    def draw(*shape):
        return (rng.standard_normal(shape) * scale).astype(dtype)

    big = draw(8)
    big[::2] = dtype(40.0)
    big[1::2] = dtype(-800.0)
    return [
        ("shape (7,)", draw(7)),
        ("shape (3, 5)", draw(3, 5)),
        ("shape (2, 3, 5)", draw(2, 3, 5)),
        ("the non-contiguous view a[:, ::3] of a (6, 10) array", draw(6, 10)[:, ::3]),
        ("the transpose of a (5, 4) array", draw(5, 4).T),
        ("values of 40 and -800", big),
    ]


def _logit_cases(rng: np.random.Generator, dtype) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(description, logits (N, C), targets (N,)) with odd N and C, two of them non-contiguous."""
    out = []
    for label, logits in (("logits of shape (7, 3)", rng.standard_normal((7, 3))),
                          ("logits of shape (1, 10)", rng.standard_normal((1, 10))),
                          ("the non-contiguous view a[:, ::2] of (13, 10) logits", rng.standard_normal((13, 10))),
                          ("transposed (5, 9) logits", rng.standard_normal((9, 5)))):
        logits = (logits * 3).astype(dtype)
        if "::2" in label:
            logits = logits[:, ::2]
        elif "transposed" in label:
            logits = logits.T
        out.append((label, logits, rng.integers(0, logits.shape[1], logits.shape[0])))
    return out


def _with_layout(values: np.ndarray, like: np.ndarray) -> np.ndarray:
    """``values`` in an array laid out like ``like``: C-contiguous, transposed, or a strided view."""
    if like.flags.c_contiguous:
        return np.ascontiguousarray(values)
    if like.flags.f_contiguous:
        return np.asfortranarray(values)
    wide = np.zeros(values.shape[:-1] + (2 * values.shape[-1],), values.dtype)
    wide[..., ::2] = values
    return wide[..., ::2]


def _call(fn, *arrays) -> tuple:
    """``fn(*arrays)`` on copies kept for comparison: (result, whether any input changed)."""
    before = [np.array(a, copy=True) for a in arrays]
    result = fn(*arrays)
    changed = [i for i, (a, b) in enumerate(zip(arrays, before)) if not np.array_equal(a, b, equal_nan=True)]
    return result, changed


def _array_facts(out) -> dict:
    """What a judge needs of a kernel's result: its values, shape and dtype."""
    if hasattr(out, "_data"):  # a minigrad Tensor
        out = out._data
    if not isinstance(out, np.ndarray):
        return {"type": type(out).__name__, "values": None, "shape": None, "dtype": None}
    return {"type": "ndarray", "values": out, "shape": list(out.shape), "dtype": str(out.dtype)}


def _result_problem(kernel: str, case: str, mine: dict, ref: dict, inputs: tuple[str, ...], what: str) -> str | None:
    """Feedback for the first difference between a kernel's result and the reference's, or None."""
    where = f"on {case} ({ref['dtype']})"
    if mine["type"] != "ndarray":
        return f"{kernel} returned a {mine['type']} {where}: return a NumPy array"
    if mine["changed"]:
        name = inputs[mine["changed"][0]]
        return (f"{kernel} changed its input `{name}` {where}: a kernel must never write into its inputs. "
                f"The engine may pass the same {name} array to several nodes, or backward may run twice "
                "(retain_graph); allocate the result with np.empty_like and write there")
    if mine["shape"] != ref["shape"]:
        return f"{kernel} returned shape {tuple(mine['shape'])} {where}, expected {tuple(ref['shape'])}"
    if mine["dtype"] != ref["dtype"]:
        return (f"{kernel} returned {mine['dtype']} {where}, expected {ref['dtype']}: a float32 input must give a "
                "float32 result (half the memory, and what the rest of the graph expects). Allocate the output "
                "with np.empty_like(x), not np.empty(x.shape), whose default dtype is float64")
    if not close(mine["values"], ref["values"], rtol=1e-4 if ref["dtype"] == "float32" else 1e-7):
        hint = ""
        if "contiguous" in case or "transpose" in case:
            hint = (": the earlier, contiguous cases passed, so look at the layout. reshape(-1) of a non-contiguous "
                    "array is a copy, and a kernel writing into a copy never reaches out; np.empty_like of a "
                    "transposed array is transposed too. Make the inputs contiguous first (np.ascontiguousarray)")
        return f"{kernel} {where} gave {fmt(mine['values'])}, expected {what} = {fmt(ref['values'])}{hint}"
    return None


# -- sigmoid ----------------------------------------------------------------------------------
NOT_COMPILED = ("this function is not compiled: add @numba.njit above the kernel it calls (the loop over flat "
                "arrays), so that Numba compiles it to machine code. A plain Python loop over a million elements "
                "runs about a hundred times slower than NumPy")


@_single_threaded
def probe_sigmoid_forward(ns: dict, rng: np.random.Generator) -> list:
    results = []
    for dtype in DTYPES:
        for case, x in _cases(rng, dtype):
            try:
                out, changed = _call(ns["sigmoid_forward"], x)
            except OverflowError:  # Python's math.exp(800): the kernel is plain Python, not compiled
                results.append({"case": case, "overflow": True,
                                "compiled": bool(_dispatchers_reached(ns["sigmoid_forward"]))})
                continue
            results.append({"case": case, **_array_facts(out), "changed": changed})
    return results


def judge_sigmoid_forward(mine: list, ref: list) -> Verdict:
    for m, r in zip(mine, ref):
        if m.get("overflow"):
            if not m["compiled"]:
                return Verdict(False, f"sigmoid_forward raised OverflowError on {r['case']} ({r['dtype']}): "
                                      f"{NOT_COMPILED}. (Python's math.exp raises OverflowError above exp(709); "
                                      "compiled code gives inf, as NumPy does, and 1 / (1 + inf) = 0 is the "
                                      "right answer.)")
            return Verdict(False, f"sigmoid_forward raised OverflowError on {r['case']} ({r['dtype']}): "
                                  "exp(-x) overflows for x = -800; in compiled code it is inf and 1 / (1 + inf) = 0")
        problem = _result_problem("sigmoid_forward", r["case"], m, r, ("x",), "1 / (1 + exp(-x))")
        if problem:
            return Verdict(False, problem)
    return Verdict(True)


@_single_threaded
def probe_sigmoid_backward(ns: dict, rng: np.random.Generator) -> list:
    results = []
    for dtype in DTYPES:
        for case, x in _cases(rng, dtype, scale=2.0):
            y = _with_layout(kref.sigmoid_forward(x), x)  # the saved output, laid out like x
            grad = _with_layout(rng.standard_normal(x.shape).astype(dtype), x)
            out, changed = _call(ns["sigmoid_backward"], y, grad)
            results.append({"case": case, **_array_facts(out), "changed": changed})
    return results


def judge_sigmoid_backward(mine: list, ref: list) -> Verdict:
    for m, r in zip(mine, ref):
        problem = _result_problem("sigmoid_backward", r["case"], m, r, ("y", "grad"), "grad * y * (1 - y)")
        if problem:
            return Verdict(False, problem)
    return Verdict(True)


# -- compiled, and fast -----------------------------------------------------------------------
def _compiled_facts(ns: dict, calls: dict) -> dict:
    """For each wrapper: the Numba kernels it reaches, after calling it on float32 and float64 inputs."""
    facts = {}
    for name, make_args in calls.items():
        for dtype in DTYPES:
            ns[name](*make_args(dtype))
        facts[name] = [{"kernel": d.py_func.__name__, "signatures": [str(sig) for sig in d.signatures],
                        "object_mode": any(getattr(c, "objectmode", False) for c in d.overloads.values())
                        or bool(d.targetoptions.get("forceobj"))}
                       for d in _dispatchers_reached(ns[name])]
    return facts


def _judge_compiled(mine: dict) -> Verdict:
    for name, kernels in mine.items():
        if not kernels:
            return Verdict(False, f"{name}: {NOT_COMPILED}")
        if all(k["object_mode"] for k in kernels):
            return Verdict(False, f"{name}: its kernel {kernels[0]['kernel']} runs in Numba's object mode, which is "
                                  "as slow as Python: use @numba.njit (nopython mode) and only what Numba compiles "
                                  "(loops, scalars, math.exp, arrays)")
        for dtype in ("float32", "float64"):
            if not any(dtype in sig for k in kernels for sig in k["signatures"]):
                return Verdict(False, f"{name} called on {dtype} arrays did not run a kernel compiled for {dtype} "
                                      f"(compiled: {', '.join(s for k in kernels for s in k['signatures']) or 'none'}): "
                                      "pass the arrays themselves to the kernel, not converted copies")
    return Verdict(True)


def probe_sigmoid_compiled(ns: dict, rng: np.random.Generator) -> dict:
    x = rng.standard_normal(9)  # small values: even a plain Python loop cannot overflow here
    return _compiled_facts(ns, {"sigmoid_forward": lambda dtype: (x.astype(dtype),),
                                "sigmoid_backward": lambda dtype: (kref.sigmoid_forward(x.astype(dtype)),
                                                                   x.astype(dtype))})


def judge_sigmoid_compiled(mine: dict, ref: dict) -> Verdict:
    return _judge_compiled(mine)


def probe_ce_compiled(ns: dict, rng: np.random.Generator) -> dict:
    logits, targets = rng.standard_normal((5, 3)), rng.integers(0, 3, 5)
    return _compiled_facts(ns, {
        "cross_entropy_forward": lambda dtype: (logits.astype(dtype), targets),
        "cross_entropy_backward": lambda dtype: (kref.log_softmax_forward(logits.astype(dtype), axis=1), targets, 1.0)})


def judge_ce_compiled(mine: dict, ref: dict) -> Verdict:
    return _judge_compiled(mine)


SPEED_SIZE = 1_000_000  # float64 elements: 8 MB per array, far beyond the caches, so a run takes milliseconds
SPEED_PAIRS = 21
SPEED_TOLERANCE = 0.8  # "at least as fast as NumPy", less 20% for a busy machine (the fused loop is ~2x faster)


def probe_sigmoid_speed(ns: dict, rng: np.random.Generator) -> dict:
    """sigmoid_backward against NumPy's reference, timed in interleaved pairs on the same arrays."""
    import time

    if ns["sigmoid_backward"] is kref.sigmoid_backward:  # the reference: NumPy against itself
        return {"ratio": 1.0, "mine_ms": 0.0, "numpy_ms": 0.0}
    y = kref.sigmoid_forward(rng.standard_normal(SPEED_SIZE))
    grad = rng.standard_normal(SPEED_SIZE)
    mine, numpy_ref = ns["sigmoid_backward"], kref.sigmoid_backward
    for fn in (mine, numpy_ref, mine, numpy_ref):  # compiled, and memory warmed, before timing
        fn(y, grad)
    ratios, mine_times, numpy_times = [], [], []
    for i in range(SPEED_PAIRS):
        order = (mine, numpy_ref) if i % 2 == 0 else (numpy_ref, mine)  # neither always goes first
        seconds = {}
        for fn in order:
            start = time.perf_counter()
            fn(y, grad)
            seconds[fn is mine] = time.perf_counter() - start
        mine_times.append(seconds[True])
        numpy_times.append(seconds[False])
        ratios.append(seconds[False] / max(seconds[True], 1e-9))
    return {"ratio": float(np.median(ratios)), "mine_ms": 1e3 * float(np.median(mine_times)),
            "numpy_ms": 1e3 * float(np.median(numpy_times))}


def judge_sigmoid_speed(mine: dict, ref: dict) -> Verdict:
    if mine["ratio"] >= SPEED_TOLERANCE:
        return Verdict(True)
    return Verdict(False, f"sigmoid_backward on {SPEED_SIZE:,} float64 elements took {mine['mine_ms']:.2f} ms, "
                          f"NumPy's reference {mine['numpy_ms']:.2f} ms (median of {SPEED_PAIRS} interleaved pairs: "
                          f"NumPy's time / yours = {mine['ratio']:.2f}, and at least {SPEED_TOLERANCE:g} passes). "
                          "A fused loop reads y and grad once and writes out once, where NumPy makes seven passes "
                          "over memory, so it should win by about 2x. Look for work per element that NumPy does "
                          "not do (exp, log, a division, a Python object), an allocation inside the kernel, or a "
                          "copy of the inputs that is not needed (np.ascontiguousarray copies only views)")


# -- cross-entropy ----------------------------------------------------------------------------
def _ce_result(ns: dict, logits: np.ndarray, targets: np.ndarray) -> dict:
    result, changed = _call(ns["cross_entropy_forward"], logits, targets)
    if not (isinstance(result, tuple) and len(result) == 2):
        return {"pair": False, "type": type(result).__name__}
    loss, log_probs = result
    loss = loss.item() if isinstance(loss, np.ndarray) and loss.size == 1 else loss
    if not isinstance(loss, (float, np.floating, int)):
        return {"pair": True, "loss": None, "loss_type": type(loss).__name__, **_array_facts(log_probs),
                "changed": changed}
    return {"pair": True, "loss": float(loss), **_array_facts(log_probs), "changed": changed}


@_single_threaded
def probe_ce_forward(ns: dict, rng: np.random.Generator) -> list:
    results = []
    for dtype in DTYPES:
        for case, logits, targets in _logit_cases(rng, dtype):
            results.append({"case": case, "n": logits.shape[0], **_ce_result(ns, logits, targets)})
    return results


def judge_ce_forward(mine: list, ref: list) -> Verdict:
    for m, r in zip(mine, ref):
        where = f"on {r['case']} ({r['dtype']})"
        if not m["pair"]:
            return Verdict(False, f"cross_entropy_forward returned a {m['type']} {where}: return the pair "
                                  "(loss, log_probs), a float and the (N, C) array of log-probabilities")
        if m["loss"] is None:
            return Verdict(False, f"cross_entropy_forward returned a loss of type {m['loss_type']} {where}: "
                                  "return it as a Python float")
        problem = _result_problem("cross_entropy_forward", r["case"], m, r, ("logits", "targets"),
                                  "log_softmax(logits)")
        if problem:
            return Verdict(False, problem.replace(" gave ", " gave log_probs "))
        tol = 1e-4 if r["dtype"] == "float32" else 1e-7
        if not close(m["loss"], r["loss"], rtol=tol):
            n = r["n"]
            if close(m["loss"], r["loss"] * n, rtol=tol):
                return Verdict(False, f"the loss {where} is {fmt(m['loss'])}, {n} times the expected "
                                      f"{fmt(r['loss'])}: the loss is the mean over the N = {n} rows, divide the sum by N")
            return Verdict(False, f"the loss {where} is {fmt(m['loss'])}, expected "
                                  f"-mean(log_probs[i, targets[i]]) = {fmt(r['loss'])}")
    return Verdict(True)


PEAKS = "one logit 1000 above the others in each row, in every column once"


@_single_threaded
def probe_ce_stable(ns: dict, rng: np.random.Generator) -> list:
    results = []
    for dtype in DTYPES:
        near = 1000 + rng.standard_normal((3, 4))  # every logit near 1000: exp overflows
        spread = rng.standard_normal((3, 4))
        spread[:, 1] = -2000  # a class 2000 below the others: its probability rounds to 0
        targets = np.array([0, 2, 3])
        # Each row's max, 1000 or more above the rest, in a column of its own; the one in column 0, on some row
        # after the first, 3000 above: a loop that reads one column too many takes it as the previous row's max.
        columns = np.roll(np.arange(4), int(rng.integers(1, 4)))
        peaks = rng.standard_normal((4, 4))
        peaks[np.arange(4), columns] += np.where(columns == 0, 3000.0, 1000.0)
        for case, logits, t in (("logits near 1000", near, targets), ("a logit 2000 below the others", spread,
                                                                       np.array([1, 1, 0])),
                                (PEAKS, peaks, np.array([0, 1, 2, 3]))):
            results.append({"case": case, **_ce_result(ns, logits.astype(dtype), t)})
    return results


def judge_ce_stable(mine: list, ref: list) -> Verdict:
    for m, r in zip(mine, ref):
        where = f"with {r['case']} ({r['dtype']})"
        if not m["pair"] or m["loss"] is None:
            return Verdict(False, f"cross_entropy_forward {where} did not return (loss, log_probs)")
        finite = m["values"] is not None and bool(np.all(np.isfinite(np.asarray(m["values"], dtype=np.float64))))
        if r["case"] == PEAKS and (not np.isfinite(m["loss"]) or not finite):
            why = ("every exp(x − m) rounds to 0, so m is larger than anything in the row: it was read from outside "
                   "the row (a column index past C − 1 reads the next row)" if m["loss"] == -np.inf else
                   "exp(x − m) overflows in the rows whose maximum you missed: m is too small (a column missed)")
            return Verdict(False, f"{where} your loss is {fmt(m['loss'])}, expected {fmt(r['loss'])}: the m you "
                                  f"subtract is not each row's maximum, and {why}. The loop that finds m must compare "
                                  "the columns 0 to C − 1 of its row, and no others")
        if "1000" in r["case"] and (not np.isfinite(m["loss"]) or not finite):
            return Verdict(False, f"{where} your loss is {fmt(m['loss'])}, expected {fmt(r['loss'])}: exp(1000) "
                                  "overflows to inf (float64 overflows above exp(709), float32 above exp(88)), and "
                                  "inf/inf or inf - inf is nan. Subtract each row's max m first: log_softmax(x) = "
                                  "(x - m) - log(sum(exp(x - m))) for any m, and with the max every exp is <= 1")
        if not finite or not np.isfinite(m["loss"]):
            return Verdict(False, f"{where} your log_probs contain {fmt(m['values'])} and the loss is "
                                  f"{fmt(m['loss'])}, expected {fmt(r['loss'])}: a probability of exp(-2000) rounds "
                                  "to 0, and log(0) = -inf. Never take the log of a probability: compute "
                                  "(x - m) - log(s) directly (m: the row's max, s: sum(exp(x - m))), which is -2000 - ..., "
                                  "a perfectly good number")
        tol = 1e-4 if r["dtype"] == "float32" else 1e-7
        if not close(m["loss"], r["loss"], rtol=tol) or not close(m["values"], r["values"], rtol=tol):
            return Verdict(False, f"{where} your loss is {fmt(m['loss'])}, expected {fmt(r['loss'])}")
    return Verdict(True)


@_single_threaded
def probe_ce_backward(ns: dict, rng: np.random.Generator) -> list:
    results = []
    for dtype in DTYPES:
        for i, (case, logits, targets) in enumerate(_logit_cases(rng, dtype)):
            log_probs = _with_layout(kref.log_softmax_forward(logits, axis=1), logits)
            scalar = (0.5, 1.0, 2.0, 0.25)[i]
            out, changed = _call(lambda lp, t: ns["cross_entropy_backward"](lp, t, scalar), log_probs, targets)
            results.append({"case": f"{case}, grad_scalar = {scalar:g}", "n": logits.shape[0], "scalar": scalar,
                            **_array_facts(out), "changed": changed})
    return results


def judge_ce_backward(mine: list, ref: list) -> Verdict:
    for m, r in zip(mine, ref):
        problem = _result_problem("cross_entropy_backward", r["case"], m, r, ("log_probs", "targets"),
                                  "(softmax - onehot(targets)) * grad_scalar / N")
        if problem is None:
            continue
        if m["values"] is not None and m["shape"] == r["shape"] and not m["changed"] and m["dtype"] == r["dtype"]:
            got, want, n, s = np.asarray(m["values"]), np.asarray(r["values"]), r["n"], r["scalar"]
            if n > 1 and close(got, want * n):
                return Verdict(False, f"on {r['case']} your gradient is N = {n} times too large: the loss is the "
                                      "mean over the N rows, so each row's gradient is divided by N "
                                      f"(got {fmt(m['values'])}, expected {fmt(r['values'])})")
            if s != 1 and close(got, want / s):
                return Verdict(False, f"on {r['case']} your gradient ignores grad_scalar: it is the gradient of "
                                      f"the loss itself, but backward must return grad_scalar = {s:g} times it "
                                      "(the chain rule: the loss may be scaled or summed with others)")
            if close(got, -want):
                return Verdict(False, f"on {r['case']} your gradient has the wrong sign: it is softmax - onehot, "
                                      "not onehot - softmax")
        return Verdict(False, problem)
    return Verdict(True)


# -- data races -------------------------------------------------------------------------------
def _code_names(code) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= _code_names(const)
    return names


def _dispatchers_reached(*functions) -> list:
    """The Numba functions that ``functions`` are or call, found through the global names they use."""
    from numba.core.dispatcher import Dispatcher

    found, seen, stack = [], set(), list(functions)
    while stack and len(seen) < 200:
        f = stack.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if isinstance(f, Dispatcher):
            found.append(f)
            f = f.py_func
        if not inspect.isfunction(f):
            continue
        for name in _code_names(f.__code__):
            value = f.__globals__.get(name)
            if isinstance(value, Dispatcher) or inspect.isfunction(value):
                stack.append(value)
    return found


def _races(dispatcher) -> list[dict]:
    """Writes, inside a prange loop, to an array element that does not depend on the loop variable.

    Works on Numba's untyped IR (``run_frontend``: bytecode only, no source or compilation).
    An array allocated inside the loop body is private to the iteration and not reported;
    an index computed from ``numba.get_thread_id()`` is private to a thread.
    """
    import numba
    from numba.core import ir
    from numba.core.analysis import compute_cfg_from_blocks
    from numba.core.compiler import run_frontend

    blocks = run_frontend(dispatcher.py_func).blocks
    defs: dict[str, list] = {}
    for block in blocks.values():
        for stmt in block.body:
            if isinstance(stmt, ir.Assign):
                defs.setdefault(stmt.target.name, []).append(stmt.value)

    def origin(var, depth=0) -> list:
        """The non-copy values a variable may hold."""
        values = []
        for value in defs.get(var.name, []):
            if isinstance(value, ir.Var) and depth < 20:
                values += origin(value, depth + 1)
            else:
                values.append(value)
        return values

    def names_global(var, obj, attr) -> bool:
        for value in origin(var):
            if isinstance(value, (ir.Global, ir.FreeVar)) and value.value is obj:
                return True
            if isinstance(value, ir.Expr) and value.op == "getattr" and value.attr == attr:
                return True
        return False

    def from_prange(iterator) -> bool:
        for value in origin(iterator):
            if isinstance(value, ir.Expr) and value.op == "getiter":
                for call in origin(value.value):
                    if isinstance(call, ir.Expr) and call.op == "call" and names_global(call.func, numba.prange,
                                                                                      "prange"):
                        return True
        return False

    def uses(value) -> set[str]:
        if isinstance(value, ir.Var):
            return {value.name}
        return {v.name for v in getattr(value, "list_vars", lambda: [])()}

    findings = []
    for loop in compute_cfg_from_blocks(blocks).loops().values():
        labels = set(loop.body) | {loop.header}
        header = blocks[loop.header].body
        nexts = [s for s in header if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                 and s.value.op == "iternext"]
        if not nexts or not from_prange(nexts[0].value.value):
            continue
        stmts = [s for label in sorted(labels) for s in blocks[label].body]
        dependent = {s.target.name for s in header if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                     and s.value.op == "pair_first"}
        for s in stmts:  # an index from get_thread_id() is private to the thread
            if (isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr) and s.value.op == "call"
                    and names_global(s.value.func, getattr(numba, "get_thread_id", None), "get_thread_id")):
                dependent.add(s.target.name)
        changed = True
        while changed:
            changed = False
            for s in stmts:
                if isinstance(s, ir.Assign) and s.target.name not in dependent and uses(s.value) & dependent:
                    dependent.add(s.target.name)
                    changed = True
        private = {s.target.name for s in stmts if isinstance(s, ir.Assign)
                   and isinstance(s.value, ir.Expr) and s.value.op == "call"}
        copies = {s.target.name for s in header if isinstance(s, ir.Assign) and isinstance(s.value, ir.Expr)
                  and s.value.op == "pair_first"}
        for _ in range(3):  # the loop variable: a plain copy of the iterator's value (through phi copies)
            copies |= {s.target.name for s in stmts if isinstance(s, ir.Assign) and isinstance(s.value, ir.Var)
                       and s.value.name in copies}
        loop_vars = sorted(n for n in copies if not n.startswith("$"))
        for s in stmts:
            if not isinstance(s, (ir.SetItem, ir.StaticSetItem)):
                continue
            index = s.index_var if isinstance(s, ir.StaticSetItem) else s.index
            index_names = {index.name} if isinstance(index, ir.Var) else set()
            if s.target.name in dependent or s.target.name in private or index_names & dependent:
                continue
            findings.append({"function": dispatcher.py_func.__name__, "array": s.target.name,
                             "line": s.loc.line, "loop_var": loop_vars[0] if loop_vars else "i"})
    return findings


def probe_ce_no_race(ns: dict, rng: np.random.Generator) -> dict:
    import numba

    logits = rng.standard_normal((200_000, 10))
    targets = rng.integers(0, 10, 200_000)
    losses = []
    for _ in range(3):
        loss, _ = ns["cross_entropy_forward"](logits, targets)
        losses.append(float(loss))
    parallel = [d for d in _dispatchers_reached(ns["cross_entropy_forward"], ns["cross_entropy_backward"])
                if d.targetoptions.get("parallel")]
    findings, analysis_error = [], None
    for dispatcher in parallel:
        try:
            findings += _races(dispatcher)
        except Exception as e:  # noqa: BLE001 - Numba internals: fall back on the runs alone
            analysis_error = clip(f"{type(e).__name__}: {e}", 200)
    return {"losses": losses, "findings": findings, "threads": numba.get_num_threads(),
            "parallel": [d.py_func.__name__ for d in parallel], "analysis_error": analysis_error}


def judge_ce_no_race(mine: dict, ref: dict) -> Verdict:
    if mine["findings"]:
        f = mine["findings"][0]
        return Verdict(False, f"a data race: in {f['function']}, line {f['line']} writes {f['array']}[...] inside a "
                              f"prange loop, at a position that does not depend on the loop variable "
                              f"{f['loop_var']}. Several threads then read, add and write the same element at once, "
                              "and updates are lost (which ones depends on timing, so the result changes from "
                              "run to run). Accumulate into a scalar instead (`total += ...`): Numba recognises "
                              "a scalar reduction in prange and gives each thread its own copy. Or write one "
                              "result per row (losses[r] = ...) and sum after the loop")
    want = ref["losses"][0]
    for i, loss in enumerate(mine["losses"]):
        if not close(loss, want, rtol=1e-10, atol=0):
            runs = ", ".join(f"{v:.12g}" for v in mine["losses"])
            return Verdict(False, f"on 200,000 rows of float64 logits your three runs gave losses {runs}; expected "
                                  f"{want:.12g} every time. Results that change between runs, or that lose part of "
                                  "the sum, are the mark of a data race: a prange loop where threads update the same "
                                  "memory. Keep each iteration's writes to its own row, and reduce into a scalar")
    return Verdict(True)


# -- Functions --------------------------------------------------------------------------------
def _leaf(values) -> minigrad.Tensor:
    return minigrad.tensor(np.asarray(values, dtype=np.float64), dtype=minigrad.float64, requires_grad=True)


def _numeric(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """d f / d x by central differences, f a scalar function of an array."""
    grad = np.zeros_like(x)
    for k in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[k] += eps
        minus.flat[k] -= eps
        grad.flat[k] = (f(plus) - f(minus)) / (2 * eps)
    return grad


@_single_threaded
def probe_sigmoid_function(ns: dict, rng: np.random.Generator) -> dict:
    apply = ns["Sigmoid"].apply
    x0, g = rng.standard_normal((3, 4)) * 2, rng.standard_normal((3, 4))
    x = _leaf(x0)
    y = apply(x)
    (y * minigrad.tensor(g)).sum().backward()

    def f(values):
        with minigrad.no_grad():
            return float((apply(minigrad.tensor(values)) * minigrad.tensor(g)).sum().item())

    return {"y": y.detach(), "grad": x.grad, "numeric": _numeric(f, x0), "x": x0, "g": g}


def judge_sigmoid_function(mine: dict, ref: dict) -> Verdict:
    if not close(mine["y"], ref["y"]):
        return Verdict(False, f"Sigmoid.apply(x) gave {fmt(mine['y'])}, expected {fmt(ref['y'])}")
    if mine["grad"] is None:
        return Verdict(False, "after (Sigmoid.apply(x) * g).sum().backward() (g: fixed random weights), x.grad is None: "
                              "backward must return "
                              "a tensor, the gradient for x")
    if not close(mine["grad"], ref["numeric"], rtol=1e-5):
        return Verdict(False, f"after (Sigmoid.apply(x) * g).sum().backward() (g: fixed random weights), "
                              f"x.grad = {fmt(mine['grad'])}, but "
                              f"finite differences give {fmt(ref['numeric'])}: backward must return "
                              "sigmoid_backward(y, grad_output), with y the output saved in forward")
    return Verdict(True)


@_single_threaded
def probe_ce_function(ns: dict, rng: np.random.Generator) -> dict:
    apply = ns["CrossEntropy"].apply
    z0 = rng.standard_normal((5, 4)) * 2
    targets = minigrad.tensor(rng.integers(0, 4, 5))
    z = _leaf(z0)
    loss = apply(z, targets)
    (loss * 2.5).backward()

    def f(values):
        with minigrad.no_grad():
            return 2.5 * float(apply(minigrad.tensor(values), targets).item())

    return {"loss": loss.detach(), "shape": list(loss.shape), "grad": z.grad, "numeric": _numeric(f, z0)}


def judge_ce_function(mine: dict, ref: dict) -> Verdict:
    if mine["shape"] != []:
        return Verdict(False, f"CrossEntropy.apply(logits, targets) has shape {tuple(mine['shape'])}: the loss is "
                              "one number, a 0-d tensor (minigrad.tensor(loss))")
    if not close(mine["loss"], ref["loss"]):
        return Verdict(False, f"CrossEntropy.apply(logits, targets) gave {fmt(mine['loss'])}, expected {fmt(ref['loss'])}")
    if mine["grad"] is None:
        return Verdict(False, "after (CrossEntropy.apply(logits, targets) * 2.5).backward(), logits.grad is None: "
                              "backward returns (gradient for logits, None for targets)")
    if not close(mine["grad"], ref["numeric"], rtol=1e-5):
        if close(np.asarray(mine["grad"]) * 2.5, ref["numeric"], rtol=1e-5):
            return Verdict(False, f"after (loss * 2.5).backward(), logits.grad = {fmt(mine['grad'])}, 2.5 times too "
                                  "small: backward receives grad_output = 2.5 and must pass it on as grad_scalar "
                                  "(grad_output.item())")
        return Verdict(False, f"after (loss * 2.5).backward(), logits.grad = {fmt(mine['grad'])}, but finite "
                              f"differences give {fmt(ref['numeric'])}")
    return Verdict(True)


@_single_threaded
def probe_once_differentiable(ns: dict, rng: np.random.Generator) -> dict:
    """A second derivative through each Function. The incoming gradient must itself require grad
    (here: y * x, and loss * w), or there is nothing for a second derivative to follow."""
    results = {}
    x = _leaf(rng.standard_normal(4))
    z = _leaf(rng.standard_normal((3, 4)))
    w = _leaf(1.5)
    targets = minigrad.tensor(rng.integers(0, 4, 3))
    for name, make, leaf in (("Sigmoid", lambda: (ns["Sigmoid"].apply(x) * x).sum(), x),
                             ("CrossEntropy", lambda: ns["CrossEntropy"].apply(z, targets) * w, z)):
        (g,) = autograd_grad(make(), [leaf], create_graph=True)
        try:
            (g * g).sum().backward()
        except RuntimeError as e:
            results[name] = clip(str(e), 300)
        else:
            results[name] = None
    return results


def judge_once_differentiable(mine: dict, ref: dict) -> Verdict:
    for name in ("Sigmoid", "CrossEntropy"):
        message = mine[name]
        if message is not None and "once_differentiable" in message:
            continue
        if message is None:
            happened = "ran without an error"
        else:
            happened = f"raised \"{message[:120]}\""
        return Verdict(False, f"differentiating {name}'s gradient a second time (grad(..., create_graph=True), then "
                              f"backward) {happened}. A backward computed with NumPy is invisible to autograd, so "
                              "a second derivative through it would be wrong or fail obscurely. Put "
                              "@once_differentiable under @staticmethod on backward: it then fails with a clear "
                              "message")
    return Verdict(True)


# -- reference --------------------------------------------------------------------------------
def reference() -> dict:
    class Sigmoid(Function):
        @staticmethod
        def forward(ctx, x):
            y = minigrad.from_numpy(kref.sigmoid_forward(x.detach().numpy()))
            ctx.save_for_backward(y)
            return y

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return minigrad.from_numpy(kref.sigmoid_backward(y.detach().numpy(), grad.detach().numpy()))

    class CrossEntropy(Function):
        @staticmethod
        def forward(ctx, logits, targets):
            loss, log_probs = kref.cross_entropy_forward(logits.detach().numpy(), targets.numpy())
            ctx.log_probs, ctx.targets = log_probs, targets.numpy()
            return minigrad.tensor(loss, dtype=logits.dtype)

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            return minigrad.from_numpy(kref.cross_entropy_backward(ctx.log_probs, ctx.targets, grad.item())), None

    return {"sigmoid_forward": kref.sigmoid_forward, "sigmoid_backward": kref.sigmoid_backward,
            "cross_entropy_forward": kref.cross_entropy_forward, "cross_entropy_backward": kref.cross_entropy_backward,
            "Sigmoid": Sigmoid, "CrossEntropy": CrossEntropy}


KERNELS = ("sigmoid_forward", "sigmoid_backward")
CE = ("cross_entropy_forward", "cross_entropy_backward")

DIAGNOSES = {  # the phrase the feedback says for each known mistake (tests/mutants/s07_numba.py)
    "race_on_a_shared_accumulator": "writes total[...] inside a prange loop",
    "no_max_subtraction": "exp(1000) overflows",
    "log_of_a_rounded_probability": "log(0) = -inf",
    "backward_without_mean": "times too large",
    "backward_ignores_grad_scalar": "ignores grad_scalar",
    "backward_writes_into_grad": "changed its input `grad`",
    "kernels_not_compiled": "this function is not compiled: add @numba.njit",
    "float64_for_float32": "expected float32",
    "flat_loop_without_a_contiguous_copy": "Make the inputs contiguous first",
    "not_once_differentiable": "@once_differentiable under @staticmethod",
    "max_loop_misses_the_last_column": "m is too small (a column missed)",
    "max_loop_reads_past_the_row": "it was read from outside the row",
}

STAGE = Stage(
    number="07",
    name="numba",
    title="Fused kernels with Numba",
    parts={"sigmoid": KERNELS, "cross_entropy": CE, "functions": ("Sigmoid", "CrossEntropy")},
    checks=(
        Check("sigmoid_forward", 1, "sigmoid_forward matches NumPy: float32/64, odd shapes, non-contiguous",
              probe_sigmoid_forward, judge_sigmoid_forward, part="sigmoid"),
        Check("sigmoid_backward", 1, "sigmoid_backward matches NumPy and leaves its inputs alone",
              probe_sigmoid_backward, judge_sigmoid_backward, part="sigmoid"),
        Check("sigmoid_compiled", 1, "both sigmoid kernels are compiled by Numba (nopython) for float32 and float64",
              probe_sigmoid_compiled, judge_sigmoid_compiled, part="sigmoid"),
        Check("sigmoid_speed", 1, "sigmoid_backward is at least as fast as NumPy's (1M float64, interleaved runs)",
              probe_sigmoid_speed, judge_sigmoid_speed, needs=("sigmoid_backward", "sigmoid_compiled"),
              part="sigmoid"),
        Check("ce_forward", 2, "cross_entropy_forward: loss and log_probs match NumPy", probe_ce_forward,
              judge_ce_forward, part="cross_entropy"),
        Check("ce_stable", 1, "cross_entropy_forward stays finite for logits of ±1000", probe_ce_stable,
              judge_ce_stable, needs=("ce_forward",), part="cross_entropy"),
        Check("ce_backward", 1, "cross_entropy_backward matches NumPy", probe_ce_backward, judge_ce_backward,
              part="cross_entropy"),
        Check("ce_compiled", 1, "both cross-entropy kernels are compiled by Numba (nopython) for float32 and float64",
              probe_ce_compiled, judge_ce_compiled, part="cross_entropy"),
        Check("ce_no_race", 1, "no data race: the same loss on 200,000 rows, three times", probe_ce_no_race,
              judge_ce_no_race, needs=("ce_forward",), part="cross_entropy"),
        Check("sigmoid_function", 1, "Sigmoid's gradient matches finite differences", probe_sigmoid_function,
              judge_sigmoid_function, needs=KERNELS, part="functions"),
        Check("ce_function", 1, "CrossEntropy's gradient matches finite differences", probe_ce_function,
              judge_ce_function, needs=("ce_forward", "ce_backward"), part="functions"),
        Check("once_differentiable", 1, "a second derivative through either Function fails clearly",
              probe_once_differentiable, judge_once_differentiable, needs=("sigmoid_function", "ce_function"),
              part="functions"),
    ),
    reference=reference,
    forbidden={
        "sigmoid": ("minigrad.kernels.sigmoid_forward", "minigrad.kernels.sigmoid_backward",
                    "minigrad.kernels.reference.sigmoid_forward", "minigrad.kernels.reference.sigmoid_backward"),
        "cross_entropy": ("minigrad.kernels.cross_entropy_forward", "minigrad.kernels.cross_entropy_backward",
                          "minigrad.kernels.reference.cross_entropy_forward",
                          "minigrad.kernels.reference.cross_entropy_backward",
                          "minigrad.kernels.log_softmax_forward", "minigrad.kernels.reference.log_softmax_forward"),
    },
)
