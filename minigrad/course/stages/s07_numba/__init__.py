"""Stage 07: fused kernels with Numba, wrapped in Functions.

The learner writes ``sigmoid_forward(x)`` and ``sigmoid_backward(y, grad)`` (one loop
each), the fused ``cross_entropy_forward(logits, targets) -> (loss, log_probs)`` and
``cross_entropy_backward(log_probs, targets, grad_scalar)`` over (N, C) logits, and the
Functions ``Sigmoid`` and ``CrossEntropy`` around them (backward ``@once_differentiable``).
The names and signatures are those of ``minigrad.kernels``, whose NumPy references in
``minigrad/kernels/reference.py`` are this stage's reference.

Kernels are probed in float32 and float64, on odd shapes and non-contiguous views, and
watched for writing into their inputs. A data race in a ``prange`` loop is looked for in
two ways, because a race only shows when two threads really run at once (the grader's
sandbox gives Numba one thread, and a busy laptop may not overlap them either):

- statically, in Numba's own IR of every ``parallel=True`` function the wrapper reaches:
  a ``prange`` loop that writes an array element whose position does not depend on the
  loop variable (``acc[0] += ...``) is a race; a scalar ``total += ...`` is a reduction,
  which Numba privatises per thread;
- dynamically: the forward runs three times on 200,000 rows and must give the
  reference loss each time.

The stage is a package: ``reference.py`` holds the reference; a module per part or kind of check
holds its probes and judges (``sigmoid.py``, ``cross_entropy.py``, ``functions.py``;
``compiled.py`` for compiled and fast, ``races.py`` for the data races); ``probing.py`` the helpers
they share. This module puts them together as ``STAGE``, and every name is importable from here as
before.
"""
from __future__ import annotations

from minigrad.course.checks import Check, Stage
from minigrad.course.stages.s07_numba.compiled import (
    SPEED_PAIRS, SPEED_SIZE, SPEED_TOLERANCE, judge_ce_compiled, judge_sigmoid_compiled, judge_sigmoid_speed,
    probe_ce_compiled, probe_sigmoid_compiled, probe_sigmoid_speed,
)
from minigrad.course.stages.s07_numba.cross_entropy import (
    PEAKS, judge_ce_backward, judge_ce_forward, judge_ce_stable, probe_ce_backward, probe_ce_forward, probe_ce_stable,
)
from minigrad.course.stages.s07_numba.functions import (
    judge_ce_function, judge_once_differentiable, judge_sigmoid_function, probe_ce_function, probe_once_differentiable,
    probe_sigmoid_function,
)
from minigrad.course.stages.s07_numba.probing import DTYPES, NOT_COMPILED
from minigrad.course.stages.s07_numba.races import judge_ce_no_race, probe_ce_no_race
from minigrad.course.stages.s07_numba.reference import reference
from minigrad.course.stages.s07_numba.sigmoid import (
    judge_sigmoid_backward, judge_sigmoid_forward, probe_sigmoid_backward, probe_sigmoid_forward,
)

KERNELS = ("sigmoid_forward", "sigmoid_backward")
CE = ("cross_entropy_forward", "cross_entropy_backward")

DIAGNOSES = {  # the phrase the feedback says for each known mistake (tests/mutants/s07_numba.py)
    "race_on_a_shared_accumulator": "writes total[...] inside a prange loop",
    "no_max_subtraction": "exp(1000) overflows",
    "log_of_a_rounded_probability": "log(0) = -inf",
    "backward_without_mean": "times too large",
    "backward_ignores_grad_scalar": "ignores grad_scalar",
    "backward_writes_into_grad": "changed its input `grad`",
    "kernels_not_compiled": "this function is not compiled: add @numba.njit",
    "float64_for_float32": "expected float32",
    "flat_loop_without_a_contiguous_copy": "Make the inputs contiguous first",
    "not_once_differentiable": "@once_differentiable under @staticmethod",
    "max_loop_misses_the_last_column": "m is too small (a column missed)",
    "max_loop_reads_past_the_row": "it was read from outside the row",
}

STAGE = Stage(
    number="07",
    name="numba",
    title="Fused kernels with Numba",
    parts={"sigmoid": KERNELS, "cross_entropy": CE, "functions": ("Sigmoid", "CrossEntropy")},
    checks=(
        Check("sigmoid_forward", 1, "sigmoid_forward matches NumPy: float32/64, odd shapes, non-contiguous",
              probe_sigmoid_forward, judge_sigmoid_forward, part="sigmoid"),
        Check("sigmoid_backward", 1, "sigmoid_backward matches NumPy and leaves its inputs alone",
              probe_sigmoid_backward, judge_sigmoid_backward, part="sigmoid"),
        Check("sigmoid_compiled", 1, "both sigmoid kernels are compiled by Numba (nopython) for float32 and float64",
              probe_sigmoid_compiled, judge_sigmoid_compiled, part="sigmoid"),
        Check("sigmoid_speed", 1, "sigmoid_backward is at least as fast as NumPy's (1M float64, interleaved runs)",
              probe_sigmoid_speed, judge_sigmoid_speed, needs=("sigmoid_backward", "sigmoid_compiled"),
              part="sigmoid"),
        Check("ce_forward", 2, "cross_entropy_forward: loss and log_probs match NumPy", probe_ce_forward,
              judge_ce_forward, part="cross_entropy"),
        Check("ce_stable", 1, "cross_entropy_forward stays finite for logits of ±1000", probe_ce_stable,
              judge_ce_stable, needs=("ce_forward",), part="cross_entropy"),
        Check("ce_backward", 1, "cross_entropy_backward matches NumPy", probe_ce_backward, judge_ce_backward,
              part="cross_entropy"),
        Check("ce_compiled", 1, "both cross-entropy kernels are compiled by Numba (nopython) for float32 and float64",
              probe_ce_compiled, judge_ce_compiled, part="cross_entropy"),
        Check("ce_no_race", 1, "no data race: the same loss on 200,000 rows, three times", probe_ce_no_race,
              judge_ce_no_race, needs=("ce_forward",), part="cross_entropy"),
        Check("sigmoid_function", 1, "Sigmoid's gradient matches finite differences", probe_sigmoid_function,
              judge_sigmoid_function, needs=KERNELS, part="functions"),
        Check("ce_function", 1, "CrossEntropy's gradient matches finite differences", probe_ce_function,
              judge_ce_function, needs=("ce_forward", "ce_backward"), part="functions"),
        Check("once_differentiable", 1, "a second derivative through either Function fails clearly",
              probe_once_differentiable, judge_once_differentiable, needs=("sigmoid_function", "ce_function"),
              part="functions"),
    ),
    reference=reference,
    forbidden={
        "sigmoid": ("minigrad.kernels.sigmoid_forward", "minigrad.kernels.sigmoid_backward",
                    "minigrad.kernels.reference.sigmoid_forward", "minigrad.kernels.reference.sigmoid_backward"),
        "cross_entropy": ("minigrad.kernels.cross_entropy_forward", "minigrad.kernels.cross_entropy_backward",
                          "minigrad.kernels.reference.cross_entropy_forward",
                          "minigrad.kernels.reference.cross_entropy_backward",
                          "minigrad.kernels.log_softmax_forward", "minigrad.kernels.reference.log_softmax_forward"),
    },
)
