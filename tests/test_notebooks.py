"""Repository-level checks of the course notebooks (lessons/, solutions/, exercises/).

Parametrised over the notebooks that exist; with none yet, those tests have no
cases (pytest reports them as skipped: "got empty parameter set"). Each
execution starts a fresh ``python3`` kernel of this interpreter, in the
notebook's folder, with the working tree importable and ``MPLBACKEND=Agg``.
``run_notebook`` and the ``check_*`` helpers are meant to be reused by other
tests.
"""
from __future__ import annotations

import copy
import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from minigrad.course.build import NOTEBOOK_GLOB, build_all, nbgrader_problems, strip_outputs

ROOT = Path(__file__).resolve().parents[1]
CELL_TIMEOUT = 180  # seconds per cell: generous for training cells, still catches hangs
BUILD_COMMAND = "python -m minigrad.course build"
STRIP_COMMAND = "python -m minigrad.course strip"


# --- helpers ---------------------------------------------------------------------------


def notebooks(*folders: str) -> list[Path]:
    """The notebooks directly inside ``folders`` (relative to the repository root)."""
    return sorted(path for folder in folders for path in (ROOT / folder).glob("*.ipynb"))


def _id(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def kernel_env() -> dict[str, str]:
    """Environment for notebook kernels: headless plots, this working tree importable."""
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {
        **os.environ,
        "MPLBACKEND": "Agg",
        "PYTHONPATH": pythonpath,
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",  # silence the debugger's frozen-modules warning
        "MINIGRAD_COURSE_FAST": "1",  # stage 12's training runs: a few steps, not the lessons' 4 minutes
    }


def run_notebook(
    path: Path, *, allow_errors: bool = False, timeout: int = CELL_TIMEOUT
) -> NotebookNode:
    """Execute ``path`` top to bottom and return it with its outputs (the file is not changed).

    Without ``allow_errors`` the first error raises ``nbclient``'s
    ``CellExecutionError`` (except in cells tagged ``raises-exception``).
    """
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient import NotebookClient

    path = Path(path)
    nb = nbformat.read(path, as_version=4)
    # No kernel folders: "python3" then resolves to ipykernel's own spec, which
    # runs sys.executable, whatever python3 kernels the machine has installed.
    km = AsyncKernelManager(
        kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[])
    )
    client = NotebookClient(
        nb,
        km=km,
        timeout=timeout,
        kernel_name="python3",
        allow_errors=allow_errors,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=kernel_env())
    return nb


def error_outputs(nb: NotebookNode) -> list[tuple[int, NotebookNode]]:
    """``(cell index, error output)`` in notebook order, except from cells tagged
    ``raises-exception`` (the Jupyter convention for errors shown on purpose)."""
    return [
        (index, output)
        for index, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and "raises-exception" not in cell.metadata.get("tags", [])
        for output in cell.outputs
        if output.output_type == "error"
    ]


def _describe(index: int, error: NotebookNode) -> str:
    return f"cell {index} raised {error.ename}: {error.evalue}"


def check_runs(path: Path) -> None:
    """A lesson or a solution must run top to bottom without an error."""
    nb = run_notebook(path)
    errors = error_outputs(nb)
    assert not errors, f"{path.name}: " + _describe(*errors[0])


def check_exercise(path: Path) -> None:
    """An exercise may fail, but only at a stub: its first error is a NotImplementedError.

    Any other first error means the exercise is broken before the learner's
    part (or a stub was left in a solution-independent cell).
    """
    errors = error_outputs(run_notebook(path, allow_errors=True))
    if errors:
        index, first = errors[0]
        assert first.ename == "NotImplementedError", (
            f"{path.name}: the first error must come from a stub, but "
            + _describe(index, first)
        )


def check_stripped(path: Path) -> None:
    """Committed notebooks carry no outputs, execution counts or transient metadata."""
    nb = nbformat.read(path, as_version=4)
    clean = strip_outputs(copy.deepcopy(nb))
    dirty = [i for i, (cell, want) in enumerate(zip(nb.cells, clean.cells)) if cell != want]
    assert nb == clean, (
        f"{path.name}: cells {dirty} have outputs, execution counts or transient metadata; "
        f"run `{STRIP_COMMAND} {path}` before committing"
    )


# --- the repository's notebooks -----------------------------------------------------------


@pytest.mark.parametrize("path", notebooks("lessons", "solutions", "exercises"), ids=_id)
def test_committed_output_stripped(path):
    check_stripped(path)


