"""One step of each recurrent cell, from tensor operations, and the LSTM and GRU steps as one node each.

A step takes ``gi`` = W_ih x + b_ih (the layers compute it for every step at once), the carried
state ((h,) or (h, c)), W_hh, b_hh and, for an LSTM with proj_size, W_hr; it returns the new state.
The formulas are in ``minigrad/nn/modules/rnn.py``'s docstring; ``lstm_step`` and friends are them,
written with tensor operations, and they are the definition.

Composed, an LSTM step records 12 nodes and a GRU step 13 (a matmul, adds, chunks, the gates'
sigmoids and tanhs, products), and at the sizes of the course that bookkeeping, not the arithmetic,
is what a step costs. ``LSTMCell`` and ``GRUCell`` do the same arithmetic in NumPy in one node (named
as PyTorch's fused CUDA cells), with the gradient of the gates written out:

    LSTM  (i, f, g, o the activated gates, c' the new cell state, t = tanh(c'))
          dc = dc' + dh' * o * (1 - t^2);   d gates = (dc * g * i(1-i), dc * c * f(1-f), dc * i * (1-g^2),
          dh' * t * o(1-o));   d c = dc * f
    GRU   (r, z, n the gates, gh_n = (W_hh h + b_hh)'s third part)
          dn = dh' * (1 - z) * (1 - n^2);   d gi = (dr, dz, dn), d gh = (dr, dz, dn * r),
          with dr = dn * gh_n * r(1-r), dz = dh' * (h - n) * z(1-z);   d h = dh' * z + d gh @ W_hh
    both  d gi = the gates' gradient,  d W_hh = d gh.T @ h,  d b_hh = d gh.sum(0),  d h += d gh @ W_hh

A backward with create_graph=True recomputes the step from tensor operations and lets autograd
differentiate it (as ``torch.utils.checkpoint`` does), so the second derivatives are those of the
definition. Arguments the fused nodes do not take (mixed dtypes, shapes that do not fit) go to the
composed step, which raises PyTorch's errors or promotes as PyTorch does.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from minigrad.autograd.differentiate import grad as autograd_grad
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad.nn import functional as F
from minigrad._tensor import Tensor

State = tuple  # (h,) for RNN and GRU, (h, c) for LSTM
Step = Callable[[Tensor, State, Tensor, "Tensor | None", "Tensor | None"], State]


# -- the definition: tensor operations --------------------------------------------------------------------------
def rnn_tanh_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: None = None) -> State:
    return ((gi + F.linear(state[0], w_hh, b_hh)).tanh(),)


def rnn_relu_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: None = None) -> State:
    return ((gi + F.linear(state[0], w_hh, b_hh)).relu(),)


def lstm_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None = None) -> State:
    h, c = state
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    return (h if w_hr is None else F.linear(h, w_hr), c)


def gru_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: None = None) -> State:
    h = state[0]
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return ((h - n) * z + n,)  # (1 - z) * n + z * h, as PyTorch computes it


# -- the same steps as one node each ------------------------------------------------------------------------------
def fused_lstm_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None,
                    w_hr: Tensor | None = None) -> State:
    if not _fits(gi, *state, w_hh, b_hh):
        return lstm_step(gi, state, w_hh, b_hh, w_hr)
    h, c = LSTMCell.apply(gi, state[0], state[1], w_hh, b_hh)
    return (h if w_hr is None else F.linear(h, w_hr), c)


def fused_gru_step(gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, w_hr: None = None) -> State:
    if _fits(gi, state[0], None, w_hh, b_hh):
        return (GRUCell.apply(gi, state[0], w_hh, b_hh),)
    return gru_step(gi, state, w_hh, b_hh)


def _fits(gi: Tensor, h: Tensor, c: Tensor | None, w_hh: Tensor, b_hh: Tensor | None) -> bool:
    """What the fused nodes take: gi (N, G), h and c (N, H), W_hh (G, H), b_hh (G,) or None, one float dtype.

    Anything else goes to the composed step, which raises PyTorch's errors or promotes as PyTorch does.
    """
    x = gi._data
    if x.ndim != 2 or x.dtype.kind != "f" or h._data.ndim != 2:
        return False
    (n, g), hidden = x.shape, h._data.shape[1]
    return (h._data.shape[0] == n and w_hh._data.shape == (g, hidden) and (c is None or c._data.shape == (n, hidden))
            and (b_hh is None or b_hh._data.shape == (g,))
            and all(t is None or t._data.dtype == x.dtype for t in (h, c, w_hh, b_hh)))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # exp(-x) = inf for a very negative x gives the right 0
        return 1 / (1 + np.exp(-x))


def _hidden_gates(h: Tensor, w_hh: Tensor, b_hh: Tensor | None) -> np.ndarray:
    gh = h._data @ w_hh._data.T
    if b_hh is not None:
        gh += b_hh._data
    return gh


def _recorded_backward(ctx, step, gi: Tensor, state: State, w_hh: Tensor, b_hh: Tensor | None, grads: tuple) -> tuple:
    """Under create_graph: the composed step from the saved inputs, differentiated by autograd (recorded)."""
    inputs = (gi, *state, w_hh, b_hh)
    wanted = [t for t, need in zip(inputs, ctx.needs_input_grad) if need]
    found = iter(autograd_grad(step(gi, state, w_hh, b_hh), wanted, grads, create_graph=True, allow_unused=True))
    return tuple(next(found) if need else None for need in ctx.needs_input_grad)


def _hidden_grads(needs: tuple, d_gh: np.ndarray, h: Tensor, w_hh: Tensor) -> tuple:
    """From the gradient of W_hh h + b_hh: (d h as an array, d W_hh, d b_hh), each None unless ``needs`` asks."""
    need_h, need_w, need_b = needs
    return (d_gh @ w_hh._data if need_h else None,
            Tensor._wrap(d_gh.T @ h._data) if need_w else None,
            Tensor._wrap(np.add.reduce(d_gh, axis=0)) if need_b else None)


class LSTMCell(Function):
    """(gi, h, c, W_hh, b_hh) -> (h', c'): ``lstm_step`` in one node (a projection is a linear after it)."""

    node_name = "ThnnFusedLstmCellBackward0"

    @staticmethod
    def forward(ctx, gi, h, c, w_hh, b_hh):
        i, f, g, o = np.split(gi._data + _hidden_gates(h, w_hh, b_hh), 4, axis=1)
        i, f, g, o = _sigmoid(i), _sigmoid(f), np.tanh(g), _sigmoid(o)
        c_next = f * c._data + i * g
        t = np.tanh(c_next)
        ctx.save_for_backward(gi, h, c, w_hh, b_hh, *map(Tensor._wrap, (i, f, g, o, t)))  # (freed by backward)
        return Tensor._wrap(o * t), Tensor._wrap(c_next)

    @staticmethod
    def backward(ctx, dh, dc):
        gi, h, c, w_hh, b_hh, *gates = ctx.saved_tensors
        if is_grad_enabled():
            return _recorded_backward(ctx, lstm_step, gi, (h, c), w_hh, b_hh, (dh, dc))
        i, f, g, o, t = (gate._data for gate in gates)
        dh = dh._data
        dc = dc._data + dh * o * (1 - t * t)
        d_gates = np.concatenate([dc * g * i * (1 - i), dc * c._data * f * (1 - f), dc * i * (1 - g * g),
                                  dh * t * o * (1 - o)], axis=1)
        need_gi, need_h, need_c, *need_hidden = ctx.needs_input_grad
        d_h, d_w, d_b = _hidden_grads((need_h, *need_hidden), d_gates, h, w_hh)
        return (Tensor._wrap(d_gates) if need_gi else None, None if d_h is None else Tensor._wrap(d_h),
                Tensor._wrap(dc * f) if need_c else None, d_w, d_b)


class GRUCell(Function):
    """(gi, h, W_hh, b_hh) -> h': ``gru_step`` in one node."""

    node_name = "ThnnFusedGruCellBackward0"

    @staticmethod
    def forward(ctx, gi, h, w_hh, b_hh):
        i_r, i_z, i_n = np.split(gi._data, 3, axis=1)
        h_r, h_z, h_n = np.split(_hidden_gates(h, w_hh, b_hh), 3, axis=1)
        r, z = _sigmoid(i_r + h_r), _sigmoid(i_z + h_z)
        n = np.tanh(i_n + r * h_n)
        ctx.save_for_backward(gi, h, w_hh, b_hh, *map(Tensor._wrap, (r, z, n, h_n)))
        return Tensor._wrap((h._data - n) * z + n)

    @staticmethod
    def backward(ctx, dh):
        gi, h, w_hh, b_hh, *gates = ctx.saved_tensors
        if is_grad_enabled():
            return _recorded_backward(ctx, gru_step, gi, (h,), w_hh, b_hh, (dh,))
        r, z, n, h_n = (gate._data for gate in gates)
        dh = dh._data
        dn = dh * (1 - z) * (1 - n * n)
        dr = dn * h_n * r * (1 - r)
        dz = dh * (h._data - n) * z * (1 - z)
        need_gi, need_h, *need_hidden = ctx.needs_input_grad
        d_h, d_w, d_b = _hidden_grads((need_h, *need_hidden), np.concatenate([dr, dz, dn * r], axis=1), h, w_hh)
        return (Tensor._wrap(np.concatenate([dr, dz, dn], axis=1)) if need_gi else None,
                None if d_h is None else Tensor._wrap(d_h + dh * z), d_w, d_b)
