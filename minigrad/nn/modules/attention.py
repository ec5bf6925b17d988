"""``MultiheadAttention``: each position looks at every position of another sequence (or its own), through
``num_heads`` attention heads side by side (Vaswani et al., 2017).

PyTorch keeps it in ``torch/nn/modules/activation.py``; here it has a file of its own. The computation is
``F.multi_head_attention_forward`` (tensor operations, so autograd differentiates it to any order).
PyTorch's fast path (a fused kernel in eval mode, for nested tensors) does not exist here: minigrad
always takes the ordinary path, which computes the same values.
"""
from __future__ import annotations

from minigrad.creation import empty
from minigrad.nn import functional as F
from minigrad.nn.init import constant_, xavier_normal_, xavier_uniform_
from minigrad.nn.module import Module
from minigrad.nn.modules.linear import NonDynamicallyQuantizableLinear
from minigrad.nn.parameter import Parameter
from minigrad._tensor import Tensor


class MultiheadAttention(Module):
    """softmax(Q K^T / sqrt(head_dim)) V in ``num_heads`` heads of ``embed_dim // num_heads`` features each.

    Q, K and V are linear projections of query, key and value: ``in_proj_weight`` (3 * embed_dim, embed_dim)
    holds the three stacked, or, when key or value has another width (``kdim``, ``vdim``),
    ``q_proj_weight``, ``k_proj_weight`` and ``v_proj_weight`` hold them apart; ``in_proj_bias`` has the three
    biases. The heads' outputs are joined and mapped by ``out_proj``. ``add_bias_kv`` appends a learned
    key and value to the source sequence, ``add_zero_attn`` a zero one. Inputs are (L, N, E), or (N, L, E)
    with ``batch_first=True``, or unbatched (L, E). Initialised as in PyTorch (Xavier-uniform projections,
    zero biases), with the same parameter names and shapes, so a PyTorch state_dict loads.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device=None, dtype=None) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        factory = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty((3 * embed_dim, embed_dim), **factory))
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            self.q_proj_weight = Parameter(empty((embed_dim, embed_dim), **factory))
            self.k_proj_weight = Parameter(empty((embed_dim, self.kdim), **factory))
            self.v_proj_weight = Parameter(empty((embed_dim, self.vdim), **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **factory)
        if add_bias_kv:
            self.bias_k = Parameter(empty((1, 1, embed_dim), **factory))
            self.bias_v = Parameter(empty((1, 1, embed_dim), **factory))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            xavier_uniform_(self.in_proj_weight)
        else:
            for weight in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                xavier_uniform_(weight)
        if self.in_proj_bias is not None:
            constant_(self.in_proj_bias, 0.0)
            constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            xavier_normal_(self.bias_k)
            xavier_normal_(self.bias_v)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """The attention output (like query, embed_dim wide) and, with ``need_weights``, the weights (N, L, S),
        averaged over the heads unless ``average_attn_weights=False`` (then (N, num_heads, L, S)).

        In ``key_padding_mask`` (N, S) and ``attn_mask`` (L, S) or (N * num_heads, L, S), True marks a key
        that must not be looked at (the opposite of scaled_dot_product_attention's bool mask); a float mask is
        added to the scores. ``is_causal`` is a hint that ``attn_mask`` is the causal mask (it is still needed).
        """
        batched = query.ndim == 3
        key_padding_mask = F._canonical_mask(key_padding_mask, "key_padding_mask",
                                             None if attn_mask is None else attn_mask.dtype, "attn_mask",
                                             query.dtype)
        attn_mask = F._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and batched:  # (N, L, E) -> (L, N, E), keeping self-attention's q is k is v
            if key is value:
                if query is key:
                    query = key = value = query.transpose(1, 0)
                else:
                    query, key = query.transpose(1, 0), key.transpose(1, 0)
                    value = key
            else:
                query, key, value = query.transpose(1, 0), key.transpose(1, 0), value.transpose(1, 0)
        separate = {} if self._qkv_same_embed_dim else {
            "use_separate_proj_weight": True, "q_proj_weight": self.q_proj_weight,
            "k_proj_weight": self.k_proj_weight, "v_proj_weight": self.v_proj_weight,
        }
        attn_output, attn_output_weights = F.multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
            self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
            training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal, **separate,
        )
        if self.batch_first and batched:
            attn_output = attn_output.transpose(1, 0)
        return attn_output, attn_output_weights
