"""Grade submitted worksheets: one notebook, or a batch of learners in parallel.

For each submitted notebook the grader

1. reads it as plain JSON (never executing it), finds which stage it is (by its
   file name ``NN_name.ipynb``, else by the grade_ids it holds), and takes from it
   only the learner's code cells: solution cells (by nbgrader ``grade_id``) and added ones;
2. rebuilds the program the notebook runs top to bottom, with its solution
   cells and the cells the learner added, and every other cell from our own
   copy of the worksheet (the template in ``exercises/``) (``program.learner_program``);
3. reviews the learner's cells statically (``review``: flags for an instructor);
4. runs the program and the stage's probes in a sandboxed child (``sandbox``),
   asking for one check at a time so that ``needs`` and time limits are decided
   here; a child that hangs, crashes or exits is replaced by a fresh one without
   the cell or check that stopped it (at most ``Limits.restarts`` times);
5. validates every observation's schema and has it judged, against reference
   observations computed from the same seeds, by a trusted worker process
   (``judge_worker``); only this process writes results.

A stage result is cached under a key made of the notebook's content hash and
name, the seed and the grader version, so an interrupted batch resumes where it
stopped and an unchanged submission is never graded twice. (A result that a limit
cut short is graded again if the limits have changed since.)
"""
from __future__ import annotations

import concurrent.futures as futures
import hashlib
import json
import os
import queue
import re
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from minigrad.course.checks import NOT_IMPLEMENTED, check_seed, observation_problem
from minigrad.course.grading.gradebook import gradebook_csv, isolation_of, safe_name, write_json, write_private
from minigrad.course.grading.judge_worker import JudgeClient, JudgeError
from minigrad.course.grading.layout import layout_problems
from minigrad.course.grading.sandbox import (
    Limits, Sandbox, SandboxStopped, detect_isolation, hiding_refusal, package_root,
)
from minigrad.course.program import ADDED, learner_program, solution_grade_ids
from minigrad.course.review import forbidden_for, review_cells

STAGE_FILE = re.compile(r"^(\d\d)_([A-Za-z0-9_]+)")


class Interrupted(Exception):
    """Grading was stopped (Ctrl-C): what was already graded is kept in the cache."""


class GradingError(Exception):
    """The grader itself failed on a stage (e.g. the reference implementation): not the learner's fault."""


# -- configuration, templates, version --------------------------------------------------
@dataclass
class GradeConfig:
    seed: int = 0
    limits: Limits = field(default_factory=Limits)
    isolation: str = "full"  # full (or refuse) | none (the instructor's explicit choice)
    python: str | None = None  # the sandboxed children's interpreter (default: the grader's)
    stages: tuple[str, ...] | None = None  # the assignment's stages (keys); None: every template
    templates: Path | None = None  # folder of NN_name.ipynb worksheets (default: exercises/)
    cache_dir: Path | None = None  # None: no results cache
    judge_timeout: float = 30.0
    max_notebook_mb: int = 512
    hidden: tuple = ()  # paths the sandboxed children must not see (submissions, gradebook): full isolation


def paths_to_hide(paths, keep) -> list[str]:
    """The paths a child's mount namespace covers: each of ``paths`` (a folder wholesale), except
    that a folder holding one of ``keep`` (minigrad, the children's Python, the temporary folder
    the sandboxes live in) is covered notebook by notebook instead."""
    keep = [Path(k).resolve() for k in keep]
    found: list[str] = []
    for path in paths:
        path = Path(path).resolve()
        if path == Path("/"):
            continue  # (a path that does not exist yet, such as the gradebook's folder, is covered once it does)
        if path.is_dir() and any(k == path or path in k.parents for k in keep):
            found += [str(p) for p in sorted(path.rglob("*.ipynb"))
                      if not any(k == p or k in p.parents for k in keep)]
        else:
            found.append(str(path))
    return list(dict.fromkeys(found))


def find_templates(start: Path | None = None) -> Path:
    """The templates that came with this grader: the copy inside an installed wheel, or the
    checkout's ``exercises/``; else ``exercises/`` at or above ``start`` (default: cwd)."""
    start = Path.cwd() if start is None else Path(start)
    course = Path(__file__).resolve().parents[1]  # minigrad/course/, where a wheel keeps content/
    candidates = [course / "content" / "exercises", Path(package_root()) / "exercises"]
    candidates += [folder / "exercises" for folder in (start.resolve(), *start.resolve().parents)]
    for folder in candidates:
        if folder.is_dir() and any(folder.glob("[0-9][0-9]_*.ipynb")):
            return folder
    raise FileNotFoundError("no exercises/ folder with worksheet templates found; pass --templates DIR")


