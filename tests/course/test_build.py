"""Tests for minigrad.course.build (exercise builder) and its command line.

Every notebook here is made in the test with nbformat.v4 and lives in tmp_path.
"""
from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from minigrad.course.build import (
    build_all,
    build_exercise,
    find_root,
    nbgrader_problems,
    strip_file,
    strip_outputs,
)

REPO = Path(__file__).resolve().parents[2]
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


def grader(grade_id: str, **flags) -> dict:
    """Cell metadata as nbgrader's "Create Assignment" toolbar writes it."""
    meta = {"grade_id": grade_id, "grade": False, "solution": False, "locked": False}
    meta.update(flags, schema_version=3)
    return {"nbgrader": meta}


def solution_nb() -> nbformat.NotebookNode:
    """A small worksheet: intro, solution cell, test cell, written answer, free cell."""
    nb = new_notebook(metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}})
    nb.cells = [
        new_markdown_cell("# Adding one"),
        new_code_cell(
            "def add_one(x):\n"
            '    """Return x + 1."""\n'
            "    ### BEGIN SOLUTION\n"
            "    return x + 1\n"
            "    ### END SOLUTION",
            metadata=grader("add_one", solution=True),
        ),
        new_code_cell(
            "assert add_one(1) == 2\n"
            "### BEGIN HIDDEN TESTS\n"
            "assert add_one(-1) == 0\n"
            "### END HIDDEN TESTS",
            metadata=grader("test_add_one", grade=True, locked=True, points=1),
        ),
        new_markdown_cell(
            "Why?\n\n### BEGIN SOLUTION\nBecause one is one.\n### END SOLUTION",
            metadata=grader("why", grade=True, solution=True, points=2),
        ),
        new_code_cell("print(add_one(41))"),
    ]
    return nb


def write_course(root: Path, notebooks: dict[str, nbformat.NotebookNode]) -> Path:
    (root / "solutions").mkdir(parents=True, exist_ok=True)
    for name, nb in notebooks.items():
        nbformat.write(nb, root / "solutions" / name, version=4)
    return root


# --- build_exercise ----------------------------------------------------------------


def test_solution_region_becomes_stub_at_the_begin_marker_indent():
    ex = build_exercise(solution_nb())
    assert ex.cells[1].source == (
        "def add_one(x):\n"
        '    """Return x + 1."""\n'
        "    # YOUR CODE HERE\n"
        "    raise NotImplementedError()"
    )


def test_deeper_indent_and_several_regions_in_one_cell():
    src = (
        "for i in range(3):\n"
        "        ### BEGIN SOLUTION\n"
        "        pass\n"
        "        ### END SOLUTION\n"
        "x = 1\n"
        "### BEGIN SOLUTION\n"
        "y = 2\n"
        "### END SOLUTION"
    )
    nb = new_notebook(cells=[new_code_cell(src, metadata=grader("loop", solution=True))])
    assert build_exercise(nb).cells[0].source == (
        "for i in range(3):\n"
        "        # YOUR CODE HERE\n"
        "        raise NotImplementedError()\n"
        "x = 1\n" + STUB
    )


def test_markdown_solution_region_becomes_text_stub():
    assert build_exercise(solution_nb()).cells[3].source == "Why?\n\nYOUR ANSWER HERE"


def test_hidden_tests_and_mark_schemes_are_removed_with_their_markers():
    nb = solution_nb()
    nb.cells.append(
        new_markdown_cell(
            "Plot the loss.\n### BEGIN MARK SCHEME\nAxes labelled: 1 point.\n### END MARK SCHEME",
            metadata=grader("plot_task", task=True, locked=True, points=1),
        )
    )
    ex = build_exercise(nb)
    assert ex.cells[2].source == "assert add_one(1) == 2"
    assert ex.cells[-1].source == "Plot the loss."
    text = "\n".join(cell.source for cell in ex.cells)
    assert "HIDDEN" not in text and "MARK SCHEME" not in text and "Because" not in text


def test_outputs_stripped_metadata_kept_and_input_untouched():
    nb = solution_nb()
    nb.cells[1].outputs = [new_output("stream", text="hello\n")]
    nb.cells[1].execution_count = 7
    nb.cells[1].metadata.update(tags=["keep-me"], scrolled=True, execution={"shell": 1})
    nb.metadata["widgets"] = {"state": {}}
    before = copy.deepcopy(nb)

    ex = build_exercise(nb)

    assert nb == before  # the solution is not modified
    cell = ex.cells[1]
    assert cell.outputs == [] and cell.execution_count is None
    # nbgrader's cell locks, as its release has them: answers cannot be deleted, checks not edited either
    assert cell.metadata == {"tags": ["keep-me"], **grader("add_one", solution=True), "deletable": False}
    assert ex.cells[2].metadata == {**grader("test_add_one", grade=True, locked=True, points=1),
                                    "deletable": False, "editable": False}
    assert "deletable" not in ex.cells[0].metadata  # an ordinary cell stays free
    assert "widgets" not in ex.metadata and ex.metadata.kernelspec.name == "python3"


