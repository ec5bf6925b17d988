"""The connectionist temporal classification loss (Graves et al., 2006) as one node, ``CtcLossBackward0``.

For log-probabilities lp (T, N, C) and a target l of length L, the loss is -log of the probability
of all the alignments that collapse to l (repeats merged, then blanks dropped). The target with a
blank around and between its labels, l' (2L + 1 states), turns the sum over alignments into two
recursions over time:

    alpha[t, s] = lp[t, l'(s)] + logsumexp(alpha[t-1, s], alpha[t-1, s-1], alpha[t-1, s-2])
    beta[t, s]  = lp[t, l'(s)] + logsumexp(beta[t+1, s], beta[t+1, s+1], beta[t+1, s+2])

(the s-2 / s+2 step only between two different labels), and nll = -logsumexp(alpha[T-1, 2L],
alpha[T-1, 2L-1]). alpha * beta / y at (t, s) is the probability mass of the alignments through s at
t, so the gradient needs one sum per class, lcab[t, c] = logsumexp of alpha + beta over the states
with label c. PyTorch's backward returns exp(lp) - exp(lcab + nll - lp): the gradient with respect
to the logits under a log_softmax (what training needs), not with respect to lp itself (which would
be the second term alone); minigrad returns the same, so a learner's numbers match. That gradient is
not the derivative of the forward, so the loss is a Function: composed of tensor operations it would
also record T steps of a dozen nodes each. Both recursions run in NumPy over the whole batch at once,
one time step per iteration, in log space as PyTorch's kernel (log(exp(a - m) + exp(b - m) + exp(c - m))
+ m). tests/nn/test_ctc_loss.py checks the loss against a brute-force sum over every path, and gradcheck
through a log_softmax.
"""
from __future__ import annotations

import numpy as np

from minigrad.autograd.function import Function
from minigrad._tensor import Tensor


class CtcLoss(Function):
    """The negative log-likelihood of each target, (N,), from lp (T, N, C) and padded targets (N, S)."""

    node_name = "CtcLossBackward0"

    @staticmethod
    def forward(ctx, log_probs, targets: np.ndarray, input_lengths: np.ndarray, target_lengths: np.ndarray,
                blank: int, zero_infinity: bool):
        lp = log_probs._data
        labels = _extended(targets, target_lengths, blank)
        alpha = _alpha(lp, labels, input_lengths, target_lengths)
        rows = np.arange(lp.shape[1])
        last = alpha[np.maximum(input_lengths - 1, 0), rows]
        ends = [last[rows, 2 * target_lengths],
                np.where(target_lengths > 0, last[rows, np.maximum(2 * target_lengths - 1, 0)], -np.inf)]
        nll = np.where(input_lengths > 0, -_log_add(*ends),
                       np.where(target_lengths == 0, 0.0, np.inf)).astype(lp.dtype)
        ctx.saved = lp, labels, alpha, nll, input_lengths, target_lengths, blank, zero_infinity
        return Tensor._wrap(nll)

    @staticmethod
    def backward(ctx, grad):
        lp, labels, alpha, nll, input_lengths, target_lengths, blank, zero_infinity = ctx.saved
        return (Tensor._wrap(_gradient(lp, labels, alpha, nll, grad._data, input_lengths, target_lengths,
                                       zero_infinity)), None, None, None, None, None)


def _extended(targets: np.ndarray, target_lengths: np.ndarray, blank: int) -> np.ndarray:
    """l' of each target: (N, 2 * max(L) + 1), blanks at the even states and past the target's end."""
    n, longest = len(target_lengths), int(target_lengths.max(initial=0))
    labels = np.full((n, 2 * longest + 1), blank, np.int64)
    labels[:, 1::2] = targets[:, :longest]
    labels[:, 1::2][np.arange(longest) >= target_lengths[:, None]] = blank
    return labels


def _log_add(*terms: np.ndarray) -> np.ndarray:
    """log(sum(exp(terms))) as PyTorch's kernel computes it: the max taken out, 0 if all are -inf."""
    top = np.maximum.reduce(terms)
    top = np.where(top == -np.inf, 0, top)
    with np.errstate(invalid="ignore", divide="ignore"):  # log 0 = -inf: an unreachable state
        return np.log(sum(np.exp(t - top) for t in terms)) + top


