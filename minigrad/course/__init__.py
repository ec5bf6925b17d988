"""Course tooling: stage registry, checks, grader, exercise builder, CLI.

Kept import-light on purpose: a learner's ``from minigrad.course import check``
must be fast, so submodules that need nbformat or Jupyter (``build``, ``cli``)
import them lazily and are never imported from here.
"""
