"""The class gradebook (minigrad.course.grading.gradebook) and the runs that feed it.

A run adds or updates learners and keeps every other one; a quick look at one notebook
records nothing; concurrent runs on one output folder lose nothing; an assignment's
stages set the columns and max_total; N shards merged give exactly one run's gradebook.

Grading here passes ``--isolation none`` explicitly (see test_grader_sandbox.py: a test
machine may not allow full isolation, and the grader refuses without it).
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from minigrad.course.grading import grade_cli
from minigrad.course.grading.gradebook import Gradebook
from minigrad.course.grading.grader import load_templates
from tests.hostile import FULL, STAGE, solution_notebook, with_cells, write_json

ROOT = Path(__file__).resolve().parents[3]
TEMPLATES = load_templates(ROOT / "exercises")
LIMITS = ["--cpu", "10", "--wall", "300", "--isolation", "none", "--templates", str(ROOT / "exercises")]
sandboxed = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux /proc")


def _summary(name: str, points: dict[str, float], problems=()) -> dict:
    stages = {key: {"stage": key, "points": p, "max_points": 11, "results": [], "flags": [],
                    "isolation": {"level": "full"}} for key, p in points.items()}
    return {"learner": name, "seed": 0, "grader_version": "test", "stages": stages, "problems": list(problems),
            "ungraded": 0, "notebooks": [], "flags": []}


def _rows(out: Path) -> dict[str, dict]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as f:
        return {row["learner"]: row for row in csv.DictReader(f)}


# -- the store -------------------------------------------------------------------------------------------
def test_a_run_adds_and_updates_learners_and_never_drops_others(tmp_path):
    book = Gradebook(tmp_path)
    book.record(_summary("ann", {"04_x": 11}), {"04_x": 11})
    book.record(_summary("ben", {"04_x": 5}), {"04_x": 11})
    book.export_csv()
    book.record(_summary("ben", {"05_y": 7}, ["late"]), {"05_y": 12})  # a later run: ben's stage 05 only
    book.export_csv()
    rows = _rows(tmp_path)
    assert set(rows) == {"ann", "ben"}
    assert (rows["ben"]["04_x"], rows["ben"]["05_y"], rows["ben"]["total"], rows["ben"]["max_total"]) == \
        ("5", "7", "12", "23")
    assert (rows["ann"]["04_x"], rows["ann"]["05_y"], rows["ann"]["total"]) == ("11", "", "11")
    assert rows["ben"]["problems"] == "late" and rows["ann"]["isolation"] == "full"
    record = json.loads((tmp_path / "results" / "ben.json").read_text())
    assert set(record["stages"]) == {"04_x", "05_y"} and record["total"] == 12
    assert not [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


WRITER = """
import sys
from pathlib import Path
from minigrad.course.grading.gradebook import Gradebook
out, who, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
book = Gradebook(out)
for i in range(count):
    book.record({"learner": f"{who}-{i:03d}", "stages": {"04_x": {"points": i % 12, "flags": [],
                 "isolation": {"level": "none"}}}, "problems": [], "ungraded": 0}, {"04_x": 11})
    if i % 5 == 0:
        book.export_csv()