def load_templates(folder: Path) -> dict[str, tuple]:
    """``'04_topological_backward' -> (stage, template notebook)`` for each template with a stage."""
    from minigrad.course.stages import get_stage

    found = {}
    for path in sorted(Path(folder).glob("[0-9][0-9]_*.ipynb")):
        try:
            stage = get_stage(path.stem)
        except KeyError:
            continue
        with open(path, encoding="utf-8") as f:
            found[path.stem] = (stage, json.load(f))
    return found


def choose_stages(available: dict[str, tuple], wanted: list[str] | None) -> list[str]:
    """The template keys of the stages ``wanted`` (by key, number or name; None: all), in order."""
    if not wanted:
        return list(available)
    chosen = []
    for want in wanted:
        match = [key for key, (stage, _) in available.items() if want in (key, stage.number, stage.name)]
        if not match:
            raise KeyError(f"no worksheet template for stage {want!r}; available: {', '.join(available)}")
        chosen += [m for m in match if m not in chosen]
    return chosen


def grader_version(templates: dict[str, tuple]) -> str:
    """The package version and a hash of everything a verdict depends on: minigrad's code
    (the reference), the course's checks and grader, and the templates."""
    try:
        from importlib.metadata import version

        base = version("minigrad-course")
    except Exception:  # noqa: BLE001 - not installed: a source checkout
        base = "0+unknown"
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parents[2]  # minigrad/: the library, the course and this grader
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    for key in sorted(templates):
        digest.update(key.encode())
        digest.update(json.dumps(templates[key][1], sort_keys=True).encode())
    return f"{base}+{digest.hexdigest()[:12]}"


# -- reading a submission -----------------------------------------------------------------
@dataclass
class Submission:
    path: Path
    raw: bytes = b""
    sha256: str = ""
    notebook: dict | None = None
    problem: str | None = None  # why it cannot be graded
    warnings: list[str] = field(default_factory=list)


def read_submission(path: Path, max_mb: int = 512, parse: bool = True) -> Submission:
    sub = Submission(Path(path))
    try:
        size = os.stat(path).st_size
        if size > max_mb * 1024 * 1024:
            sub.problem = f"the file is {size / 2**20:.0f} MB, more than the limit of {max_mb} MB"
            return sub
        sub.raw = Path(path).read_bytes()
    except OSError as e:
        sub.problem = f"the file could not be read: {e.strerror or e}"
        return sub
    sub.sha256 = hashlib.sha256(sub.raw).hexdigest()
    if parse:
        parse_submission(sub)
    return sub


def parse_submission(sub: Submission) -> None:
    raw = sub.raw
    if not raw.strip():
        sub.problem = "the file is empty: was the notebook saved before it was submitted?"
        return
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        text = raw.decode("utf-8", "replace")
        sub.warnings.append(f"the file is not valid UTF-8 (first bad byte at offset {e.start}); "
                            "undecodable bytes were replaced by U+FFFD")
    try:
        notebook = json.loads(text)
    except ValueError as e:
        where = f" (line {e.lineno}, column {e.colno})" if hasattr(e, "lineno") else ""
        sub.problem = f"the file is not a notebook: it is not valid JSON{where}: {getattr(e, 'msg', e)}"
        return
    except RecursionError:
        sub.problem = "the file is not a notebook: its JSON is nested too deeply"
        return
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        sub.problem = "the file is JSON but not a Jupyter notebook (it has no list of cells)"
        return
    sub.notebook = notebook


def identify_stage(path: Path, notebook: dict | None, templates: dict[str, tuple]) -> tuple[str | None, str]:
    """The stage of a notebook: by file name ``NN_name``, else by the grade_ids it holds."""
    match = STAGE_FILE.match(Path(path).name)
    if match:
        number, name = match.groups()
        for key, (stage, _) in templates.items():
            if key == f"{number}_{name}" or stage.number == number:
                return key, "file name"
    if notebook is None:
        return None, "unreadable"
    ids = set()
    for cell in notebook.get("cells", []):
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        meta = meta.get("nbgrader") if isinstance(meta, dict) else None
        if isinstance(meta, dict) and isinstance(meta.get("grade_id"), str):
            ids.add(meta["grade_id"])
    scores = sorted(((len(ids & set(solution_grade_ids(t))), key) for key, (_, t) in templates.items()), reverse=True)
    if scores and scores[0][0] > 0 and (len(scores) == 1 or scores[1][0] < scores[0][0]):
        return scores[0][1], "grade_ids"
    return None, "unknown"


