"""``check(stage)``: the self-check cell of a worksheet.

It runs the stage's checks on the notebook's own definitions, in the notebook's
process, and prints the same verdicts the grader would give (the grader runs
the probes in a sandbox instead, but judges them with the same code).
"""
from __future__ import annotations

import inspect

from minigrad.course.checks import StageReport, format_report, run_stage
from minigrad.course.stages import get_stage


def check(stage: str, part: str | None = None, namespace: dict | None = None, seed: int = 0) -> StageReport:
    """Check a stage (or one graded ``part`` of it) against the caller's definitions."""
    if namespace is None:
        namespace = inspect.currentframe().f_back.f_globals
    selected = get_stage(stage)
    if part is not None:
        if part not in selected.parts:
            raise KeyError(f"stage {selected.name} has no part {part!r}; its parts are: {', '.join(selected.parts)}")
        selected = _only_part(selected, part)
    missing = [n for names in selected.parts.values() for n in names if n not in namespace]
    report = run_stage(selected, _with_stubs(namespace, missing))
    print(format_report(report))
    return report


def _only_part(stage, part: str):
    from dataclasses import replace

    checks = tuple(c for c in stage.checks if c.part == part)
    kept = {c.id for c in checks}
    checks = tuple(replace(c, needs=tuple(n for n in c.needs if n in kept)) for c in checks)
    return replace(stage, parts={part: stage.parts[part]}, checks=checks)


def _with_stubs(namespace: dict, missing: list[str]) -> dict:
    """Names the learner hasn't defined yet count as 'not implemented', not as a crash."""
    if not missing:
        return namespace

    def not_defined(*args, **kwargs):
        raise NotImplementedError

    return {**namespace, **{name: not_defined for name in missing}}
