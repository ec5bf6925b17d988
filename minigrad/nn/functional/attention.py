"""Attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward`` (what
``nn.MultiheadAttention`` and the transformer layers call), with PyTorch's mask handling.
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from minigrad.dtypes import scalar_type_name
from minigrad.functional_ops import cat, where
from minigrad._tensor import Tensor
from minigrad.nn.functional._common import _TENSORS, _TENSORS_OR_NONE, _check_tensors
from minigrad.nn.functional.activations import softmax
from minigrad.nn.functional.dense import linear
from minigrad.nn.functional.padding import pad
from minigrad.nn.functional.dropouts import dropout
from minigrad.nn.ops.attention import ScaledDotProductAttention, fits_fused_attention


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, *, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(query @ key^T * scale + mask) @ value over the last two dimensions; the others broadcast.

    query is (..., L, E), key (..., S, E), value (..., S, Ev); ``scale`` defaults to 1/sqrt(E), which keeps
    the scores' spread independent of E. A bool ``attn_mask`` says which keys each query may look at (True:
    it may); a float one is added to the scores. ``is_causal`` lets query i see keys 0..i only (the upper-left
    triangle when L != S). A query that may see no key gets zeros (PyTorch's safe softmax), not NaN.
    ``enable_gqa`` shares each key/value head among a group of query heads (dimension -3). Dropout of the
    weights is always applied: pass ``dropout_p=0.0`` outside training. 4-D float inputs without a mask or dropout
    make one node (PyTorch's ``ScaledDotProductFlashAttentionForCpuBackward0``, ``nn/ops/attention.py``); other
    cases are composed of tensor operations.
    """
    if (type(query) not in _TENSORS or type(key) not in _TENSORS or type(value) not in _TENSORS
            or type(attn_mask) not in _TENSORS_OR_NONE):
        _check_tensors("scaled_dot_product_attention", query=query, key=key, value=value, attn_mask=attn_mask)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError(
            f"scaled_dot_product_attention: query, key and value must be at least 2-D (..., length, features), "
            f"but got {query.ndim}-D, {key.ndim}-D and {value.ndim}-D tensors"
        )
    dtype = query._data.dtype
    if key._data.dtype != dtype or value._data.dtype != dtype:
        raise RuntimeError(
            f"scaled_dot_product_attention: query, key and value must have the same dtype, but got {query.dtype}, "
            f"{key.dtype} and {value.dtype}; convert them with .to(dtype)"
        )
    if dtype.kind != "f":
        raise RuntimeError(f"scaled_dot_product_attention: expected floating-point query, key and value, but got "
                           f"{scalar_type_name(dtype)}; convert them with .float()")
    if attn_mask is not None:
        if is_causal:
            raise RuntimeError("scaled_dot_product_attention: an explicit attn_mask should not be set when "
                               "is_causal=True; pass one or the other")
        mask_dtype = attn_mask._data.dtype
        if mask_dtype not in (np.bool_, np.float32, dtype):
            raise RuntimeError(
                f"scaled_dot_product_attention: attn_mask must be bool, float32 or query's dtype ({query.dtype}), "
                f"but got {attn_mask.dtype}"
            )
    if dropout_p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")
    if fits_fused_attention(query, key, value, attn_mask, dropout_p, enable_gqa):  # one node, as PyTorch's
        return ScaledDotProductAttention.apply(query, key, value, is_causal,
                                               1.0 / math.sqrt(query.shape[-1]) if scale is None else scale)
    if enable_gqa:
        key, value = _grouped_heads(query, key), _grouped_heads(query, value)
    scores = query @ key.transpose(-2, -1) * (1.0 / math.sqrt(query.shape[-1]) if scale is None else scale)
    if is_causal:
        attn_mask = Tensor._wrap(np.tril(np.ones((query.shape[-2], key.shape[-2]), bool)))
    if attn_mask is not None:
        if tuple(np.broadcast_shapes(scores.shape, attn_mask.shape)) != tuple(scores.shape):
            raise RuntimeError(
                f"scaled_dot_product_attention: attn_mask of shape {list(attn_mask.shape)} must broadcast to the "
                f"scores' shape {list(scores.shape)} (..., L, S) without enlarging it"
            )
        scores = where(attn_mask, scores, -math.inf) if attn_mask._data.dtype == np.bool_ else scores + attn_mask
    weights = _safe_softmax(scores)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p)
    return weights @ value