# -- grading one stage ----------------------------------------------------------------------
def _expect(box: Sandbox, kind: str, **fields) -> dict:
    message = box.receive()
    if message.get("kind") != kind or any(message.get(k) != v for k, v in fields.items()):
        shown = {k: message.get(k) for k in ("kind", "index", "check") if k in message}
        raise SandboxStopped("corrupt", f"an unexpected message {json.dumps(shown)[:120]} (expected {kind})")
    return message


def _text(value, limit: int = 500) -> str:
    return value[:limit] if isinstance(value, str) else ""


def _cell_error(gid: str, error) -> str:
    if not isinstance(error, dict):
        return f"your cell '{gid}' failed"
    kind, message = _text(error.get("type"), 80), _text(error.get("message"))
    line = error.get("line") if type(error.get("line")) is int else None
    at = f" at line {line}" if line else ""
    if kind in ("SyntaxError", "IndentationError", "TabError"):
        text = _text(error.get("text"), 200)
        return (f"your cell '{gid}' has a {kind}{at}: {message}" + (f"\n    {text}" if text else "")
                + "\nThe checks of this cell need it to compile; the other cells were still graded.")
    if kind == "SystemExit":
        return (f"your cell '{gid}' called sys.exit(){at}: a worksheet cell must not stop Python. "
                "Remove the call; the checks of this cell count as failed until then.")
    return (f"your cell '{gid}' raised {kind}{at}: {message}\n"
            "Make the cell run from top to bottom without errors; its checks count as failed until then.")


def _flags_from(message: dict, stage_key: str) -> list[dict]:
    flags = []
    libraries = message.get("libraries")
    for name in libraries if isinstance(libraries, list) else []:
        if isinstance(name, str):
            flags.append({"kind": "autograd_import", "part": None, "line": None, "source": "dynamic",
                          "detail": f"the module {name[:40]} (another autograd library) was imported while grading"})
    calls = message.get("calls")
    for call in calls[:20] if isinstance(calls, list) else []:
        if isinstance(call, dict):
            flags.append({"kind": "reference_call", "part": _text(call.get("part"), 60),
                          "line": call.get("line") if type(call.get("line")) is int else None,
                          "detail": _text(call.get("detail"), 200) + " your cell", "source": "dynamic"})
    borrowed = message.get("borrowed")
    for part, names in list(borrowed.items())[:20] if isinstance(borrowed, dict) else []:
        for name in names[:20] if isinstance(names, list) else []:
            if isinstance(name, str):
                flags.append({"kind": "borrowed", "part": _text(part, 60), "line": None, "source": "dynamic",
                              "detail": f"`{name[:60]}` was not defined by the learner's cells (its code comes "
                                        "from elsewhere, e.g. minigrad's own implementation)"})
    return flags


