"""``minigrad-course mine``: the learner's own core pieces run the package (minigrad/course/yours.py).

With the solutions every piece is the learner's and the core's checks pass; with the blank
worksheets every piece is shipped; a piece that fails its stage's checks stays shipped; a failure
in the core's checks names the piece whose code raised it; and everything is put back on exit.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

import minigrad
from minigrad.core import differentiate as core_differentiate
from minigrad.core.tensor import Tensor
from minigrad.course import yours

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def solutions_choice():
    return yours.choose(ROOT / "solutions")


def test_the_solutions_make_every_piece_the_learners(solutions_choice):
    choices, _ = solutions_choice
    assert [c.piece.part for c in choices if not c.yours] == []


def test_inside_mine_the_learners_code_computes_the_gradients_and_the_core_checks_pass():
    shipped = {name: getattr(Tensor, name) for name in ("exp", "relu", "__add__", "__mul__", "__matmul__")}
    shipped_run, shipped_linear = core_differentiate.run_backward, minigrad.nn.Linear
    with yours.mine(ROOT / "solutions", verbose=False) as mix:
        x = minigrad.tensor([0.5, -1.0], requires_grad=True)
        y = x.exp()
        assert type(y.grad_fn).__name__ == "ExpBackward"  # the worksheet's Exp (the library's is ExpBackward0)
        assert type((x.relu() * 2.0).grad_fn).__name__ == "MulBackward0"  # a number operand: shipped
        assert type(x.relu().grad_fn).__name__ == "ReLUBackward"
        w = minigrad.ones(2, 3, requires_grad=True)
        assert type(minigrad.nn.functional.linear(minigrad.ones(4, 3), w).grad_fn).__name__ == "LinearFunctionBackward"
        assert minigrad.nn.Linear is not shipped_linear and core_differentiate.run_backward is not shipped_run
        a, b = minigrad.tensor([1.0, 2.0], requires_grad=True), minigrad.tensor([3.0, 4.0], requires_grad=True)
        quotient = (a / b).sum()  # division is no piece: the library's op, whose saved b the 08 piece checks
        with minigrad.no_grad():
            b.mul_(2.0)
        with pytest.raises(RuntimeError, match="a saved tensor was modified by an inplace operation"):
            quotient.backward()  # the worksheet's SavedValue's words, not the core's
        results = yours.self_test(mix)
        assert [(name, failure) for name, failure, _ in results if failure] == []
    assert {name: getattr(Tensor, name) for name in shipped} == shipped  # all put back
    assert core_differentiate.run_backward is shipped_run and minigrad.nn.Linear is shipped_linear


def test_the_blank_worksheets_run_everything_shipped():
    choices, _ = yours.choose(ROOT / "exercises")
    assert [c for c in choices if c.yours] == []
    # a part is unsolved, or fails because a part it builds on is (06's add_mul needs unbroadcast)
    assert all(c.why == "unsolved" or c.why.startswith("fails its check") for c in choices)
    assert sum(c.why == "unsolved" for c in choices) >= len(choices) - 4


def _course_with(tmp_path: Path, stage: str, grade_id: str, edit) -> Path:
    """A copy of the solutions whose ``grade_id`` cell of ``stage`` is changed by ``edit(source)``."""
    course = tmp_path / "course"
    shutil.copytree(ROOT / "solutions", course)
    path = course / f"{stage}.ipynb"
    notebook = json.loads(path.read_text())
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id:
            source = "".join(cell["source"])
            changed = edit(source)
            assert changed != source
            cell["source"] = changed
    path.write_text(json.dumps(notebook))
    return course


def test_a_piece_that_fails_its_checks_stays_shipped_and_a_failure_is_traced_to_its_piece(tmp_path):
    # un-broadcasting that forgets keepdim: wrong shapes, so stage 06's checks fail
    course = _course_with(tmp_path, "06_broadcasting", "unbroadcast",
                          lambda s: s.replace("grad.sum(dim=stretched, keepdim=True)", "grad.sum(dim=stretched)"))
    choices, namespaces = yours.choose(course)
    unbroadcast = next(c for c in choices if c.piece.part == "unbroadcast")
    assert not unbroadcast.yours and unbroadcast.why.startswith("fails its check")
    assert all(c.yours for c in choices if c.piece.stage != "06_broadcasting")  # (06's other parts use it)
    # forced in anyway, the core's checks fail, and each failure names the piece
    unbroadcast.yours = True
    mix = yours.Mix(choices, namespaces)
    try:
        mix.install()
        results = yours.self_test(mix)
    finally:
        mix.undo()
    failures = [(name, culprit) for name, failure, culprit in results if failure]
    assert failures, "the broken un-broadcasting passed every check of the core"
    assert all(culprit and culprit.startswith("06_broadcasting / unbroadcast") for _, culprit in failures), failures


def test_the_command_prints_whose_code_runs(capsys):
    assert yours.main(str(ROOT / "solutions")) == 0
    out = capsys.readouterr().out
    assert re.search(r"04_topological_backward\s+the backward pass\s+yours", out)
    n, checks = len(yours.PIECES), len(yours.SELF_TESTS)
    assert f"{n} of {n} pieces are yours; {checks} of {checks} checks pass." in out


def _lesson_accuracy(lesson: str, accuracy_call: str, tmp_path: Path, with_mine: bool) -> tuple[float, str]:
    """Run a lesson top to bottom (optionally inside ``mine`` on the solutions); its model's test accuracy."""
    import nbformat
    from nbformat.v4 import new_code_cell

    from tests.test_notebooks import run_notebook

    nb = nbformat.read(ROOT / "lessons" / lesson, as_version=4)
    if with_mine:
        nb.cells.insert(0, new_code_cell(
            "import minigrad.course\n"
            f"_mine = minigrad.course.mine({str(ROOT / 'solutions')!r}, verbose=False)\n"
            "_mix = _mine.__enter__()\n"
            "print('YOURS', sum(c.yours for c in _mix.choices))"))
    nb.cells.append(new_code_cell(f"print('ACCURACY', {accuracy_call})"))
    path = tmp_path / ("mine_" if with_mine else "shipped_") / lesson
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    text = "".join(out.get("text", "") for cell in run_notebook(path).cells for out in cell.get("outputs", []))
    return float(re.search(r"ACCURACY ([0-9.]+)", text).group(1)), text


