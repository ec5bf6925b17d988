"""The grader end to end, through the sandbox: solutions, exercises, hostile submissions,
the cache and resuming, Ctrl-C, a batch of 60+ with -j 2, and the Gradescope bundle.

Every submission is generated into tmp_path (tests/hostile makes the hostile ones).
The batch tests print their throughput (submissions per minute); nothing asserts on time.

Grading here passes ``--isolation none`` explicitly: a test machine (root with a Python in a
private home, as CI images often are) may not allow full isolation, and the grader refuses
without it. The refusal, the opt-out and full isolation (where available) have tests of
their own. Every run of this module carries one run id (``MINIGRAD_GRADE_RUN``), so the
leftover-process checks count only this module's processes, not another grader's.
"""
from __future__ import annotations

import copy
import csv
import importlib
import json
import os
import pkgutil
import shutil
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

import tests.mutants
from minigrad.course.grading import grade_cli
from minigrad.course.grading.grader import GradeConfig, Grader, Learner, load_templates
from minigrad.course.grading.sandbox import RUN_ENV, Limits
from tests.hostile import CASES, FULL, STAGE, solution_notebook, source_of, with_cells, write_case, write_json

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux /proc")

ROOT = Path(__file__).resolve().parents[3]
TEMPLATES = load_templates(ROOT / "exercises")
STAGE_KEYS = sorted(TEMPLATES)
# The hanging cases are CPU-bound: the CPU limit ends them, the wall limit is only a backstop
# (generous, so a loaded CI machine cannot time out a correct solution). A correct stage-04
# solution needs about 1 s of CPU, the memory bomb about 2 s to reach its MemoryError; a machine
# busy with other processes stretches CPU time too (shared caches, page faults), so 6 s, not 3.
TEST_LIMITS = ["--cpu", "6", "--wall", "120", "--memory", "1024", "--restarts", "2"]
RUN_ID = f"tests-{os.getpid()}-{os.urandom(4).hex()}"


@pytest.fixture(autouse=True)
def _this_run(monkeypatch):
    """Children of the graders started here (in this process or a subprocess) carry RUN_ID."""
    monkeypatch.setenv(RUN_ENV, RUN_ID)


def _sandbox_tokens() -> list[int]:
    """This module's sandbox processes still running: there must be none after grading."""
    mark = f"{RUN_ENV}={RUN_ID}".encode() + b"\0"
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if mark in f.read() + b"\0":
                        found.append(int(entry))
            except OSError:
                pass
    return found


def _results(out: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}


def _cli(argv: list[str]) -> int:
    isolation = [] if "--isolation" in argv else ["--isolation", "none"]
    return grade_cli.main([*argv, "--templates", str(ROOT / "exercises"), *isolation])


# -- solutions and exercises ---------------------------------------------------------------------
def test_solutions_score_full_marks_and_exercises_zero(tmp_path, capsys):
    for folder in ("solutions", "exercises"):
        (tmp_path / folder).mkdir()
        for key in STAGE_KEYS:
            (tmp_path / folder / f"{key}.ipynb").write_bytes((ROOT / folder / f"{key}.ipynb").read_bytes())
    out = tmp_path / "out"
    code = _cli([str(tmp_path / "solutions"), str(tmp_path / "exercises"), "-j", "2", "--out", str(out)])
    assert code == 0, capsys.readouterr().out[-3000:]
    results = _results(out)
    for key in STAGE_KEYS:
        stage, _ = TEMPLATES[key]
        solved = results["solutions"]["stages"][key]
        assert solved["points"] == stage.points, [(r["check"], r["feedback"]) for r in solved["results"]
                                                  if r["status"] != "passed"]
        assert solved["seed"] == 0 and solved["isolation"]["limits"]["cpu_seconds"] > 0
        blank = results["exercises"]["stages"][key]
        assert blank["points"] == 0
        statuses = [r["status"] for r in blank["results"]]
        assert set(statuses) <= {"not_implemented", "not_run"} and "not_implemented" in statuses
        for r in blank["results"]:
            if r["status"] == "not_implemented":
                assert "not implemented yet" in r["feedback"]
    rows = list(csv.DictReader((out / "gradebook.csv").open()))
    assert {r["learner"]: r["total"] for r in rows} == {
        "solutions": f"{sum(TEMPLATES[k][0].points for k in STAGE_KEYS):g}", "exercises": "0"}
    assert not _sandbox_tokens(), [Path(f"/proc/{pid}/cmdline").read_bytes()[:200] for pid in _sandbox_tokens()]


