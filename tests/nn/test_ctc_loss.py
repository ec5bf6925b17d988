"""F.ctc_loss and nn.CTCLoss against PyTorch, and against a brute-force sum over every alignment.

Hypothesis draws the sequence and target lengths (some targets too long for their input: an infinite loss),
repeated labels, the blank, padded or concatenated targets, lengths as tensors or tuples, unbatched input,
the reduction, zero_infinity and the dtype, and a few invalid arguments; both libraries get the same inputs
(``compare`` from test_nn_spatial): the same exception type, or the same losses and gradients, both of the
log-probabilities themselves (PyTorch's gradient, see minigrad/nn/ops/ctc.py) and of logits under a
log_softmax. Without torch: the loss equals the sum over all C**T paths that collapse to the target, and
gradcheck holds through log_softmax.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad
import minigrad.nn.functional as F
from minigrad.autograd import gradcheck
from tests.nn.test_spatial import FEW, compare, needs_torch, same_module


@st.composite
def ctc_cases(draw):
    steps, classes = draw(st.integers(1, 7)), draw(st.integers(2, 5))
    batched = draw(st.integers(0, 4)) > 0
    batch = draw(st.integers(1, 3)) if batched else 1
    blank = draw(st.integers(0, classes - 1))
    labels = [c for c in range(classes) if c != blank]
    input_lengths = [draw(st.integers(0 if batched else 1, steps)) for _ in range(batch)]
    if batched and draw(st.booleans()):
        input_lengths[0] = steps  # PyTorch's common case: the longest fills T
    target_lengths = [draw(st.integers(0, min(5, steps + 1))) for _ in range(batch)]
    targets = [[draw(st.sampled_from(labels)) for _ in range(n)] for n in target_lengths]
    longest = max(target_lengths) + draw(st.integers(0, 2))
    padded = draw(st.booleans())
    if padded:
        targets = np.array([t + [draw(st.sampled_from([blank, labels[0]]))] * (longest - len(t)) for t in targets],
                           np.int64).reshape(batch, longest)
    else:
        targets = np.array([c for t in targets for c in t], np.int64)
    if not batched:
        targets = targets[0] if padded else targets
    lengths = draw(st.sampled_from(["tensor", "int32", "tuple", "list"]))
    broken = draw(st.sampled_from([None] * 14 + ["blank", "long_input", "short_targets", "float_lengths",
                                                 "reduction", "ndim", "batch"]))
    reduction = draw(st.sampled_from(["none", "mean", "sum"]))
    if broken == "blank":
        blank = classes
    elif broken == "long_input":
        input_lengths[-1] = steps + 1
    elif broken == "short_targets":
        targets = targets[..., :-1] if targets.shape[-1] else targets
    elif broken == "float_lengths":
        lengths = "float"
    elif broken == "reduction":
        reduction = "avg"
    elif broken == "ndim":
        targets = targets[None, None]
    elif broken == "batch":
        input_lengths = input_lengths + [1]
    logits = np.random.default_rng(draw(st.integers(0, 2 ** 16))).standard_normal(
        (steps, batch, classes) if batched else (steps, classes)) * 2
    return (logits, targets, input_lengths, target_lengths, lengths, blank, reduction, draw(st.booleans()),
            draw(st.booleans()), draw(st.sampled_from(["float64", "float32"])))


def _lengths(lib, values: list, kind: str, batched: bool):
    if kind in ("tuple", "list"):
        return tuple(values) if kind == "tuple" else list(values)
    dtype = {"tensor": lib.int64, "int32": lib.int32, "float": lib.float32}[kind]
    return lib.tensor(values if batched else values[0], dtype=dtype)


@needs_torch
@FEW
@given(ctc_cases())
def test_ctc_loss_matches_torch(case):
    logits, targets, input_lengths, target_lengths, kind, blank, reduction, zero_infinity, softmax, dtype = case
    batched = logits.ndim == 3

    def loss(lib, logits, targets):
        log_probs = logits.log_softmax(-1) if softmax else logits
        return lib.nn.functional.ctc_loss(log_probs, targets, _lengths(lib, input_lengths, kind, batched),
                                          _lengths(lib, target_lengths, kind, batched), blank, reduction,
                                          zero_infinity)
    compare(loss, [logits, targets], dtype, terms=4 * logits.shape[0])


@needs_torch
def test_ctc_loss_layer_matches_torch():
    mine, theirs = same_module("CTCLoss", blank=1, reduction="sum", zero_infinity=True)
    same_module("CTCLoss")
    assert (mine.blank, mine.reduction, mine.zero_infinity) == (theirs.blank, theirs.reduction, theirs.zero_infinity)
    logits = np.random.default_rng(0).standard_normal((6, 2, 4))
    targets, lengths = np.array([[0, 2, 2], [3, 0, 0]]), ([6, 4], [3, 1])
    compare(lambda lib, x, t: (mine if lib is minigrad else theirs)(x.log_softmax(2), t, *lengths), [logits, targets])


def _brute_force(log_probs: np.ndarray, target: list, blank: int) -> float:
    """-log of the summed probability of every path over the classes that collapses to ``target``."""
    total = 0.0
    for path in itertools.product(range(log_probs.shape[1]), repeat=log_probs.shape[0]):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == target:
            total += math.exp(sum(log_probs[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


@pytest.mark.parametrize("steps, classes, target, blank", [(4, 3, [1, 2], 0), (4, 3, [1, 1], 0), (5, 3, [2, 2, 0], 1),
                                                           (3, 2, [], 0), (2, 3, [1, 1], 0), (3, 4, [3], 2)])
def test_ctc_loss_is_the_sum_over_all_alignments(steps, classes, target, blank):
    """Every path collapsing to the target, enumerated: [1, 1] needs a blank between its labels, so in T = 2
    no path spells it and the loss is inf (0 with zero_infinity, gradient 0 too)."""
    rng = np.random.default_rng(steps * classes)
    x = minigrad.tensor(rng.standard_normal((steps, 1, classes)), dtype=minigrad.float64, requires_grad=True)
    log_probs = x.log_softmax(2)
    loss = F.ctc_loss(log_probs, minigrad.tensor([target], dtype=minigrad.int64).reshape(1, -1), (steps,),
                      (len(target),), blank, reduction="sum")
    expected = _brute_force(log_probs.detach().numpy()[:, 0], target, blank)
    np.testing.assert_allclose(loss.item(), expected, rtol=1e-12)
    zeroed = F.ctc_loss(log_probs, minigrad.tensor(target, dtype=minigrad.int64), (steps,), (len(target),), blank,
                        reduction="sum", zero_infinity=True)
    zeroed.backward()
    assert zeroed.item() == (0.0 if math.isinf(expected) else expected) or math.isclose(zeroed.item(), expected)
    if math.isinf(expected):
        assert not x.grad.numpy().any()
    else:
        assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), minigrad.tensor([target]).reshape(1, -1), (steps,),
                                              (len(target),), blank), [x], eps=1e-6, atol=1e-6, rtol=1e-4)


def test_ctc_loss_gradcheck_over_a_batch():
    """Through log_softmax (where PyTorch's gradient is the true one): padded targets, uneven lengths, mean."""
    x = minigrad.tensor(np.random.default_rng(1).standard_normal((6, 3, 4)), dtype=minigrad.float64,
                        requires_grad=True)
    targets = minigrad.tensor([[1, 2, 2], [3, 0, 0], [1, 3, 1]])
    assert gradcheck(lambda x: F.ctc_loss(x.log_softmax(2), targets, minigrad.tensor([6, 4, 5]),
                                          minigrad.tensor([3, 1, 3]), blank=0), [x], eps=1e-6, atol=1e-6, rtol=1e-4)
