"""Where the time of a small step goes: cProfile, grouped by the part of minigrad that spends it.

    python bench/profile_hot_path.py                 # all four cases
    python bench/profile_hot_path.py --case chain    # one of: custom_function, chain, tiny_mlp, mlp64

The suite (bench_suite.py) says how fast; this says why. Each case is run
under cProfile and every function's own time (tottime) is charged to a group:

* ``Function.apply + ctx``   minigrad/core/function.py, function_rules.py (recording a node, checking gradients)
* ``engine``                 minigrad/core/engine.py, instrumented.py, differentiate.py, grad_mode.py
                             and minigrad/autograd/ (order, buffers, seeding, the ready queue)
* ``graph nodes``            minigrad/core/graph.py, hooks.py (AccumulateGrad, saved tensors, hooks)
* ``Tensor objects``         minigrad/core/tensor.py, minigrad/_tensor.py, dtypes.py (wrapping arrays,
                             operators, properties)
* ``op formulas``            minigrad/ops, nn, optim (the forward and backward code of each op,
                             including the NumPy/BLAS calls made *inside* those Python lines)
* ``kernels``                minigrad/kernels (Numba dispatch and NumPy references)
* ``NumPy/builtins``         everything else (NumPy's Python wrappers, C functions cProfile sees)

cProfile inflates Python-heavy code more than C-heavy code, so read the groups
as shares, not as microseconds; the wall-clock figure printed first is measured
without the profiler.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run from a checkout, no install needed

import minigrad  # noqa: E402
import minigrad.nn as nn  # noqa: E402
import minigrad.nn.functional as F  # noqa: E402
from bench_suite import MLP_SIZES, TINY_MLP_SIZES, build_mlp, double_function  # noqa: E402  (bench/ is on sys.path)

GROUPS = (  # (group, path fragments), first match wins
    ("Function.apply + ctx", ("minigrad/core/function.py", "minigrad/core/function_rules.py")),
    ("engine", ("minigrad/core/engine.py", "minigrad/core/instrumented.py", "minigrad/core/differentiate.py",
                "minigrad/core/grad_mode.py", "minigrad/autograd/")),
    ("graph nodes", ("minigrad/core/graph.py", "minigrad/core/hooks.py")),
    ("Tensor objects", ("minigrad/core/tensor.py", "minigrad/_tensor.py", "minigrad/dtypes.py")),
    ("op formulas", ("minigrad/ops/", "minigrad/nn/", "minigrad/optim/")),
    ("kernels", ("minigrad/kernels/",)),
)


def case_custom_function():
    x, ones = minigrad.tensor([1.5], requires_grad=True), minigrad.ones(1)
    Double = double_function(minigrad)

    def step():
        x.grad = None
        Double.apply(x).backward(ones)

    return step, 20000


def case_chain():
    x, y, z = (minigrad.tensor([v], requires_grad=True) for v in (1.5, -2.0, 0.5))

    def step():
        x.grad = y.grad = z.grad = None
        (x * y + z).sum().backward()

    return step, 10000


def mlp_case(sizes: tuple, batch: int):
    """One SGD step of the suite's MLP of ``sizes`` on the first ``batch`` digits."""
    data, labels = minigrad.data.load_digits()
    xb = minigrad.from_numpy(np.ascontiguousarray(data[:batch], np.float32))
    yb = minigrad.from_numpy(labels[:batch].astype(np.int64))
    model = build_mlp(nn, sizes)
    opt = minigrad.optim.SGD(model.parameters(), lr=0.1)

    def step():
        opt.zero_grad()
        F.cross_entropy(model(xb), yb).backward()
        opt.step()

    return step


def case_tiny_mlp():
    return mlp_case(TINY_MLP_SIZES, 10), 5000


def case_mlp64():
    return mlp_case(MLP_SIZES, 64), 1000


CASES = {"custom_function": case_custom_function, "chain": case_chain, "tiny_mlp": case_tiny_mlp,
         "mlp64": case_mlp64}


def group_of(filename: str) -> str:
    path = filename.replace("\\", "/")
    for group, fragments in GROUPS:
        if any(f in path for f in fragments):
            return group
    return "NumPy/builtins"


def profile(name: str) -> dict:
    step, n = CASES[name]()
    for _ in range(200):
        step()
    t0 = time.perf_counter()
    for _ in range(n):
        step()
    wall = (time.perf_counter() - t0) / n
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(n):
        step()
    profiler.disable()
    stats = pstats.Stats(profiler)
    shares: dict[str, float] = {}
    calls = 0
    for (filename, _, _), (_, ncalls, tottime, _, _) in stats.stats.items():
        shares[group_of(filename)] = shares.get(group_of(filename), 0.0) + tottime
        calls += ncalls
    total = sum(shares.values())
    print(f"\n== {name}: {wall * 1e6:.1f} us per step without the profiler; "
          f"{calls / n:.0f} Python-visible calls per step ==")
    for group, t in sorted(shares.items(), key=lambda kv: -kv[1]):
        print(f"  {group:<22} {t / total:6.1%}")
    print("  top functions by own time:")
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:8]
    for (filename, line, func), (_, ncalls, tottime, _, _) in rows:
        where = filename.split("minigrad/")[-1] if "minigrad/" in filename else Path(filename).name
        print(f"    {tottime / total:6.1%}  {ncalls / n:5.1f} calls/step  {func} ({where}:{line})")
    return dict(wall=wall, shares={g: t / total for g, t in shares.items()}, calls_per_step=calls / n)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=sorted(CASES), help="profile one case only")
    args = parser.parse_args(argv)
    for name in [args.case] if args.case else CASES:
        profile(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
