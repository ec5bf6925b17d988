"""Hints that say what happened: the learner's line, messages never cut mid-sentence (issue 28)."""
from __future__ import annotations

import numpy as np

import minigrad
from minigrad.course import checks
from minigrad.course.stages import get_stage
from minigrad.course.stages import s04_topological_backward as s04

FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
         "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
         "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time.")


def _learner_function(tmp_path, source: str) -> dict:
    """Run ``source`` as the grader runs a learner's cell: compiled from a file of its own."""
    path = tmp_path / "cell_relu_0123456789ab.py"
    path.write_text(source)
    namespace = {"minigrad": minigrad, "Function": minigrad.autograd.Function}
    exec(compile(source, str(path), "exec"), namespace)
    return namespace


def test_the_at_line_is_the_learners_never_a_library_wrapper(tmp_path):
    # The engine runs under NumPy's errstate decorator, whose frame is `return func(*args, **kwargs)`:
    # an error raised after the learner's backward returned has no learner line, and says nothing of one.
    ns = _learner_function(tmp_path, "class ReLU(Function):\n"
                                     "    @staticmethod\n"
                                     "    def forward(ctx, x):\n"
                                     "        return x * (x > 0)\n"
                                     "    @staticmethod\n"
                                     "    def backward(ctx, g):\n"
                                     "        return g, g\n")
    check = next(c for c in get_stage("05_custom_functions").checks if c.id == "relu_mask")
    observation = checks.observe(check, ns, 0)
    assert observation["status"] == "error" and "incorrect number of gradients" in observation["message"]
    assert "func(" not in observation["where"]
    # An error raised inside the learner's own code points at their line.
    ns = _learner_function(tmp_path, "class ReLU(Function):\n"
                                     "    @staticmethod\n"
                                     "    def forward(ctx, x):\n"
                                     "        return x * (x > 0) + minigrad.ones(3)\n"
                                     "    @staticmethod\n"
                                     "    def backward(ctx, g):\n"
                                     "        return g\n")
    observation = checks.observe(check, ns, 0)
    assert observation["where"].startswith("return x * (x > 0) + minigrad.ones(3)  (line 4)")


def test_clip_never_cuts_a_sentence_in_the_middle():
    assert checks.clip("short.", 100) == "short."
    clipped = checks.clip(FREED, 200)
    assert len(clipped) <= 200 and clipped.endswith("[...]")
    assert clipped.split(" [...]")[0].endswith((".", ":", ";", ")"))
    words = checks.clip("word " * 100, 50)
    assert len(words) <= 50 and words.endswith("word [...]")


def test_retain_graph_feedback_has_no_hole():
    verdict = s04.judge_retain({"raised": checks.clip(FREED, 300)}, {})
    assert not verdict.passed
    assert " or . " not in verdict.feedback and "or . Only" not in verdict.feedback
    assert "Only free saved tensors when retain_graph is False" in verdict.feedback


def test_a_tuple_where_a_tensor_is_expected_is_named_not_shown_as_values():
    t = minigrad.tensor(np.arange(3.0))
    assert checks.expect_tensor(t, "f(x)") is t
    for value, words in (((t,), "returned a tuple of 1 (Tensor), where one tensor was expected"),
                         ([t, t], "returned a list of 2 (Tensor, Tensor)"),
                         (np.arange(3.0), "returned a ndarray, where a minigrad tensor was expected")):
        try:
            checks.expect_tensor(value, "f(x)")
        except checks.Finding as e:
            assert words in str(e)
        else:
            raise AssertionError(f"{value!r} was accepted")
