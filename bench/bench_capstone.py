"""The capstone's training step: minigrad (the stage-12 solution's Functions, and minigrad's own
operations) against PyTorch CPU, side by side (issue 26, item 5).

The model is stage 12's GPT (nanoGPT's layout: pre-norm blocks of causal self-attention and a
GELU MLP) at the worksheet's size: vocabulary 63, block 64, n_embd 64, 4 heads, 2 layers, batches
of 16 windows, Adam. All three start from the same float32 weights and see the same batches; one
step of each is compared (loss, and every parameter's gradient) before anything is timed. Then
repetitions are interleaved (minigrad Functions, minigrad ops, torch, ...), each timing ``--steps``
training steps, and the median of each is reported, in wall time and in CPU time of this process
(on a machine shared with other work, CPU time is the steadier of the two).

    python bench/bench_capstone.py                 # ~1-2 min on an idle 2-core machine
    python bench/bench_capstone.py --reps 3 --steps 5

Threads: run with OPENBLAS_NUM_THREADS=1 (and the others) for one core each, as the course's
measurements are; torch.set_num_threads is set to match.
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np

import minigrad
from minigrad.course.stages import s12_attention as s12
from minigrad.nn import functional as F

CONFIG = {"vocab_size": 63, "block_size": 64, "n_embd": 64, "n_head": 4, "n_layer": 2}
BATCH = 16


class OwnBlock(minigrad.nn.Module):
    """The same block on minigrad's own operations (the lesson's model)."""

    def __init__(self, n_embd, n_head):
        super().__init__()
        nn = minigrad.nn
        self.ln1, self.attn = nn.LayerNorm(n_embd), s12.CausalSelfAttention(n_embd, n_head)
        self.ln2, self.fc, self.proj = nn.LayerNorm(n_embd), nn.Linear(n_embd, 4 * n_embd), nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self._attention(self.ln1(x))
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    def _attention(self, x):
        b, t, c = x.shape
        a = self.attn
        q, k, v = a.qkv(x).view(b, t, 3, a.n_head, c // a.n_head).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return a.proj(y.transpose(1, 2).reshape(b, t, c))


def minigrad_model(own_ops: bool):
    model = s12.GPT(**CONFIG)
    if own_ops:
        model.blocks = minigrad.nn.ModuleList([OwnBlock(CONFIG["n_embd"], CONFIG["n_head"])
                                              for _ in range(CONFIG["n_layer"])])
        model.ln_f = minigrad.nn.LayerNorm(CONFIG["n_embd"])
    return model


def minigrad_loss(model, own_ops, x, y):
    logits = model(x).reshape(-1, CONFIG["vocab_size"])
    if own_ops:
        return F.cross_entropy(logits, y.reshape(-1))
    return s12.CrossEntropyFunction.apply(logits, y.reshape(-1))


def torch_model(torch):
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c, h):
            super().__init__()
            self.h = h
            self.ln1 = nn.LayerNorm(c)
            self.qkv, self.aproj = nn.Linear(c, 3 * c), nn.Linear(c, c)
            self.ln2, self.fc, self.proj = nn.LayerNorm(c), nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

        def forward(self, x):
            b, t, c = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)
            y = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.aproj(y.transpose(1, 2).reshape(b, t, c))
            return x + self.proj(torch.nn.functional.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            c = CONFIG
            self.tok, self.pos = nn.Embedding(c["vocab_size"], c["n_embd"]), nn.Embedding(c["block_size"], c["n_embd"])
            self.blocks = nn.ModuleList([Block(c["n_embd"], c["n_head"]) for _ in range(c["n_layer"])])
            self.ln_f, self.head = nn.LayerNorm(c["n_embd"]), nn.Linear(c["n_embd"], c["vocab_size"])

        def forward(self, idx):
            x = self.tok(idx) + self.pos(torch.arange(idx.shape[1]))
            for block in self.blocks:
                x = block(x)
            return self.head(self.ln_f(x))

    return GPT()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    rng = np.random.default_rng(0)
    text = rng.integers(0, CONFIG["vocab_size"], 200_000)
    batches = []
    for _ in range(args.steps):
        starts = rng.integers(0, len(text) - CONFIG["block_size"] - 1, BATCH)
        batches.append((np.stack([text[s:s + 64] for s in starts]), np.stack([text[s + 1:s + 65] for s in starts])))

    minigrad.manual_seed(0)
    runs = {"minigrad, stage-12 Functions": minigrad_model(False), "minigrad, its own ops": minigrad_model(True)}
    tmodel = torch_model(torch)
    weights = [p.detach().numpy().copy() for p in runs["minigrad, stage-12 Functions"].parameters()]
    for model in runs.values():
        with minigrad.no_grad():
            for p, w in zip(model.parameters(), weights):
                p.copy_(minigrad.tensor(w))
    with torch.no_grad():
        tparams = list(tmodel.parameters())
        assert [tuple(p.shape) for p in tparams] == [w.shape for w in weights]
        for p, w in zip(tparams, weights):
            p.copy_(torch.from_numpy(w))

    # agreement: one step's loss and gradients, from the same weights and batch
    x, y = batches[0]
    tloss = torch.nn.functional.cross_entropy(tmodel(torch.from_numpy(x)).reshape(-1, 63), torch.from_numpy(y).reshape(-1))
    tloss.backward()
    for name, model in runs.items():
        loss = minigrad_loss(model, "own" in name, minigrad.tensor(x), minigrad.tensor(y))
        loss.backward()
        worst = max(float(np.abs(p.grad.numpy() - t.grad.numpy()).max()) for p, t in zip(model.parameters(), tparams))
        assert abs(loss.item() - tloss.item()) < 1e-4 and worst < 1e-4, (name, loss.item(), tloss.item(), worst)
        print(f"{name}: loss {loss.item():.6f} (torch {tloss.item():.6f}), largest gradient difference {worst:.1e}")

    optimizers = {name: minigrad.optim.Adam(m.parameters(), lr=1e-3) for name, m in runs.items()}
    topt = torch.optim.Adam(tmodel.parameters(), lr=1e-3)

    def step_minigrad(name):
        model, opt = runs[name], optimizers[name]
        for x, y in batches:
            loss = minigrad_loss(model, "own" in name, minigrad.tensor(x), minigrad.tensor(y))
            opt.zero_grad()
            loss.backward()
            opt.step()

    def step_torch():
        for x, y in batches:
            loss = torch.nn.functional.cross_entropy(tmodel(torch.from_numpy(x)).reshape(-1, 63),
                                                     torch.from_numpy(y).reshape(-1))
            topt.zero_grad()
            loss.backward()
            topt.step()

    work = {name: (lambda name=name: step_minigrad(name)) for name in runs}
    work["torch"] = step_torch
    wall = {name: [] for name in work}
    cpu = {name: [] for name in work}
    for rep in range(args.reps + 1):  # the first round warms up
        for name, fn in work.items():
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            if rep:
                wall[name].append((time.perf_counter() - w0) / args.steps)
                cpu[name].append((time.process_time() - c0) / args.steps)
    t_wall, t_cpu = statistics.median(wall["torch"]), statistics.median(cpu["torch"])
    print(f"\nms per training step (median of {args.reps} x {args.steps} steps; batch {BATCH} x {CONFIG['block_size']})")
    print(f"{'':32} {'wall':>8} {'cpu':>8} {'cpu / torch':>12}")
    for name in work:
        mw, mc = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:32} {1e3 * mw:8.1f} {1e3 * mc:8.1f} {mc / t_cpu:11.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
