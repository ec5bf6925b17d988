"""Checks: how one stage's work is verified, for the learner and for the grader.

A check has two halves, so that learners' code never decides its own verdict:

- a **probe** runs the learner's code on chosen inputs and returns plain data
  (numbers, lists, strings, and the type and message of an expected failure).
  Probes run wherever the learner's code runs: in the notebook, or in the
  grader's sandboxed child process. An unexpected exception becomes data too.
- a **judge** compares that data with what the same probe returns on
  minigrad's own reference implementation, and gives a ``Verdict``: passed or
  not, and feedback that names the mistake and how to think about fixing it.
  Judges run only in trusted code.

Random inputs come from a seed derived from the run's seed and the check id,
recorded in every result, so a regrade reproduces exactly the same inputs.
"""
from __future__ import annotations

import json
import math
import traceback
import zlib
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

NOT_IMPLEMENTED = "not_implemented"


class Finding(Exception):
    """Raised by a probe that recognised a mistake in what the learner's code returned (a tuple
    where a tensor was expected...): its message is the feedback, word for word."""


FINDING = "Finding"


def clip(message: str, limit: int = 500) -> str:
    """``message`` cut to at most ``limit`` characters at the end of a sentence (or a word), marked
    with "[...]": never a sentence cut in the middle ("freed when you call .backward() or ")."""
    message = str(message)
    if len(message) <= limit:
        return message
    head = message[:limit - 6]
    cut = max(head.rfind(". "), head.rfind(": "), head.rfind("; "))
    if cut < limit // 2:
        cut = head.rfind(" ")
    return (head[:cut + 1] if cut > 0 else head).rstrip() + " [...]"


def expect_tensor(value: Any, what: str) -> Any:
    """``value`` if it is a minigrad tensor; else a ``Finding`` that says what it is instead."""
    from minigrad._tensor import Tensor

    if isinstance(value, Tensor):
        return value
    kind = type(value).__name__
    if isinstance(value, (tuple, list)):
        inner = ", ".join(type(v).__name__ for v in list(value)[:3]) + (", ..." if len(value) > 3 else "")
        fix = (f"return the tensor itself, not a {kind} holding it" if len(value) == 1 else
               "make one tensor of them (minigrad.stack(...) or minigrad.cat(...))")
        raise Finding(f"{what} returned a {kind} of {len(value)} ({inner}), where one tensor was expected: {fix}")
    raise Finding(f"{what} returned a {kind}, where a minigrad tensor was expected")


@dataclass(frozen=True)
class Verdict:
    passed: bool
    feedback: str = ""


@dataclass(frozen=True)
class Check:
    """One gradable property of a stage's work."""

    id: str
    points: float
    description: str
    probe: Callable[[dict, np.random.Generator], Any]
    judge: Callable[[Any, Any], Verdict]
    needs: tuple[str, ...] = ()
    part: str = ""  # grade_id of the worksheet cell whose code this check grades


@dataclass(frozen=True)
class Stage:
    """A worksheet: its learner-defined names per graded cell, and its checks."""

    number: str
    name: str
    title: str
    parts: dict[str, tuple[str, ...]]  # grade_id -> names that cell must define
    checks: tuple[Check, ...]
    reference: Callable[[], dict]  # minigrad's own implementation of the same names
    # grade_id -> dotted names of minigrad's own implementation that this part is meant to
    # rebuild ("minigrad.autograd.engine.run_backward", "minigrad.Tensor.backward"). The
    # grader flags, for an instructor's review, learner code that calls them (it never
    # changes a score). Empty: the grader's built-in list for the stage, if any.
    forbidden: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def points(self) -> float:
        return sum(c.points for c in self.checks)


@dataclass
class Result:
    check: str
    description: str
    status: str  # passed | failed | not_implemented | not_run | error
    points: float
    max_points: float
    feedback: str
    seed: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class StageReport:
    stage: str
    results: list[Result] = field(default_factory=list)
    seed: int = 0

    @property
    def points(self) -> float:
        return sum(r.points for r in self.results)

    @property
    def max_points(self) -> float:
        return sum(r.max_points for r in self.results)

    def to_dict(self) -> dict:
        return {"stage": self.stage, "seed": self.seed, "points": self.points,
                "max_points": self.max_points, "results": [r.to_dict() for r in self.results]}


