"""Gradescope: build the autograder bundle, and run it inside Gradescope's container.

``minigrad-grade gradescope OUT.zip`` writes a zip holding

- ``setup.sh``: Gradescope runs it once to build the image; it pip-installs the package;
- ``run_autograder``: Gradescope runs it (as root) once per submission; it calls
  ``python3 -m minigrad.course.grading.gradescope run``;
- ``package/``: minigrad (the reference implementation), its course checks and this
  grader, with ``pyproject.toml``;
- ``exercises/``: the worksheet templates (the exercises, never the solutions);
- ``config.json``: the stages graded, the seed, the limits and isolation mode.

``solutions/`` and ``tests/`` (whose mutants hold correct code) are never bundled.

``run`` grades every notebook found under ``ROOT/submission`` as one learner's
work and writes ``ROOT/results/results.json`` in Gradescope's format: one test per
check, with ``score``, ``max_score``, ``status``, ``name``, ``output`` and
``visibility``; plus hidden tests for instructors (review flags, the isolation
applied); and the top-level ``score``, ``output`` and ``execution_time``. Whatever
happens, it writes a valid results file (score 0 and an explanation if grading
itself failed). ``ROOT`` is ``/autograder`` unless ``MINIGRAD_AUTOGRADER_ROOT`` says
otherwise (tests lay out a temporary directory like it).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
import zipfile
from collections.abc import Sequence
from pathlib import Path

from minigrad.course.grading.options import add_limit_options, limits_from
from minigrad.course.grading.sandbox import IsolationUnavailable, Limits, package_root

ROOT_ENV = "MINIGRAD_AUTOGRADER_ROOT"
DEFAULT_ROOT = "/autograder"
# Gradescope stops a run after the assignment's autograder timeout: 10 minutes unless the
# instructor raises it (Autograder Settings), 40 at most. The grader's own start-up (the
# reference observations, warming Numba) gets this much on top of the learner's stages.
GRADESCOPE_TIMEOUT_MINUTES, GRADESCOPE_MAX_MINUTES = 10, 40
STARTUP_SECONDS = 60

SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, while it builds the autograder image.
set -euo pipefail
cd /autograder/source
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "minigrad needs Python 3.10 or newer; this base image has $(python3 --version 2>&1)." >&2
    echo "Choose an Ubuntu 22.04 (Python 3.10) or 24.04 (Python 3.12) base image in Autograder Settings." >&2
    exit 1
fi
if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3 python3-pip
fi
python3 -m pip install --no-cache-dir ./package \\
    || python3 -m pip install --no-cache-dir --break-system-packages ./package
# Fail the image build now, rather than every submission later, if the install is broken.
python3 -c "import minigrad.course.grading.grader"
"""

RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this once per submission, as root. The learner's code never runs in this
# process: the grader rebuilds each worksheet from source/exercises and runs it sandboxed.
ROOT="${MINIGRAD_AUTOGRADER_ROOT:-/autograder}"
PYTHON="${MINIGRAD_PYTHON:-python3}"
mkdir -p "$ROOT/results"
cd "$ROOT"
"$PYTHON" -m minigrad.course.grading.gradescope run --root "$ROOT"
if [ ! -s "$ROOT/results/results.json" ]; then
    cat > "$ROOT/results/results.json" <<'JSON'
{"score": 0, "execution_time": 0, "output": "The autograder could not start, so this submission was not graded. Please tell your instructor.", "tests": []}
JSON
fi
"""

EXCLUDED_PARTS = {"__pycache__", ".ipynb_checkpoints", "solutions", "tests"}
EXCLUDED_SUFFIXES = (".pyc", ".pyo", ".nbi", ".nbc")


# -- building the bundle ----------------------------------------------------------------------
def _package_files(root: Path) -> list[tuple[Path, str]]:
    files = []
    for path in sorted((root / "minigrad").rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and not (set(rel.parts) & EXCLUDED_PARTS) and not path.name.endswith(EXCLUDED_SUFFIXES):
            files.append((path, f"package/{rel.as_posix()}"))
    return files


def _pyproject(root: Path) -> tuple[str, dict[str, bytes]]:
    """The project's own pyproject.toml (with its README and LICENSE), or a minimal one."""
    extra: dict[str, bytes] = {}
    if (root / "pyproject.toml").is_file():
        for name in ("README.md", "LICENSE"):
            if (root / name).is_file():
                extra[f"package/{name}"] = (root / name).read_bytes()
        return (root / "pyproject.toml").read_text(encoding="utf-8"), extra
    try:
        from importlib.metadata import version

        release = version("minigrad-course")
    except Exception:  # noqa: BLE001
        release = "0.0.0"
    return (f'[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n\n'
            f'[project]\nname = "minigrad-course"\nversion = "{release}"\nrequires-python = ">=3.10"\n'
            'dependencies = ["numpy>=1.24", "numba>=0.59"]\n\n[tool.setuptools.packages.find]\n'
            'include = ["minigrad*"]\n\n[tool.setuptools.package-data]\n"minigrad.data" = ["*.csv.gz", "*.txt", "*.md"]\n'
            ), extra