class Grader:
    """Grades notebooks; thread-safe; one sandbox slot and judge process per parallel job."""

    def __init__(self, config: GradeConfig, jobs: int = 1) -> None:
        self.config, self.jobs = config, max(1, jobs)
        self.templates = load_templates(config.templates or find_templates())
        if not self.templates:
            raise FileNotFoundError(f"no worksheet template in {config.templates} matches a stage")
        self.version = grader_version(self.templates)  # of every template: --stages keeps the cache
        if config.stages is not None:
            self.templates = {k: v for k, v in self.templates.items() if k in config.stages}
        self.plan = detect_isolation(config.isolation, self.jobs, config.python)
        self.scratch = tempfile.mkdtemp(prefix="minigrad-grader-")
        python = Path(self.plan.python).resolve()
        self.hidden = paths_to_hide(config.hidden, [package_root(), python.parent.parent, tempfile.gettempdir(),
                                                    self.scratch])
        if self.hidden and self.plan.level == "full" and not self.plan.can_hide():
            shutil.rmtree(self.scratch, ignore_errors=True)
            raise hiding_refusal(self.plan)
        self.numba_cache = os.path.join(self.scratch, "numba-cache")
        os.mkdir(self.numba_cache)
        self.stop_event = threading.Event()
        self._slots: queue.Queue = queue.Queue()
        for slot in range(self.jobs):
            self._slots.put(slot)
        self._judges: dict[int, JudgeClient] = {}
        self._graded_here: dict[str, str] = {}  # cache key -> the notebook this run graded under it
        self._references: dict[str, dict] = {}
        self._stage_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        for judge in self._judges.values():
            judge.close()
        self._judges.clear()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> "Grader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- cache -----------------------------------------------------------------------------
    def cache_key(self, sub: Submission) -> str:
        material = [sub.sha256, sub.path.name, self.config.seed, self.version]
        return hashlib.sha256(json.dumps(material, sort_keys=True).encode()).hexdigest()

    def _cache_path(self, key: str) -> Path | None:
        return None if self.config.cache_dir is None else Path(self.config.cache_dir) / key[:2] / f"{key}.json"

    def _cached(self, key: str) -> dict | None:
        path = self._cache_path(key)
        if path is None or not path.is_file():
            return None
        try:
            with open(path, encoding="utf-8") as f:
                result = json.load(f)
        except (OSError, ValueError):
            return None
        if result.get("grader_version") != self.version:
            return None
        if result.get("limited") and result.get("isolation", {}).get("limits") != self.config.limits.to_dict():
            return None  # a limit stopped it, and the limits have changed since: grade it again
        return result

    def _store(self, key: str, result: dict) -> None:
        path = self._cache_path(key)
        if path is None:
            return
        write_private(path, json.dumps(result, allow_nan=True))

    # -- one notebook ----------------------------------------------------------------------
    def grade_file(self, path: Path) -> dict:
        """Grade one submitted file (any stage); never raises for a bad submission."""
        slot = self._slots.get()
        try:
            return self._grade_file(Path(path), slot)
        finally:
            self._slots.put(slot)

    def _grade_file(self, path: Path, slot: int) -> dict:
        started = time.monotonic()
        sub = read_submission(path, self.config.max_notebook_mb, parse=False)
        base = {"notebook": str(path), "name": path.name, "sha256": sub.sha256, "seed": self.config.seed,
                "grader_version": self.version}
        if sub.problem:
            return {**base, "status": "ungradable", "stage": None, "message": sub.problem}
        key = self.cache_key(sub)
        cached = self._cached(key)
        if cached is not None:
            with self._lock:
                first = self._graded_here.get(key)
            if first is not None and first != str(path):  # graded in this run: not "cached" from an earlier one
                same = f"the same file as {first}, graded once in this run"
                return {**cached, "notebook": str(path), "cached": False, "same_as": first,
                        "notes": [*cached.get("notes", []), same]}
            return {**cached, "notebook": str(path), "cached": True}
        parse_submission(sub)
        stage_key, how = identify_stage(path, sub.notebook, self.templates)
        if sub.problem:
            return {**base, "status": "ungradable", "stage": stage_key, "message": sub.problem,
                    "warnings": sub.warnings}
        if stage_key is None:
            known = ", ".join(f"{k}.ipynb" for k in self.templates)
            return {**base, "status": "ungradable", "stage": None, "warnings": sub.warnings,
                    "message": "could not tell which worksheet this is: its file name is not one of "
                               f"{known} and it has none of their solution cells (grade_ids)"}
        try:
            result = self.grade_stage(stage_key, sub.notebook, slot)
        except GradingError as e:
            return {**base, "status": "error", "stage": stage_key, "message": f"the grader failed: {e}",
                    "warnings": sub.warnings}
        result = {**base, **result, "identified_by": how, "warnings": sub.warnings + result.get("warnings", []),
                  "seconds": round(time.monotonic() - started, 2)}
        self._store(key, result)
        with self._lock:
            self._graded_here.setdefault(key, str(path))
        return {**result, "cached": False}

    def _judge(self, slot: int) -> JudgeClient:
        if slot not in self._judges:
            self._judges[slot] = JudgeClient(package_root(), self.numba_cache,
                                             os.path.join(self.scratch, f"judge-{slot}.log"))
        return self._judges[slot]

    def _references_for(self, stage_key: str, judge: JudgeClient) -> dict:
        """The stage's reference observations for this run's seed: computed once, by a trusted
        worker (which also warms the Numba cache that sandboxes start from)."""
        with self._lock:
            lock = self._stage_locks.setdefault(stage_key, threading.Lock())
        with lock:
            if stage_key not in self._references:
                stage, _ = self.templates[stage_key]
                try:
                    reply = judge.call({"op": "reference", "stage": stage_key, "seed": self.config.seed},
                                       self.config.judge_timeout * max(1, len(stage.checks)))
                except JudgeError as e:
                    raise GradingError(f"computing the reference observations failed: {e}") from None
                self._references[stage_key] = reply["references"]
            return self._references[stage_key]

    def grade_stage(self, stage_key: str, notebook: dict, slot: int = 0) -> dict:
        stage, template = self.templates[stage_key]
        limits, seed = self.config.limits, self.config.seed
        judge = self._judge(slot)
        references = self._references_for(stage_key, judge)

        program, sources, problems = learner_program(template, notebook)
        layout = layout_problems(stage.parts, template, notebook, missing_cells=False)
        added = {f"added cell {c.index[len(ADDED):]}": c.source for c in program if c.learner and not c.grade_id}
        flags = review_cells(stage, {**sources, **added}, [c.source for c in program if not c.learner])
        cell_problems: dict[str, tuple[str, str]] = {gid: ("failed", message) for gid, message in problems.items()}
        excluded = set(problems)  # cells run as the template's stub
        results: dict[str, dict] = {}
        passed: set[str] = set()
        notes: list[str] = list(layout)
        outputs: list[tuple[str, str]] = []
        isolation: dict = {}
        attempts, stopped = 0, False
        seconds = 0.0

        def record(check, status: str, feedback: str) -> None:
            ok = status == "passed"
            if ok:
                passed.add(check.id)
            results[check.id] = {"check": check.id, "description": check.description, "part": check.part,
                                 "status": status, "points": check.points if ok else 0,
                                 "max_points": check.points, "feedback": feedback,
                                 "seed": check_seed(seed, check.id)}

        while len(results) < len(stage.checks) and attempts <= limits.restarts and not stopped:
            attempts += 1
            job = {"stage": stage_key, "parts": {k: list(v) for k, v in stage.parts.items()},
                   "hide": self.hidden if self.plan.level == "full" and self.hidden else None,
                   "forbidden": {k: list(v) for k, v in forbidden_for(stage).items()},
                   "cells": [{"index": c.index, "grade_id": c.grade_id,
                              "source": c.source if c.grade_id not in excluded else _template_source(template, c.index)}
                             for c in program]}
            box = Sandbox(job, limits, self.plan, slot, self.numba_cache, self.stop_event)
            phase: tuple = ("start", None)
            try:
                box.start()
                hello = _expect(box, "hello")
                isolation = hello.get("isolation") if isinstance(hello.get("isolation"), dict) else {}
                for cell in job["cells"]:
                    _expect(box, "cell_start", index=cell["index"])
                    phase = ("cell", cell)
                    end = _expect(box, "cell_end", index=cell["index"])
                    phase = ("program", None)
                    if end.get("error") is not None:
                        if cell["grade_id"] and cell["grade_id"] not in excluded:
                            cell_problems.setdefault(cell["grade_id"], ("error", _cell_error(cell["grade_id"], end["error"])))
                        elif isinstance(cell["index"], str):
                            error = end["error"] if isinstance(end["error"], dict) else {}
                            notes.append(f"your added cell {cell['index'][len(ADDED):]} raised "
                                         f"{_text(error.get('type'), 80)}: {_text(error.get('message'), 300)} "
                                         "(a Restart & Run All stops there; the grader ran the cells after it)")
                        elif not cell["grade_id"]:
                            notes.append(f"the worksheet's cell {cell['index']} raised an error after your cells ran: "
                                         + _cell_error(str(cell["index"]), end["error"]).split(": ", 1)[-1][:300])
                phase = ("program", None)
                done = _expect(box, "program_done")
                flags += _flags_from(done, stage_key)
                missing = done.get("missing") if isinstance(done.get("missing"), dict) else {}
                for part, names in missing.items():
                    if part in stage.parts and part not in cell_problems and isinstance(names, list):
                        shown = ", ".join(f"`{n}`" for n in names if isinstance(n, str))
                        cell_problems[part] = ("failed", f"your cell '{part}' does not define {shown}: keep the "
                                                         "function's name and signature as the worksheet gives them")
                for check in stage.checks:
                    if check.id in results:
                        continue
                    unmet = [n for n in check.needs if n not in passed]
                    if unmet:
                        record(check, "not_run", f"not run: needs {', '.join(unmet)}")
                        continue
                    parts = [check.part] if check.part else list(stage.parts)
                    problem = next((cell_problems[p] for p in parts if p in cell_problems), None)
                    if problem:
                        record(check, *problem)
                        continue
                    phase = ("check", check)
                    box.send({"op": "check", "id": check.id, "seed": check_seed(seed, check.id)})
                    reply = _expect(box, "observation", check=check.id)
                    record(check, *self._judge_one(judge, stage_key, check, reply.get("observation"), flags,
                                                   references.get(check.id)))
                phase = ("bye", None)
                box.send({"op": "finish"})
                flags += _flags_from(_expect(box, "bye"), stage_key)
            except SandboxStopped as stop:
                box.stop()
                if stop.reason == "interrupted":
                    raise Interrupted() from None
                reason = box.explain(stop)
                kind, what = phase
                if kind == "start":
                    notes.append(f"the sandbox did not start: {_end(reason)} {box.stderr.text()[-500:]}")
                    if attempts > limits.restarts:
                        raise GradingError(f"the sandbox did not start: {reason}") from None
                elif kind == "cell" and what["grade_id"] and what["grade_id"] not in excluded:
                    gid = what["grade_id"]
                    cell_problems[gid] = ("error", f"your cell '{gid}' stopped the grader's process: {_end(reason)} "
                                                   "Its checks count as failed; the other cells were graded without it.")
                    excluded.add(gid)
                elif kind == "check":
                    record(what, "error", f"this check was stopped: {reason}")
                elif kind != "bye":
                    where = f"its cell {what['index']}" if kind == "cell" else "the end of a cell"
                    notes.append(f"the worksheet's program stopped at {where}: {reason}")
                    stopped = True
            finally:
                box.stop()
                seconds += box.exit.cpu_seconds
                outputs.append((box.stdout.text(), box.stderr.text()))
                if box.exit.killed_leftovers:
                    notes.append(f"{box.exit.killed_leftovers} process(es) left running by the submission were killed")

        for check in stage.checks:
            if check.id not in results:
                why = notes[-1] if stopped and notes else (
                    f"the grader's process was stopped {attempts} times, the limit")
                record(check, "error", f"not graded: {why}")
        ordered = [results[c.id] for c in stage.checks]
        return {
            "status": "graded", "stage": stage_key, "title": stage.title,
            "points": sum(r["points"] for r in ordered), "max_points": stage.points,
            "results": ordered, "flags": _dedupe(flags), "notes": notes,
            "cell_problems": {gid: message for gid, (_, message) in cell_problems.items()},
            "attempts": attempts, "cpu_seconds": round(seconds, 2), "limited": attempts > 1 or stopped,
            "isolation": {**self.plan.describe(), "child": isolation, "limits": limits.to_dict()},
            "stdout": _join_outputs([o for o, _ in outputs]), "stderr": _join_outputs([e for _, e in outputs]),
        }

    def _judge_one(self, judge: JudgeClient, stage_key: str, check, observation, flags: list,
                   reference: dict | None = None) -> tuple[str, str]:
        problem = observation_problem(observation)
        if problem:
            flags.append({"kind": "malformed_observation", "part": check.part, "line": None, "source": "dynamic",
                          "detail": f"check {check.id}: the sandbox sent a malformed observation ({problem})"})
            return "error", (f"the grader could not read what your code produced for this check ({problem}); "
                             "an instructor will look at it")
        try:
            reply = judge.call({"op": "judge", "stage": stage_key, "seed": self.config.seed, "check": check.id,
                                "observation": observation, "reference": reference}, self.config.judge_timeout)
        except JudgeError as e:
            if "longer than" in str(e):
                flags.append({"kind": "malformed_observation", "part": check.part, "line": None,
                              "source": "dynamic", "detail": f"check {check.id}: judging timed out"})
                return "error", "the grader could not judge this check in time; an instructor will look at it"
            raise GradingError(f"judging check {check.id} failed: {e}") from None
        if reply.get("malformed"):
            flags.append({"kind": "malformed_observation", "part": check.part, "line": None, "source": "dynamic",
                          "detail": f"check {check.id}: the judge could not read the observation "
                                    f"({reply.get('feedback', '')[:200]})"})
            return "error", "the grader could not make sense of what your code produced for this check"
        if reply.get("passed"):
            return "passed", ""
        status = {NOT_IMPLEMENTED: NOT_IMPLEMENTED, "error": "error"}.get(observation.get("status"), "failed")
        return status, str(reply.get("feedback", ""))

    # -- a batch ---------------------------------------------------------------------------
    def grade_batch(self, learners: list["Learner"], on_result: Callable | None = None,
                    on_learner: Callable | None = None) -> list[dict]:
        """Grade every learner's notebooks with ``self.jobs`` in parallel.

        ``on_result(done, total, result)`` after each notebook, ``on_learner(summary)``
        when all of a learner's notebooks are graded. Ctrl-C raises ``Interrupted``
        after stopping the running sandboxes; finished results are already cached.
        """
        units = [(i, path) for i, learner in enumerate(learners) for path in learner.files]
        pending = {i: len(learner.files) for i, learner in enumerate(learners)}
        collected: dict[int, list[dict]] = {i: [] for i in range(len(learners))}
        summaries: list[dict | None] = [None] * len(learners)
        for i, learner in enumerate(learners):
            if not learner.files:
                summaries[i] = summarize(learner, [], self)
                if on_learner:
                    on_learner(summaries[i])
        done = 0
        pool = futures.ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="grade")
        try:
            running = {pool.submit(self._safe_grade, path): (i, path) for i, path in units}
            while running:
                finished, _ = futures.wait(list(running), timeout=0.25, return_when=futures.FIRST_COMPLETED)
                for future in finished:
                    i, path = running.pop(future)
                    result = future.result()
                    done += 1
                    collected[i].append(result)
                    if on_result:
                        on_result(done, len(units), result)
                    pending[i] -= 1
                    if pending[i] == 0:
                        summaries[i] = summarize(learners[i], collected[i], self)
                        if on_learner:
                            on_learner(summaries[i])
        except (KeyboardInterrupt, Interrupted):
            self.stop_event.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise Interrupted() from None
        pool.shutdown(wait=True)
        return [s for s in summaries if s is not None]

    def _safe_grade(self, path: Path) -> dict:
        if self.stop_event.is_set():
            raise Interrupted()
        try:
            return self.grade_file(path)
        except Interrupted:
            raise
        except Exception as e:  # noqa: BLE001 - a grader bug must not lose the rest of the batch
            import traceback

            return {"notebook": str(path), "name": Path(path).name, "status": "error", "stage": None,
                    "message": f"the grader failed: {type(e).__name__}: {e}",
                    "traceback": traceback.format_exc()[-2000:]}