@pytest.mark.slow
@pytest.mark.parametrize("lesson, accuracy_call", [
    ("10_nn_and_optim.ipynb", "accuracy(model, X_test, y_test)"),
    ("11_cnn.ipynb", "accuracy(model)"),
    ("12_attention.ipynb", "bpc"),  # held-out bits per character (the notebook tests' short run: 25 steps)
])
def test_lessons_10_11_12_train_with_the_learners_pieces_as_with_the_shipped_ones(lesson, accuracy_call, tmp_path):
    shipped, _ = _lesson_accuracy(lesson, accuracy_call, tmp_path, with_mine=False)
    theirs, text = _lesson_accuracy(lesson, accuracy_call, tmp_path, with_mine=True)
    assert f"YOURS {len(yours.PIECES)}" in text
    if accuracy_call == "bpc":
        assert theirs < 4.0 and abs(theirs - shipped) <= 0.05, (theirs, shipped)  # uniform over 65 chars: 6.0
    else:
        assert theirs > 0.9 and abs(theirs - shipped) <= 0.03, (theirs, shipped)


def test_side_by_side_shows_the_learners_code_beside_the_shipped_code_it_rebuilds():
    from minigrad.course.program import namespace_for

    namespace, _ = namespace_for(ROOT / "solutions" / "06_broadcasting.ipynb")
    text = yours.side_by_side("unbroadcast", namespace)
    mine_part, shipped_part = text.split("--- shipped")
    assert "def unbroadcast(grad, shape):" in mine_part and "def sum_to(grad, shape: tuple):" in shipped_part
    with pytest.raises(ValueError, match="linear.*stage="):
        yours.side_by_side("linear", namespace)  # stages 05 and 10 both have a part 'linear'
