"""Data races in a ``prange`` loop, looked for in Numba's IR of every ``parallel=True`` function the
learner's wrapper reaches, and by running the forward three times on 200,000 rows."""
from __future__ import annotations

import numpy as np

from minigrad.course.checks import Verdict, clip, close
from minigrad.course.stages.s07_numba.probing import _dispatchers_reached


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