# -- hostile and broken submissions -----------------------------------------------------------------
@pytest.fixture(scope="module")
def hostile_batch(tmp_path_factory):
    """Every hostile case as its own learner, plus an honest learner, in one batch with -j 2."""
    folder = tmp_path_factory.mktemp("hostile")
    subs = folder / "submissions"
    for case in CASES:
        write_case(case, subs)
    (subs / "honest").mkdir()
    write_json(subs / "honest" / f"{STAGE}.ipynb", solution_notebook())
    out = folder / "out"
    started = time.monotonic()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(RUN_ENV, RUN_ID)
        code = _cli([str(subs), "-j", "2", "--out", str(out), *TEST_LIMITS])
    elapsed = time.monotonic() - started
    print(f"\nhostile batch: {len(CASES) + 1} submissions in {elapsed:.1f} s with -j 2 "
          f"({60 * (len(CASES) + 1) / elapsed:.0f} submissions/min)")
    return code, _results(out), out


def test_hostile_batch_goes_on_and_exit_code_says_some_were_ungradable(hostile_batch):
    code, results, out = hostile_batch
    assert code == 1  # the empty file, the invalid JSON and the non-notebook could not be graded
    assert set(results) == {c.name for c in CASES} | {"honest"}
    assert results["honest"]["total"] == FULL
    rows = {r["learner"]: r for r in csv.DictReader((out / "gradebook.csv").open())}
    assert set(rows) == set(results)
    assert not _sandbox_tokens(), "a submission's processes outlived the batch"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_case(hostile_batch, case):
    _, results, _ = hostile_batch
    summary = results[case.name]
    if case.points is None:
        assert summary["stages"] == {} and summary["ungraded"] == 1
        assert case.feedback["message"] in " ".join(summary["problems"])
        return
    result = summary["stages"][STAGE]
    feedback = {r["check"]: r["feedback"] for r in result["results"]}
    assert result["points"] == case.points, feedback
    for key, words in case.feedback.items():
        if key in feedback:
            assert words in feedback[key], feedback[key]
        elif key == "warning":
            assert words in " ".join(result["warnings"])
        else:
            text = result[key] if isinstance(result[key], str) else " ".join(result[key])
            assert words in text, text[-500:]
    assert {f["kind"] for f in result["flags"]} >= set(case.flags)
    assert len(result["stdout"]) < 40_000 and len(result["stderr"]) < 40_000


def test_cell_problems_name_only_their_own_checks(hostile_batch):
    _, results, _ = hostile_batch
    result = results["syntax_error"]["stages"][STAGE]
    by_part = {}
    for r in result["results"]:
        by_part.setdefault(r["part"], set()).add(r["status"])
    assert by_part["run_backward"] == {"passed"}
    assert "error" in by_part["topological_order"]
    assert "line 3" in result["cell_problems"]["topological_order"]


# -- cache, resuming, seeds ---------------------------------------------------------------------------
def test_identical_notebooks_of_two_learners_are_not_called_cached_on_a_first_run(tmp_path):
    """Two learners hand in the same file: graded once, but neither result was "cached" (from an
    earlier run): the second says which notebook it is identical to."""
    for name in ("ann", "dee"):
        (tmp_path / name).mkdir()
        write_json(tmp_path / name / f"{STAGE}.ipynb", solution_notebook())
    config = GradeConfig(templates=ROOT / "exercises", isolation="none", cache_dir=tmp_path / "cache")
    with Grader(config) as grader:
        first = grader.grade_file(tmp_path / "ann" / f"{STAGE}.ipynb")
        second = grader.grade_file(tmp_path / "dee" / f"{STAGE}.ipynb")
        again = grader.grade_file(tmp_path / "ann" / f"{STAGE}.ipynb")
    assert first["cached"] is False and second["cached"] is False and again["cached"] is True
    assert second["same_as"] == str(tmp_path / "ann" / f"{STAGE}.ipynb") and second["points"] == FULL
    assert "identical to another learner's notebook" in g_format_table(second)
    assert "cached" not in g_format_table(second)


def g_format_table(result: dict) -> str:
    from minigrad.course.grading.grader import format_table

    summary = {"learner": "dee", "stages": {STAGE: result}, "problems": []}
    return format_table([summary], [STAGE])