book.export_csv()
"""


def test_concurrent_runs_on_one_folder_lose_nothing(tmp_path):
    """Four processes write 40 learners each into one gradebook at the same time."""
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path), f"w{n}", "40"], cwd=ROOT,
                              stderr=subprocess.PIPE) for n in range(4)]
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err.decode()[-2000:]
    rows = _rows(tmp_path)
    assert set(rows) == {f"w{n}-{i:03d}" for n in range(4) for i in range(40)}
    assert all(rows[f"w2-{i:03d}"]["04_x"] == str(i % 12) for i in range(40))
    assert len(Gradebook(tmp_path).learners()) == 160
    assert len(list((tmp_path / "results").glob("*.json"))) == 160
    assert not [p.name for p in tmp_path.rglob("*.tmp")]


def test_merge_takes_every_learner_and_the_latest_record(tmp_path):
    a, b, merged = Gradebook(tmp_path / "a"), Gradebook(tmp_path / "b"), Gradebook(tmp_path / "merged")
    a.record(_summary("ann", {"04_x": 3}), {"04_x": 11})
    b.record(_summary("ben", {"04_x": 5}), {"04_x": 11})
    b.record(_summary("ann", {"04_x": 9}), {"04_x": 11})  # recorded after a's: it wins
    assert grade_cli.main(["merge", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "merged")]) == 0
    rows = _rows(tmp_path / "merged")
    assert {k: r["total"] for k, r in rows.items()} == {"ann": "9", "ben": "5"}
    assert len(merged.learners()) == 2
    with pytest.raises(SystemExit) as error:
        grade_cli.main(["merge", str(tmp_path / "nothing-here"), "--out", str(tmp_path / "merged")])
    assert error.value.code == 2


def test_shards_split_the_class_without_overlap():
    names = [f"learner{i}" for i in range(200)]
    shards = [{n for n in names if grade_cli.in_shard(n, (k, 4))} for k in range(1, 5)]
    assert sum(len(s) for s in shards) == 200 and set().union(*shards) == set(names)
    assert all(20 < len(s) < 80 for s in shards)  # a hash, not a range: every shard gets some
    for bad in (["--shard", "0/3"], ["--shard", "4/3"], ["--shard", "x"]):
        with pytest.raises(SystemExit):
            grade_cli.main([str(ROOT / "solutions"), *bad])


# -- runs ----------------------------------------------------------------------------------------------
def _class(folder: Path, names: list[str]) -> Path:
    """One stage-04 notebook per learner: solutions, and some with one part left undone."""
    for i, name in enumerate(names):
        (folder / name).mkdir(parents=True)
        nb = solution_notebook() if i % 2 == 0 else with_cells(
            {"run_backward": "def run_backward(root, grad, retain_graph=False):\n    raise NotImplementedError\n"})
        nb["metadata"]["learner"] = name  # identical files would share a cached result
        write_json(folder / name / f"{STAGE}.ipynb", nb)
    return folder


@sandboxed
def test_late_submitter_and_quick_look_keep_the_class(tmp_path, capsys):
    subs = _class(tmp_path / "subs", ["ann", "ben", "cid"])
    out = tmp_path / "grades"
    assert grade_cli.main([str(subs), "-j", "2", "--out", str(out), "--quiet", *LIMITS]) == 0
    first = _rows(out)
    assert set(first) == {"ann", "ben", "cid"} and first["ann"]["total"] == f"{FULL:g}"

    late = _class(tmp_path / "late", ["dee"])
    assert grade_cli.main([str(late), "--out", str(out), "--quiet", *LIMITS]) == 0
    assert set(_rows(out)) == {"ann", "ben", "cid", "dee"}

    before = {p.name: p.read_bytes() for p in [out / "gradebook.csv", *sorted((out / "results").iterdir())]}
    one = tmp_path / "eve.ipynb"
    write_json(one, solution_notebook())
    assert grade_cli.main([str(one), "--out", str(out), *LIMITS]) == 0
    assert "a quick look: nothing recorded" in capsys.readouterr().out
    after = {p.name: p.read_bytes() for p in [out / "gradebook.csv", *sorted((out / "results").iterdir())]}
    assert after == before
    assert grade_cli.main([str(one), "--out", str(out), "--quiet", "--record", *LIMITS]) == 0
    assert set(_rows(out)) == {"ann", "ben", "cid", "dee", "eve"}


def _stage_keys(*numbers: str) -> list[str]:
    return [k for k, (stage, _) in TEMPLATES.items() if stage.number in numbers]


@sandboxed
def test_an_assignment_sets_the_columns_and_max_total(tmp_path):
    keys = _stage_keys("03", "04", "05")
    assert len(keys) == 3
    points = sum(TEMPLATES[k][0].points for k in keys)
    learner = tmp_path / "subs" / "ann"
    learner.mkdir(parents=True)
    for i, key in enumerate(keys):  # unfilled worksheets (fast to grade); one renamed: found by its grade_ids
        name = f"{key}.ipynb" if i else "my copy.ipynb"
        (learner / name).write_bytes((ROOT / "exercises" / f"{key}.ipynb").read_bytes())
    out = tmp_path / "inferred"
    assert grade_cli.main([str(tmp_path / "subs"), "--out", str(out), "--quiet", *LIMITS]) == 0
    (row,) = _rows(out).values()
    assert [c for c in row if c[:2].isdigit()] == keys and row["max_total"] == f"{points:g}"

    only = tmp_path / "only04" / "ben"
    only.mkdir(parents=True)
    (only / f"{keys[1]}.ipynb").write_bytes((ROOT / "exercises" / f"{keys[1]}.ipynb").read_bytes())
    out = tmp_path / "explicit"
    assert grade_cli.main([str(only.parent), "--out", str(out), "--quiet", "--stages", "03,04,05", *LIMITS]) == 0
    (row,) = _rows(out).values()
    assert [c for c in row if c[:2].isdigit()] == keys and row["max_total"] == f"{points:g}"
    assert json.loads((out / "results" / "ben.json").read_text())["max_total"] == points


@sandboxed
def test_shards_in_parallel_then_merge_give_the_gradebook_of_one_run(tmp_path):
    subs = _class(tmp_path / "subs", [f"learner{i}" for i in range(6)])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "minigrad.course.grading.grade_cli", str(subs), "-j", "1", "--quiet", *LIMITS]
    procs = [subprocess.Popen([*command, "--out", str(tmp_path / f"shard{k}"), "--shard", f"{k}/3"], env=env,
                              cwd=tmp_path, stderr=subprocess.PIPE) for k in (1, 2, 3)]
    procs.append(subprocess.Popen([*command, "--out", str(tmp_path / "one")], env=env, cwd=tmp_path,
                                  stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=1800)
        assert proc.returncode == 0, err.decode()[-2000:]
    sizes = [len(Gradebook(tmp_path / f"shard{k}").learners()) for k in (1, 2, 3)]
    assert sum(sizes) == 6
    merged = tmp_path / "merged"
    assert grade_cli.main(["merge", *(str(tmp_path / f"shard{k}") for k in (1, 2, 3)), "--out", str(merged)]) == 0
    assert (merged / "gradebook.csv").read_text() == (tmp_path / "one" / "gradebook.csv").read_text()
    verdicts = {}
    for folder in ("merged", "one"):
        verdicts[folder] = {r["learner"]: {k: [c["status"] for c in s["results"]] for k, s in r["stages"].items()}
                            for r in Gradebook(tmp_path / folder).learners()}
    assert verdicts["merged"] == verdicts["one"]


def test_the_guides_cluster_job_files_are_well_formed(tmp_path):
    """GRADING.md's Slurm array job parses as bash and passes each task its own shard; its
    Kubernetes Indexed Job parses as YAML and does the same from the completion index."""
    text = (ROOT / "minigrad" / "course" / "GRADING.md").read_text(encoding="utf-8")
    blocks = text.split("```")
    slurm = next(b for b in blocks if b.startswith("bash\n#!/bin/bash") and "#SBATCH --array" in b)[len("bash\n"):]
    (tmp_path / "grade.sbatch").write_text(slurm)
    subprocess.run(["bash", "-n", str(tmp_path / "grade.sbatch")], check=True)
    assert '--shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT"' in slurm
    assert 'shard-$SLURM_ARRAY_TASK_ID"' in slurm
    yaml = pytest.importorskip("yaml")
    job = yaml.safe_load(next(b for b in blocks if b.startswith("yaml\n"))[len("yaml\n"):])
    spec = job["spec"]
    assert job["kind"] == "Job" and spec["completionMode"] == "Indexed" and spec["completions"] == 8
    (container,) = spec["template"]["spec"]["containers"]
    script = " ".join(container["args"])
    assert "--shard $((JOB_COMPLETION_INDEX + 1))/8" in script and "minigrad-grade submissions/" in script


def test_the_gradebook_and_results_are_the_graders_users_alone_whatever_the_umask(tmp_path):
    previous = os.umask(0o002)  # a group-writable umask, as some machines have
    try:
        book = Gradebook(tmp_path / "out")
        book.record(_summary("ann", {STAGE: 11}), {STAGE: 11})
        book.export_csv()
    finally:
        os.umask(previous)
    written = [tmp_path / "out" / "gradebook.sqlite", tmp_path / "out" / "gradebook.csv",
               tmp_path / "out" / ".gradebook.lock", *(tmp_path / "out" / "results").glob("*.json")]
    assert len(written) == 4
    for path in written:
        assert path.stat().st_mode & 0o777 == 0o600, (path, oct(path.stat().st_mode))