def _grouped_heads(query: Tensor, kv: Tensor) -> Tensor:
    """Key or value with each of its heads (dimension -3) repeated for the group of query heads that share it."""
    if query.ndim < 3 or kv.ndim < 3:
        raise IndexError("scaled_dot_product_attention: enable_gqa needs a heads dimension (-3) in query, key and "
                         "value")
    heads, kv_heads = query.shape[-3], kv.shape[-3]
    if heads % kv_heads != 0:
        raise RuntimeError(f"scaled_dot_product_attention: the number of key/value heads ({kv_heads}) must divide "
                           f"the number of query heads ({heads}) with enable_gqa=True")
    return kv if kv_heads == heads else kv.repeat_interleave(heads // kv_heads, dim=-3)


def _safe_softmax(scores: Tensor) -> Tensor:
    """Softmax over the last dimension, with 0 (not NaN) for a row of scores that are all -inf.

    Such a row is softmaxed as zeros and then zeroed, so its gradient is 0 too, not NaN."""
    empty = np.all(scores._data == -np.inf, axis=-1, keepdims=True)
    if not empty.any():
        return softmax(scores, -1)
    empty = Tensor._wrap(empty)
    return where(empty, 0.0, softmax(where(empty, 0.0, scores), -1))


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type, other_name: str, target_type,
                    check_other: bool = True) -> Tensor | None:
    """A bool mask (True: masked out) as a float one of ``target_type``: -inf where masked, 0 elsewhere."""
    if mask is None:
        return None
    kind = mask._data.dtype.kind
    if kind not in "bf":
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use same type for both "
                      "instead.", UserWarning, stacklevel=3)
    if kind == "f":
        return mask
    return mask.new_zeros(mask.shape, dtype=target_type).masked_fill_(mask, -math.inf)


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    """Whether the input is batched: (L, N, E) query (True) or unbatched (L, E) (False); the others must agree."""
    if query.ndim not in (2, 3):
        raise AssertionError(f"query should be unbatched 2D or batched 3D tensor but received {query.ndim}-D query "
                             "tensor")
    batched = query.ndim == 3
    kind = "batched (3-D)" if batched else "unbatched (2-D)"
    if key.ndim != query.ndim or value.ndim != query.ndim:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {query.ndim}-D but found "
                             f"{key.ndim}-D and {value.ndim}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.ndim != query.ndim - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or {query.ndim - 1}-D "
                             f"but found {key_padding_mask.ndim}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D or 3-D but found "
                                 f"{attn_mask.ndim}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if not batched and attn_mask.ndim == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
    return batched


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None = None) -> list[Tensor]:
    """q, k and v through the three (E, E) blocks of ``w`` (and of ``b``); one matrix product for
    self-attention (q is k is v), two when k is v."""
    E = q.shape[-1]
    if k is v:
        if q is k:
            return list(linear(q, w, b).chunk(3, dim=-1))
        w_q, w_kv = w.split([E, E * 2])
        b_q, b_kv = (None, None) if b is None else b.split([E, E * 2])
        return [linear(q, w_q, b_q), *linear(k, w_kv, b_kv).chunk(2, dim=-1)]
    w_q, w_k, w_v = w.chunk(3)
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return [linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)]


