"""Mutation testing of the stages' checks: does every wrong answer lose points?

A hand-written list of mistakes (``tests/mutants/``) catches the mistakes we
thought of. This module finds the others by a method: it takes each graded
cell of a solved worksheet (``solutions/NN_name.ipynb``), makes small changes
to the code between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` with the
classic mutation operators (``OPERATORS``), runs each changed worksheet as the
grader runs it, and sorts the mutants:

- **equivalent**: on the part's own probes, at several seeds, it gives the same
  observations as the solution (so it is not a mistake we can see: dropped);
- **killed**: a check of its own part loses points (at the grader's seed 0);
- **survived**: it behaves differently from the solution, yet its part keeps
  every point. Each survivor is a hole in the checks, or must be justified in
  ``AUTHORING.md`` (the table under "Mutation survivors").

Each mutant runs in a forked child of one process that has already run the
solved worksheet (fast, and a mutant that hangs, crashes or writes over
global state cannot harm the others): the child re-runs the mutated cell and
the cells after it, then probes.

Command line: ``python -m minigrad.course mutate [--stages 04,05] [--cap N] [--report]``.

The package: ``operators.py`` generates the mutants, ``runner.py`` runs them, ``justified.py``
reads the survivors AUTHORING.md justifies, ``report.py`` prints the report and holds the command
line. Every name is importable from ``minigrad.course.mutation`` as before.
"""
from __future__ import annotations

from minigrad.course.mutation.justified import (
    JUSTIFICATION_HEADING, course_root, justification_row, read_justifications,
)
from minigrad.course.mutation.operators import (
    ARITH_SWAPS, BEGIN, COMPARE_SWAPS, END, INPLACE, MODULES, NON_COMMUTATIVE, OPERATORS, REDUCTIONS, TWIN_SUFFIX,
    TWINS, Mutation, generate, solution_region,
)
from minigrad.course.mutation.report import (
    _caps, add_arguments, diagnoses_named, format_survivors, format_table, main, outcome_dict, run_cli,
    use_fork_safe_threads,
)
from minigrad.course.mutation.runner import (
    EQUIVALENCE_SEEDS, GRADING_SEED, Outcome, StageResult, StageRunner, _noisy_paths, _run_children, _same,
    run_stage_mutants, sample,
)