def _end(sentence: str) -> str:
    return sentence if sentence.endswith((".", "?", "!")) else sentence + "."


def _template_source(template: dict, index: int) -> str:
    source = template["cells"][index].get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _dedupe(flags: list[dict]) -> list[dict]:
    seen, out = set(), []
    for flag in flags:
        key = (flag.get("kind"), flag.get("part"), flag.get("detail"))
        if key not in seen:
            seen.add(key)
            out.append(flag)
    return out


def _join_outputs(texts: list[str]) -> str:
    texts = [t for t in texts if t]
    if len(texts) <= 1:
        return texts[0] if texts else ""
    return "\n".join(f"--- run {i + 1} ---\n{t}" for i, t in enumerate(texts))


# -- learners, summaries, outputs ----------------------------------------------------------
@dataclass
class Learner:
    name: str
    files: list[Path]
    source: str = ""


def _notebooks_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and p.is_file())


def collect_learners(paths: list[Path], learner: str | None = None) -> list[Learner]:
    """Who submitted what.

    - a notebook file: one learner, named after the file;
    - a folder: each subfolder is a learner (all notebooks below it, e.g. nbgrader's
      ``submitted/NAME/ASSIGNMENT/NN_name.ipynb``); each notebook directly inside is a
      learner named after the file, unless every one is named like a worksheet
      (``NN_name.ipynb``) and there are no subfolders: then the folder is one learner;
    - ``learner``: everything given is one learner's work.
    """
    found: dict[str, Learner] = {}

    def add(name: str, files: list[Path], source: str) -> None:
        entry = found.setdefault(name, Learner(name, [], source))
        entry.files.extend(f for f in files if f not in entry.files)

    for path in map(Path, paths):
        if learner is not None:
            add(learner, [path] if path.is_file() else _notebooks_in(path), str(path))
        elif path.is_file():
            add(path.stem, [path], str(path))
        elif path.is_dir():
            folders = sorted(p for p in path.iterdir() if p.is_dir() and not p.name.startswith("."))
            files = sorted(p for p in path.iterdir() if p.is_file() and p.suffix == ".ipynb")
            if files and not folders and all(STAGE_FILE.match(p.name) for p in files):
                add(path.resolve().name, files, str(path))
                continue
            for folder in folders:
                add(folder.name, _notebooks_in(folder), str(folder))
            for file in files:
                add(file.stem, [file], str(file))
    return list(found.values())