def test_unchanged_submissions_are_not_graded_twice(tmp_path):
    subs = tmp_path / "subs"
    for name, cells in {"ann": {}, "ben": {"run_backward": "def run_backward(*a, **k):\n    pass\n"},
                        "cid": {"topological_order": "def topological_order(root):\n    return [root]\n"}}.items():
        (subs / name).mkdir(parents=True)
        write_json(subs / name / f"{STAGE}.ipynb", with_cells(cells))
    out = tmp_path / "out"
    args = [str(subs), "-j", "2", "--out", str(out), *TEST_LIMITS]
    assert _cli(args) == 0
    first = _results(out)
    assert not any(s["stages"][STAGE]["cached"] for s in first.values())

    assert _cli(args) == 0
    second = _results(out)
    assert all(s["stages"][STAGE]["cached"] for s in second.values())
    for name in first:
        assert second[name]["stages"][STAGE]["results"] == first[name]["stages"][STAGE]["results"]

    resubmitted = solution_notebook()  # ben resubmits (not byte-identical to ann's, which would be cached)
    resubmitted["metadata"]["note"] = "second try"
    write_json(subs / "ben" / f"{STAGE}.ipynb", resubmitted)
    assert _cli(args) == 0
    third = _results(out)
    assert [n for n, s in sorted(third.items()) if not s["stages"][STAGE]["cached"]] == ["ben"]
    assert third["ben"]["total"] == FULL

    assert _cli([*args, "--seed", "7"]) == 0  # another seed: graded again, recorded, other inputs
    fourth = _results(out)
    assert not any(s["stages"][STAGE]["cached"] for s in fourth.values())
    assert all(s["seed"] == 7 for s in fourth.values())
    seeds = {r["seed"] for r in fourth["ann"]["stages"][STAGE]["results"]}
    assert seeds.isdisjoint({r["seed"] for r in first["ann"]["stages"][STAGE]["results"]})
    assert fourth["ann"]["total"] == FULL


def _interrupt_after_first(tmp_path: Path, preexec=None) -> tuple[list[str], dict, Path]:
    """Start a batch of four with -j 1, send one SIGINT once the first learner is saved, and check
    that the grader stops with 130, keeping that learner; return the command, its env and --out."""
    subs = tmp_path / "subs"
    names = ["a_first", "b_hangs", "c_third", "d_fourth"]
    for name in names:
        (subs / name).mkdir(parents=True)
        nb = solution_notebook() if name != "b_hangs" else with_cells(
            {"topological_order": "while True:\n    pass\n"})
        nb["metadata"]["learner"] = name  # identical files would share a cached result
        write_json(subs / name / f"{STAGE}.ipynb", nb)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "minigrad.course.grading.grade_cli", str(subs), "-j", "1", "--out", str(out),
               "--templates", str(ROOT / "exercises"), "--isolation", "none", "--cpu", "300", "--wall", "600"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=preexec)
    # Interrupt as soon as a_first is saved: b_hangs (next, with -j 1) needs 300 s of CPU, so
    # c_third cannot be graded yet, however fast or slow the machine is (30 s once ran out on a
    # loaded machine before this process got to send the signal).
    deadline = time.monotonic() + 600  # a generous bound for a loaded machine, not a timing assertion
    while not (out / "results" / "a_first.json").exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert (out / "results" / "a_first.json").exists(), "the grader stopped (or stalled) before saving a_first"
    proc.send_signal(signal.SIGINT)  # once: the grader must act on the first Ctrl-C
    try:
        stdout, stderr = proc.communicate(timeout=300)  # generous for a loaded machine; it takes about a second
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        pytest.fail("one SIGINT did not stop the grader within 300 s:\n" + stderr.decode()[-2000:])
    assert proc.returncode == 130, stderr.decode()[-2000:]
    assert b"run the same command again" in stderr
    assert not _sandbox_tokens()
    assert (out / "results" / "a_first.json").exists() and not (out / "results" / "c_third.json").exists()
    return command, env, out


def test_ctrl_c_loses_nothing_already_graded(tmp_path):
    command, env, out = _interrupt_after_first(tmp_path)
    resumed = subprocess.run([*command[:-4], "--cpu", "4", "--wall", "120"], cwd=tmp_path, capture_output=True,
                             timeout=900, env=env)
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    results = _results(out)
    assert results["a_first"]["stages"][STAGE]["cached"] is True
    assert not results["c_third"]["stages"][STAGE]["cached"]
    assert [results[n]["total"] for n in ["a_first", "b_hangs", "c_third", "d_fourth"]] == [FULL, 5, FULL, FULL]