def _skips(labels: np.ndarray) -> np.ndarray:
    """Where state s may be reached from s - 2: a label (odd s) different from the label before it."""
    allowed = np.zeros(labels.shape, bool)
    allowed[:, 2:] = labels[:, 2:] != labels[:, :-2]
    allowed[:, ::2] = False
    return allowed


def _shifted(a: np.ndarray, by: int) -> np.ndarray:
    """a[:, s - by] along the last axis (by < 0: s + |by|), -inf where that falls outside."""
    out = np.full_like(a, -np.inf)
    if by > 0:
        out[:, by:] = a[:, :-by]
    else:
        out[:, :by] = a[:, -by:]
    return out


def _alpha(lp: np.ndarray, labels: np.ndarray, input_lengths: np.ndarray, target_lengths: np.ndarray) -> np.ndarray:
    """log alpha (T, N, S); at t = 0 only the first blank and the first label, as in PyTorch."""
    steps, n, _ = lp.shape
    emitted = np.take_along_axis(lp, np.broadcast_to(labels, (steps, *labels.shape)), 2)  # lp[t, n, l'(s)]
    skip = _skips(labels)
    alpha = np.full(emitted.shape, -np.inf, lp.dtype)
    if steps:
        alpha[0, :, 0] = emitted[0, :, 0]
        if labels.shape[1] > 1:
            alpha[0, :, 1] = np.where(target_lengths > 0, emitted[0, :, 1], -np.inf)
    for t in range(1, steps):
        prev = alpha[t - 1]
        alpha[t] = _log_add(prev, _shifted(prev, 1), np.where(skip, _shifted(prev, 2), -np.inf)) + emitted[t]
    return alpha


def _gradient(lp: np.ndarray, labels: np.ndarray, alpha: np.ndarray, nll: np.ndarray, grad: np.ndarray,
              input_lengths: np.ndarray, target_lengths: np.ndarray, zero_infinity: bool) -> np.ndarray:
    """PyTorch's (exp(lp) - exp(lcab + nll - lp)) * grad for t < input_length, 0 after it."""
    steps, n, classes = lp.shape
    states = labels.shape[1]
    emitted = np.take_along_axis(lp, np.broadcast_to(labels, (steps, *labels.shape)), 2)
    skip_next = np.zeros(labels.shape, bool)  # s + 2 reachable from s
    skip_next[:, :-2] = _skips(labels)[:, 2:]
    ends = 2 * target_lengths
    beta = np.full(emitted.shape, -np.inf, lp.dtype)
    # at t = input_length - 1 only the last blank and the last label
    final = (np.arange(states) == ends[:, None]) | ((np.arange(states) == ends[:, None] - 1) & (ends[:, None] > 0))
    for t in range(steps - 1, -1, -1):
        step = beta[t]  # -inf, for t = T - 1
        if t + 1 < steps:
            after = beta[t + 1]
            step = _log_add(after, _shifted(after, -1), np.where(skip_next, _shifted(after, -2), -np.inf)) + emitted[t]
        beta[t] = np.where((t == input_lengths - 1)[:, None], np.where(final, emitted[t], -np.inf),
                           np.where((t < input_lengths - 1)[:, None], step, -np.inf))
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        both = alpha + beta  # (T, N, S): log of the mass through state s at t
        top = both.max(2, initial=-np.inf)
        top = np.where(top == -np.inf, 0, top)
        one_hot = (labels[:, :, None] == np.arange(classes)).astype(lp.dtype)  # (N, S, C)
        lcab = np.log(np.einsum("tns,nsc->tnc", np.exp(both - top[..., None]), one_hot)) + top[..., None]
        out = (np.exp(lp) - np.exp(lcab + nll[None, :, None] - lp)) * grad[None, :, None]
    out[np.arange(steps)[:, None] >= input_lengths[None, :]] = 0
    if zero_infinity:
        out[:, nll == np.inf] = 0
    return out.astype(lp.dtype, copy=False)
