"""End-to-end benchmark: minigrad side by side with hand-written NumPy, PyTorch CPU and MyGrad.

    python bench/bench_suite.py                   # full sizes, 15 repetitions in 3 rounds of processes
    python bench/bench_suite.py --quick           # tiny sizes, 1-2 repetitions: a smoke test (< 1 min)
    python bench/bench_suite.py --json out.json   # also write every measurement as JSON
    python bench/bench_suite.py --only mlp,cnn    # a subset of: overhead, mlp, cnn, startup, deep,
                                                  # kernels, grading
    python bench/bench_suite.py --threads 1       # every thread pool of every process pinned to 1 thread

Workloads (in this order):

1. overhead: a custom Function ``y = 2x`` (save_for_backward), forward+backward
   on a 1-element tensor, and ``(x*y+z).sum().backward()`` on 1-element tensors.
   Microseconds per iteration; the NumPy column is the same arithmetic written
   by hand with no graph (the floor).
2. mlp: softmax cross-entropy, plain SGD on the digits, ms per step (zero_grad,
   forward, loss, backward, step): a tiny 64-16-10 MLP at batch 10 (the graph's
   bookkeeping dominates), then 64-128-128-10 at batch 64 and at full batch
   (1797), ReLU between layers; then test accuracy of minigrad after a short
   training.
3. cnn: 1x8x8 digits, conv3x3(8) ReLU conv3x3(16) ReLU linear(10), batch 64:
   ms per step. NumPy column: im2col (sliding_window_view + matmul) with a
   hand-written backward.
4. startup: a fresh Python process, from ``import minigrad`` to the first
   completed ``backward()`` of the MLP, with the Numba cache warm and empty.
5. deep: backward through a 100,000-op chain and through a fan-out graph (one
   tensor used 10,000 times): time per node, and peak traced memory
   (tracemalloc) for minigrad; torch time too.
6. kernels: every Numba kernel against its NumPy reference and torch, at 1e4,
   1e6 and 1e7 elements (conv, pool: the course's shapes), float32 and float64,
   with the fraction of the measured copy bandwidth: ``bench/bench_kernels.py``
   run as it is (``--quick`` passed on) in a subprocess, its output echoed
   indented, its JSON kept under ``workloads.kernels.bench_kernels``, then a
   summary per kernel: worst and median ratio reference/kernel at >= 1e6
   elements (conv, pool: every shape), worst torch/kernel, and for elementwise
   kernels the bandwidth fraction at 1e7 elements (> 1 ratios: kernel faster).
7. grading: one learner's whole course (the solved worksheets ``solutions/NN_*.ipynb``,
   one subfolder per learner) graded end to end by the real grader,
   ``python -m minigrad.course.grading.grade_cli DIR -j N --no-cache`` in a fresh process:
   seconds per submission, median of 3 at -j 1, then a batch of 4 copies at
   -j 1 and -j 2 (one run each); the per-stage breakdown from the results JSON.
   The learner must get full marks on every stage, else the workload is aborted.
   ``--quick``: stages 02 and 05 only, one run.

Method: every implementation starts from the same weights and sees the same batches. Each framework
(minigrad, NumPy, torch, MyGrad) is timed in a process of its own, this script run with ``--worker``,
one process at a time, so no framework's thread pools (OpenBLAS's threads spin on after a matmul) slow
another's: a process per framework per workload, in 3 rounds for overhead, mlp and cnn (each round
starts with the next framework; the repetitions are shared out among the rounds), 1 for deep; ``--quick``
runs all of a framework's workloads in one process. Each process computes one step (loss and every
gradient) before timing, warms up, times its repetitions and writes them as JSON; the suite compares the
steps with minigrad's, and if they disagree the workload is aborted with a message (its times
discarded) and the run carries on with the next one. We report the median, min and max over all
repetitions, and the ratio minigrad/other: per round, minigrad's median over the other's, summarised by
the median over the rounds (< 1: minigrad is faster). (kernels and grading time subprocesses and have
their own checks: bench_kernels must exit 0; the grader must give the reference solutions full marks.)

PyTorch and MyGrad (``pip install mygrad``, or the ``[bench]`` extra) are
optional: a missing one's column is skipped. MyGrad runs as it ships (memory
guard on); it has no modules, so its models are written as functions of
their weights (dense weights stored (in, out): a layer is one matmul, one add),
and its custom op is an ``Operation`` subclass run with ``mygrad.execute_op``.

Threads: by default each process keeps the environment's thread settings (each framework alone with its
threads); ``--threads N`` pins every pool (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS,
NUMBA_NUM_THREADS, torch.set_num_threads) to N threads in every process the suite starts. Either way each
worker records its settings (the variables, the BLAS pools threadpoolctl sees, torch's and numba's
thread counts) under ``meta.worker_threads``.
"""
from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import importlib.util
import itertools
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout, no install needed

import minigrad  # noqa: E402
import minigrad.nn as mnn  # noqa: E402
import minigrad.nn.functional as MF  # noqa: E402

torch = TF = None  # imported by the torch worker only (load_torch): no other process loads torch's libraries


def load_torch():
    """Import torch into this process (a torch worker); None when it is not installed or broken."""
    global torch, TF
    if torch is None:
        try:
            import torch as _torch
            import torch.nn.functional as _tf
        except Exception:  # not installed, or broken: the torch column stays empty
            return None
        torch, TF = _torch, _tf
    return torch


mygrad = mygrad_relu = mygrad_conv = mygrad_cross_entropy = MygradOperation = None  # see load_mygrad


def load_mygrad():
    """Import MyGrad (``pip install mygrad``, or the [bench] extra: the best-known pure-Python/NumPy autograd) into
    this process, a mygrad worker: importing it takes seconds, so no other process does. None when it is not
    installed or broken (its column stays empty)."""
    global mygrad, mygrad_relu, mygrad_conv, mygrad_cross_entropy, MygradOperation
    if mygrad is None:
        try:
            import mygrad as _mygrad
            from mygrad.nnet.activations import relu
            from mygrad.nnet.layers import conv_nd
            from mygrad.nnet.losses import softmax_crossentropy
            from mygrad.operation_base import Operation
        except Exception:
            return None
        mygrad, mygrad_relu, mygrad_conv, mygrad_cross_entropy, MygradOperation = (
            _mygrad, relu, conv_nd, softmax_crossentropy, Operation)
    return mygrad


THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS",
               "NUMBA_CACHE_DIR")


class Aborted(RuntimeError):
    """A workload cannot give a meaningful measurement (the message says why): it is skipped, exit code 1."""


class Disagree(Aborted):
    """The frameworks do not compute the same thing: timing them would be meaningless."""


# ---------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------

def run_timed(fn, inner: int) -> float:
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def time_reps(fn, reps: int, inner: int, warmup: int = 2) -> list[float]:
    """Warm up, then ``reps`` timings of ``inner`` calls each; seconds per call (in a worker process)."""
    for _ in range(warmup):
        run_timed(fn, inner)
    return [run_timed(fn, inner) for _ in range(reps)]


def combine(rounds: dict[str, list[list[float]]], inner: int) -> dict:
    """Every framework's seconds per call, one list per round (each round a process of its own): median, min and
    max over all repetitions, and ``minigrad/other``: per round, minigrad's median over the other's, then the
    median of those ratios over the rounds."""
    out = {}
    for name, per_round in rounds.items():
        t = [x for r in per_round for x in r]
        out[name] = dict(median=statistics.median(t), min=min(t), max=max(t), reps=len(t), inner=inner,
                         rounds=len(per_round))
    for other in rounds:
        if other != "minigrad" and "minigrad" in rounds:
            out[f"minigrad/{other}"] = statistics.median(statistics.median(m) / statistics.median(o)
                                                         for m, o in zip(rounds["minigrad"], rounds[other]))
    return out


def check_close(name: str, got: dict, want: dict, rtol: float, atol: float) -> float:
    """Compare named arrays; raise Disagree with the worst offender. Returns the max abs difference."""
    worst = 0.0
    for key, ref in want.items():
        a, b = np.asarray(got[key], dtype=np.float64), np.asarray(ref, dtype=np.float64)
        if a.shape != b.shape:
            raise Disagree(f"{name}: {key} has shape {a.shape}, expected {b.shape}")
        diff = float(np.max(np.abs(a - b))) if a.size else 0.0
        worst = max(worst, diff)
        if not np.allclose(a, b, rtol=rtol, atol=atol):
            raise Disagree(f"{name}: {key} differs by up to {diff:.3g} (rtol {rtol}, atol {atol})")
    return worst