def check_seed(run_seed: int, check_id: str) -> int:
    """The seed of one check: stable across runs and machines (not Python's hash())."""
    return (run_seed * 1_000_003 + zlib.crc32(check_id.encode())) % (2**32)


# -- probing (runs beside the learner's code) ------------------------------------------
def observe(check: Check, namespace: dict, seed: int) -> dict:
    """Run one probe and turn whatever happens into JSON-safe data."""
    try:
        value = check.probe(namespace, np.random.default_rng(seed))
    except NotImplementedError:
        return {"status": NOT_IMPLEMENTED}
    except Finding as e:
        return {"status": "error", "type": FINDING, "message": clip(str(e)), "where": ""}
    except RecursionError:
        return {"status": "error", "type": "RecursionError",
                "message": "maximum recursion depth exceeded", "where": ""}
    except Exception as e:  # the learner's code failed in a way the probe did not expect
        return {"status": "error", "type": type(e).__name__, "message": clip(str(e)), "where": _learner_line(e)}
    return {"status": "ok", "value": to_plain(value)}


def _library_dirs() -> tuple[str, ...]:
    """Folders whose frames are never the learner's: minigrad's package, the standard library and
    the installed packages (NumPy's ``errstate`` and Numba's locks wrap calls in
    ``return func(*args, **kwargs)``, which is nobody's mistake)."""
    import os
    import sysconfig

    dirs = {os.path.dirname(os.path.dirname(os.path.abspath(__file__)))}  # the minigrad package
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path))
    return tuple(sorted(d.replace("\\", "/").rstrip("/") + "/" for d in dirs))


def _learner_line(error: BaseException) -> str:
    """The last traceback line from the learner's code: not from minigrad, the standard library or
    an installed package (a notebook cell, or a file of the learner's own)."""
    libraries = _library_dirs()
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        filename = frame.filename.replace("\\", "/")
        if filename.startswith("<frozen") or "/minigrad/" in filename or filename.startswith(libraries):
            continue
        if frame.line:
            return f"{frame.line.strip()}  (line {frame.lineno})"
    return ""


def to_plain(value: Any) -> Any:
    """Numbers, strings, lists and dicts only: what may cross from a probe to a judge.

    Arrays and tensors become nested lists of floats; NaN and inf stay (JSON
    allows them as tokens), and anything else is refused, so a learner's object
    with a rigged ``__eq__`` can never reach a judge.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if hasattr(value, "_data") and isinstance(getattr(value, "_data"), np.ndarray):  # a minigrad Tensor
        value = value._data
    if isinstance(value, np.ndarray):
        return np.asarray(value, dtype=np.float64).tolist() if value.dtype.kind in "fiub" else _refuse(value)
    if isinstance(value, (list, tuple)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    return _refuse(value)


def _refuse(value: Any):
    raise TypeError(f"a probe returned {type(value).__name__}; probes must return plain data")


def roundtrip(observation: dict) -> dict:
    """What a judge sees: the observation after JSON, exactly as the grader's pipe carries it."""
    return json.loads(json.dumps(observation))


# -- judging (trusted) ------------------------------------------------------------------
def judge(check: Check, observation: dict, reference: dict) -> Verdict:
    if observation.get("status") == NOT_IMPLEMENTED:
        return Verdict(False, "not implemented yet: replace `raise NotImplementedError()` with your code")
    if observation.get("status") == "error" and observation.get("type") == FINDING:
        return Verdict(False, observation["message"])
    if observation.get("status") == "error":
        where = f" at `{observation['where']}`" if observation.get("where") else ""
        return Verdict(False, f"your code raised {observation['type']}{where}: {observation['message']}")
    if reference.get("status") != "ok":
        raise RuntimeError(f"the reference implementation failed check {check.id}: {reference}")
    return check.judge(observation["value"], reference["value"])


def run_stage(stage: Stage, namespace: dict, run_seed: int = 0,
              observe_fn: Callable[[Check, dict, int], dict] = observe) -> StageReport:
    """Probe the learner's namespace and the reference, judge, respect dependencies."""
    reference_ns = stage.reference()
    report = StageReport(stage.name, seed=run_seed)
    passed: set[str] = set()
    for check in stage.checks:
        seed = check_seed(run_seed, check.id)
        missing = [n for n in check.needs if n not in passed]
        if missing:
            report.results.append(Result(check.id, check.description, "not_run", 0, check.points,
                                         f"not run: needs {', '.join(missing)}", seed))
            continue
        observation = roundtrip(observe_fn(check, namespace, seed))
        verdict = judge(check, observation, roundtrip(observe(check, reference_ns, seed)))
        status = "passed" if verdict.passed else (
            NOT_IMPLEMENTED if observation.get("status") == NOT_IMPLEMENTED else
            "error" if observation.get("status") == "error" else "failed")
        if verdict.passed:
            passed.add(check.id)
        report.results.append(Result(check.id, check.description, status,
                                     check.points if verdict.passed else 0, check.points,
                                     verdict.feedback, seed))
    return report