def _as_a_background_job() -> None:
    """What a grader started with ``&`` from a shell script (or by a test suite run that way)
    inherits: SIGINT ignored. Blocked as well, as some process launchers leave it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


def test_ctrl_c_stops_a_grader_started_with_sigint_ignored(tmp_path):
    """Python leaves an inherited SIG_IGN in place: such a grader went on grading after Ctrl-C
    (the Ctrl-C test above failed that way whenever the suite itself was started with ``&``)."""
    _interrupt_after_first(tmp_path, preexec=_as_a_background_job)


# -- a batch of 60+ -------------------------------------------------------------------------------------
def _mutant_cases(per_stage: int = 4):
    """The first mutants of every stage that has a worksheet (all of stage 04's)."""
    for info in pkgutil.iter_modules(tests.mutants.__path__):
        key = info.name[1:]
        if key in TEMPLATES and (ROOT / "solutions" / f"{key}.ipynb").exists():
            mutants = importlib.import_module(f"tests.mutants.{info.name}").MUTANTS
            yield from ((key, m) for m in (mutants if key == STAGE else mutants[:per_stage]))


def test_batch_of_generated_submissions_with_two_jobs(tmp_path):
    subs = tmp_path / "subs"
    expected: dict[str, tuple[str, float | None, set | None]] = {}  # learner -> (stage, points, lost checks)
    for key in STAGE_KEYS:
        stage, _ = TEMPLATES[key]
        for folder, points in (("solutions", stage.points), ("exercises", 0)):
            name = f"{folder}_{key}"
            (subs / name).mkdir(parents=True)
            (subs / name / f"{key}.ipynb").write_bytes((ROOT / folder / f"{key}.ipynb").read_bytes())
            expected[name] = (key, points, None)
    for key, mutant in _mutant_cases():
        with open(ROOT / "solutions" / f"{key}.ipynb", encoding="utf-8") as f:
            nb = json.load(f)
        for cell in nb["cells"]:
            gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
            if gid in mutant.cells:
                cell["source"] = mutant.cells[gid]
        cells = nb["cells"]  # a mutant's added cells go above the first of its own (as in test_mutants.py)
        first = next(i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("solution")
                     and (not mutant.cells or c["metadata"]["nbgrader"]["grade_id"] in mutant.cells))
        for k, source in enumerate(mutant.added):
            cells.insert(first + k, {"cell_type": "code", "id": f"added-{k}", "metadata": {}, "outputs": [],
                                     "execution_count": None, "source": source})
        name = f"mutant_{key}_{mutant.name}"
        (subs / name).mkdir(parents=True)
        write_json(subs / name / f"{key}.ipynb", nb)
        expected[name] = (key, None, mutant.lost)
    for case in CASES:
        if not case.slow and not case.name.startswith("huge"):
            write_case(case, subs)
            expected[case.name] = (STAGE, case.points, None)
    assert len(expected) >= 60

    out = tmp_path / "out"
    started = time.monotonic()
    # Default-sized limits: some stages compile the learner's Numba kernels (seconds of CPU).
    code = _cli([str(subs), "-j", "2", "--out", str(out), "--quiet", "--cpu", "30", "--wall", "60"])
    elapsed = time.monotonic() - started
    print(f"\nbatch: {len(expected)} submissions graded in {elapsed:.1f} s with -j 2: "
          f"{60 * len(expected) / elapsed:.0f} submissions/min")
    assert code == 1  # the generated batch holds files that cannot be graded
    results = _results(out)
    assert set(results) == set(expected)
    for name, (key, points, lost) in expected.items():
        if points is None and lost is None:
            assert results[name]["stages"] == {}
            continue
        result = results[name]["stages"][key]
        if lost is not None:
            assert {r["check"] for r in result["results"] if r["status"] != "passed"} == lost, name
        else:
            assert result["points"] == points, (name, [(r["check"], r["feedback"]) for r in result["results"]])
    assert not _sandbox_tokens()


# -- grading API: same seed, same verdicts -------------------------------------------------------------
def test_a_regrade_reproduces_the_same_results(tmp_path):
    path = tmp_path / f"{STAGE}.ipynb"
    write_json(path, with_cells({"run_backward": "def run_backward(root, grad, retain_graph=False):\n"
                                                 "    engine.run_backward([(root, 0)], [grad], True, False)\n"}))
    config = GradeConfig(seed=123, limits=Limits(cpu_seconds=10, wall_seconds=120), templates=ROOT / "exercises",
                         isolation="none")
    with Grader(config) as grader:
        first = grader.grade_file(path)
        second = grader.grade_file(path)
        (summary,) = grader.grade_batch([Learner("x", [path])])
    assert first["results"] == second["results"] == summary["stages"][STAGE]["results"]
    assert first["seed"] == 123 and first["grader_version"] == grader.version
    assert {r["check"] for r in first["results"] if r["status"] != "passed"} == {"backward_frees"}
    assert any(f["kind"] == "reference_call" and f["source"] == "dynamic" for f in first["flags"])


# -- Gradescope --------------------------------------------------------------------------------------
def _solution_regions(text: str) -> list[str]:
    regions, inside, lines = [], False, []
    for line in text.splitlines():
        if line.strip() == "### BEGIN SOLUTION":
            inside, lines = True, []
        elif line.strip() == "### END SOLUTION":
            inside = False
            body = "\n".join(l.strip() for l in lines if l.strip() and not l.strip().startswith("#"))
            if body.count("\n") >= 2:
                regions.append(body)
        elif inside:
            lines.append(line)
    return regions


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gradescope")
    out = folder / "autograder.zip"
    assert _cli(["gradescope", str(out), "--stages", "04", *TEST_LIMITS]) == 0
    with zipfile.ZipFile(out) as z:
        assert json.loads(z.read("config.json"))["isolation"] == "none"
    return out


def test_gradescope_bundle_holds_no_solutions(bundle):
    with zipfile.ZipFile(bundle) as z:
        names = z.namelist()
        contents = {n: z.read(n).decode("utf-8", "replace") for n in names}
        modes = {n: z.getinfo(n).external_attr >> 16 for n in names}
    assert {"setup.sh", "run_autograder", "config.json", "package/pyproject.toml"} <= set(names)
    assert modes["run_autograder"] & 0o111 and modes["setup.sh"] & 0o111
    assert [n for n in names if n.startswith("exercises/")] == [f"exercises/{STAGE}.ipynb"]
    assert not [n for n in names if n.startswith(("solutions/", "tests/")) or "/solutions/" in n or "/tests/" in n]
    assert not [n for n in names if n.endswith((".pyc", ".nbi", ".nbc"))]
    assert "package/minigrad/course/grading/sandbox_child.py" in names
    normalized = {n: "\n".join(l.strip() for l in c.splitlines() if l.strip()) for n, c in contents.items()}
    # minigrad is the reference implementation: the worksheets rebuild its pieces, so their
    # solutions may match its code, and a stage module whose reference() re-implements the
    # worksheet's own piece holds it too (learners install the package anyway: see GRADING.md).
    # Everything else (templates, config, scripts, the grader) must hold no solution.
    def allowed(name: str) -> bool:
        return name.startswith("package/minigrad/") and not (
            name.startswith("package/minigrad/course/") and not name.startswith(stages))

    stages = "package/minigrad/course/stages/"
    embedded = set()
    for solution in (ROOT / "solutions").glob("*.ipynb"):
        nb = json.loads(solution.read_text())
        for cell in nb["cells"]:
            source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for region in _solution_regions(source):
                leaks = [n for n, c in normalized.items() if region in c]
                embedded |= {n for n in leaks if allowed(n)}
                leaks = [n for n in leaks if not allowed(n)]
                assert not leaks, f"a solution of {solution.name} is in {leaks}"
    if embedded:
        print(f"\npackage files that hold a worksheet solution (the reference): {sorted(embedded)}")
    config = json.loads(contents["config.json"])
    assert config["stages"] == [STAGE] and config["limits"]["wall_seconds"] == 120


def _autograder(tmp_path: Path, bundle: Path, submission: dict[str, bytes], site: Path | None) -> dict:
    root = tmp_path / "autograder"
    for sub in ("source", "submission", "results"):
        (root / sub).mkdir(parents=True)
    with zipfile.ZipFile(bundle) as z:
        z.extractall(root / "source")
    for name, data in submission.items():
        (root / "submission" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / name).write_bytes(data)
    env = {**os.environ, "MINIGRAD_AUTOGRADER_ROOT": str(root), "MINIGRAD_PYTHON": sys.executable}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    run = subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, capture_output=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr.decode()[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


@pytest.fixture(scope="module")
def installed_bundle(bundle, tmp_path_factory):
    """The bundle's package/, installed on its own (as setup.sh would, without dependencies)."""
    folder = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(bundle) as z:
        z.extractall(folder / "bundle")
    run = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation",
                          "--no-index", "--target", str(folder / "site"), str(folder / "bundle" / "package")],
                         capture_output=True, timeout=300)
    if run.returncode != 0:
        pytest.skip(f"could not install the bundle's package offline: {run.stderr.decode()[-500:]}")
    return folder / "site"