def _in_projection(q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, b_q: Tensor | None = None,
                   b_k: Tensor | None = None, b_v: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """q, k and v through their own weights, (Eq, Eq), (Eq, Ek), (Eq, Ev): key and value may be narrower."""
    Eq, Ek, Ev = q.shape[-1], k.shape[-1], v.shape[-1]
    for name, t, shape in (("query weights", w_q, (Eq, Eq)), ("key weights", w_k, (Eq, Ek)),
                           ("value weights", w_v, (Eq, Ev)), ("query bias", b_q, (Eq,)), ("key bias", b_k, (Eq,)),
                           ("value bias", b_v, (Eq,))):
        if t is not None and tuple(t.shape) != shape:
            raise AssertionError(f"expecting {name} shape of {shape}, but got {t.shape}")
    return linear(q, w_q, b_q), linear(k, w_k, b_k), linear(v, w_v, b_v)


def multi_head_attention_forward(
    query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
    in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None, bias_v: Tensor | None,
    add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor, out_proj_bias: Tensor | None,
    training: bool = True, key_padding_mask: Tensor | None = None, need_weights: bool = True,
    attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False, q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None, v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
    static_v: Tensor | None = None, average_attn_weights: bool = True, is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """``nn.MultiheadAttention``'s computation, on (L, N, E) query and (S, N, Ek/Ev) key and value (or unbatched
    (L, E) and (S, E)). Returns the output (L, N, E) and, with ``need_weights``, the attention weights
    (N, L, S) averaged over the heads (or (N, num_heads, L, S) with ``average_attn_weights=False``).

    The steps, as PyTorch takes them: project q, k, v (one packed weight, or three with
    ``use_separate_proj_weight``); append ``bias_k``/``bias_v`` and a zero key/value as a last source position
    if asked; split E into ``num_heads`` heads; merge the masks (True in a bool mask: masked out, unlike
    scaled_dot_product_attention); attend; join the heads; project out. Without ``need_weights`` the
    attention is ``scaled_dot_product_attention`` (a query that sees no key gets 0); with them a plain softmax
    (NaN there, as in PyTorch).
    """
    tensors = (query, key, value, in_proj_weight, in_proj_bias, bias_k, bias_v, out_proj_weight, out_proj_bias,
               key_padding_mask, attn_mask, q_proj_weight, k_proj_weight, v_proj_weight, static_k, static_v)
    if any(type(t) not in _TENSORS_OR_NONE for t in tensors) or type(query) not in _TENSORS:
        _check_tensors("multi_head_attention_forward", query=query, key=key, value=value,
                       in_proj_weight=in_proj_weight, in_proj_bias=in_proj_bias, bias_k=bias_k, bias_v=bias_v,
                       out_proj_weight=out_proj_weight, out_proj_bias=out_proj_bias,
                       key_padding_mask=key_padding_mask, attn_mask=attn_mask, q_proj_weight=q_proj_weight,
                       k_proj_weight=k_proj_weight, v_proj_weight=v_proj_weight, static_k=static_k,
                       static_v=static_v)
    batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not batched:  # run as a batch of one
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       None if attn_mask is None else attn_mask.dtype, "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                           "method `generate_square_subsequent_mask` to create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention's is_causal makes the mask
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match value's "
                                 f"{value.shape[:2]}")
        for name, w in (("q_proj_weight", q_proj_weight), ("k_proj_weight", k_proj_weight),
                        ("v_proj_weight", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name} is None")
        b_q, b_k, b_v = (None, None, None) if in_proj_bias is None else in_proj_bias.chunk(3)
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, b_q, b_k, b_v)
    else:
        if tuple(key.shape) != tuple(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:  # as (1 or N * num_heads, L, S)
        expected = (tgt_len, src_len) if attn_mask.ndim == 2 else (bsz * num_heads, tgt_len, src_len)
        if tuple(attn_mask.shape) != expected:
            raise RuntimeError(f"The shape of the {attn_mask.ndim}D attn_mask is {attn_mask.shape}, but should be "
                               f"{expected}.")
        if attn_mask.ndim == 2:
            attn_mask = attn_mask.unsqueeze(0)
    if (bias_k is None) != (bias_v is None):
        raise AssertionError("bias_k is set but bias_v is None" if bias_v is None else
                             "bias_v is set but bias_k is None")
    if bias_k is not None:  # one more source position, learned
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))

    # the heads as batch entries: (N * num_heads, length, head_dim)
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _heads(k, static_k, "static_k", bsz * num_heads, head_dim)
    v = _heads(v, static_v, "static_v", bsz * num_heads, head_dim)
    if add_zero_attn:  # one more source position, all zeros
        zero = k.new_zeros((bsz * num_heads, 1, head_dim))
        k, v = cat([k, zero], dim=1), cat([v, zero], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got {key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        key_padding_mask = (key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
                            .reshape(bsz * num_heads, 1, src_len))
        attn_mask = key_padding_mask if attn_mask is None else attn_mask + key_padding_mask
    if not training:
        dropout_p = 0.0

    if need_weights:
        scores = q * math.sqrt(1.0 / head_dim) @ k.transpose(-2, -1)
        weights = softmax(scores if attn_mask is None else attn_mask + scores, dim=-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        attn_output = weights @ v
    else:  # (N, num_heads, L, head_dim) for scaled_dot_product_attention
        if attn_mask is not None:
            attn_mask = (attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1
                         else attn_mask.reshape(bsz, num_heads, -1, src_len))
        attn_output = scaled_dot_product_attention(
            q.reshape(bsz, num_heads, tgt_len, head_dim), k.reshape(bsz, num_heads, src_len, head_dim),
            v.reshape(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, is_causal,
        ).reshape(bsz * num_heads, tgt_len, head_dim)
        weights = None
    attn_output = attn_output.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    attn_output = linear(attn_output, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if weights is not None:
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
    if not batched:
        attn_output = attn_output.squeeze(1)
        weights = None if weights is None else weights.squeeze(0)
    return attn_output, weights


def _heads(projected: Tensor, static: Tensor | None, name: str, batch: int, head_dim: int) -> Tensor:
    """Keys or values (S, N, E) as (N * num_heads, S, head_dim), or the ``static`` ones given in that shape."""
    if static is None:
        return projected.reshape(projected.shape[0], batch, head_dim).transpose(0, 1)
    if static.shape[0] != batch:
        raise AssertionError(f"expecting {name}.size(0) of {batch}, but got {static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {static.shape[2]}")
    return static