@pytest.mark.parametrize(
    "cell, stub",
    [
        (new_code_cell("x = 42\nprint(x)"), STUB),
        (new_markdown_cell("The answer is 42."), "YOUR ANSWER HERE"),
    ],
)
def test_solution_cell_without_markers_is_replaced_whole(cell, stub):
    cell.metadata = grader("whole", solution=True, grade=cell.cell_type == "markdown", points=1)
    nb = new_notebook(cells=[new_code_cell("import math"), cell])
    ex = build_exercise(nb)
    assert ex.cells[0].source == "import math"  # not a solution cell: unchanged
    assert ex.cells[1].source == stub


def test_cells_without_markers_or_metadata_are_unchanged():
    nb = new_notebook(cells=[new_code_cell("x = 1  # BEGIN nothing"), new_markdown_cell("Text")])
    assert [c.source for c in build_exercise(nb).cells] == ["x = 1  # BEGIN nothing", "Text"]


@pytest.mark.parametrize(
    "source, meta, line, words",
    [
        ("a = 1\n### BEGIN SOLUTION\nb = 2", {"solution": True}, 2, "never closed"),
        ("a = 1\n### END SOLUTION", {"solution": True}, 2, "without a matching"),
        (
            "### BEGIN SOLUTION\n### BEGIN SOLUTION\nb\n### END SOLUTION\n### END SOLUTION",
            {"solution": True},
            2,
            "nested",
        ),
        (
            "### BEGIN SOLUTION\nx\n### BEGIN HIDDEN TESTS\n### END HIDDEN TESTS\n### END SOLUTION",
            {"solution": True, "grade": True, "points": 1},
            3,
            "nested",
        ),
        (
            "### BEGIN HIDDEN TESTS\nx\n### END SOLUTION",
            {"grade": True, "points": 1, "solution": True},
            3,
            "without a matching",
        ),
        ("# BEGIN SOLUTION\nx\n# END SOLUTION", {"solution": True}, 1, "malformed"),
        ("### BEGIN SOLUTION\nx\n### END SOLUTION", {}, 1, "solution=true"),
        ("### BEGIN HIDDEN TESTS\nx\n### END HIDDEN TESTS", {"solution": True}, 1, "grade=true"),
    ],
)
def test_bad_markers_raise_with_cell_grade_id_and_line(source, meta, line, words):
    nb = solution_nb()
    nb.cells.insert(2, new_code_cell(source, metadata=grader("broken", **meta)))
    with pytest.raises(ValueError) as err:
        build_exercise(nb)
    message = str(err.value)
    assert "cell 2" in message and "'broken'" in message and f"line {line}" in message
    assert words in message


# --- strip_outputs / strip_file ------------------------------------------------------


def test_strip_outputs_and_strip_file(tmp_path):
    cell = new_code_cell("1 + 1", execution_count=1, metadata={"collapsed": True})
    nb = new_notebook(cells=[cell])
    nb.cells[0].outputs = [new_output("execute_result", {"text/plain": "2"}, execution_count=1)]
    path = tmp_path / "lesson.ipynb"
    nbformat.write(nb, path, version=4)

    assert strip_file(path) is True
    assert strip_file(path) is False  # already clean: file left alone
    clean = nbformat.read(path, as_version=4)
    assert clean.cells[0].outputs == [] and clean.cells[0].execution_count is None
    assert clean.cells[0].metadata == {} and clean.cells[0].source == "1 + 1"
    assert strip_outputs(nb) == clean


# --- build_all -----------------------------------------------------------------------


def test_build_all_writes_exercises_byte_identically(tmp_path):
    root = write_course(tmp_path, {"01_add.ipynb": solution_nb(), "02_more.ipynb": solution_nb()})
    (root / "solutions" / "notes.ipynb").write_text("not a worksheet")  # no NN_ prefix: ignored

    written = build_all(root)
    assert written == [root / "exercises/01_add.ipynb", root / "exercises/02_more.ipynb"]
    first = (root / "exercises/01_add.ipynb").read_bytes()
    assert b"return x + 1" not in first and b"NotImplementedError" in first

    assert build_all(root) == []  # nothing changed, nothing rewritten
    (root / "exercises/01_add.ipynb").unlink()
    assert build_all(root) == [root / "exercises/01_add.ipynb"]
    assert (root / "exercises/01_add.ipynb").read_bytes() == first


def test_check_mode_reports_missing_changed_and_stale_without_writing(tmp_path):
    root = write_course(tmp_path, {"01_add.ipynb": solution_nb()})
    exercise = root / "exercises/01_add.ipynb"
    assert build_all(root, check=True) == [exercise]
    assert not exercise.exists()

    build_all(root)
    assert build_all(root, check=True) == []

    changed = solution_nb()
    changed.cells[0].source = "# Adding one, again"
    write_course(root, {"01_add.ipynb": changed})
    before = exercise.read_bytes()
    assert build_all(root, check=True) == [exercise]
    assert exercise.read_bytes() == before

    stale = root / "exercises/09_gone.ipynb"
    stale.write_bytes(before)
    assert build_all(root, check=True) == [exercise, stale]
    assert build_all(root) == [exercise, stale] and not stale.exists()
    assert build_all(root, check=True) == []


