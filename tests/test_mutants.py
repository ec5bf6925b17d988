"""Each catalogued mistake loses exactly the points it should, with the feedback written for it."""
from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest

import tests.mutants
from minigrad.course.checks import run_stage
from minigrad.course.program import namespace_for
from minigrad.course.stages import get_stage

ROOT = Path(__file__).resolve().parent.parent


def _cases():
    for info in pkgutil.iter_modules(tests.mutants.__path__):
        module = importlib.import_module(f"tests.mutants.{info.name}")
        for mutant in module.MUTANTS:
            yield pytest.param(info.name[1:], mutant, id=f"{info.name}-{mutant.name}")


def _solution(stage_key: str) -> Path:
    (path,) = (ROOT / "solutions").glob(f"{stage_key}.ipynb")
    return path


@pytest.mark.parametrize("stage_key,mutant", list(_cases()))
def test_mutant_loses_exactly_its_points(stage_key, mutant):
    stage = get_stage(stage_key)
    namespace, errors = namespace_for(_solution(stage_key), mutant.cells)
    assert not errors, [e.describe() for e in errors]
    report = run_stage(stage, namespace)
    lost = {r.check for r in report.results if r.status != "passed"}
    assert lost == mutant.lost
    feedback = {r.check: r.feedback for r in report.results}
    for check_id, words in mutant.feedback.items():
        assert words in feedback[check_id], feedback[check_id]


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
