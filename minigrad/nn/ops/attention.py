"""``scaled_dot_product_attention`` as one node, PyTorch's ``ScaledDotProductFlashAttentionForCpuBackward0``.

Composed of tensor operations (``nn/functional/attention.py``), attention records a transpose,
a matmul, a scaling, a masking ``where``, a softmax and a second matmul, and their backward
passes allocate a (B, H, L, S) array at almost every one of them. This node does the same
arithmetic with two batched BLAS products each way and the softmax kernels of
``minigrad.kernels`` (one pass per row):

    P  = softmax(Q K^T * scale, masked)      out = P V
    dV = P^T dOut        dP = dOut V^T       dS = P * (dP - rowsum(dP * P)) * scale
    dQ = dS K            dK = dS^T Q

It keeps Q, K, V and P (PyTorch's flash kernel keeps the row log-sum-exp instead of P and
recomputes it; at the course's sizes P is small). Under ``create_graph=True`` the backward is
the same formulas from tensor operations, recorded, so it can be differentiated again (as
PyTorch's is).
"""
from __future__ import annotations

import numpy as np

from minigrad import kernels
from minigrad.autograd.function import Function
from minigrad.autograd.grad_mode import is_grad_enabled
from minigrad._tensor import Tensor

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def fits_fused_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask, dropout_p: float,
                         enable_gqa: bool) -> bool:
    """The case PyTorch's CPU flash kernel takes (and names the node after): 4-D float query, key and value of
    one dtype with the same (batch, heads) and feature size, no explicit mask, no dropout, nothing empty
    (torch 2.x takes masks too; ours then composes tensor operations)."""
    q, k, v = query._data, key._data, value._data
    return (attn_mask is None and dropout_p == 0.0 and not enable_gqa and q.ndim == 4 and k.ndim == 4
            and v.ndim == 4 and q.dtype in _FLOATS and k.dtype == q.dtype and v.dtype == q.dtype
            and q.shape[:2] == k.shape[:2] == v.shape[:2] and k.shape[2] == v.shape[2]
            and q.shape[3] == k.shape[3] == v.shape[3]
            and q.size > 0 and k.size > 0 and v.size > 0)


def _causal_blocked(length: int, source: int) -> np.ndarray:
    """True above the diagonal (the keys query i may not see: i + 1 and after), as tril's complement."""
    return np.triu(np.ones((length, source), bool), 1)


class ScaledDotProductAttention(Function):
    node_name = "ScaledDotProductFlashAttentionForCpuBackward0"

    @staticmethod
    def forward(ctx, query, key, value, is_causal: bool, scale: float):
        q, k, v = query._data, key._data, value._data
        scores = np.matmul(q, np.swapaxes(k, -1, -2))
        scores *= scores.dtype.type(scale)
        if is_causal:  # -inf where blocked, whatever the score (inf, NaN): copyto's broadcast mask is one pass,
            np.copyto(scores, -np.inf, where=_causal_blocked(q.shape[2], k.shape[2]))  # boolean indexing ~7x slower
        weights = kernels.softmax_forward(scores, -1)
        ctx.is_causal, ctx.scale, ctx.weights = is_causal, scale, weights
        ctx.save_for_backward(query, key, value)
        return Tensor._wrap(np.matmul(weights, v))

    @staticmethod
    def backward(ctx, grad):
        query, key, value = ctx.saved_tensors
        if is_grad_enabled():
            return _recorded_backward(query, key, value, grad, ctx.is_causal, ctx.scale) + (None, None)
        p, g = ctx.weights, grad._data
        need_q, need_k, need_v = ctx.needs_input_grad[:3]
        grad_v = np.matmul(np.swapaxes(p, -1, -2), g) if need_v else None
        grad_q = grad_k = None
        if need_q or need_k:
            ds = kernels.softmax_backward(p, np.matmul(g, np.swapaxes(value._data, -1, -2)), -1)
            ds *= ds.dtype.type(ctx.scale)
            grad_q = np.matmul(ds, key._data) if need_q else None
            grad_k = np.matmul(np.swapaxes(ds, -1, -2), query._data) if need_k else None
        return (*(None if a is None else Tensor._wrap(a) for a in (grad_q, grad_k, grad_v)), None, None)


def _recorded_backward(q: Tensor, k: Tensor, v: Tensor, grad: Tensor, is_causal: bool, scale: float) -> tuple:
    """The same gradients from tensor operations (the forward recomputed), recorded for create_graph."""
    from minigrad.functional_ops import where

    scores = q @ k.transpose(-2, -1) * scale
    if is_causal:
        scores = where(Tensor._wrap(_causal_blocked(q.shape[2], k.shape[2])), -np.inf, scores)
    p = scores.softmax(-1)
    dp = grad @ v.transpose(-2, -1)
    ds = p * (dp - (dp * p).sum(-1, keepdim=True)) * scale
    return ds @ k, ds.transpose(-2, -1) @ q, p.transpose(-2, -1) @ grad