def _check_results_schema(results: dict) -> None:
    json.dumps(results, allow_nan=False)
    assert isinstance(results["score"], (int, float)) and isinstance(results["execution_time"], (int, float))
    assert isinstance(results["output"], str)
    for test in results["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed")
        assert 0 <= test["score"] <= test["max_score"] or test["max_score"] == 0


def test_gradescope_run_autograder_from_the_bundle(tmp_path, bundle, installed_bundle):
    nb = json.dumps(solution_notebook()).encode()
    results = _autograder(tmp_path / "solution", bundle, {"my work/04_topological_backward.ipynb": nb},
                          installed_bundle)
    _check_results_schema(results)
    assert results["score"] == FULL
    visible = [t for t in results["tests"] if t["visibility"] == "visible"]
    assert len(visible) == len(TEMPLATES[STAGE][0].checks) and all(t["status"] == "passed" for t in visible)
    details = next(t for t in results["tests"] if t["name"].startswith("Grading details"))
    assert str(installed_bundle) in json.dumps(details) or "isolation" in details["output"]

    hostile = with_cells({"topological_order": "import os\nos._exit(0)\n",
                          # the import is flagged for review; it must not fail where torch is not installed
                          "run_backward": "try:\n    import torch\nexcept ImportError:\n    pass\n"
                                          "def run_backward(*a, **k):\n    raise ValueError('no')\n"})
    results = _autograder(tmp_path / "hostile", bundle, {"Copy of worksheet.ipynb": json.dumps(hostile).encode()},
                          installed_bundle)
    _check_results_schema(results)
    assert results["score"] == 0
    outputs = " ".join(t["output"] for t in results["tests"])
    assert "exited with status 0" in outputs and "ValueError" in outputs
    assert any(t["visibility"] == "hidden" and "torch" in t["output"] for t in results["tests"])


