"""Part ``gpt``: ``Block`` and ``GPT`` built from the learner's Modules and Functions only, and the
training check (a one-block GPT on Shakespeare)."""
from __future__ import annotations

import math

import numpy as np

import minigrad
from minigrad import nn
from minigrad.course.checks import Verdict, close, fmt
from minigrad.course.stages.s12_attention.probing import _apply, _node_names

# the training check: a one-block GPT on Shakespeare, a fixed number of Adam steps
TRAIN = {"block_size": 32, "n_embd": 32, "n_head": 2, "n_layer": 1}
TRAIN_BATCH, TRAIN_STEPS, TRAIN_LR = 16, 150, 1e-2
TARGET_LOSS = 2.7  # nats per character, mean of the last 25 steps; see judge_training

# minigrad's own nodes that must not appear in the learner's GPT: every gradient of the new
# operations comes from the learner's backward
NATIVE_NODES = ("NativeLayerNormBackward0", "GeluBackward0", "SoftmaxBackward0", "LogSoftmaxBackward0",
                "NllLossBackward0", "TanhBackward0", "ExpBackward0", "SqrtBackward0", "RsqrtBackward0",
                "VarBackward0", "VarMeanBackward0", "MaskedFillBackward0", "AmaxBackward0", "MaxBackward0",
                "LogsumexpBackward0")


GPT_CONFIG = {"vocab_size": 11, "block_size": 8, "n_embd": 16, "n_head": 2, "n_layer": 2}


def probe_gpt(ns: dict, rng: np.random.Generator) -> dict:
    model = ns["GPT"](**GPT_CONFIG)
    named = [[name, list(p.shape)] for name, p in model.named_parameters()]
    values = [rng.standard_normal(p.shape) * 0.3 for p in model.parameters()]
    idx = rng.integers(0, GPT_CONFIG["vocab_size"], (3, 6))
    result = {"module": isinstance(model, nn.Module), "named": named, "idx": idx}
    with minigrad.no_grad():
        for p, v in zip(model.parameters(), values):
            p.copy_(minigrad.tensor(v).to(p.dtype))
    logits = model(minigrad.tensor(idx))
    classes = {ns[name]._backward_cls: name for name in ("GELUFunction", "LayerNormFunction",
                                                           "CausalAttentionFunction")}
    names = _node_names(logits.grad_fn, classes)
    counts = {name: names.count(name) for name in classes.values()}
    return {**result, "shape": list(logits.shape), "logits": logits.detach(), "counts": counts,
            "native": sorted({n for n in names if n in NATIVE_NODES})}


def judge_gpt(mine: dict, ref: dict) -> Verdict:
    if not mine["module"]:
        return Verdict(False, "GPT(...) is not an nn.Module")
    if mine["named"] != ref["named"]:
        got = [(n, tuple(s)) for n, s in mine["named"]]
        want = [(n, tuple(s)) for n, s in ref["named"]]
        first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        return Verdict(False, f"GPT(vocab_size=11, block_size=8, n_embd=16, n_head=2, n_layer=2) registers "
                              f"{len(got)} parameters, expected {len(want)}; the first difference is at number {first}: "
                              f"{got[first] if first < len(got) else 'nothing'}, expected "
                              f"{want[first] if first < len(want) else 'nothing'}. The worksheet lists the names, "
                              "shapes and order")
    cfg = GPT_CONFIG
    if mine["shape"] != ref["shape"]:
        return Verdict(False, f"GPT on a (3, 6) batch of indices gave shape {tuple(mine['shape'])}, expected (3, 6, "
                              f"{cfg['vocab_size']}): one logit per vocabulary entry, at every position")
    want = {"LayerNormFunction": 2 * cfg["n_layer"] + 1, "CausalAttentionFunction": cfg["n_layer"],
            "GELUFunction": cfg["n_layer"]}
    for name, count in want.items():
        if mine["counts"][name] != count:
            return Verdict(False, f"the graph of GPT's output has {mine['counts'][name]} node(s) of your {name}, "
                                  f"expected {count} with {cfg['n_layer']} blocks: use your modules and Functions "
                                  "everywhere (two LayerNorms per block, one at the end)")
    if mine["native"]:
        return Verdict(False, f"the graph of GPT's output holds minigrad's own {', '.join(mine['native'])}: every "
                              "LayerNorm, GELU, softmax and attention must be yours, so that their gradients come "
                              "from your backward")
    if not close(mine["logits"], ref["logits"], rtol=1e-3, atol=1e-4):
        return Verdict(False, f"with the same parameters as the reference (set in order), GPT gave logits "
                              f"{fmt(mine['logits'])}, expected {fmt(ref['logits'])}. Check the order of each block, "
                              "pre-norm with residuals: x = x + attn(ln1(x)); x = x + proj(gelu(fc(ln2(x)))); and "
                              "the embedding: tok(idx) + pos(arange(T)); then ln_f and head")
    return Verdict(True)


def probe_training(ns: dict, rng: np.random.Generator) -> dict:
    from minigrad.data import load_shakespeare

    text = load_shakespeare()
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    data = np.array([lookup[c] for c in text[: int(0.9 * len(text))]], dtype=np.int64)
    minigrad.manual_seed(int(rng.integers(1 << 30)))
    model = ns["GPT"](vocab_size=len(chars), **TRAIN)
    optimizer = minigrad.optim.Adam(model.parameters(), lr=TRAIN_LR)
    loss_fn = _apply(ns, "CrossEntropyFunction")
    block = TRAIN["block_size"]
    losses = []
    for _ in range(TRAIN_STEPS):
        starts = rng.integers(0, len(data) - block - 1, TRAIN_BATCH)
        x = minigrad.tensor(np.stack([data[s:s + block] for s in starts]))
        y = minigrad.tensor(np.stack([data[s + 1:s + block + 1] for s in starts]))
        logits = model(x)
        loss = loss_fn(logits.reshape(-1, len(chars)), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.item()))
    return {"losses": losses}


def judge_training(mine: dict, ref: dict) -> Verdict:
    """The mean loss of the last 25 of 150 Adam steps, in nats per character, below 2.7. A model that
    learned only the characters' frequencies stays near their entropy, 3.30 nats (4.76 bits); a
    table of which character follows which reaches 2.48 nats (3.58 bits) on held-out text. The
    reference ends at 2.46-2.50 over seeds 0-2 (measured with the probe), so 2.7 leaves a margin
    for a learner's different but correct code, while a model that learned nothing beyond the
    characters' frequencies stays near 3.3. (Wrong gradients are the Functions' checks' business:
    with Adam, a gradient off by a constant factor still trains.)"""
    last = mine["losses"][-25:]
    mean = float(np.mean(last)) if last else float("nan")
    if math.isfinite(mean) and mean < TARGET_LOSS:
        return Verdict(True)
    shown = ", ".join(f"{v:.3f}" for v in mine["losses"][:: max(1, len(mine["losses"]) // 6)])
    return Verdict(False, f"your GPT ({TRAIN['n_layer']} block, n_embd {TRAIN['n_embd']}, {TRAIN['n_head']} heads, "
                          f"block_size {TRAIN['block_size']}), trained with Adam(lr={TRAIN_LR}) for {TRAIN_STEPS} steps "
                          f"of {TRAIN_BATCH} sequences, ended at a mean loss of {mean:.3f} over its last 25 steps, "
                          f"expected below {TARGET_LOSS} (the reference reaches "
                          f"{float(np.mean(ref['losses'][-25:])):.3f}). Losses along the way: {shown}")