def test_exercises_up_to_date_with_solutions():
    if not (ROOT / "solutions").is_dir():  # e.g. a checkout with no worksheets yet
        assert not list((ROOT / "exercises").glob(NOTEBOOK_GLOB)), "exercises without solutions/"
        return
    stale = build_all(ROOT, check=True)
    assert not stale, (
        "exercises/ is out of date with solutions/: "
        + ", ".join(_id(path) for path in stale)
        + f"; run `{BUILD_COMMAND}` and commit the result"
    )


@pytest.mark.parametrize("path", notebooks("solutions"), ids=_id)
def test_solution_nbgrader_metadata(path):
    problems = nbgrader_problems(nbformat.read(path, as_version=4))
    assert not problems, f"{path.name}: " + "; ".join(problems)


@pytest.mark.parametrize("path", notebooks("lessons", "solutions"), ids=_id)
def test_notebook_runs(path):
    check_runs(path)


@pytest.mark.parametrize("path", notebooks("exercises"), ids=_id)
def test_exercise_fails_only_at_a_stub(path):
    check_exercise(path)


# --- the checks themselves, on temporary notebooks -----------------------------------------


def _save(path: Path, *sources: str, tags: dict[int, list[str]] | None = None) -> Path:
    nb = new_notebook(cells=[new_markdown_cell("# Sample")])
    nb.cells += [new_code_cell(src) for src in sources]
    for index, cell_tags in (tags or {}).items():
        nb.cells[index].metadata["tags"] = cell_tags
    nbformat.write(nb, path, version=4)
    return path


def test_run_notebook_kernel_setup(tmp_path):
    (tmp_path / "data.txt").write_text("42")
    path = _save(
        tmp_path / "sample.ipynb",
        "import os, sys\nassert os.environ['MPLBACKEND'] == 'Agg'",
        f"assert os.path.samefile(sys.executable, {sys.executable!r})",
        "assert open('data.txt').read() == '42'  # runs in the notebook's folder",
        f"import minigrad\nassert minigrad.__file__.startswith({str(ROOT)!r})",
        "print('done')",
    )
    check_runs(path)
    nb = run_notebook(path)
    assert nb.cells[-1].outputs[0].text == "done\n"
    assert nbformat.read(path, as_version=4).cells[-1].outputs == []  # file untouched


def test_check_runs_reports_the_failing_cell(tmp_path):
    path = _save(tmp_path / "bad.ipynb", "x = 1", "1 / 0")
    with pytest.raises(Exception, match="ZeroDivisionError"):
        check_runs(path)
    shown = _save(tmp_path / "shown.ipynb", "1 / 0", "x = 1", tags={1: ["raises-exception"]})
    check_runs(shown)  # an error shown on purpose is fine


def test_check_exercise_accepts_a_stub_first(tmp_path):
    stub = "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()"
    path = _save(tmp_path / "ok.ipynb", stub, "f()", "undefined_name", "print('later cells ran')")
    check_exercise(path)
    check_exercise(_save(tmp_path / "no_stub.ipynb", "x = 1"))


def test_check_exercise_rejects_another_error_first(tmp_path):
    path = _save(tmp_path / "broken.ipynb", "undefined_name", "raise NotImplementedError()")
    with pytest.raises(AssertionError, match="cell 1 raised NameError"):
        check_exercise(path)


def test_built_exercise_passes_the_checks(tmp_path):
    def grader(grade_id: str, **flags) -> dict:
        meta = {"grade_id": grade_id, "grade": False, "solution": False, "locked": False}
        return {"nbgrader": {**meta, **flags, "schema_version": 3}}

    solution = new_notebook()
    solution.cells = [
        new_code_cell(
            "def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION",
            metadata=grader("double", solution=True),
        ),
        new_code_cell(
            "assert double(2) == 4\n"
            "### BEGIN HIDDEN TESTS\nassert double(0) == 0\n### END HIDDEN TESTS",
            metadata=grader("test_double", grade=True, locked=True, points=1),
        ),
    ]
    (tmp_path / "solutions").mkdir()
    nbformat.write(solution, tmp_path / "solutions" / "01_double.ipynb", version=4)
    build_all(tmp_path)
    exercise = tmp_path / "exercises" / "01_double.ipynb"

    check_runs(tmp_path / "solutions" / "01_double.ipynb")
    check_stripped(exercise)
    check_exercise(exercise)
    errors = error_outputs(run_notebook(exercise, allow_errors=True))
    assert [(index, out.ename) for index, out in errors] == [(1, "NotImplementedError")]


def test_check_stripped(tmp_path):
    path = _save(tmp_path / "a.ipynb", "1 + 1")
    check_stripped(path)
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].execution_count = 1
    nbformat.write(nb, path, version=4)
    with pytest.raises(AssertionError, match=r"cells \[1\].*minigrad.course strip"):
        check_stripped(path)
