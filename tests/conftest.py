"""Hypothesis profiles for the property-based tests.

- ``ci`` (the default): a fixed budget, derandomized, so every run of the suite
  tests the same examples and the differential tester stays within about a minute.
- ``long``: thousands of fresh random programs, for a run by hand before closing
  a parity issue: ``python -m pytest tests/test_differential.py --hypothesis-profile=long``
  (add ``--hypothesis-show-statistics`` for the exact count; ``HYPOTHESIS_LONG_EXAMPLES=5000``
  for a smaller batch).

Tests that pass their own ``settings(max_examples=...)`` keep their own budget.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=3000,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "long",
    # HYPOTHESIS_LONG_EXAMPLES splits the budget into batches that fit the time at hand.
    max_examples=int(os.environ.get("HYPOTHESIS_LONG_EXAMPLES", "20000")),
    derandomize=False,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("ci")
