"""How much does TrainingDashboard slow a training loop? The MLP-on-moons loop, with and without it.

    python bench/bench_dashboard.py                      # 2000 steps, 7 runs each, widget mode
    python bench/bench_dashboard.py --steps 5000 --runs 5 --mode text
    python bench/bench_dashboard.py --kernel --mode auto   # inside a Jupyter kernel: the real display path

Method: one untimed warm-up of each variant (Numba compiles, matplotlib loads its
fonts), then runs interleaved in pairs (without, with), (with, without), ... so that a
noisy machine's drifts and order effects hit both alike. Reported: median time of each, the overhead of
the medians, and the median of the run-by-run ratios. "widget" builds the HTML
view in a plain Python (display() just prints); "--kernel --mode auto" runs in a
real kernel, where each update is an update_display_data message.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

import minigrad
import minigrad.nn as nn
import minigrad.nn.functional as F
import minigrad.optim
from minigrad.data.toy import make_moons
from minigrad.viz import TrainingDashboard


def train(steps: int, dashboard: dict | None) -> dict:
    """One training run; its wall time, CPU time, and the wall time spent inside dash.log."""
    minigrad.manual_seed(0)
    X, y = make_moons(200, noise=0.1, seed=0)
    Xt, yt = minigrad.tensor(X), minigrad.tensor(y)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = minigrad.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    in_log = 0.0
    with contextlib.redirect_stdout(io.StringIO()):  # text mode prints; outside a kernel display() prints too
        dash = None if dashboard is None else TrainingDashboard(
            total_steps=steps, data=(X, y), predict=model, **dashboard)
        wall, cpu = time.perf_counter(), time.process_time()
        for step in range(steps):
            optimizer.zero_grad()
            logits = model(Xt)
            loss = F.cross_entropy(logits, yt)
            loss.backward()
            optimizer.step()
            accuracy = (logits.argmax(dim=1) == yt).float().mean()
            if dash is not None:
                start = time.perf_counter()
                dash.log(step, loss=loss, accuracy=accuracy)
                in_log += time.perf_counter() - start
            else:
                float(loss), float(accuracy)  # what log() reads, so both loops do the same work
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "in_log": in_log, "updates": dash.updates if dash else 0,
            "drawing": dash.throttle.spent if dash else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--mode", choices=["widget", "text", "auto"], default="widget")
    parser.add_argument("--kernel", action="store_true", help="run inside a fresh Jupyter kernel (real display messages)")
    args = parser.parse_args()
    if args.kernel:
        return in_kernel([a for a in sys.argv[1:] if a != "--kernel"])
    options = {"text": {"widget": False, "text": True, "auto": None}[args.mode]}
    train(50, None), train(50, options)  # warm-up
    without, with_ = [], []
    for run in range(args.runs):  # alternate which goes first, so that order effects cancel
        if run % 2:
            with_.append(train(args.steps, options))
            without.append(train(args.steps, None))
        else:
            without.append(train(args.steps, None))
            with_.append(train(args.steps, options))
    median = statistics.median
    print(f"{args.steps} steps, {args.runs} runs, mode {args.mode}, updates per run {median(r['updates'] for r in with_)}")
    for clock in ("wall", "cpu"):
        a, b = median(r[clock] for r in without), median(r[clock] for r in with_)
        ratio = median(w[clock] / o[clock] for w, o in zip(with_, without))
        print(f"  {clock:4}: without {a:.3f} s, with {b:.3f} s; overhead {100 * (b / a - 1):+.1f} % (of medians), "
              f"{100 * (ratio - 1):+.1f} % (median of run-by-run ratios)")
    print(f"  drawing: {1e3 * median(r['drawing'] / r['updates'] for r in with_):.1f} ms per update (median of run means)")
    print("  wall without:", " ".join(f"{r['wall']:.3f}" for r in without))
    print("  wall with:   ", " ".join(f"{r['wall']:.3f}" for r in with_))
    share = median(r["in_log"] / (r["wall"] - r["in_log"]) for r in with_)
    print(f"  time inside dash.log: {100 * share:.2f} % of the rest of the loop (median; max "
          f"{100 * max(r['in_log'] / (r['wall'] - r['in_log']) for r in with_):.2f} %)")


def in_kernel(argv: list[str]) -> None:
    """Run this script with ``argv`` in a python3 kernel through nbclient, and print what it printed."""
    import os

    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"%run {__file__} {' '.join(argv)}")])
    env = {k: v for k, v in os.environ.items() if k != "MPLBACKEND"}
    NotebookClient(nb, timeout=3600, kernel_name="python3").execute(env=env)
    for out in nb.cells[0].outputs:
        print(out.get("text") or out.get("evalue") or "", end="")


if __name__ == "__main__":
    main()