def summarize(learner: Learner, results: list[dict], grader: Grader) -> dict:
    """A learner's record: the best graded notebook per stage, and every problem."""
    stages: dict[str, dict] = {}
    problems: list[str] = []
    for result in results:
        if result.get("status") != "graded":
            problems.append(f"{result.get('name')}: {result.get('message')}")
            continue
        key = result["stage"]
        best = stages.get(key)
        if best is not None:
            problems.append(f"several notebooks for {key} ({best['name']}, {result['name']}): the best one counts")
        if best is None or result["points"] > best["points"]:
            stages[key] = result
    if not learner.files:
        problems.append(f"no notebook (.ipynb) found in {learner.source}")
    flags = [{**flag, "stage": key} for key, result in stages.items() for flag in result.get("flags", [])]
    return {
        "learner": learner.name, "seed": grader.config.seed, "grader_version": grader.version,
        "total": sum(r["points"] for r in stages.values()),
        "max_total": sum(stage.points for stage, _ in grader.templates.values()),
        "isolation": isolation_of(stages.values()),
        "stages": stages, "problems": problems, "flags": flags,
        "ungraded": sum(1 for r in results if r.get("status") != "graded") + (0 if learner.files else 1),
        "notebooks": [r.get("notebook") for r in results],
    }


MARKS = {"passed": "PASS", "failed": "FAIL", "not_implemented": "TODO", "not_run": "SKIP", "error": "ERROR"}


