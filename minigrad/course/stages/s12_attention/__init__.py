"""Stage 12: attention, the capstone. A small GPT whose every new gradient is the learner's.

The learner writes four Functions whose forward and backward are NumPy of their own (one
node each, as minigrad's and PyTorch's fused ops are): ``GELUFunction`` (the tanh
approximation, as GPT-2 and nanoGPT), ``LayerNormFunction`` (over the last axis),
``CausalAttentionFunction`` (scaled dot-product attention with a causal mask, on
``(..., T, D)`` queries, keys and values) and ``CrossEntropyFunction`` (mean over rows of
``(N, V)`` logits, integer targets). Then the Modules ``LayerNorm`` and
``CausalSelfAttention`` around them, and ``Block`` and ``GPT`` assembled from them, trained
on Shakespeare (``minigrad.data.load_shakespeare``).

Each Function is checked three ways on float64 inputs: against minigrad's own operation
(``F.gelu(approximate="tanh")``, ``F.layer_norm``, ``F.scaled_dot_product_attention(
is_causal=True)``, ``F.cross_entropy``, by autograd), against central finite differences of
the learner's own forward, and against PyTorch where it is installed. A second check per
Function measures what its graph node keeps for backward (saved tensors and array attributes
of ctx, each array counted once) against a budget the worksheet states, and changes the input
in place after forward: backward must then raise the version error or give the gradient of
the original input, never a silently wrong one.

The reference (``reference()``) is the solution's code, written here; the checks compare the
learner's numbers with minigrad's own operations, not with it.

The stage is a package: ``reference.py`` holds that code; one module per part holds the part's
probes and judges (``gelu.py``, ``layer_norm.py``, ``attention.py``, ``cross_entropy.py``,
``gpt.py``, with the training check); ``probing.py`` the helpers they share. This module puts
them together as ``STAGE``, and every name is importable from here as before.
"""
from __future__ import annotations

from minigrad.course.checks import Check, Stage
from minigrad.course.stages.s12_attention.attention import (
    ATTENTION_CASES, causal_attention, judge_attention, judge_attention_module, judge_attention_saved, probe_attention,
    probe_attention_module, probe_attention_saved,
)
from minigrad.course.stages.s12_attention.cross_entropy import (
    judge_cross_entropy, judge_cross_entropy_saved, probe_cross_entropy, probe_cross_entropy_saved,
)
from minigrad.course.stages.s12_attention.gelu import (
    gelu_tanh, judge_gelu, judge_gelu_saved, probe_gelu, probe_gelu_saved,
)
from minigrad.course.stages.s12_attention.gpt import (
    GPT_CONFIG, NATIVE_NODES, TARGET_LOSS, TRAIN, TRAIN_BATCH, TRAIN_LR, TRAIN_STEPS, judge_gpt, judge_training,
    probe_gpt, probe_training,
)
from minigrad.course.stages.s12_attention.layer_norm import (
    judge_layer_norm, judge_layer_norm_module, judge_layer_norm_saved, probe_layer_norm, probe_layer_norm_module,
    probe_layer_norm_saved,
)
from minigrad.course.stages.s12_attention.probing import EPS, F64, GELU_C
from minigrad.course.stages.s12_attention.reference import (
    GPT, Block, CausalAttentionFunction, CausalSelfAttention, CrossEntropyFunction, GELUFunction, LayerNorm,
    LayerNormFunction, reference,
)

FUNCTIONAL = ("minigrad.nn.functional.gelu", "minigrad.nn.functional.layer_norm",
              "minigrad.nn.functional.scaled_dot_product_attention", "minigrad.nn.functional.softmax",
              "minigrad.nn.functional.log_softmax", "minigrad.nn.functional.cross_entropy",
              "minigrad.nn.functional.nll_loss")
STAGE = Stage(
    number="12",
    name="attention",
    title="Attention: a small GPT from your own Functions",
    parts={"gelu": ("GELUFunction",), "layer_norm": ("LayerNormFunction", "LayerNorm"),
           "attention": ("CausalAttentionFunction", "CausalSelfAttention"),
           "cross_entropy": ("CrossEntropyFunction",), "gpt": ("Block", "GPT")},
    checks=(
        Check("gelu", 2, "GELUFunction (tanh form): values, and gradients against minigrad, finite differences, "
              "PyTorch", probe_gelu, judge_gelu, part="gelu"),
        Check("gelu_saved", 1, "GELUFunction keeps one array the size of x, safely", probe_gelu_saved,
              judge_gelu_saved, needs=("gelu",), part="gelu"),
        Check("layer_norm", 2, "LayerNormFunction: values, and gradients of x, weight, bias", probe_layer_norm,
              judge_layer_norm, part="layer_norm"),
        Check("layer_norm_saved", 1, "LayerNormFunction keeps one array the size of x and row statistics, safely",
              probe_layer_norm_saved, judge_layer_norm_saved, needs=("layer_norm",), part="layer_norm"),
        Check("layer_norm_module", 1, "LayerNorm: weight ones, bias zeros, and your Function", probe_layer_norm_module,
              judge_layer_norm_module, needs=("layer_norm",), part="layer_norm"),
        Check("attention", 3, "CausalAttentionFunction: masked, scaled, stable; gradients of q, k, v",
              probe_attention, judge_attention, part="attention"),
        Check("attention_saved", 1, "CausalAttentionFunction keeps q, k, v, the output and one (B, H, T, T) array, "
              "safely", probe_attention_saved, judge_attention_saved, needs=("attention",), part="attention"),
        Check("attention_module", 1, "CausalSelfAttention: qkv and proj, heads split as nanoGPT's",
              probe_attention_module, judge_attention_module, needs=("attention",), part="attention"),
        Check("cross_entropy", 2, "CrossEntropyFunction: mean loss, stable, and its gradient", probe_cross_entropy,
              judge_cross_entropy, part="cross_entropy"),
        Check("cross_entropy_saved", 1, "CrossEntropyFunction keeps one (N, V) array and the targets, safely",
              probe_cross_entropy_saved, judge_cross_entropy_saved, needs=("cross_entropy",), part="cross_entropy"),
        Check("gpt", 2, "GPT: parameters, pre-norm blocks with residuals, only your Functions", probe_gpt, judge_gpt,
              needs=("gelu", "layer_norm_module", "attention_module"), part="gpt"),
        Check("training", 2, f"the GPT reaches a loss below {TARGET_LOSS} in {TRAIN_STEPS} Adam steps on Shakespeare",
              probe_training, judge_training, needs=("gpt", "cross_entropy"), part="gpt"),
    ),
    reference=reference,
    forbidden={"gelu": FUNCTIONAL, "layer_norm": FUNCTIONAL, "attention": FUNCTIONAL,
               "cross_entropy": FUNCTIONAL, "gpt": FUNCTIONAL},
)