def test_gradescope_run_without_a_notebook_still_writes_results(tmp_path, bundle):
    results = _autograder(tmp_path, bundle, {"answers.txt": b"I did it"}, None)
    _check_results_schema(results)
    assert results["score"] == 0 and "no Jupyter notebook" in results["output"]
    assert all(t["score"] == 0 for t in results["tests"])


def test_gradescope_bundle_for_every_stage_lists_every_check(tmp_path, capsys):
    out = tmp_path / "all.zip"
    # Every stage with the default limits (3 attempts x 120 s each) cannot fit Gradescope's timeout:
    assert _cli(["gradescope", str(out)]) == 2
    err = capsys.readouterr().err
    assert "exceed Gradescope's autograder timeout of 10 min" in err and "--timeout MINUTES" in err
    assert not out.exists()
    assert _cli(["gradescope", str(out), "--wall", "30", "--restarts", "1", "--timeout", "40"]) == 0
    with zipfile.ZipFile(out) as z:
        config = json.loads(z.read("config.json"))
    assert config["stages"] == sorted(load_templates(ROOT / "exercises"))  # stages may be added meanwhile


def test_solution_copy_is_independent():
    a, b = solution_notebook(), copy.deepcopy(solution_notebook())
    assert a == b


# -- full isolation, where the machine allows it (root, with an interpreter other users can run) ----------
def test_full_isolation_when_available(tmp_path):
    from minigrad.course.grading.sandbox import detect_isolation

    from minigrad.course.grading.sandbox import IsolationUnavailable

    try:
        plan = detect_isolation("full", 1)
    except IsolationUnavailable as refusal:
        pytest.skip(f"full isolation unavailable here: {refusal}")
    if not plan.uids:
        pytest.skip("the grader is not root: children run as its own user (tested below)")
    secret = tmp_path / "grader-only"
    secret.mkdir(mode=0o700)
    probe = (f"import socket\nfor what, act in [('write', lambda: open({str(secret / 'x')!r}, 'w')),\n"
             "                  ('net', lambda: socket.create_connection(('1.1.1.1', 53), timeout=2))]:\n"
             "    try:\n        act()\n        print(what, 'ALLOWED')\n"
             "    except OSError as e:\n        print(what, 'refused', type(e).__name__)\n")
    path = tmp_path / f"{STAGE}.ipynb"
    write_json(path, with_cells({"run_backward": probe + "\n" + source_of(solution_notebook(), "run_backward")}))
    with Grader(GradeConfig(templates=ROOT / "exercises", isolation="full")) as grader:
        result = grader.grade_file(path)
    assert result["points"] == FULL
    assert "write refused" in result["stdout"] and "net refused" in result["stdout"], result["stdout"]
    assert result["isolation"]["child"]["uid"] in plan.uids
    assert not list(secret.iterdir())


# -- isolation fails closed ---------------------------------------------------------------------------
LONG_IMPORT_ERROR = ("ImportError: IMPORTANT: PLEASE READ THIS FOR ADVICE ON HOW TO SOLVE THIS ISSUE! "
                     + "Importing the numpy C-extensions failed. " * 20 + "END-OF-THE-UNDERLYING-ERROR")


def _broken_python(tmp_path: Path) -> Path:
    """An interpreter the children cannot use, failing with a long error (as numpy's is)."""
    script = tmp_path / "python-unusable"
    script.write_text(f"#!/bin/sh\necho '{LONG_IMPORT_ERROR}' >&2\nexit 1\n")
    script.chmod(0o755)
    return script


def test_without_isolation_the_grader_refuses_and_says_how_to_fix_it(tmp_path, capsys):
    path = tmp_path / f"{STAGE}.ipynb"
    write_json(path, solution_notebook())
    out = tmp_path / "out"
    code = _cli([str(tmp_path), "--out", str(out), "--quiet", "--isolation", "full",
                 "--python", str(_broken_python(tmp_path))])
    err = capsys.readouterr().err
    assert code == 2
    assert "refusing to run learner code" in err and "What is wrong" in err
    assert LONG_IMPORT_ERROR in err  # the underlying error, in full, even with --quiet
    for fix in ("every user can read", "-m venv /opt/minigrad", "--python /opt/minigrad/bin/python", "non-root",
                "--isolation none"):
        assert fix in err, fix
    assert not out.exists() and not _sandbox_tokens()  # nothing graded, nothing written


