"""The catalogue of common mistakes: one module per stage, ``sNN_name.py``, with ``MUTANTS``.

A mutant replaces some solution cells of a worksheet (by grade_id) with a
typical wrong answer. ``lost`` is exactly the set of checks it must not pass
(its own failures and the checks that depend on them), and ``feedback`` gives,
per check, words the feedback must contain: the advice written for that mistake.
``added`` are cells the learner added above the first replaced cell (helpers, imports), run
as the grader runs them; ``borrowed`` is ``part -> names`` whose code must be reported as not
coming from the learner's cells (``program.borrowed_names``; empty for every other mutant).
``diagnosis`` names the mistake: a key of the stage module's ``DIAGNOSES`` (the phrase the feedback
says for each known mistake), by default the mutant's own name if DIAGNOSES has it. The feedback must
say the mutant's own diagnosis, and never another's (none for a mutant whose feedback may only state
what was observed).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Mutant:
    name: str
    cells: dict[str, str]
    lost: set[str]
    feedback: dict[str, str] = field(default_factory=dict)
    added: tuple[str, ...] = ()
    borrowed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    diagnosis: str = ""
