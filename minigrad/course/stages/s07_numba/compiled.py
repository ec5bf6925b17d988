"""Both parts' kernels are compiled by Numba (nopython, float32 and float64), and the fused
``sigmoid_backward`` is at least as fast as NumPy's."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict
from minigrad.course.stages.s07_numba.probing import DTYPES, NOT_COMPILED, _dispatchers_reached
from minigrad.kernels import reference as kref


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