def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e6:.1f}us" if t < 1e-3 else f"{t * 1e3:.2f}ms" if t < 1 else f"{t:.2f}s"


def spread(s: dict | None) -> str:
    if not s:
        return "-"
    return f"{fmt_time(s['median'])} [{fmt_time(s['min'])}-{fmt_time(s['max'])}]"


def ratio(stats: dict, other: str) -> str:
    r = stats.get(f"minigrad/{other}")
    return "-" if r is None else f"{r:.2f}x"


OTHERS = ("numpy", "torch", "mygrad")  # the columns beside minigrad; "mg/X" = minigrad's time / X's
HEADER = (f"{'case':<34} " + " ".join(f"{name + ' median [min-max]':<30}" for name in ("minigrad", *OTHERS))
          + " " + " ".join(f"{'mg/' + ('np' if name == 'numpy' else name):>9}" for name in OTHERS))


def print_row(case: str, stats: dict) -> None:
    print(f"{case:<34} " + " ".join(f"{spread(stats.get(name)):<30}" for name in ("minigrad", *OTHERS))
          + " " + " ".join(f"{ratio(stats, name):>9}" for name in OTHERS), flush=True)


# ---------------------------------------------------------------------------
# 1. Op overhead
# ---------------------------------------------------------------------------

def double_function(lib):
    """``y = 2x`` as a custom Function of ``lib`` (minigrad or torch): the same code for both."""

    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2.0

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * 2.0

    return Double


def custom_function_case(lib):
    """Workload 1a in ``lib``: (one timed iteration, a function returning y and x.grad)."""
    double = double_function(lib)
    x, ones = lib.tensor([1.5], requires_grad=True), lib.ones(1)

    def step():
        x.grad = None
        double.apply(x).backward(ones)

    def result():
        step()
        return {"y": double.apply(x).detach().numpy(), "grad": x.grad.numpy()}

    return step, result


def mul_add_sum_case(lib):
    """Workload 1b in ``lib``: (one timed iteration, a function returning the three gradients)."""
    xs = [lib.tensor([v], requires_grad=True) for v in (1.5, -2.0, 0.5)]

    def step():
        for t in xs:
            t.grad = None
        (xs[0] * xs[1] + xs[2]).sum().backward()

    def result():
        step()
        return {f"g{i}": t.grad.numpy() for i, t in enumerate(xs)}

    return step, result


def custom_function_numpy():
    """Workload 1a by hand: the same arithmetic with no graph at all (the floor)."""
    x, ones = np.array([1.5], np.float32), np.ones(1, np.float32)
    out = {}

    def step():
        out["y"], out["grad"] = x * 2.0, ones * 2.0

    def result():
        step()
        return dict(out)

    return step, result


def mul_add_sum_numpy():
    """Workload 1b by hand: forward, then the three gradients written out (the floor)."""
    xs = [np.array([v], np.float32) for v in (1.5, -2.0, 0.5)]
    out = {}

    def step():
        (xs[0] * xs[1] + xs[2]).sum()
        seed = np.ones(1, np.float32)
        out["g0"], out["g1"], out["g2"] = seed * xs[1], seed * xs[0], seed

    def result():
        step()
        return dict(out)

    return step, result


def custom_function_mygrad():
    """Workload 1a in MyGrad: its custom op is an ``Operation`` whose ``__call__`` computes the forward
    on arrays and records its inputs in ``variables``; ``backward_var`` gives the gradient of one input."""

    class Double(MygradOperation):
        def __call__(self, x):
            self.variables = (x,)
            return x.data * 2.0

        def backward_var(self, grad, index, **kwargs):
            return grad * 2.0

    x, ones = mygrad.tensor(np.array([1.5], np.float32)), np.ones(1, np.float32)

    def step():  # no x.grad = None: MyGrad clears a tensor's .grad when it enters a new op
        mygrad.execute_op(Double, x).backward(ones)

    def result():
        step()
        grad = x.grad  # read first: the next op on x clears it
        return {"y": mygrad.execute_op(Double, x).data, "grad": grad}

    return step, result


def mul_add_sum_mygrad():
    """Workload 1b in MyGrad."""
    xs = [mygrad.tensor(np.array([v], np.float32)) for v in (1.5, -2.0, 0.5)]

    def step():
        (xs[0] * xs[1] + xs[2]).sum().backward()

    def result():
        step()
        return {f"g{i}": t.grad for i, t in enumerate(xs)}

    return step, result


OVERHEAD_CASES = (("custom_function", "custom Function y=2x fwd+bwd", custom_function_case, custom_function_numpy,
                   custom_function_mygrad, {"y": [3.0], "grad": [2.0]}),
                  ("mul_add_sum", "(x*y+z).sum().backward()", mul_add_sum_case, mul_add_sum_numpy, mul_add_sum_mygrad,
                   {"g0": [-2.0], "g1": [1.5], "g2": [1.0]}))


def as_lists(arrays: dict) -> dict:
    return {k: np.asarray(v, dtype=np.float64).tolist() for k, v in arrays.items()}


def worker_overhead(fw: str, cfg) -> dict:
    """Workload 1 in one framework's process: each case's result (for the check), then its timings."""
    out = {}
    for key, _, make_case, make_numpy, make_mygrad, _ in OVERHEAD_CASES:
        make = {"minigrad": lambda: make_case(minigrad), "numpy": make_numpy, "torch": lambda: make_case(torch),
                "mygrad": make_mygrad}[fw]
        step, result = make()
        out[key] = dict(check=as_lists(result()), times=time_reps(step, cfg.reps_per_round, cfg.inner_us))
    return out


def workload_overhead(cfg) -> dict:
    runs = run_rounds("overhead", cfg)
    results = {}
    for key, label, _, _, _, closed_form in OVERHEAD_CASES:
        for name, outs in runs.items():  # each against the closed form, hence against each other
            for out in outs:
                check_close(f"{label}: {name} vs the closed form", out[key]["check"], closed_form, 1e-6, 1e-6)
        results[key] = combine({name: [out[key]["times"] for out in outs] for name, outs in runs.items()},
                               cfg.inner_us)
        print_row(label, results[key])
    return dict(unit="seconds per iteration (forward+backward; numpy: the same arithmetic by hand, no graph)",
                cases=results)


# ---------------------------------------------------------------------------
# Shared model code: one set of NumPy weights, three frameworks
# ---------------------------------------------------------------------------

def kaiming_uniform(rng, shape, fan_in):
    bound = 1.0 / np.sqrt(fan_in)
    return rng.uniform(-bound, bound, shape).astype(np.float32)


def load_into(module_params, arrays, mg: bool):
    """Copy NumPy arrays into a model's parameters, in named_parameters order."""
    for p, a in zip(module_params, arrays):
        if mg:
            with minigrad.no_grad():
                p.copy_(minigrad.from_numpy(a.copy()))
        else:
            with torch.no_grad():
                p.copy_(torch.from_numpy(a.copy()))


def softmax_xent(logits, y):
    """Mean softmax cross-entropy and its gradient with respect to the logits."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=1, keepdims=True)
    n = logits.shape[0]
    loss = -np.mean(np.log(p[np.arange(n), y]))
    g = p
    g[np.arange(n), y] -= 1.0
    g /= np.float32(n)
    return float(loss), g


class NumpyMLP:
    def __init__(self, params):  # W1, b1, W2, b2, ... as in torch (out, in); ReLU between the layers
        self.params = [p.copy() for p in params]

    def loss_and_grads(self, x, y):
        W, b = self.params[0::2], self.params[1::2]
        hs, pre = [x], []  # each layer's input; the hidden layers' pre-activations
        for Wi, bi in zip(W[:-1], b[:-1]):
            pre.append(hs[-1] @ Wi.T + bi)
            hs.append(np.maximum(pre[-1], 0))
        loss, g = softmax_xent(hs[-1] @ W[-1].T + b[-1], y)
        grads = [None] * len(self.params)
        for i in reversed(range(len(W))):
            grads[2 * i], grads[2 * i + 1] = g.T @ hs[i], g.sum(0)
            if i:
                g = (g @ W[i]) * (pre[i - 1] > 0)
        return loss, grads

    def step(self, x, y, lr):
        loss, grads = self.loss_and_grads(x, y)
        for p, g in zip(self.params, grads):
            p -= np.float32(lr) * g
        return loss


def conv_fwd(x, w, b):
    """Valid 3x3 convolution by im2col: (N,C,H,W) * (O,C,3,3) -> (N,O,H-2,W-2), plus the columns."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    win = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))  # N,C,Ho,Wo,kh,kw
    ho, wo = win.shape[2], win.shape[3]
    cols = win.transpose(0, 2, 3, 1, 4, 5).reshape(n * ho * wo, c * kh * kw)
    out = cols @ w.reshape(o, -1).T + b  # (N*Ho*Wo, O)
    return out.reshape(n, ho, wo, o).transpose(0, 3, 1, 2), cols


