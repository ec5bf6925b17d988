"""Each catalogued mistake loses exactly the points it should, with the feedback written for it."""
from __future__ import annotations

import copy
import importlib
import pkgutil
from pathlib import Path

import pytest

import tests.mutants
from minigrad.course.checks import run_stage
from minigrad.course.program import (
    borrowed_names,
    execute_program,
    is_learner_cell_file,
    learner_program,
    load_notebook,
    namespace_for,
)
from minigrad.course.stages import get_stage

ROOT = Path(__file__).resolve().parents[2]


def _cases():
    for info in pkgutil.iter_modules(tests.mutants.__path__):
        module = importlib.import_module(f"tests.mutants.{info.name}")
        for mutant in module.MUTANTS:
            yield pytest.param(info.name[1:], mutant, id=f"{info.name}-{mutant.name}")


def _solution(stage_key: str) -> Path:
    (path,) = (ROOT / "solutions").glob(f"{stage_key}.ipynb")
    return path


def _learner_namespace(stage_key: str, mutant) -> tuple[dict, list]:
    """The mutant's notebook (its cells in the solved worksheet, its added cells above the first of
    them), run as the grader runs it."""
    template = load_notebook(_solution(stage_key))
    notebook = copy.deepcopy(template)
    cells = notebook["cells"]
    for cell in cells:
        grade_id = cell["metadata"].get("nbgrader", {}).get("grade_id")
        if grade_id in mutant.cells:
            cell["source"] = mutant.cells[grade_id]
    first = next(i for i, c in enumerate(cells) if c["metadata"].get("nbgrader", {}).get("solution")
                 and (not mutant.cells or c["metadata"]["nbgrader"]["grade_id"] in mutant.cells))
    for k, source in enumerate(mutant.added):
        cells.insert(first + k, {"cell_type": "code", "id": f"added-{k}", "metadata": {}, "outputs": [],
                                 "execution_count": None, "source": source})
    program, _, problems = learner_program(template, notebook)
    assert not problems, problems
    return execute_program(program)


@pytest.mark.parametrize("stage_key,mutant", list(_cases()))
def test_mutant_loses_exactly_its_points(stage_key, mutant):
    stage = get_stage(stage_key)
    namespace, errors = _learner_namespace(stage_key, mutant)
    assert not errors, [e.describe() for e in errors]
    borrowed = borrowed_names(stage.parts, namespace, lambda f: is_learner_cell_file(f, set(stage.parts)))
    assert borrowed == {part: list(names) for part, names in mutant.borrowed.items()}
    report = run_stage(stage, namespace)
    lost = {r.check for r in report.results if r.status != "passed"}
    assert lost == mutant.lost
    feedback = {r.check: r.feedback for r in report.results}
    for check_id, words in mutant.feedback.items():
        assert words in feedback[check_id], feedback[check_id]


def _diagnosed_cases():
    for info in pkgutil.iter_modules(tests.mutants.__path__):
        diagnoses = getattr(importlib.import_module(f"minigrad.course.stages.{info.name}"), "DIAGNOSES", None)
        if diagnoses:
            for mutant in importlib.import_module(f"tests.mutants.{info.name}").MUTANTS:
                yield pytest.param(info.name[1:], mutant, diagnoses, id=f"{info.name}-{mutant.name}")


@pytest.mark.parametrize("stage_key,mutant,diagnoses", list(_diagnosed_cases()))
def test_feedback_names_the_mutants_own_mistake_and_no_other(stage_key, mutant, diagnoses):
    """Issue 28 item 3: a hint names a mistake only when the learner's results are that mistake's.

    A mutant's own diagnosis is ``mutant.diagnosis``, else the DIAGNOSES entry under its name."""
    own = mutant.diagnosis or (mutant.name if mutant.name in diagnoses else "")
    assert not own or own in diagnoses, own
    namespace, _ = _learner_namespace(stage_key, mutant)
    report = run_stage(get_stage(stage_key), namespace)
    told = {key for key, phrase in diagnoses.items() for r in report.results if phrase in r.feedback}
    assert told <= {own}, (told, [r.feedback for r in report.results if r.feedback])
    if own:
        assert told == {own}, [r.feedback for r in report.results if r.feedback]


@pytest.mark.parametrize("stage_key", sorted({p.stem for p in (ROOT / "solutions").glob("*.ipynb")}))
def test_solution_scores_full_marks_and_exercise_zero(stage_key):
    stage = get_stage(stage_key)
    namespace, errors = namespace_for(ROOT / "solutions" / f"{stage_key}.ipynb")
    assert not errors, [e.describe() for e in errors]
    report = run_stage(stage, namespace)
    assert report.points == stage.points, [(r.check, r.feedback) for r in report.results if r.status != "passed"]

    namespace, errors = namespace_for(ROOT / "exercises" / f"{stage_key}.ipynb")
    report = run_stage(stage, namespace)
    assert report.points == 0
    assert {r.status for r in report.results} <= {"not_implemented", "not_run"}
    assert any(r.status == "not_implemented" for r in report.results)