def build_bundle(out: Path, templates: Path, stages: list[str] | None = None, seed: int = 0,
                 limits=None, isolation: str = "full", visibility: str = "visible") -> list[str]:
    """Write the autograder zip; return the names it holds."""
    from minigrad.course.grading.grader import choose_stages, load_templates

    available = load_templates(templates)
    chosen = choose_stages(available, stages)
    root = Path(package_root())
    pyproject, extra = _pyproject(root)
    config = {"stages": chosen, "seed": seed, "limits": (limits or Limits()).to_dict(),
              "isolation": isolation, "visibility": visibility}
    names = []
    out.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as bundle:
        def add(name: str, data: bytes, executable: bool = False) -> None:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            bundle.writestr(info, data)
            names.append(name)

        add("setup.sh", SETUP_SH.encode(), executable=True)
        add("run_autograder", RUN_AUTOGRADER.encode(), executable=True)
        add("config.json", json.dumps(config, indent=1).encode())
        add("package/pyproject.toml", pyproject.encode())
        for name, data in extra.items():
            add(name, data)
        for path, name in _package_files(root):
            add(name, path.read_bytes())
        for key in chosen:
            add(f"exercises/{key}.ipynb", (Path(templates) / f"{key}.ipynb").read_bytes())
    return names


def worst_case_seconds(limits: Limits, stages: int) -> float:
    """The longest one submission can take: every stage's child running into the wall-clock
    limit on every attempt (``restarts + 1``), one stage after another, plus start-up."""
    return stages * (limits.restarts + 1) * limits.wall_seconds + STARTUP_SECONDS


def check_timeout(limits: Limits, stages: int, minutes: float) -> None:
    """Raise ``ValueError`` when the limits can add up to more than Gradescope's timeout (a
    submission cut off by it gets no results at all, not a partial score)."""
    worst = worst_case_seconds(limits, stages)
    if worst > minutes * 60:
        raise ValueError(
            f"these limits can exceed Gradescope's autograder timeout of {minutes:g} min: {stages} stage(s) x "
            f"{limits.restarts + 1} attempt(s) (--restarts {limits.restarts} + 1) x --wall {limits.wall_seconds:g} s "
            f"+ {STARTUP_SECONDS} s start-up = {worst / 60:.1f} min. Lower --wall or --restarts, split the "
            f"stages over several assignments, or raise the assignment's timeout (Autograder Settings, at most "
            f"{GRADESCOPE_MAX_MINUTES} min) and pass it as --timeout MINUTES.")


