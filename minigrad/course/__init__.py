"""Course tooling: stage registry, checks, self-check, exercise builder, CLI (the grader: ``grading/``).

Kept import-light on purpose: a learner's ``from minigrad.course import check``
must be fast, so submodules that need nbformat or Jupyter (``build``, ``cli``)
import them lazily and are never imported from here.
"""


def check(stage: str, part: str | None = None, namespace: dict | None = None, seed: int = 0):
    """Run a stage's checks on your notebook's definitions and print the verdicts."""
    import inspect

    from minigrad.course.selfcheck import check as _check

    if namespace is None:
        namespace = inspect.currentframe().f_back.f_globals
    return _check(stage, part, namespace, seed)


def mine(course=".", verbose: bool = True):
    """``with minigrad.course.mine("my-course"):``: run the block with the core pieces you wrote in your
    worksheets in place of the shipped ones (``minigrad/course/yours.py``); it prints whose code runs."""
    from minigrad.course.yours import mine as _mine

    return _mine(course, verbose)


def side_by_side(part: str, namespace: dict | None = None, stage: str | None = None):
    """Your code for a worksheet part beside the shipped core code it rebuilds (``minigrad/course/yours.py``)."""
    import inspect

    from minigrad.course.yours import side_by_side as _side_by_side

    if namespace is None:
        namespace = inspect.currentframe().f_back.f_globals
    return _side_by_side(part, namespace, stage)