# -- helpers for judges ---------------------------------------------------------------
def close(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-6) -> bool:
    """Plain-data numbers or nested lists equal within tolerance; NaN never equals."""
    try:
        x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (ValueError, TypeError):
        return False
    return x.shape == y.shape and bool(np.all(np.isfinite(x))) and bool(np.allclose(x, y, rtol=rtol, atol=atol))


def fmt(value: Any, digits: int = 4) -> str:
    """A short rendering of plain data for feedback."""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else f"{value:.{digits}g}"
    if isinstance(value, list):
        flat = np.asarray(value, dtype=np.float64).ravel() if _is_numeric(value) else None
        if flat is not None:
            shown = ", ".join(fmt(float(v), digits) for v in flat[:6])
            return f"[{shown}{', ...' if flat.size > 6 else ''}]"
    return str(value)


def _is_numeric(value: list) -> bool:
    try:
        np.asarray(value, dtype=np.float64)
        return True
    except (ValueError, TypeError):
        return False


def format_report(report: StageReport) -> str:
    """The verdict table a learner sees under a self-check cell."""
    marks = {"passed": "PASS", "failed": "FAIL", "not_implemented": "TODO", "not_run": "SKIP", "error": "ERROR"}
    lines = [f"{report.stage}: {report.points:g} / {report.max_points:g} points"]
    for r in report.results:
        lines.append(f"  [{marks[r.status]:5}] {r.check} ({r.points:g}/{r.max_points:g}): {r.description}")
        if r.feedback and r.status != "passed":
            lines.extend("          " + line for line in r.feedback.splitlines())
    return "\n".join(lines)


# -- what may cross from a sandboxed probe to a judge (used by the grader) ---------------
OBSERVATION_STATUSES = ("ok", NOT_IMPLEMENTED, "error")


def plain_problem(value: Any, max_depth: int = 64, max_items: int = 1_000_000) -> str | None:
    """Why ``value`` (already parsed from JSON) is not plain data, or None if it is.

    Plain: None, bool, int, float (NaN and inf allowed), str, lists and dicts with
    string keys, at most ``max_depth`` deep and ``max_items`` values in all.
    """
    budget = [max_items]
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        budget[0] -= 1
        if budget[0] < 0:
            return f"more than {max_items} values"
        if depth > max_depth:
            return f"nested more than {max_depth} deep"
        if item is None or isinstance(item, (bool, int, float, str)):
            if type(item) not in (type(None), bool, int, float, str):
                return f"a {type(item).__name__} value"
            continue
        if type(item) is list:
            stack.extend((v, depth + 1) for v in item)
        elif type(item) is dict:
            for k, v in item.items():
                if type(k) is not str:
                    return "a dictionary key that is not a string"
                stack.append((v, depth + 1))
        else:
            return f"a {type(item).__name__} value"
    return None


def observation_problem(observation: Any) -> str | None:
    """Why ``observation`` is not what ``observe`` returns, or None if it is well formed.

    The grader applies this to every observation coming out of a sandbox before
    any judge sees it.
    """
    if type(observation) is not dict:
        return "an observation must be a JSON object"
    status = observation.get("status")
    if status not in OBSERVATION_STATUSES:
        return f"unknown observation status {status!r}"
    allowed = {"ok": {"status", "value"}, NOT_IMPLEMENTED: {"status"},
               "error": {"status", "type", "message", "where"}}[status]
    if set(observation) - allowed:
        return f"unexpected keys {sorted(set(observation) - allowed)}"
    if status == "ok":
        if "value" not in observation:
            return "an ok observation needs a value"
        return plain_problem(observation["value"])
    if status == "error":
        for key in ("type", "message", "where"):
            if type(observation.get(key, "")) is not str:
                return f"error observation: {key} must be a string"
    return None