def conv_bwd(gy, x_shape, cols, w):
    n, c, h, wd = x_shape
    o, _, kh, kw = w.shape
    ho, wo = gy.shape[2], gy.shape[3]
    g2 = gy.transpose(0, 2, 3, 1).reshape(n * ho * wo, o)
    gw = (g2.T @ cols).reshape(w.shape)
    gb = g2.sum(0)
    gcols = (g2 @ w.reshape(o, -1)).reshape(n, ho, wo, c, kh, kw)
    gx = np.zeros(x_shape, dtype=gy.dtype)
    for i in range(kh):
        for j in range(kw):
            gx[:, :, i:i + ho, j:j + wo] += gcols[:, :, :, :, i, j].transpose(0, 3, 1, 2)
    return gx, gw, gb


class NumpyCNN:
    def __init__(self, params):  # Wc1, bc1, Wc2, bc2, W, b
        self.params = [p.copy() for p in params]

    def loss_and_grads(self, x, y):
        Wc1, bc1, Wc2, bc2, W, b = self.params
        a1, cols1 = conv_fwd(x, Wc1, bc1)
        h1 = np.maximum(a1, 0)
        a2, cols2 = conv_fwd(h1, Wc2, bc2)
        h2 = np.maximum(a2, 0)
        flat = h2.reshape(h2.shape[0], -1)
        out = flat @ W.T + b
        loss, g = softmax_xent(out, y)
        gW, gb = g.T @ flat, g.sum(0)
        g = (g @ W).reshape(h2.shape) * (a2 > 0)
        gh1, gWc2, gbc2 = conv_bwd(g, h1.shape, cols2, Wc2)
        g = gh1 * (a1 > 0)
        _, gWc1, gbc1 = conv_bwd(g, x.shape, cols1, Wc1)
        return loss, [gWc1, gbc1, gWc2, gbc2, gW, gb]

    step = NumpyMLP.step


class MygradModel:
    """A model in MyGrad, from the same NumPy weights. MyGrad has no modules: a model is its tensors and a
    function. Weights are laid out so that no op is spent on layout (dense: (in, out), so a layer is
    ``h @ W + b``; conv bias: (out, 1, 1), to broadcast over NCHW); ``grads()`` gives them back in torch's layout."""

    def __init__(self, params: list, forward):
        self.shapes = [p.shape for p in params]
        self.params = []
        for i, p in enumerate(params):
            if p.ndim == 2:  # a dense weight
                p = p.T
            elif p.ndim == 1 and i and params[i - 1].ndim == 4:  # a conv bias
                p = p.reshape(-1, 1, 1)
            self.params.append(mygrad.tensor(p.copy()))
        self.forward = forward

    def loss(self, x, y):
        return mygrad_cross_entropy(self.forward(self.params, x), y)

    def grads(self) -> list:
        return [np.asarray(p.grad).T if len(shape) == 2 else np.asarray(p.grad).reshape(shape)
                for p, shape in zip(self.params, self.shapes)]


def mlp_mygrad(params, x):
    W, b = params[0::2], params[1::2]
    for Wi, bi in zip(W[:-1], b[:-1]):
        x = mygrad_relu(x @ Wi + bi)
    return x @ W[-1] + b[-1]


def cnn_mygrad(params, x):
    Wc1, bc1, Wc2, bc2, W, b = params
    h = mygrad_relu(mygrad_conv(x, Wc1, stride=1) + bc1)
    h = mygrad_relu(mygrad_conv(h, Wc2, stride=1) + bc2)
    return h.reshape(h.shape[0], -1) @ W + b


def mygrad_step(model: MygradModel, batches_np: list, lr: float):
    """One SGD step per call in MyGrad, as its docs write one: backward, then ``p.data -= lr * p.grad``.
    No zero_grad: MyGrad clears a tensor's ``.grad`` when the tensor enters a new op."""
    batches = [(mygrad.tensor(x, constant=True), y) for x, y in batches_np]
    lr = np.float32(lr)
    calls = itertools.count()

    def step():
        x, y = batches[next(calls) % len(batches)]
        model.loss(x, y).backward()
        for p in model.params:
            p.data -= lr * p.grad

    return step


def framework_step(lib, functional, model, batches_np: list, lr: float):
    """One SGD step per call in minigrad or torch (the same code for both), cycling through the batches."""
    batches = [(lib.from_numpy(x.copy()), lib.from_numpy(y.copy())) for x, y in batches_np]
    opt = lib.optim.SGD(model.parameters(), lr=lr)
    calls = itertools.count()

    def step():
        x, y = batches[next(calls) % len(batches)]
        opt.zero_grad()
        functional.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def numpy_step(model, batches_np: list, lr: float):
    """One step per call of a hand-written NumPy model, cycling through the batches."""
    calls = itertools.count()

    def step():
        x, y = batches_np[next(calls) % len(batches_np)]
        model.step(x, y, lr)

    return step


def worker_training_step(fw: str, build, numpy_model, mygrad_forward, weights: list, batches: list, lr: float,
                         cfg) -> dict:
    """In one framework's process: load the shared weights, compute one step's loss and gradients (for the check,
    in torch's layout) from the first batch, then time steps over the batches."""
    x, y = batches[0]
    check = {}
    if fw in ("minigrad", "torch"):
        lib, nn_lib, functional = (minigrad, mnn, MF) if fw == "minigrad" else (torch, torch.nn, TF)
        model = build(nn_lib)
        load_into(model.parameters(), weights, mg=fw == "minigrad")
        model.zero_grad()
        loss = functional.cross_entropy(model(lib.from_numpy(x.copy())), lib.from_numpy(y.copy()))
        loss.backward()
        check = dict(loss=loss.item(), grads=[p.grad.numpy().tolist() for p in model.parameters()],
                     names=[n for n, _ in model.named_parameters()])
        model.zero_grad()
        step = framework_step(lib, functional, model, batches, lr)
    elif fw == "numpy":
        model = numpy_model(weights)
        loss, grads = model.loss_and_grads(x, y)
        check = dict(loss=loss, grads=[g.tolist() for g in grads])
        step = numpy_step(model, batches, lr)
    else:
        model = MygradModel(weights, mygrad_forward)
        loss = model.loss(mygrad.tensor(x, constant=True), y)
        loss.backward()
        check = dict(loss=loss.item(), grads=[g.tolist() for g in model.grads()])
        step = mygrad_step(model, batches, lr)
    return dict(check=check, batch=len(x), times=time_reps(step, cfg.reps_per_round, cfg.inner_step))


def training_row(label: str, key: str, runs: dict, cfg, rtol=2e-4, atol=2e-5) -> dict:
    """One case of the mlp or cnn workload from every framework's processes: the loss and every gradient of one
    step, from the same weights and batch, must agree with minigrad's (else Disagree); then the statistics."""
    mine = runs["minigrad"][0][key]["check"]
    names = mine["names"]
    got = {"loss": mine["loss"], **{f"grad {n}": g for n, g in zip(names, mine["grads"])}}
    diff = {}
    for name, outs in runs.items():
        for out in outs if name != "minigrad" else ():
            other = out[key]["check"]
            want = {"loss": other["loss"], **{f"grad {n}": g for n, g in zip(names, other["grads"])}}
            diff[name] = max(diff.get(name, 0.0), check_close(f"{label}: minigrad vs {name}", got, want, rtol, atol))
    stats = combine({name: [out[key]["times"] for out in outs] for name, outs in runs.items()}, cfg.inner_step)
    stats["batch"] = runs["minigrad"][0][key]["batch"]
    stats["max_abs_diff"] = diff
    print_row(label, stats)
    return stats