def test_check_compares_content_not_formatting(tmp_path):
    root = write_course(tmp_path, {"01_add.ipynb": solution_nb()})
    build_all(root)
    exercise = root / "exercises/01_add.ipynb"
    nb = nbformat.read(exercise, as_version=4)
    exercise.write_text(nbformat.writes(nb, indent=4))  # same notebook, other bytes
    assert build_all(root, check=True) == []


def test_build_all_names_the_notebook_in_marker_errors(tmp_path):
    nb = solution_nb()
    nb.cells[1].source += "\n### END SOLUTION"
    root = write_course(tmp_path, {"03_bad.ipynb": nb})
    with pytest.raises(ValueError, match=r"03_bad\.ipynb: cell 1 \(grade_id 'add_one'\), line 6"):
        build_all(root)


def test_find_root_walks_up(tmp_path):
    (tmp_path / "course" / "solutions").mkdir(parents=True)
    (tmp_path / "course" / "lessons" / "extra").mkdir(parents=True)
    assert find_root(tmp_path / "course" / "lessons" / "extra") == (tmp_path / "course").resolve()
    with pytest.raises(FileNotFoundError):
        find_root(tmp_path)


# --- nbgrader metadata -----------------------------------------------------------------


def test_nbgrader_problems_accepts_a_good_worksheet():
    nb = solution_nb()
    nb.cells.append(new_markdown_cell("Task", metadata=grader("task1", task=True, points=3)))
    assert nbgrader_problems(nb) == []


@pytest.mark.parametrize(
    "meta, words",
    [
        (grader("add_one", solution=True), "already used by cell 1"),
        (grader("", solution=True), "needs a grade_id"),
        (grader("ok", points=1), "not graded"),
        (grader("ok", grade=True), "points >= 0"),
        ({"nbgrader": {**grader("ok")["nbgrader"], "schema_version": 2}}, "schema_version"),
        ({"nbgrader": {**grader("ok", solution=True)["nbgrader"], "grade": None}}, "'grade'"),
        ({"nbgrader": {**grader("ok")["nbgrader"], "grader": True}}, "unknown"),
    ],
)
def test_nbgrader_problems_finds(meta, words):
    nb = solution_nb()
    nb.cells.append(new_code_cell("x = 1", metadata=meta))
    problems = nbgrader_problems(nb)
    assert len(problems) == 1 and problems[0].startswith("cell 5 ") and words in problems[0]


# --- command line ----------------------------------------------------------------------


def course(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, "-m", "minigrad.course", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )


def test_cli_build_check_exit_codes(tmp_path):
    root = write_course(tmp_path / "course", {"01_add.ipynb": solution_nb()})

    stale = course("build", "--check", "--root", str(root), cwd=tmp_path)
    assert stale.returncode == 1
    assert "exercises/01_add.ipynb" in stale.stderr
    assert "python -m minigrad.course build" in stale.stderr

    built = course("build", cwd=root / "solutions")  # root found by walking up
    assert built.returncode == 0 and "wrote exercises/01_add.ipynb" in built.stdout
    assert course("build", "--check", "--root", str(root), cwd=tmp_path).returncode == 0


def test_cli_usage_errors_exit_2(tmp_path):
    assert course("build", cwd=tmp_path).returncode == 2  # no solutions/ above tmp_path
    assert course("build", "--root", str(tmp_path), cwd=tmp_path).returncode == 2
    assert course("frobnicate", cwd=tmp_path).returncode == 2
    assert course("strip", cwd=tmp_path).returncode == 2
    assert course("strip", "missing.ipynb", cwd=tmp_path).returncode == 2
    assert course("--help", cwd=tmp_path).returncode == 0


def test_cli_bad_solution_exits_1(tmp_path):
    nb = solution_nb()
    nb.cells[1].source = "### BEGIN SOLUTION\nx = 1"
    root = write_course(tmp_path, {"01_bad.ipynb": nb})
    result = course("build", "--root", str(root), cwd=tmp_path)
    assert result.returncode == 1 and "never closed" in result.stderr


def test_cli_strip(tmp_path):
    nb = new_notebook(cells=[new_code_cell("1", execution_count=3)])
    nbformat.write(nb, tmp_path / "a.ipynb", version=4)
    result = course("strip", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0 and "stripped" in result.stdout
    assert nbformat.read(tmp_path / "a.ipynb", as_version=4).cells[0].execution_count is None


def test_importing_the_course_package_stays_light():
    code = "import sys, minigrad.course, minigrad.course.cli; print('nbformat' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr
