"""The grader's machinery: how learner code is run, judged and recorded.

Kept apart from the course content one folder up (the stages, their checks, the
self-check) so that a learner who opens ``minigrad/course/`` finds what is checked,
and an instructor who opens this folder finds how: ``grade_cli`` (``minigrad-grade``)
drives ``grader``, which runs each worksheet in a ``sandbox`` child process
(``sandbox_child``), has its observations judged by a ``judge_worker`` and keeps the
results in the ``gradebook``; ``gradescope`` packs the same grader for Gradescope.

Nothing is imported here: ``sandbox_child`` and ``judge_worker`` run as scripts, and
``review`` reads one constant from ``sandbox_child`` without pulling in the rest.
"""