# ---------------------------------------------------------------------------
# 2. MLP
# ---------------------------------------------------------------------------

MLP_SIZES = (64, 128, 128, 10)
TINY_MLP_SIZES = (64, 16, 10)  # where the graph's bookkeeping, not the arithmetic, is the step's cost


def mlp_weights(sizes=MLP_SIZES, seed=0):
    rng = np.random.default_rng(seed)
    ws = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        ws += [kaiming_uniform(rng, (fan_out, fan_in), fan_in), kaiming_uniform(rng, (fan_out,), fan_in)]
    return ws


def build_mlp(lib, sizes=MLP_SIZES):
    """Linear layers of ``sizes`` with a ReLU between each two, in ``lib`` (minigrad.nn or torch.nn)."""
    layers = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        layers += [lib.Linear(fan_in, fan_out), lib.ReLU()]
    return lib.Sequential(*layers[:-1])


MLP_CASES = (("tiny batch 10", "tiny MLP 64-16-10 step", TINY_MLP_SIZES, 10),
             ("batch 64", "MLP step, batch 64", MLP_SIZES, 64),
             ("full batch", "MLP step, full batch", MLP_SIZES, None))  # None: min(all the digits, cfg.full_batch)


def digits():
    X, Y = minigrad.data.load_digits()
    return np.ascontiguousarray(X, np.float32), Y.astype(np.int64)


def worker_mlp(fw: str, cfg) -> dict:
    """Workload 2 in one framework's process (the same batches in every process: one seeded generator)."""
    X, Y = digits()
    rng = np.random.default_rng(1)
    out = {}
    for key, _, sizes, bs in MLP_CASES:
        bs = bs or min(len(X), cfg.full_batch)
        batches = []
        for _ in range(4):
            idx = rng.permutation(len(X))[:bs]
            batches.append((X[idx], Y[idx]))
        out[key] = worker_training_step(fw, lambda lib, sizes=sizes: build_mlp(lib, sizes), NumpyMLP, mlp_mygrad,
                                        mlp_weights(sizes), batches, 0.1, cfg)
    if fw == "minigrad" and cfg.round == 0:
        out["accuracy"] = mlp_accuracy(X, Y, cfg)
    return out