def format_stage(result: dict) -> str:
    """The verdict table of one graded stage, as a learner would see it."""
    lines = [f"{result['stage']}: {result['points']:g} / {result['max_points']:g} points"]
    for r in result["results"]:
        lines.append(f"  [{MARKS.get(r['status'], r['status']):5}] {r['check']} ({r['points']:g}/{r['max_points']:g}): "
                     f"{r['description']}")
        if r["feedback"] and r["status"] != "passed":
            lines.extend("          " + line for line in r["feedback"].splitlines())
    for note in result.get("notes", []):
        lines.append(f"  note: {note}")
    return "\n".join(lines)


def format_table(summaries: list[dict], stage_keys: list[str]) -> str:
    """One row per learner and stage: score, checks passed, problems and review flags."""
    rows = [("learner", "stage", "score", "checks", "notes")]
    for s in sorted(summaries, key=lambda s: s["learner"]):
        keys = [k for k in stage_keys if k in s["stages"]] or ["-"]
        for n, key in enumerate(keys):
            r = s["stages"].get(key)
            if r is None:
                rows.append((s["learner"], "-", "0", "-", "; ".join(s["problems"])[:80]))
                continue
            passed = sum(1 for x in r["results"] if x["status"] == "passed")
            notes = []
            if r.get("flags"):
                notes.append(f"REVIEW ({len(r['flags'])} flag{'s' * (len(r['flags']) > 1)})")
            if r.get("cell_problems"):
                notes.append("cell problems: " + ", ".join(r["cell_problems"]))
            if r.get("cached"):
                notes.append("cached")
            elif r.get("same_as"):
                notes.append("identical to another learner's notebook")
            if n == 0 and s["problems"]:
                notes.append(f"{len(s['problems'])} problem(s)")
            rows.append((s["learner"] if n == 0 else "", key, f"{r['points']:g}/{r['max_points']:g}",
                         f"{passed}/{len(r['results'])}", "; ".join(notes)))
    widths = [max(len(str(row[c])) for row in rows) for c in range(4)]
    lines = []
    for i, row in enumerate(rows):
        lines.append("  ".join(str(v).ljust(widths[c]) for c, v in enumerate(row[:4])) + "  " + row[4])
        if i == 0:
            lines.append("-" * (sum(widths) + 8 + 5))
    return "\n".join(line.rstrip() for line in lines)


__all__ = ["GradeConfig", "Grader", "Learner", "Limits", "Interrupted", "GradingError", "collect_learners",
           "summarize", "gradebook_csv", "format_table", "format_stage", "write_json", "safe_name",
           "find_templates", "load_templates", "identify_stage", "read_submission"]