def build_main(argv: Sequence[str]) -> int:
    from minigrad.course.grading.grader import choose_stages, find_templates, load_templates

    parser = argparse.ArgumentParser(
        prog="minigrad-grade gradescope",
        description="Build a Gradescope autograder zip: setup.sh, run_autograder, the package and its "
                    "checks, the exercise templates (never the solutions).",
        epilog="Exit codes: 0 written, 2 usage error.")
    parser.add_argument("out", type=Path, metavar="OUT.zip")
    parser.add_argument("--stages", help="comma-separated stages this assignment grades, by number or "
                                         "name (default: every stage that has a template)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hidden inputs (recorded in results)")
    parser.add_argument("--templates", type=Path, metavar="DIR", help="worksheet templates (default: exercises/)")
    parser.add_argument("--timeout", type=float, default=GRADESCOPE_TIMEOUT_MINUTES, metavar="MINUTES",
                        help="the assignment's autograder timeout on Gradescope (default "
                             f"{GRADESCOPE_TIMEOUT_MINUTES}, at most {GRADESCOPE_MAX_MINUTES}); the bundle is refused "
                             "if the limits can add up to more")
    parser.add_argument("--visibility", default="visible",
                        choices=("visible", "hidden", "after_due_date", "after_published"),
                        help="when learners see each check's result (default visible)")
    add_limit_options(parser)
    args = parser.parse_args(list(argv))
    try:
        limits = limits_from(args)
        templates = args.templates or find_templates()
        stages = [s.strip() for s in args.stages.split(",") if s.strip()] if args.stages else None
        if not 0 < args.timeout <= GRADESCOPE_MAX_MINUTES:
            raise ValueError(f"--timeout must be between 0 and {GRADESCOPE_MAX_MINUTES} minutes (Gradescope's maximum)")
        check_timeout(limits, len(choose_stages(load_templates(templates), stages)), args.timeout)
        names = build_bundle(args.out, templates, stages, args.seed, limits, args.isolation, args.visibility)
    except (KeyError, FileNotFoundError, ValueError) as e:
        print(f"minigrad-grade gradescope: error: {e.args[0] if e.args else e}", file=sys.stderr)
        return 2
    stages_in = sorted(n.split("/")[1][:-6] for n in names if n.startswith("exercises/"))
    print(f"wrote {args.out}: {len(names)} files, stages {', '.join(stages_in)}, seed {args.seed}")
    print("Upload it as the assignment's autograder (Configure Autograder > Zip file upload).")
    return 0


# -- running inside Gradescope ----------------------------------------------------------------
def _failure(message: str, started: float) -> dict:
    return {"score": 0, "execution_time": round(time.monotonic() - started, 2),
            "output": message, "visibility": "visible", "stdout_visibility": "hidden", "tests": []}