def mlp_accuracy(X, Y, cfg) -> dict:
    """Held-out accuracy of minigrad's MLP after a short training: the thing being timed actually learns."""
    Xtr, Xte, ytr, yte = minigrad.data.train_test_split(X, Y, test_size=0.25, seed=0)
    model = build_mlp(mnn)
    load_into(model.parameters(), mlp_weights(), mg=True)
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    t0 = time.perf_counter()
    order_rng = np.random.default_rng(2)
    for _ in range(cfg.epochs):
        for idx in np.array_split(order_rng.permutation(len(Xtr)), max(1, len(Xtr) // 64)):
            opt.zero_grad()
            MF.cross_entropy(model(minigrad.from_numpy(Xtr[idx])), minigrad.from_numpy(np.asarray(ytr)[idx])).backward()
            opt.step()
    train_time = time.perf_counter() - t0
    with minigrad.no_grad():
        pred = model(minigrad.from_numpy(np.ascontiguousarray(Xte))).numpy().argmax(1)
    return dict(test_accuracy=float((pred == np.asarray(yte)).mean()), epochs=cfg.epochs, n_test=len(Xte),
                train_seconds=train_time)


def workload_mlp(cfg) -> dict:
    runs = run_rounds("mlp", cfg)
    results = {}
    for key, label, _, _ in MLP_CASES:
        results[key] = training_row(f"{label} ({runs['minigrad'][0][key]['batch']})", key, runs, cfg)
    acc = runs["minigrad"][0]["accuracy"]
    print(f"{'MLP accuracy (minigrad)':<34} {acc['test_accuracy']:.1%} on {acc['n_test']} held-out digits after "
          f"{acc['epochs']} epochs (batch 64, SGD lr 0.1 momentum 0.9, {acc['train_seconds']:.2f}s)", flush=True)
    return dict(unit="seconds per training step", cases=results, accuracy=acc)


# ---------------------------------------------------------------------------
# 3. CNN
# ---------------------------------------------------------------------------

def cnn_weights(seed=0):
    rng = np.random.default_rng(seed)
    return [kaiming_uniform(rng, (8, 1, 3, 3), 9), kaiming_uniform(rng, (8,), 9),
            kaiming_uniform(rng, (16, 8, 3, 3), 72), kaiming_uniform(rng, (16,), 72),
            kaiming_uniform(rng, (10, 256), 256), kaiming_uniform(rng, (10,), 256)]


def build_cnn(lib):
    return lib.Sequential(lib.Conv2d(1, 8, 3), lib.ReLU(), lib.Conv2d(8, 16, 3), lib.ReLU(), lib.Flatten(),
                          lib.Linear(256, 10))


def worker_cnn(fw: str, cfg) -> dict:
    """Workload 3 in one framework's process."""
    X, Y = minigrad.data.load_digits(return_images=True)
    X, Y = np.ascontiguousarray(X, np.float32), Y.astype(np.int64)
    rng = np.random.default_rng(3)
    batches = [(X[idx], Y[idx]) for idx in (rng.permutation(len(X))[:64] for _ in range(4))]
    return {"batch 64": worker_training_step(fw, build_cnn, NumpyCNN, cnn_mygrad, cnn_weights(), batches, 0.05, cfg)}


def workload_cnn(cfg) -> dict:
    runs = run_rounds("cnn", cfg)
    return dict(unit="seconds per training step",
                cases={"batch 64": training_row("CNN step, batch 64", "batch 64", runs, cfg)})


# ---------------------------------------------------------------------------
# 4. Start-up
# ---------------------------------------------------------------------------

STARTUP_SCRIPT = textwrap.dedent("""
    import time, sys, json
    t0 = time.perf_counter()
    sys.path.insert(0, {root!r})
    import minigrad
    import minigrad.nn as nn
    import minigrad.nn.functional as F
    t_import = time.perf_counter() - t0
    X, y = minigrad.data.load_digits()
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))
    loss = F.cross_entropy(model(minigrad.from_numpy(X[:64])), minigrad.from_numpy(y[:64]))
    loss.backward()
    assert model[0].weight.grad is not None
    print(json.dumps(dict(import_s=t_import, to_first_backward_s=time.perf_counter() - t0)))
""")


def run_startup(cache_dir: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", STARTUP_SCRIPT.format(root=str(ROOT))], env=env,
                          capture_output=True, text=True, timeout=600)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"start-up process failed:\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_wall_s"] = wall
    return out


def workload_startup(cfg) -> dict:
    res = {}
    with tempfile.TemporaryDirectory(prefix="minigrad-bench-numba-") as tmp:
        warm_dir = os.path.join(tmp, "warm")
        run_startup(warm_dir)  # fills the cache
        runs = [run_startup(warm_dir) for _ in range(cfg.startup_reps)]
        res["warm"] = dict(runs=runs, median_to_first_backward_s=statistics.median(r["to_first_backward_s"] for r in runs),
                           median_process_wall_s=statistics.median(r["process_wall_s"] for r in runs))
        if cfg.cold_startup:
            runs = [run_startup(os.path.join(tmp, f"cold{i}")) for i in range(cfg.startup_reps)]
            res["cold"] = dict(runs=runs,
                               median_to_first_backward_s=statistics.median(r["to_first_backward_s"] for r in runs),
                               median_process_wall_s=statistics.median(r["process_wall_s"] for r in runs))
        else:
            res["cold"] = dict(skipped="--quick: a cold Numba cache compiles for several seconds")
    for k in ("warm", "cold"):
        r = res[k]
        if "skipped" in r:
            print(f"{'start-up, Numba cache ' + k:<34} skipped ({r['skipped']})")
        else:
            print(f"{'start-up, Numba cache ' + k:<34} import -> first backward {r['median_to_first_backward_s']:.2f}s"
                  f" (whole process {r['median_process_wall_s']:.2f}s, median of {len(r['runs'])})", flush=True)
    res["note"] = ("NUMBA_CACHE_DIR points at a temp dir: 'warm' is the run after one that filled it, "
                   "'cold' is a new empty dir, so every kernel compiles")
    return res


# ---------------------------------------------------------------------------
# 5. Deep graphs
# ---------------------------------------------------------------------------

def build_chain(lib, n, x):
    y = x
    for _ in range(n):
        y = y * 1.0001
    return y.sum()


def build_fanout(lib, n, x):
    return lib.stack([x * 2.0 for _ in range(n)]).sum()


DEEP_CASES = (("chain", build_chain), ("fanout", build_fanout))


def deep_case(fw: str, name, build, n, cfg) -> dict:
    """One deep graph in one framework's process: the input's gradient (for the check), build and backward times
    (``deep_reps`` after a warm-up), and for minigrad the peak traced memory."""
    lib = minigrad if fw == "minigrad" else torch
    x0 = np.array([1.0], dtype=np.float32)
    x = lib.from_numpy(x0.copy()).requires_grad_()
    build(lib, n, x).backward()
    res = {"grad": x.grad.numpy().tolist(), "build": [], "backward": []}
    for rep in range(cfg.deep_reps + 1):  # the first round is warm-up
        x = lib.from_numpy(x0.copy()).requires_grad_()
        t0 = time.perf_counter()
        out = build(lib, n, x)
        t1 = time.perf_counter()
        out.backward()
        t2 = time.perf_counter()
        del out
        if rep:
            res["build"].append(t1 - t0)
            res["backward"].append(t2 - t1)
    if fw == "minigrad":  # peak traced memory (separate run: tracemalloc slows everything down)
        tracemalloc.start()
        tracemalloc.reset_peak()
        x = minigrad.from_numpy(x0.copy()).requires_grad_()
        out = build(minigrad, n, x)
        _, peak_graph = tracemalloc.get_traced_memory()
        out.backward()
        _, peak_total = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        del out
        res["peak_traced_bytes"], res["peak_traced_bytes_after_build"] = peak_total, peak_graph
    return res


def deep_stats(name, n, runs: dict) -> dict:
    """Check minigrad's gradient against torch's (or the closed form), then time per node and mg/torch."""
    expect = {"chain": 1.0001 ** n, "fanout": 2.0 * n}[name]
    want = {"grad": runs["torch"][0][name]["grad"]} if "torch" in runs else {"grad": [expect]}
    check_close(f"{name} graph", {"grad": runs["minigrad"][0][name]["grad"]}, want, 1e-3, 1e-6)
    res = {"nodes": n}
    for fw, outs in runs.items():
        for phase in ("build", "backward"):
            t = outs[0][name][phase]
            res[f"{fw} {phase}"] = dict(median=statistics.median(t), min=min(t), max=max(t), reps=len(t),
                                        per_node=statistics.median(t) / n)
    if "torch" in runs:  # separate processes: the ratio of the medians
        for phase in ("build", "backward"):
            res[f"minigrad/torch {phase}"] = res[f"minigrad {phase}"]["median"] / res[f"torch {phase}"]["median"]
    mine = runs["minigrad"][0][name]
    res["minigrad peak_traced_bytes"] = mine["peak_traced_bytes"]
    res["minigrad peak_traced_bytes_after_build"] = mine["peak_traced_bytes_after_build"]
    res["minigrad bytes_per_node"] = mine["peak_traced_bytes"] / n
    return res


def linearity(cfg) -> dict:
    """Backward time per node of the chain at n/10 and n nodes: equal if the engine is linear."""
    res = {}
    for n in (cfg.chain_n // 10, cfg.chain_n):
        per_node = []
        for _ in range(cfg.deep_reps):
            x = minigrad.tensor([1.0], requires_grad=True)
            out = build_chain(minigrad, n, x)
            t0 = time.perf_counter()
            out.backward()
            per_node.append((time.perf_counter() - t0) / n)
            del out
        res[str(n)] = statistics.median(per_node)  # str: the key it has in JSON
    small, large = res
    res["ratio"] = res[large] / res[small]
    return res


def release_profile(n: int, numel: int, retain_graph: bool) -> dict:
    """Traced memory while backward runs through a chain whose every node saved a ``numel`` tensor.

    Unless ``retain_graph``, each node frees what it saved right after it runs, so
    the memory held should fall linearly from the graph's size to about nothing.
    """
    from minigrad.autograd import engine

    x = minigrad.randn(numel, requires_grad=True)
    tracemalloc.start()
    y = x
    for _ in range(n):
        y = y * 1.0001
    loss = y.sum()
    del y
    before = tracemalloc.get_traced_memory()[0]
    samples, seen = [], [0]

    def sample(node, grads_in, grads_out):
        seen[0] += 1
        if seen[0] % max(n // 4, 1) == 0:
            samples.append((seen[0], tracemalloc.get_traced_memory()[0]))

    with engine.observe(sample):
        loss.backward(retain_graph=retain_graph)
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del loss
    return dict(nodes=n, numel=numel, retain_graph=retain_graph, before_backward_bytes=before,
                during=[dict(nodes_run=k, bytes=b) for k, b in samples], after_backward_bytes=after)


def worker_deep(fw: str, cfg) -> dict:
    """Workload 5 in one framework's process (minigrad or torch): for minigrad also the linearity and the memory
    held during backward."""
    out = {}
    if fw == "minigrad":
        out["linearity"] = linearity(cfg)
        for retain in (False, True):
            out[f"release retain_graph={retain}"] = release_profile(cfg.release_n, cfg.release_numel, retain)
    for name, build in DEEP_CASES:
        out[name] = deep_case(fw, name, build, cfg.chain_n if name == "chain" else cfg.fanout_n, cfg)
    return out


def workload_deep(cfg) -> dict:
    runs = run_rounds("deep", cfg)
    mine = runs["minigrad"][0]
    out = {}
    lin = mine["linearity"]
    small, large = str(cfg.chain_n // 10), str(cfg.chain_n)
    out["linearity"] = lin
    print(f"{'chain backward, time per node':<34} {int(small):,} nodes {lin[small] * 1e6:.2f}us, {int(large):,} "
          f"nodes {lin[large] * 1e6:.2f}us (ratio {lin['ratio']:.2f}: 1.00 = linear)", flush=True)
    for retain in (False, True):
        r = mine[f"release retain_graph={retain}"]
        out[f"release retain_graph={retain}"] = r
        steps = ", ".join(f"{d['bytes'] / 2**20:.1f}" for d in r["during"])
        print(f"{'memory during backward' + (' (retain)' if retain else ''):<34} MiB held: before "
              f"{r['before_backward_bytes'] / 2**20:.1f}, at each quarter {steps}, after "
              f"{r['after_backward_bytes'] / 2**20:.1f} ({r['nodes']} nodes x {r['numel']:,} floats)", flush=True)
    for name, _ in DEEP_CASES:
        n = cfg.chain_n if name == "chain" else cfg.fanout_n
        r = deep_stats(name, n, runs)
        out[name] = r
        label = f"{n:,}-op chain" if name == "chain" else f"fan-out, x used {n:,} times"
        for phase in ("build", "backward"):
            tt = r.get(f"torch {phase}")
            ratio_s = f"{r[f'minigrad/torch {phase}']:.2f}x" if tt else "-"
            print(f"{label + ' ' + phase:<34} minigrad {fmt_time(r[f'minigrad {phase}']['median'])} "
                  f"({r[f'minigrad {phase}']['per_node'] * 1e6:.2f}us/node)  torch "
                  f"{fmt_time(tt['median']) if tt else '-'} ({tt['per_node'] * 1e6:.2f}us/node)  mg/torch {ratio_s}"
                  if tt else f"{label + ' ' + phase:<34} minigrad {fmt_time(r[f'minigrad {phase}']['median'])}",
                  flush=True)
        print(f"{label + ' peak memory':<34} minigrad {r['minigrad peak_traced_bytes'] / 2**20:.1f} MiB traced "
              f"({r['minigrad bytes_per_node']:.0f} B/node)", flush=True)
    return dict(unit="seconds (build = forward graph construction; backward = .backward())", cases=out)


# ---------------------------------------------------------------------------
# 6. Kernels: bench/bench_kernels.py, run as it is
# ---------------------------------------------------------------------------

KERNELS_SCRIPT = ROOT / "bench" / "bench_kernels.py"


def run_streaming(cmd: list[str], timeout: float, prefix: str = "  | ", **kw) -> tuple[int | None, list[str]]:
    """Run ``cmd``, echoing its stdout+stderr line by line (indented); kill it after ``timeout`` seconds.
    Returns the exit code (None if it was killed for the time limit) and the output's lines."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1, **kw)
    timed_out = threading.Event()

    def kill():
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    lines = []
    try:
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            print(prefix + lines[-1], flush=True)
        proc.wait()
    finally:
        timer.cancel()
        if proc.poll() is None:  # interrupted while reading
            proc.kill()
            proc.wait()
    return (None if timed_out.is_set() else proc.returncode), lines


def size_label(n: int) -> str:
    e = math.log10(n) if n > 0 else 0
    return f"1e{int(round(e))}" if n > 0 and abs(e - round(e)) < 1e-9 else f"{n:,}"


def kernels_summary(data: dict) -> list[dict]:
    """Per kernel: ref/kernel ratios at >= 1e6 elements (elementwise, softmax) or on every course shape
    (conv, pool) -- every size if none is that large (--quick) --, worst and median; torch/kernel likewise; and for the
    elementwise kernels the fraction of the copy bandwidth reached at the largest size, per dtype."""
    by_name: dict[str, list[dict]] = {}
    for rec in data["results"]:
        by_name.setdefault(rec["name"], []).append(rec)
    rows = []
    for name, recs in by_name.items():
        group = recs[0]["group"]
        counted = [r for r in recs if group in ("conv", "pool") or r["size"] >= 10**6] or recs
        ratios = [r["ratio"] for r in counted]
        torch_ratios = [r["torch_ratio"] for r in counted if "torch_ratio" in r]
        row = dict(name=name, group=group, cases=len(counted),
                   basis="every course shape" if group in ("conv", "pool") else
                   ">= 1e6 elements" if counted is not recs else "every size (no size >= 1e6 in this run)",
                   worst_ref_over_kernel=min(ratios), median_ref_over_kernel=statistics.median(ratios),
                   worst_torch_over_kernel=min(torch_ratios) if torch_ratios else None,
                   verdict=data.get("verdict", {}).get(name))
        if group == "elementwise":
            largest = max(r["size"] for r in recs)
            row["bandwidth_at_size"] = largest
            row["bandwidth_fraction"] = {r["dtype"]: r["bandwidth_fraction"] for r in recs if r["size"] == largest}
            row["kernel_GBps"] = {r["dtype"]: r["kernel_GBps"] for r in recs if r["size"] == largest}
        rows.append(row)
    return rows


def workload_kernels(cfg) -> dict:
    with tempfile.TemporaryDirectory(prefix="minigrad-bench-kernels-") as tmp:
        out = Path(tmp) / "kernels.json"
        cmd = [sys.executable, str(KERNELS_SCRIPT), *(["--quick"] if cfg.quick else []), "--json", str(out)]
        shown = " ".join(["python", str(KERNELS_SCRIPT.relative_to(ROOT)), *cmd[2:-1], "TMP.json"])
        print(f"running `{shown}` (its output, indented, then a summary)", flush=True)
        t0 = time.perf_counter()
        code, lines = run_streaming(cmd, cfg.kernels_timeout, cwd=ROOT)
        seconds = time.perf_counter() - t0
        if code is None:
            raise Aborted(f"{shown} did not finish in {cfg.kernels_timeout:.0f} s and was killed")
        if code != 0 or not out.is_file():
            raise Aborted(f"{shown} failed (exit code {code}): " + " / ".join(lines[-5:]))
        data = json.loads(out.read_text())
    rows = kernels_summary(data)
    bw_size = next((size_label(r["bandwidth_at_size"]) for r in rows if "bandwidth_at_size" in r), "-")
    print(f"\n{'kernels summary':<34} copy bandwidth {data['copy_bandwidth_GBps']:.1f} GB/s; ratios ref/kernel and "
          f"torch/kernel (> 1: the kernel is faster), worst and median at >= 1e6 elements (conv, pool: every "
          f"course shape)\n"
          f"{'kernel':<22} {'group':<12} {'ref/kern worst':>14} {'median':>7} {'torch/kern worst':>16} "
          f"{'bandwidth f32/f64 at ' + bw_size:>28}  verdict")
    for r in rows:
        bw = r.get("bandwidth_fraction")
        bw_s = (f"{bw.get('float32', float('nan')):.0%} / {bw.get('float64', float('nan')):.0%}" if bw else "-")
        tr = r["worst_torch_over_kernel"]
        print(f"{r['name']:<22} {r['group']:<12} {r['worst_ref_over_kernel']:13.2f}x "
              f"{r['median_ref_over_kernel']:6.2f}x "
              f"{'-' if tr is None else f'{tr:.2f}x':>16} {bw_s:>28}  {r['verdict'] or '-'}", flush=True)
    if data.get("quick"):
        print("(--quick: 1000 elements only, so no ratio at >= 1e6 and the bandwidth is not the 1e7 one)")
    return dict(unit="seconds per call; ratios reference/kernel and torch/kernel (> 1: the kernel is faster)",
                command=shown, seconds=seconds, copy_bandwidth_GBps=data["copy_bandwidth_GBps"],
                summary=rows, bench_kernels=data)


# ---------------------------------------------------------------------------
# 7. Grading: one learner's whole course through minigrad-grade
# ---------------------------------------------------------------------------

SOLUTIONS = ROOT / "solutions"
GRADING_QUICK_STAGES = ("02_graph", "05_custom_functions")  # two cheap stages for --quick


def make_submissions(folder: Path, notebooks: list[Path], learners: int) -> None:
    """``folder/learnerNN/NN_name.ipynb``: one subfolder per learner, each a copy of the solved worksheets."""
    for i in range(learners):
        d = folder / f"learner{i + 1:02d}"
        d.mkdir(parents=True)
        for nb in notebooks:
            shutil.copyfile(nb, d / nb.name)


def run_grader(subs: Path, out: Path, jobs: int, expected: list[str], full_course: bool, cfg) -> dict:
    """Grade ``subs`` with the real CLI in a fresh process; check every learner got full marks on every stage."""
    cmd = [sys.executable, "-m", "minigrad.course.grading.grade_cli", str(subs), "-j", str(jobs), "--out", str(out),
           "--no-cache", "--quiet", "--seed", "0", "--templates", str(ROOT / "exercises"),
           "--isolation", "none"]  # the solutions are trusted code: time grading, not the machine's isolation
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p))
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=cfg.grading_timeout)
    except subprocess.TimeoutExpired:
        raise Aborted(f"minigrad-grade did not finish in {cfg.grading_timeout:.0f} s") from None
    wall = time.perf_counter() - t0
    tail = (proc.stdout[-1500:] + proc.stderr[-1500:]).strip()
    summaries = [json.loads(p.read_text()) for p in sorted((out / "results").glob("*.json"))]
    n_learners = sum(1 for d in subs.iterdir() if d.is_dir())
    if proc.returncode != 0 or len(summaries) != n_learners:
        raise Aborted(f"minigrad-grade exited with {proc.returncode} and wrote {len(summaries)} of {n_learners} "
                      f"results: {tail}")
    failures = []
    for s in summaries:
        if s["problems"] or s["ungraded"]:
            failures.append(f"{s['learner']}: {'; '.join(s['problems'])[:300]}")
        missing = sorted(set(expected) - set(s["stages"]))
        if missing:
            failures.append(f"{s['learner']}: no result for {', '.join(missing)}")
        if full_course and s["total"] != s["max_total"]:
            failures.append(f"{s['learner']}: {s['total']:g} / {s['max_total']:g} points for the whole course")
        for key, r in s["stages"].items():
            if r["points"] != r["max_points"]:
                bad = [f"{c['check']} {c['status']}: {(c['feedback'] or '-').splitlines()[0][:120]}"
                       for c in r["results"] if c["status"] != "passed"]
                failures.append(f"{s['learner']} {key}: {r['points']:g}/{r['max_points']:g} ({'; '.join(bad)[:400]})")
    if failures:
        raise Aborted("the grader does not give the reference solutions (solutions/) full marks, so timing it "
                      "would be meaningless: " + " | ".join(failures[:6]))
    first = summaries[0]
    return dict(wall=wall, learners=n_learners, jobs=jobs, total=first["total"], max_total=first["max_total"],
                flags=sum(len(s["flags"]) for s in summaries),
                stages={k: dict(seconds=r.get("seconds"), cpu_seconds=r.get("cpu_seconds"), points=r["points"],
                                max_points=r["max_points"], attempts=r.get("attempts"))
                        for k, r in first["stages"].items()},
                isolation=next(iter(first["stages"].values())).get("isolation"))


def workload_grading(cfg) -> dict:
    notebooks = sorted(SOLUTIONS.glob("[0-9][0-9]_*.ipynb"))
    if cfg.quick:
        notebooks = [nb for nb in notebooks if nb.stem in GRADING_QUICK_STAGES]
    if not notebooks:
        raise Aborted(f"no solved worksheets (NN_name.ipynb) in {SOLUTIONS}")
    expected = [nb.stem for nb in notebooks]
    full_course = not cfg.quick
    runs: dict[str, list[dict]] = {}
    with tempfile.TemporaryDirectory(prefix="minigrad-bench-grading-") as tmp:
        tmp = Path(tmp)
        plan = [(1, 1, cfg.grading_reps)] + [(cfg.grading_batch, j, cfg.grading_batch_reps) for j in cfg.grading_jobs]
        for learners, jobs, reps in plan:
            subs = tmp / f"subs{learners}"
            if not subs.exists():
                make_submissions(subs, notebooks, learners)
        for rep in range(max(r for _, _, r in plan)):  # interleaved, as the other workloads
            for learners, jobs, reps in plan:
                if rep >= reps:
                    continue
                label = f"{learners} learner{'s' * (learners > 1)}, -j {jobs}"
                out = tmp / f"out-{learners}-{jobs}-{rep}"
                runs.setdefault(label, []).append(run_grader(tmp / f"subs{learners}", out, jobs, expected,
                                                             full_course, cfg))
    cases = {}
    n_nb = len(notebooks)
    for label, rs in runs.items():
        per_sub = [r["wall"] / r["learners"] for r in rs]
        cases[label] = dict(learners=rs[0]["learners"], jobs=rs[0]["jobs"], notebooks_per_submission=n_nb,
                            reps=len(rs), wall_seconds=[r["wall"] for r in rs],
                            seconds_per_submission=dict(median=statistics.median(per_sub), min=min(per_sub),
                                                        max=max(per_sub)),
                            seconds_per_notebook=statistics.median(per_sub) / n_nb)
        s = cases[label]["seconds_per_submission"]
        rng_s = f" [{fmt_time(s['min'])}-{fmt_time(s['max'])}]" if len(rs) > 1 else ""
        print(f"{'grading, ' + label:<34} {fmt_time(s['median'])}{rng_s} per submission ({n_nb} notebooks each, "
              f"{fmt_time(s['median'] / n_nb)} per notebook; {'median of ' if len(rs) > 1 else ''}{len(rs)} "
              f"run{'s' * (len(rs) > 1)}, whole command {fmt_time(statistics.median(r['wall'] for r in rs))})",
              flush=True)
    single = runs["1 learner, -j 1"]
    per_stage = {k: dict(seconds=statistics.median(r["stages"][k]["seconds"] for r in single),
                         cpu_seconds=statistics.median(r["stages"][k]["cpu_seconds"] for r in single),
                         points=single[0]["stages"][k]["points"], max_points=single[0]["stages"][k]["max_points"])
                 for k in expected}
    first = single[0]
    iso = first["isolation"] or {}
    print(f"{'grading: score':<34} {first['total']:g} / {first['max_total']:g} points"
          f"{'' if full_course else ' for the whole course (--quick grades ' + ', '.join(expected) + ' only)'}; "
          f"flags for review: {first['flags']}; sandbox: network {iso.get('network', '?')}, "
          f"children run as {iso.get('user', '?')}")
    print(f"{'grading: per stage (1 learner, -j 1)':<34} grader's seconds per notebook (wall, incl. reference "
          f"observations) / sandbox child CPU, median:")
    for k, v in per_stage.items():
        print(f"    {k:<26} {str(v['points']) + '/' + str(v['max_points']):>5}  {v['seconds']:6.2f}s  "
              f"cpu {v['cpu_seconds']:5.2f}s")
    print(f"    {'sum':<26} {'':5}  {sum(v['seconds'] for v in per_stage.values()):6.2f}s  cpu "
          f"{sum(v['cpu_seconds'] for v in per_stage.values()):5.2f}s", flush=True)
    return dict(unit="seconds per submission (one learner's solved worksheets, every stage given, graded end to end "
                     "by `python -m minigrad.course.grading.grade_cli DIR -j N --no-cache`: a fresh process, so interpreter "
                     "start-up, grader set-up and the reference observations are included)",
                stages=expected, full_course=full_course, cases=cases, per_stage=per_stage,
                score=dict(total=first["total"], max_total=first["max_total"]), flags=first["flags"],
                isolation=first["isolation"])


# ---------------------------------------------------------------------------
# Main: the workloads, and the worker processes that time one framework each
# ---------------------------------------------------------------------------

WORKLOADS = {"overhead": workload_overhead, "mlp": workload_mlp, "cnn": workload_cnn,
             "startup": workload_startup, "deep": workload_deep, "kernels": workload_kernels,
             "grading": workload_grading}
WORKERS = {"overhead": worker_overhead, "mlp": worker_mlp, "cnn": worker_cnn, "deep": worker_deep}
FRAMEWORKS = ("minigrad", "numpy", "torch", "mygrad")


def run_worker(groups: list[str], fw: str, round_: int, cfg) -> dict:
    """Time one framework on workload groups in a fresh process (this script with ``--worker``): its JSON,
    ``{group: output}``, or ``{"unavailable": why}``."""
    with tempfile.TemporaryDirectory(prefix="minigrad-bench-worker-") as tmp:
        out = Path(tmp) / "worker.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", f"{','.join(groups)}:{fw}",
               "--round", str(round_), "--rounds", str(cfg.rounds), "--worker-out", str(out),
               *(["--quick"] if cfg.quick else []), *(["--threads", str(cfg.threads)] if cfg.threads else [])]
        label = f"the {fw} process of {', '.join(groups)}"
        try:
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=cfg.worker_timeout)
        except subprocess.TimeoutExpired:
            raise Aborted(f"{label} did not finish in {cfg.worker_timeout:.0f} s") from None
        if proc.returncode != 0 or not out.is_file():
            raise Aborted(f"{label} failed (exit code {proc.returncode}): "
                          f"{(proc.stdout[-1500:] + proc.stderr[-1500:]).strip()}")
        result = json.loads(out.read_text())
    if "unavailable" not in result:
        info = result.pop("process")
        cfg.versions[fw] = info["version"]
        cfg.worker_threads.setdefault(fw, info["threads"])
    return result


def frameworks_of(group: str, cfg) -> list[str]:
    return [fw for fw in cfg.frameworks if group != "deep" or fw in ("minigrad", "torch")]


def run_rounds(group: str, cfg) -> dict[str, list[dict]]:
    """Every framework's worker output for ``group``, one per round. The processes run one at a time, never side
    by side; each round starts with the next framework, so no framework always follows the same one. Under
    --quick, each framework runs all the groups asked for in one process (one round), to keep the smoke test short."""
    names = frameworks_of(group, cfg)
    if cfg.quick:
        for fw in names:
            if fw not in cfg.quick_runs:
                groups = [g for g in cfg.only if g in WORKERS and fw in frameworks_of(g, cfg)]
                cfg.quick_runs[fw] = run_worker(groups, fw, 0, cfg)
        runs = {fw: [cfg.quick_runs[fw]] for fw in names}
    else:
        runs = {fw: [] for fw in names}
        for r in range(1 if group == "deep" else cfg.rounds):
            for fw in names[r % len(names):] + names[:r % len(names)]:
                if fw in runs:  # not found unavailable in an earlier round
                    runs[fw].append(run_worker([group], fw, r, cfg))
    for fw, outs in list(runs.items()):
        if any("unavailable" in out for out in outs):
            print(f"({fw} column skipped: {outs[0]['unavailable']})", flush=True)
            cfg.versions[fw] = None
            del runs[fw]
    return {fw: [out[group] for out in outs] for fw, outs in runs.items()}


def thread_settings() -> dict:
    info = {"env": {k: os.environ.get(k) for k in THREAD_VARS}}
    try:
        import numba
        info["numba_threads"] = numba.get_num_threads()
    except Exception:
        pass
    if torch is not None:
        info["torch_threads"] = torch.get_num_threads()
        info["torch_interop_threads"] = torch.get_num_interop_threads()
    try:
        from threadpoolctl import threadpool_info
        info["threadpools"] = [{k: p.get(k) for k in ("user_api", "internal_api", "num_threads", "prefix",
                                                      "version", "filepath")} for p in threadpool_info()]
    except Exception as e:  # threadpoolctl absent
        info["threadpools"] = f"unavailable ({type(e).__name__})"
    return info


def worker_main(args, cfg) -> int:
    """``--worker GROUP[,GROUP...]:FRAMEWORK``: time one framework on workload groups, write the JSON to
    --worker-out."""
    groups, fw = args.worker.split(":")
    if fw == "torch" and load_torch() is None:
        result = {"unavailable": "torch is not installed, or does not import"}
    elif fw == "mygrad" and load_mygrad() is None:
        result = {"unavailable": "mygrad is not installed, or does not import"}
    else:
        if fw == "torch" and cfg.threads:
            torch.set_num_threads(cfg.threads)
        result = {group: WORKERS[group](fw, cfg) for group in groups.split(",")}
        version = {"minigrad": minigrad.__version__, "numpy": np.__version__}.get(fw) or (
            torch.__version__ if fw == "torch" else mygrad.__version__)
        result["process"] = dict(version=version, threads=thread_settings())
    Path(args.worker_out).write_text(json.dumps(result))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and 1-2 repetitions (smoke test)")
    parser.add_argument("--json", metavar="PATH", help="write all measurements to PATH as JSON")
    parser.add_argument("--only", metavar="NAMES",
                        help=f"comma-separated subset of {','.join(WORKLOADS)} (kernels runs bench/bench_kernels.py; "
                             "grading runs minigrad-grade on solutions/)")
    parser.add_argument("--threads", type=int, metavar="N",
                        help="pin every thread pool (OpenBLAS, OpenMP, MKL, Numba, torch) to N threads in every "
                             "process the suite starts; default: each framework alone in its process, with the "
                             "environment's thread settings")
    parser.add_argument("--rounds", type=int, help="processes per framework for overhead, mlp and cnn, one after "
                                                   "the other (default 3, --quick 1); the repetitions are shared out")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # GROUP:FRAMEWORK, run by the suite itself
    parser.add_argument("--worker-out", help=argparse.SUPPRESS)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    only = args.only.split(",") if args.only else list(WORKLOADS)
    unknown = [name for name in only if name not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload(s) {', '.join(unknown)}: choose from {', '.join(WORKLOADS)}")
    if args.threads is not None and args.threads < 1:
        parser.error("--threads must be at least 1")
    if args.quick:
        cfg = argparse.Namespace(reps=2, inner_us=200, inner_step=2, full_batch=256, epochs=1, startup_reps=1,
                                 cold_startup=False, chain_n=1000, fanout_n=100, deep_reps=1, release_n=40, release_numel=1000,
                                 grading_reps=1, grading_batch=1, grading_jobs=(), grading_batch_reps=0)
    else:
        cfg = argparse.Namespace(reps=15, inner_us=2000, inner_step=10, full_batch=10**9, epochs=15,
                                 startup_reps=3, cold_startup=True, chain_n=100_000, fanout_n=10_000, deep_reps=3, release_n=1000, release_numel=10_000,
                                 grading_reps=3, grading_batch=4, grading_jobs=(1, 2), grading_batch_reps=1)
    cfg.quick = args.quick
    cfg.threads = args.threads
    cfg.rounds = args.rounds or (1 if args.quick else 3)
    cfg.reps_per_round = max(1, math.ceil(cfg.reps / cfg.rounds))
    cfg.round = args.round
    cfg.kernels_timeout = 3600.0  # the full bench_kernels takes a few minutes
    cfg.grading_timeout = 1800.0  # per minigrad-grade command
    cfg.worker_timeout = 1800.0  # per worker process
    if args.threads:  # before anything computes; every process started from here inherits it
        for var in THREAD_VARS[:4]:
            os.environ[var] = str(args.threads)
    if args.worker:
        return worker_main(args, cfg)

    import numba
    threads = thread_settings()
    cfg.only = only
    # torch and MyGrad are imported by their own workers only, which report their versions (or that they do not
    # import); until then, what is installed
    cfg.versions = {}
    for fw in ("torch", "mygrad"):
        if importlib.util.find_spec(fw) is not None:
            try:
                cfg.versions[fw] = importlib.metadata.version(fw)
            except importlib.metadata.PackageNotFoundError:
                cfg.versions[fw] = "unknown"
    cfg.frameworks = ["minigrad", "numpy"] + [fw for fw in ("torch", "mygrad") if fw in cfg.versions]
    cfg.worker_threads, cfg.quick_runs = {}, {}
    method = ("each framework timed in processes of its own, one at a time ("
              + ("--quick: one per framework for all the workloads; " if cfg.quick else
                 f"one per workload and framework, {cfg.rounds} rounds for overhead, mlp and cnn, 1 for deep; ")
              + (f"every thread pool pinned to {cfg.threads} thread(s)" if cfg.threads
                 else "thread settings as the environment gives them") + ")")
    meta = dict(
        date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        command=" ".join([Path(sys.executable).name, *sys.argv]) if argv is None else f"main({argv})",
        platform=platform.platform(), processor=platform.processor() or platform.machine(),
        cpu_count=os.cpu_count(), python=platform.python_version(), numpy=np.__version__,
        numba=numba.__version__, torch=cfg.versions.get("torch"), mygrad=cfg.versions.get("mygrad"),
        minigrad=minigrad.__version__, quick=args.quick,
        config={k: v for k, v in vars(cfg).items() if k not in ("worker_threads", "quick_runs", "versions")},
        threads=threads, method=method,
        threads_pinned=cfg.threads, worker_threads=cfg.worker_threads,
    )
    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    meta["cpu_model"] = cpu_model
    print(f"date {meta['date']}  command: {meta['command']}")
    print(f"machine: {meta['platform']}, {cpu_model or meta['processor']}, {meta['cpu_count']} cores")
    print(f"python {meta['python']}, numpy {meta['numpy']}, numba {meta['numba']}, "
          f"torch {meta['torch'] or 'not installed (torch column skipped)'}, "
          f"mygrad {meta['mygrad'] or 'not installed (mygrad column skipped; pip install mygrad)'}")
    pools = threads["threadpools"]
    pools_s = ", ".join(f"{p['internal_api']} {p['num_threads']}" for p in pools) if isinstance(pools, list) else pools
    print(f"method: {method}\nthreads of this process: env {threads['env']}, BLAS/OpenMP pools: {pools_s}, "
          f"numba {threads.get('numba_threads')}")
    print(f"ratios are minigrad/other: per round, minigrad's median over the other's; the median over the rounds "
          f"(< 1: minigrad faster)\n\n{HEADER}", flush=True)

    results, status = {}, 0
    for name in only:
        print(f"-- {name} --", flush=True)
        t0 = time.perf_counter()
        try:
            results[name] = WORKLOADS[name](cfg)
        except Aborted as e:
            why = "frameworks disagree (one step checked; its times discarded): " if isinstance(e, Disagree) else ""
            print(f"ABORTED {name}: {why}{e}", flush=True)
            results[name] = dict(aborted=str(e))
            status = 1
        results[name]["workload_seconds"] = time.perf_counter() - t0
    for fw, info in cfg.worker_threads.items():
        pools = info["threadpools"]
        pools_s = ", ".join(f"{p['internal_api']} {p['num_threads']}" for p in pools) if isinstance(pools, list) else pools
        print(f"threads in the {fw} processes: BLAS/OpenMP pools {pools_s}, numba {info.get('numba_threads')}"
              + (f", torch {info['torch_threads']}" if "torch_threads" in info else ""))

    meta["torch"], meta["mygrad"] = cfg.versions.get("torch"), cfg.versions.get("mygrad")  # as the workers found them
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(dict(meta=meta, workloads=results), indent=1, default=str))
        print(f"\nwrote {args.json}")
    return status


if __name__ == "__main__":
    sys.exit(main())