def test_isolation_none_is_recorded_in_table_json_and_csv(tmp_path, capsys):
    subs = tmp_path / "subs"
    (subs / "ann").mkdir(parents=True)
    write_json(subs / "ann" / f"{STAGE}.ipynb", solution_notebook())
    out = tmp_path / "out"
    assert _cli([str(subs), "--out", str(out), "--isolation", "none", *TEST_LIMITS]) == 0
    captured = capsys.readouterr()
    assert "isolation: NONE (--isolation none" in captured.out and "isolation: NONE" in captured.err
    summary = _results(out)["ann"]
    assert summary["isolation"] == "none" and summary["stages"][STAGE]["isolation"]["level"] == "none"
    (row,) = csv.DictReader((out / "gradebook.csv").open())
    assert row["isolation"] == "none" and row["total"] == f"{FULL:g}"
    assert _cli([str(subs), "--out", str(out), "--quiet", "--isolation", "none", *TEST_LIMITS]) == 0
    assert "isolation: NONE" in capsys.readouterr().err  # said even with --quiet


def test_gradescope_refusal_is_a_valid_result_that_names_the_problem(tmp_path, monkeypatch):
    root = tmp_path / "autograder"
    for sub in ("source/exercises", "submission", "results"):
        (root / sub).mkdir(parents=True)
    (root / "source" / "exercises" / f"{STAGE}.ipynb").write_bytes((ROOT / "exercises" / f"{STAGE}.ipynb").read_bytes())
    (root / "source" / "config.json").write_text(json.dumps({"stages": [STAGE], "isolation": "full"}))
    write_json(root / "submission" / "mine.ipynb", solution_notebook())

    import minigrad.course.grading.sandbox as sandbox

    broken = str(_broken_python(tmp_path))
    real = sandbox.detect_isolation
    monkeypatch.setattr(sandbox, "detect_isolation", lambda mode, slots=1, python=None: real(mode, slots, broken))
    monkeypatch.setattr("minigrad.course.grading.grader.detect_isolation", sandbox.detect_isolation)
    from minigrad.course.grading import gradescope

    assert gradescope.run(root) == 0
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and "refused" in results["output"] and LONG_IMPORT_ERROR in results["output"]


def test_a_non_root_child_gets_no_network_in_a_user_namespace(tmp_path):
    """The child's bootstrap as an ordinary user: a user namespace of its own makes a network
    namespace possible (run here as uid 65534 with the system Python, where the machine allows)."""
    from minigrad.course.grading.sandbox import CHILD_SCRIPT

    system_python = "/usr/bin/python3"
    if os.geteuid() != 0 or not shutil.which("setpriv") or not os.path.exists(system_python):
        pytest.skip("needs root (to become uid 65534), setpriv and /usr/bin/python3")
    import tempfile

    holder = tempfile.TemporaryDirectory(prefix="minigrad-userns-")  # not under pytest's private tmp folder
    work = Path(holder.name)
    work.chmod(0o777)
    (work / "child.py").write_bytes(CHILD_SCRIPT.read_bytes())
    job = work / "job.json"
    job.write_text(json.dumps({"probe_only": True, "package_root": str(work), "network": True, "limits": {}}))
    job.chmod(0o666)
    res_r, res_w = os.pipe()
    cmd_r, cmd_w = os.pipe()
    run = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", system_python, "-I", "-B",
                          str(work / "child.py"), str(job), str(cmd_r), str(res_w)], pass_fds=(cmd_r, res_w),
                         capture_output=True, timeout=120, cwd=work)
    os.close(res_w)
    data = b""
    while chunk := os.read(res_r, 65536):
        data += chunk
    os.close(res_r)
    os.close(cmd_r)
    os.close(cmd_w)
    holder.cleanup()
    if not data:
        pytest.skip(f"the system Python cannot run the child here: {run.stderr.decode()[-500:]}")
    hello = json.loads(data.splitlines()[0])
    network = hello["isolation"]["network"]
    if "Operation not permitted" in network:
        pytest.skip(f"unprivileged user namespaces are disabled here: {network}")
    assert network.startswith("none") and "user namespace" in network
    assert hello["isolation"]["uid"] == 65534


def test_gradescope_limits_add_up_against_the_timeout():
    from minigrad.course.grading.gradescope import STARTUP_SECONDS, check_timeout, worst_case_seconds

    limits = Limits(wall_seconds=100, restarts=2)
    assert worst_case_seconds(limits, 2) == 2 * 3 * 100 + STARTUP_SECONDS
    check_timeout(limits, 1, 10)  # 5 min + start-up: fits the default 10 min
    with pytest.raises(ValueError, match="2 stage\\(s\\) x 3 attempt"):
        check_timeout(limits, 2, 10)
    check_timeout(limits, 2, 40)


# -- the guide's nbgrader workflow, verbatim, with real nbgrader ----------------------------------------
def _guide_block(heading: str) -> list[str]:
    """The lines of the first ```bash block under ``heading`` in GRADING.md."""
    text = (ROOT / "minigrad" / "course" / "GRADING.md").read_text(encoding="utf-8")
    section = text[text.index(heading):]
    block = section[section.index("```bash\n") + len("```bash\n"):]
    return block[:block.index("```")].splitlines()