def results_for(summary: dict, stages: list[str], templates: dict, visibility: str, plan_notes: list[str]) -> dict:
    """Gradescope's results.json for one learner's summary."""
    tests, lines = [], []
    for key in stages:
        stage, _ = templates[key]
        result = summary["stages"].get(key)
        label = f"{stage.number} {stage.title}"
        if result is None:
            for check in stage.checks:
                tests.append({"name": f"{label}: {check.description} ({check.id})", "score": 0,
                              "max_score": check.points, "status": "failed", "visibility": visibility,
                              "output": f"No notebook for this worksheet was found in your submission: upload "
                                        f"{key}.ipynb (the worksheet, with your code in its cells)."})
            lines.append(f"{label}: no notebook found (0 / {stage.points:g})")
            continue
        lines.append(f"{label}: {result['points']:g} / {result['max_points']:g} points ({result['name']})")
        for problem in result.get("cell_problems", {}).values():
            lines.append("  " + problem.replace("\n", "\n  "))
        for note in result.get("notes", []):
            lines.append(f"  note: {note}")
        for r in result["results"]:
            tests.append({"name": f"{label}: {r['description']} ({r['check']})", "score": r["points"],
                          "max_score": r["max_points"], "status": "passed" if r["status"] == "passed" else "failed",
                          "visibility": visibility,
                          "output": r["feedback"] or ("passed" if r["status"] == "passed" else r["status"])})
    for problem in summary["problems"]:
        lines.append(f"Problem: {problem}")
    if summary["flags"]:
        from minigrad.course.review import describe_flag

        tests.append({"name": "Instructor review: flags raised while grading", "score": 0, "max_score": 0,
                      "status": "failed", "visibility": "hidden",
                      "output": "\n".join(f"{f['stage']}: {describe_flag(f)}" for f in summary["flags"])})
    details = {key: {"seed": r.get("seed"), "grader_version": r.get("grader_version"), "isolation": r.get("isolation"),
                     "attempts": r.get("attempts"), "stdout": r.get("stdout", "")[-4000:],
                     "stderr": r.get("stderr", "")[-4000:]} for key, r in summary["stages"].items()}
    tests.append({"name": "Grading details (instructors only)", "score": 0, "max_score": 0, "status": "passed",
                  "visibility": "hidden", "output": json.dumps({"notes": plan_notes, "stages": details}, indent=1)})
    return {"score": sum(summary["stages"][k]["points"] for k in stages if k in summary["stages"]),
            "output": "\n".join(lines), "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


def _finite(value):
    """Gradescope parses strict JSON: no NaN or Infinity."""
    if isinstance(value, float) and value != value or value in (float("inf"), float("-inf")):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def run(root: Path) -> int:
    """Grade ``root/submission`` and write ``root/results/results.json``; never raises."""
    started = time.monotonic()
    results_path = root / "results" / "results.json"
    try:
        results_path.parent.mkdir(parents=True, exist_ok=True)
        results = _grade(root, started)
    except IsolationUnavailable as e:  # fails closed: the learner's code did not run
        print(f"minigrad: {e}", file=sys.stderr)
        results = _failure("This submission was not graded: the autograder could not isolate the code it "
                           "runs, so it refused to run it. Please tell your instructor.\n\n"
                           f"For the instructor: {e}", started)
    except BaseException as e:  # noqa: BLE001 - whatever happens, Gradescope gets a valid file
        detail = "".join(traceback.format_exception_only(type(e), e)).strip()
        results = _failure("The autograder failed while grading this submission, so it scored 0. "
                           f"Please tell your instructor.\n({detail[:500]})", started)
        traceback.print_exc()
    results["execution_time"] = round(time.monotonic() - started, 2)
    try:
        text = json.dumps(_finite(results), indent=1, allow_nan=False, default=str)
    except (TypeError, ValueError) as e:
        text = json.dumps(_failure(f"The autograder could not write its results ({e}). Please tell your instructor.",
                                   started))
    tmp = results_path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, results_path)
    print(f"score {results['score']:g}; wrote {results_path}")
    return 0


def _grade(root: Path, started: float) -> dict:
    from minigrad.course.grading.grader import GradeConfig, Grader, Learner

    config = json.loads((root / "source" / "config.json").read_text(encoding="utf-8"))
    limits = Limits(**config.get("limits", {}))
    submission = root / "submission"
    files = sorted(p for p in submission.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts and p.is_file()) \
        if submission.is_dir() else []
    grade_config = GradeConfig(seed=int(config.get("seed", 0)), limits=limits,
                               isolation=config.get("isolation", "full"), templates=root / "source" / "exercises",
                               cache_dir=None)
    with Grader(grade_config, jobs=max(1, min(len(files), os.cpu_count() or 1))) as grader:
        stages = [s for s in config.get("stages", []) if s in grader.templates] or list(grader.templates)
        if not files:
            found = sorted(p.name for p in submission.rglob("*") if p.is_file())[:10] if submission.is_dir() else []
            summary = {"stages": {}, "flags": [], "problems": [
                "no Jupyter notebook (.ipynb) in your submission" + (f" (found: {', '.join(found)})" if found else "")
                + ": upload the worksheet notebook itself"]}
        else:
            (summary,) = grader.grade_batch([Learner("submission", files, "your submission")])
        results = results_for(summary, stages, grader.templates, config.get("visibility", "visible"),
                              list(grader.plan.notes))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m minigrad.course.grading.gradescope")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run", help="grade /autograder/submission (inside Gradescope)")
    run_parser.add_argument("--root", type=Path, default=None,
                            help=f"the autograder folder (default ${ROOT_ENV} or {DEFAULT_ROOT})")
    build = commands.add_parser("build", help="build the bundle (same as `minigrad-grade gradescope`)")
    build.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if args.command == "build":
        return build_main(args.rest)
    return run(args.root or Path(os.environ.get(ROOT_ENV, DEFAULT_ROOT)))


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["build_bundle", "build_main", "run", "results_for", "main", "check_timeout", "worst_case_seconds"]
