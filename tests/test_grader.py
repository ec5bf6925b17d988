"""Unit tests of the grader's trusted parts: reading submissions, schemas, review flags,
learner layouts, gradebook, CLI usage errors, Gradescope results. No sandbox here
(see test_grader_sandbox.py), so these run in a few seconds."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from minigrad.course import grade_cli, gradescope
from minigrad.course.checks import observation_problem, plain_problem
from minigrad.course.grader import (
    collect_learners,
    gradebook_csv,
    identify_stage,
    load_templates,
    read_submission,
)
from minigrad.course.program import learner_cells, solution_grade_ids
from minigrad.course.review import review_cells
from minigrad.course.sandbox import Capture
from minigrad.course.stages import get_stage
from tests.hostile import solution_notebook, source_of, with_cells

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = load_templates(ROOT / "exercises")


# -- schemas ---------------------------------------------------------------------------------
@pytest.mark.parametrize("observation", [
    {"status": "ok", "value": {"order": ["a", "b"], "x": [[1.0, float("nan")], [float("inf"), 2]], "ok": True}},
    {"status": "ok", "value": None},
    {"status": "not_implemented"},
    {"status": "error", "type": "ValueError", "message": "boom", "where": "x = 1  (line 2)"},
])
def test_well_formed_observations_pass(observation):
    assert observation_problem(json.loads(json.dumps(observation))) is None


@pytest.mark.parametrize("observation,words", [
    ([], "JSON object"),
    ({"status": "passed"}, "unknown observation status"),
    ({"status": "ok"}, "needs a value"),
    ({"status": "ok", "value": 1, "verdict": "pass"}, "unexpected keys"),
    ({"status": "error", "type": 3, "message": "", "where": ""}, "must be a string"),
    ({"status": "ok", "value": {"a": {1, 2}}}, "set"),
])
def test_malformed_observations_are_refused(observation, words):
    assert words in observation_problem(observation)


def test_plain_data_limits_depth_and_size():
    deep = []
    for _ in range(100):
        deep = [deep]
    assert "nested" in plain_problem(deep)
    assert "more than" in plain_problem(list(range(20)), max_items=10)


# -- learner cells by grade_id ------------------------------------------------------------------
def test_learner_cells_finds_missing_duplicated_and_wrong_type():
    nb = solution_notebook()
    gids = solution_grade_ids(nb)
    assert gids == ["topological_order", "run_backward"]
    sources, problems = learner_cells(nb, gids)
    assert set(sources) == set(gids) and not problems

    index = next(i for i, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == "run_backward")
    nb["cells"].append(dict(nb["cells"][index]))
    nb["cells"][index - 1]["metadata"] = {}  # an unrelated cell's metadata: harmless
    sources, problems = learner_cells(nb, gids)
    assert "2 cells" in problems["run_backward"] and "topological_order" in sources

    nb = solution_notebook()
    for cell in nb["cells"]:
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "topological_order":
            cell["cell_type"] = "markdown"
        if cell["metadata"].get("nbgrader", {}).get("grade_id") == "run_backward":
            del cell["metadata"]["nbgrader"]
    sources, problems = learner_cells(nb, gids)
    assert "not a code cell" in problems["topological_order"]
    assert "no cell with grade_id 'run_backward'" in problems["run_backward"]
    assert learner_cells({"cells": "nonsense"}, gids)[1].keys() == set(gids)


# -- reading files -------------------------------------------------------------------------------
def test_read_submission_problems(tmp_path):
    cases = {"empty.ipynb": (b"  \n", "empty"), "bad.ipynb": (b'{"cells": [', "not valid JSON"),
             "list.ipynb": (b"[1, 2]", "not a Jupyter notebook")}
    for name, (data, words) in cases.items():
        (tmp_path / name).write_bytes(data)
        assert words in read_submission(tmp_path / name).problem
    bom = tmp_path / "bom.ipynb"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(solution_notebook()).encode())
    sub = read_submission(bom)
    assert sub.problem is None and not sub.warnings
    latin = tmp_path / "latin.ipynb"
    latin.write_bytes(json.dumps(solution_notebook()).encode().replace(b"Propagate", b"Propag\xe9te"))
    sub = read_submission(latin)
    assert sub.problem is None and "not valid UTF-8" in sub.warnings[0]
    assert "more than the limit" in read_submission(latin, max_mb=0).problem
    assert "could not be read" in read_submission(tmp_path / "missing.ipynb").problem


def test_identify_stage_by_name_then_grade_ids(tmp_path):
    nb = solution_notebook()
    key = "04_topological_backward"
    assert identify_stage(Path("04_topological_backward.ipynb"), nb, TEMPLATES) == (key, "file name")
    assert identify_stage(Path("04_topological_backward (1).ipynb"), None, TEMPLATES) == (key, "file name")
    assert identify_stage(Path("alice.ipynb"), nb, TEMPLATES) == (key, "grade_ids")
    assert identify_stage(Path("alice.ipynb"), {"cells": []}, TEMPLATES) == (None, "unknown")


# -- who submitted what -----------------------------------------------------------------------------
def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}")
    return path


def test_collect_learners_layouts(tmp_path):
    # nbgrader: submitted/NAME/ASSIGNMENT/NOTEBOOK, and checkpoints ignored
    a = _touch(tmp_path / "submitted" / "alice" / "ps1" / "04_topological_backward.ipynb")
    b = _touch(tmp_path / "submitted" / "alice" / "ps2" / "05_custom_functions.ipynb")
    _touch(tmp_path / "submitted" / "alice" / "ps1" / ".ipynb_checkpoints" / "04_topological_backward-checkpoint.ipynb")
    c = _touch(tmp_path / "submitted" / "bob.ipynb")
    _touch(tmp_path / "submitted" / "carol" / "notes.txt")
    learners = {l.name: l.files for l in collect_learners([tmp_path / "submitted"])}
    assert learners == {"alice": [a, b], "bob": [c], "carol": []}

    # one learner's folder of worksheets
    one = tmp_path / "dave"
    files = [_touch(one / "01_derivatives.ipynb"), _touch(one / "04_topological_backward.ipynb")]
    assert [(l.name, l.files) for l in collect_learners([one])] == [("dave", files)]
    # a single notebook, and --learner
    assert [(l.name, l.files) for l in collect_learners([c])] == [("bob", [c])]
    assert [(l.name, len(l.files)) for l in collect_learners([one, c], learner="eve")] == [("eve", 3)]


def test_gradebook_has_one_row_per_learner_and_a_column_per_stage():
    def summary(name, stages, problems=()):
        return {"learner": name, "stages": {k: {"points": p} for k, p in stages.items()}, "total": sum(stages.values()),
                "max_total": 21, "flags": [], "problems": list(problems)}

    text = gradebook_csv([summary("bob", {"04_x": 5}), summary("alice", {"04_x": 11, "05_y": 3.5}, ["oops"])],
                         ["04_x", "05_y"])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["learner", "04_x", "05_y", "total", "max_total", "review", "problems"]
    assert rows[1] == ["alice", "11", "3.5", "14.5", "21", "", "oops"]
    assert rows[2] == ["bob", "5", "", "5", "21", "", ""]


# -- review flags ------------------------------------------------------------------------------------
TEMPLATE_CODE = ["import minigrad\nfrom minigrad.autograd import engine\nfrom minigrad.course import check"]


def _kinds(flags):
    return sorted({(f["kind"], f["part"]) for f in flags})


def test_review_flags_other_libraries_and_the_reference():
    stage = get_stage("04")
    flags = review_cells(stage, {
        "run_backward": "import torch.autograd as ta\nimport importlib\njax = importlib.import_module('jax')\n"
                        "def run_backward(root, grad, retain_graph=False):\n"
                        "    engine.run_backward([(root, 0)], [grad], retain_graph, False)\n",
        "topological_order": "from minigrad.autograd.engine import topological_order as t\n"
                             "def topological_order(root):\n    return t([root])\n",
    }, TEMPLATE_CODE)
    details = " | ".join(f["detail"] for f in flags)
    assert ("autograd_import", "run_backward") in _kinds(flags)
    assert "imports torch.autograd" in details and "imports jax" in details
    assert "uses minigrad.autograd.engine.run_backward" in details
    assert "imports minigrad.autograd.engine.topological_order" in details
    assert [f["line"] for f in flags if "engine.run_backward" in f["detail"]] == [5]

    flags = review_cells(stage, {"run_backward": "def run_backward(root, grad, retain_graph=False):\n"
                                                 "    loss = root.variable\n    loss.backward()\n"
                                                 "    getattr(loss, 'backward')()\n"}, TEMPLATE_CODE)
    assert len([f for f in flags if f["kind"] == "reference_call"]) == 2


def test_review_does_not_flag_ordinary_code():
    stage = get_stage("04")
    code = ("def run_backward(root, grad, retain_graph=False):\n"
            "    x = root.variable.grad\n    y = engine.topological_order([root])\n    return x, y\n")
    assert review_cells(stage, {"run_backward": code}, TEMPLATE_CODE) == []
    assert review_cells(stage, {"run_backward": "def broken(:\n"}, TEMPLATE_CODE) == []


@pytest.mark.parametrize("key", sorted(TEMPLATES))
def test_no_solution_is_flagged(key):
    stage, template = TEMPLATES[key]
    with open(ROOT / "solutions" / f"{key}.ipynb", encoding="utf-8") as f:
        solution = json.load(f)
    sources, _ = learner_cells(solution, solution_grade_ids(template))
    assert review_cells(stage, sources, TEMPLATE_CODE) == []


def test_stage_forbidden_field_defaults_to_empty():
    stage = get_stage("04")
    assert stage.forbidden == {}  # the built-in list in review.py applies until the stage declares its own


# -- small pieces ------------------------------------------------------------------------------------
def test_capture_keeps_head_and_tail():
    cap = Capture(20)
    for i in range(1000):
        cap.add(f"{i:04d}\n".encode())
    text = cap.text()
    assert text.startswith("0000\n0001") and text.endswith("0999\n") and "bytes not shown" in text
    small = Capture(100)
    small.add(b"hello")
    assert small.text() == "hello"


@pytest.mark.parametrize("argv", [
    ["no/such/folder"],
    ["-j", "0", str(ROOT / "solutions")],
    ["--wall", "-1", str(ROOT / "solutions")],
    ["--isolation", "maybe", str(ROOT / "solutions")],
    [],
])
def test_cli_usage_errors_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_info:
        grade_cli.main(argv)
    assert exit_info.value.code == 2


def test_gradescope_usage_error_exit_2(tmp_path, capsys):
    assert grade_cli.main(["gradescope", str(tmp_path / "x.zip"), "--stages", "99"]) == 2
    assert "no worksheet template for stage '99'" in capsys.readouterr().err


def test_gradescope_results_schema_for_a_summary():
    key = "04_topological_backward"
    stage, _ = TEMPLATES[key]
    results = [{"check": c.id, "description": c.description, "status": "passed" if i % 2 else "failed",
                "points": c.points if i % 2 else 0, "max_points": c.points, "feedback": "" if i % 2 else "wrong"}
               for i, c in enumerate(stage.checks)]
    summary = {"stages": {key: {"name": f"{key}.ipynb", "points": sum(r["points"] for r in results),
                                "max_points": stage.points, "results": results, "seed": 3}},
               "problems": ["x.ipynb: empty"],
               "flags": [{"stage": key, "kind": "autograd_import", "part": "run_backward", "line": 1,
                          "detail": "imports torch", "source": "static"}]}
    out = gradescope.results_for(summary, list(TEMPLATES), TEMPLATES, "visible", [])
    json.dumps(out, allow_nan=False)
    assert out["score"] == summary["stages"][key]["points"]
    for test in out["tests"]:
        assert set(test) >= {"name", "score", "max_score", "status", "output", "visibility"}
        assert test["status"] in ("passed", "failed")
    visible = [t for t in out["tests"] if t["visibility"] == "visible"]
    assert sum(t["max_score"] for t in visible) == sum(s.points for s, _ in TEMPLATES.values())
    missing = [t for t in visible if key not in t["name"] and "04" not in t["name"]]
    assert missing and all("No notebook for this worksheet" in t["output"] for t in missing)
    hidden = [t for t in out["tests"] if t["visibility"] == "hidden"]
    assert any("imports torch" in t["output"] for t in hidden)
    assert "Problem: x.ipynb: empty" in out["output"]


def test_gradescope_run_writes_valid_results_when_grading_fails(tmp_path, monkeypatch):
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    (root / "source").mkdir()
    (root / "source" / "config.json").write_text("{not json")  # grading itself fails
    monkeypatch.setenv(gradescope.ROOT_ENV, str(root))
    assert gradescope.main(["run"]) == 0
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and "failed while grading" in results["output"]
    assert isinstance(results["execution_time"], (int, float)) and results["tests"] == []


def test_source_of_helper_roundtrip():
    nb = with_cells({"run_backward": "pass\n"})
    assert source_of(nb, "run_backward") == "pass\n"