def _nbgrader_meta(cell: dict) -> tuple:
    meta = cell["metadata"]
    grading = {k: v for k, v in meta.get("nbgrader", {}).items() if k not in ("cell_type", "checksum")}
    return ("".join(cell["source"]), grading, meta.get("editable"), meta.get("deletable"))


@pytest.mark.slow
def test_the_guides_nbgrader_section_works_verbatim(tmp_path):
    """GRADING.md's "With nbgrader" commands, as written, with nbgrader itself: the release
    equals exercises/ (locks included), validate calls a 0-point check failed, minigrad-grade
    grades the assignment's stages only, and nbgrader's autograde agrees with it. Between the
    commands the test plays the learners: alice hands in the release untouched, bob the
    solutions. (Where this machine cannot isolate learner code, minigrad-grade's line gets
    --isolation none: the refusal has a test of its own.)"""
    nbgrader = Path(sys.executable).with_name("nbgrader")
    if not nbgrader.exists():
        pytest.skip("nbgrader is not installed (pip install -e '.[dev]')")
    from minigrad.course.grading.sandbox import IsolationUnavailable, detect_isolation

    lines = _guide_block("### With nbgrader")
    split = next(i for i, line in enumerate(lines) if line.startswith("# ... release and collect"))
    try:
        detect_isolation("full", 1)
    except IsolationUnavailable:
        lines = [line.replace(" --out grades/ps1", " --out grades/ps1 --isolation none")
                 if line.startswith("minigrad-grade ") else line for line in lines]
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "solutions", repo / "solutions")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    def run(script: list[str], cwd: Path) -> str:
        done = subprocess.run(["bash", "-c", "\n".join(["set -u", *script])], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=3600)
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        return done.stdout + done.stderr

    run(lines[:split], repo)
    course = repo / "course"
    keys = [k for k in STAGE_KEYS if k[:2] in ("03", "04", "05")]
    for key in keys:
        release = json.loads((course / "release" / "ps1" / f"{key}.ipynb").read_text())
        ours = json.loads((ROOT / "exercises" / f"{key}.ipynb").read_text())
        assert [_nbgrader_meta(c) for c in release["cells"]] == [_nbgrader_meta(c) for c in ours["cells"]], key
        for student, folder in (("alice", course / "release" / "ps1"), ("bob", repo / "solutions")):
            (course / "submitted" / student / "ps1").mkdir(parents=True, exist_ok=True)
            shutil.copyfile(folder / f"{key}.ipynb", course / "submitted" / student / "ps1" / f"{key}.ipynb")

    output = run(["cd course", *lines[split + 1:]], repo)
    assert "VALIDATION FAILED" in output and "0 of 6 points: no check passes yet" in output
    assert "Partial credit" not in output  # every check of the untouched worksheet scored 0

    with open(course / "grades" / "ps1" / "gradebook.csv", newline="") as f:
        rows = {row["learner"]: row for row in csv.DictReader(f)}
    full = sum(TEMPLATES[k][0].points for k in keys)
    assert [c for c in rows["bob"] if c[:2].isdigit()] == keys
    assert {n: (r["total"], r["max_total"]) for n, r in rows.items()} == {"alice": ("0", f"{full:g}"),
                                                                          "bob": (f"{full:g}", f"{full:g}")}
    from nbgrader.api import Gradebook as NbgraderGradebook

    with NbgraderGradebook(f"sqlite:///{course / 'gradebook.db'}") as book:
        scores = {s: book.find_submission("ps1", s).score for s in ("alice", "bob")}
        assert book.find_assignment("ps1").max_score == full
    assert scores == {"alice": 0, "bob": full}
    assert sorted(p.name for p in (course / "feedback" / "bob" / "ps1").glob("*.html")) == [f"{k}.html" for k in keys]


@pytest.mark.parametrize("signum, cpu, says_limit", [
    (signal.SIGXCPU, 5.9, True), (signal.SIGXCPU, 4.2, True),  # SIGXCPU: only the CPU limit sends it
    (signal.SIGKILL, 7.9, True), (signal.SIGKILL, 0.3, False),  # SIGKILL: the hard limit only if the CPU says so
])
def test_explain_names_the_cpu_limit(signum, cpu, says_limit):
    """A busy machine can report a little less CPU time than the limit that stopped the child
    (seen under load: "killed by SIGXCPU" without the limit); the words must not depend on it."""
    from types import SimpleNamespace

    from minigrad.course.grading.sandbox import ExitInfo, Sandbox, SandboxStopped

    box = SimpleNamespace(exit=ExitInfo(returncode=-signum, cpu_seconds=cpu), limits=Limits(cpu_seconds=6))
    words = Sandbox.explain(box, SandboxStopped("exited"))
    assert ("CPU time limit of 6 s" in words) == says_limit, words
    assert signal.Signals(signum).name in words
