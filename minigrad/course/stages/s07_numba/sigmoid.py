"""Part ``sigmoid``: ``sigmoid_forward`` and ``sigmoid_backward`` against NumPy's references."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict
from minigrad.course.stages.s07_numba.probing import (
    DTYPES, NOT_COMPILED, _array_facts, _call, _cases, _dispatchers_reached, _result_problem, _single_threaded,
    _with_layout,
)
from minigrad.kernels import reference as kref


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

