"""Unit tests of the grader's trusted parts: reading submissions, schemas, review flags,
learner layouts, gradebook, CLI usage errors, Gradescope results. No sandbox here
(see test_grader_sandbox.py), so these run in a few seconds."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from minigrad.course.checks import observation_problem, plain_problem
from minigrad.course.grading import grade_cli, gradescope
from minigrad.course.grading.grader import (
    collect_learners,
    gradebook_csv,
    identify_stage,
    load_templates,
    read_submission,
)
from minigrad.course.program import (
    borrowed_names,
    is_learner_cell_file,
    learner_cells,
    learner_program,
    load_notebook,
    namespace_for,
    python_source,
    solution_grade_ids,
    solution_sources,
)
from minigrad.course.review import review_cells
from minigrad.course.selfcheck import parity_problems, run_part
from minigrad.course.grading.sandbox import Capture
from minigrad.course.stages import get_stage
from tests.hostile import solution_notebook, source_of, with_cells

ROOT = Path(__file__).resolve().parents[3]
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


# -- the program a notebook runs top to bottom (program.learner_program) -----------------------------
def _code(source: str, cell_id: str) -> dict:
    return {"cell_type": "code", "id": cell_id, "metadata": {}, "execution_count": None, "outputs": [],
            "source": source}


def _cell_kinds(program) -> list:
    return [("added" if c.learner and not c.grade_id else c.grade_id or "template") for c in program]


def test_program_runs_added_cells_in_notebook_order_with_template_cells():
    _, template = TEMPLATES["04_topological_backward"]
    nb = solution_notebook()
    i = next(k for k, c in enumerate(nb["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id") == "run_backward")
    nb["cells"].insert(i, _code("def children(node):\n    return []\n", "learner-1"))
    nb["cells"].insert(2, _code("import functools\n", "learner-2"))
    nb["cells"][1]["source"] = "print('a locked cell, edited')\n"  # runs as the template has it
    program, sources, problems = learner_program(template, nb)
    assert not problems and set(sources) == {"topological_order", "run_backward"}
    assert _cell_kinds(program) == ["template", "added", "template", "topological_order", "added", "run_backward"]
    assert program[0].source == "".join(template["cells"][1]["source"])
    assert [c.index for c in program if not c.grade_id and c.learner] == ["added_2", f"added_{i + 1}"]


def test_program_puts_deleted_template_cells_back_and_keeps_moved_cells_where_they_are():
    _, template = TEMPLATES["04_topological_backward"]
    nb = solution_notebook()
    gid = lambda c: c["metadata"].get("nbgrader", {}).get("grade_id")  # noqa: E731
    del nb["cells"][3]  # the template's example graph
    order = [c for c in nb["cells"] if gid(c) != "run_backward"]
    order.insert(2, next(c for c in nb["cells"] if gid(c) == "run_backward"))  # moved up
    nb["cells"] = order
    for cell in nb["cells"]:
        cell.pop("id", None)  # a front end that drops cell ids: matched by source instead
    program, _, _ = learner_program(template, nb)
    assert _cell_kinds(program) == ["template", "template", "run_backward", "topological_order"]
    assert program[1].index == 3  # back after cell 1, the template cell before it


def test_program_leaves_out_ipython_syntax():
    assert python_source("x = 1\n%timeit f(x)\n!pip install torch\n%time y = f(x)\n") == (
        "x = 1\npass  # %timeit f(x)\npass  # !pip install torch\ny = f(x)\n")
    assert python_source("%%bash\nls\n") == ""
    assert python_source("%%time\nz = 2\n") == "z = 2\n"
    assert python_source("a = (5\n     % 3)\n") == "a = (5\n     % 3)\n"  # Python already: unchanged


def test_review_looks_at_added_cells_with_every_part_forbidden():
    stage = get_stage("04")
    helper = "from minigrad.autograd.engine import run_backward as rb\nimport torch\n"
    kinds = {(f["kind"], f["part"]) for f in review_cells(stage, {"added cell 3": helper}, TEMPLATE_CODE)}
    assert kinds == {("reference_call", "added cell 3"), ("autograd_import", "added cell 3")}


@pytest.mark.parametrize("call", ["F.hvp(f, x, v)", "F.hessian(f, x)", "F.jacobian(f, x)"])
def test_review_flags_autograd_functional_in_the_higher_order_stage(call):
    stage = get_stage("09")
    cell = f"import minigrad.autograd.functional as F\ndef hvp(f, x, v):\n    return {call}\n"
    kinds = {(f["kind"], f["part"]) for f in review_cells(stage, {"hvp": cell}, TEMPLATE_CODE)}
    assert kinds == {("reference_call", "hvp")}
    vjp = "import minigrad.autograd.functional as F\ndef hvp(f, x, v):\n    return F.vjp(f, x, v)\n"
    assert review_cells(stage, {"hvp": vjp}, TEMPLATE_CODE) == []  # vjp is grad: allowed


# -- provenance: what a part defines must come from the learner's cells ----------------------------------
BORROWS = '''import importlib, pkgutil
import minigrad.ops as pkg
found = {}
for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
    module = importlib.import_module(info.name)
    for name in ("Exp", "Sigmoid"):
        if isinstance(getattr(module, name, None), type):
            found[name] = getattr(module, name)
globals().update(found)
'''


def test_borrowed_names_are_found_at_run_time():
    stage = get_stage("05")
    solution = ROOT / "solutions" / "05_custom_functions.ipynb"
    gids = set(stage.parts)
    own, errors = namespace_for(solution)
    assert not errors and borrowed_names(stage.parts, own, lambda f: is_learner_cell_file(f, gids)) == {}
    original = solution_sources(load_notebook(solution))["exp_sigmoid"]
    for cells in ({"exp_sigmoid": original + "\n" + BORROWS},
                  {"exp_sigmoid": original + "\nclass Sigmoid(minigrad.autograd.function.Function):\n    pass\n"}):
        namespace, errors = namespace_for(solution, cells)
        assert not errors, [e.describe() for e in errors]
        borrowed = borrowed_names(stage.parts, namespace, lambda f: is_learner_cell_file(f, gids))
        assert borrowed.get("exp_sigmoid") and set(borrowed) == {"exp_sigmoid"}


# -- the self-check's notes and part scores -------------------------------------------------------------
def _ipython_cell(source: str, number: int, namespace: dict) -> None:
    """Run ``source`` as IPython runs a cell: compiled under a file name whose source linecache keeps."""
    import linecache

    filename = f"/tmp/ipykernel_test/{number}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), namespace)


def _notebook(*sources: str) -> dict:
    return {"cells": [_code(s, f"c{i}") for i, s in enumerate(sources)]}


def test_parity_notes_name_what_the_grader_would_see_differently():
    helper, answer = "def helper():\n    return 1\n", "def f():\n    return helper()\n"
    later = "def f():\n    return 2\n"
    parts = {"p": ("f",)}
    ns: dict = {}
    for n, source in enumerate((helper, answer)):
        _ipython_cell(source, n, ns)
    assert parity_problems(parts, ns, _notebook(helper, answer), executed={helper.strip(), answer.strip()}) == []
    deleted = parity_problems(parts, ns, _notebook(answer), executed={helper.strip(), answer.strip()})
    assert deleted == ["`helper` is defined in this session, but by no cell of the saved notebook that the grader "
                       "runs (a deleted cell, one that is not saved yet, or a worksheet cell you added it to, which "
                       "the grader restores)"]
    redefined = parity_problems(parts, ns, _notebook(helper, answer, later), executed={helper.strip(), answer.strip()})
    assert redefined == ["`f` is redefined further down (cell 2), and the grader grades the last definition"]
    edited = parity_problems(parts, ns, _notebook(helper, answer.replace("helper()", "helper() + 1")),
                             executed={helper.strip(), answer.strip()})
    assert len(edited) == 1 and "a cell the saved notebook does not have" in edited[0]
    ns2: dict = {}
    _ipython_cell(answer, 5, ns2)  # the helper's cell sits below and has not run
    below = parity_problems(parts, ns2, _notebook(answer, helper), executed={answer.strip()})
    assert below == ["`helper` is defined in cell 1, which has not run yet in this session"]


@pytest.mark.parametrize("key", ["06_broadcasting", "11_cnn"])
def test_part_checks_add_up_to_the_full_check(key):
    """A part check judges a check only after the checks it needs, wherever they are: so the parts of
    an early, broken worksheet add up to its full score."""
    stage = get_stage(key)
    template = ROOT / "exercises" / f"{key}.ipynb"
    first = next(iter(stage.parts))
    solved = solution_sources(load_notebook(ROOT / "solutions" / f"{key}.ipynb"))
    namespace, _ = namespace_for(template, {gid: src for gid, src in solved.items() if gid != first})
    full = run_part(stage, namespace)
    by_part = {part: run_part(stage, namespace, part).points for part in stage.parts}
    assert sum(by_part.values()) == full.points < stage.points
    for part, points in by_part.items():
        assert points == sum(r.points for r in full.results if stage_part(stage, r.check) == part)


def stage_part(stage, check_id: str) -> str:
    return next(c.part for c in stage.checks if c.id == check_id)


# -- what the layout of a notebook changes, said by both runners ------------------------------------------
def test_layout_problems_name_an_edited_worksheet_cell_a_copied_answer_and_a_redefinition_below():
    from minigrad.course.grading.layout import layout_problems

    stage = get_stage("04_topological_backward")
    template = TEMPLATES["04_topological_backward"][1]
    solved = load_notebook(ROOT / "solutions" / "04_topological_backward.ipynb")
    assert layout_problems(stage.parts, template, solved) == []
    cells = solved["cells"]
    imports = next(i for i, c in enumerate(cells) if c["cell_type"] == "code" and "import minigrad" in "".join(c["source"]))
    answer = next(i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("grade_id") == "run_backward")

    edited = json.loads(json.dumps(solved))
    edited["cells"][imports]["source"] = "".join(cells[imports]["source"]) + "\ndef helper():\n    return 1\n"
    (said,) = layout_problems(stage.parts, template, edited)
    assert said.startswith(f"cell {imports} (`import minigrad`) is one of the worksheet's own cells, and it was edited")
    whitespace = json.loads(json.dumps(solved))
    whitespace["cells"][imports]["source"] = "".join(cells[imports]["source"]) + "\n\n   \n"
    assert layout_problems(stage.parts, template, whitespace) == []

    copied = json.loads(json.dumps(solved))
    copied["cells"].insert(answer, {**copied["cells"][answer], "id": "copy"})
    (said,) = layout_problems(stage.parts, template, copied)
    assert "have grade_id 'run_backward'" in said and "the grader runs the worksheet's stub" in said
    assert layout_problems(stage.parts, template, copied, missing_cells=False) == []
    assert layout_problems({"topological_order": stage.parts["topological_order"]}, template, copied) == []

    below = json.loads(json.dumps(solved))
    below["cells"].insert(answer + 2, {"cell_type": "code", "id": "exp", "metadata": {}, "outputs": [],
                                       "execution_count": None, "source": "def run_backward(*a):\n    pass\n"})
    (said,) = layout_problems(stage.parts, template, below)
    assert said.startswith(f"`run_backward` (part run_backward) is defined again in cell {answer + 2}, below your "
                           f"answer (cell {answer})")


def test_paths_to_hide_cover_submissions_but_never_what_a_child_needs(tmp_path):
    from minigrad.course.grading.grader import paths_to_hide

    subs, home = tmp_path / "subs", tmp_path / "home"
    (subs / "ann").mkdir(parents=True)
    (home / "minigrad").mkdir(parents=True)
    (home / "ann.ipynb").write_text("{}")
    (home / "minigrad" / "lesson.ipynb").write_text("{}")
    hidden = paths_to_hide([subs, home, subs / "ann", "/", tmp_path / "grades"], keep=[home / "minigrad"])
    assert hidden == [str(subs), str(home / "ann.ipynb"), str(subs / "ann"), str(tmp_path / "grades")]


def test_the_self_check_grades_the_saved_worksheet_only_when_it_differs_and_never_a_scratch_notebook(tmp_path):
    """``saved_view`` (what ``check`` prints when the session and the saved notebook differ): an edited
    worksheet cell is named and the saved notebook graded in a fresh process; a notebook that is not
    this worksheet (a scratch notebook calling check) keeps the session's verdict."""
    from minigrad.course.selfcheck import saved_view

    key = "04_topological_backward"
    stage = get_stage(key)
    solved = load_notebook(ROOT / "solutions" / f"{key}.ipynb")
    namespace, errors = namespace_for(ROOT / "exercises" / f"{key}.ipynb", solution_sources(solved))
    assert not errors
    path = tmp_path / f"{key}.ipynb"
    path.write_text(json.dumps(solved))
    assert saved_view(stage, None, {**namespace, "__session__": str(path)}) is None  # the same: nothing to say
    imports = next(c for c in solved["cells"] if c["cell_type"] == "code" and "import minigrad" in "".join(c["source"]))
    imports["source"] = "".join(imports["source"]) + "\nEXTRA = 1\n"
    path.write_text(json.dumps(solved))
    graded, reasons = saved_view(stage, None, {**namespace, "__session__": str(path)})
    assert graded.points == stage.points and any("it was edited" in r for r in reasons), reasons
    scratch = tmp_path / "scratch.ipynb"
    scratch.write_text(json.dumps({"cells": [_code("check('04')", "c0")]}))
    assert saved_view(stage, None, {**namespace, "__session__": str(scratch)}) is None
