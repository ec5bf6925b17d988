"""Part ``cross_entropy``: ``cross_entropy_forward`` (stable for logits of +-1000) and
``cross_entropy_backward`` against NumPy's references."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s07_numba.probing import (
    DTYPES, _array_facts, _call, _logit_cases, _result_problem, _single_threaded, _with_layout,
)
from minigrad.kernels import reference as kref


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

