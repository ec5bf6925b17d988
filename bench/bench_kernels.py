"""Time every Numba kernel of minigrad.kernels against its NumPy reference (and PyTorch, if installed).

    python bench/bench_kernels.py                  # full: 1e4, 1e6, 1e7 elements; float32 and float64
    python bench/bench_kernels.py --quick          # tiny sizes, 1-2 repetitions: a smoke test
    python bench/bench_kernels.py --json out.json  # also write every measurement as JSON

Method: the kernel's output is first compared with its reference's (and
torch's, where the op returns the same arrays); a disagreement stops the run.
Each implementation is called once first (Numba compiles then, and the
page faults of fresh output arrays are paid), then the repetitions are
interleaved kernel, reference, [torch], kernel, reference, ... so that a noisy
machine's drifts hit all of them alike. We report median, min and max, and the
median of the pair-by-pair ratios reference/kernel (> 1: the kernel wins).
Elementwise kernels also get their achieved bandwidth, as a fraction of what a
large ``np.copyto`` reaches on this machine.

Only the kernels minigrad.kernels exports are timed: the kernels that lost to
their reference were removed from the library and from this bench (their
figures are in ``minigrad/kernels/__init__.py``). One extra section, "threads",
times a ``parallel=True`` twin of the ``gelu_forward`` kernel against the
kernel itself, alone and right after a BLAS matmul: the measurement behind the
library's "no parallel=True" rule.
"""
from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from pathlib import Path

import numba
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout, no install needed

from minigrad.kernels import conv, elementwise as ew, embedding as emb, norm, reference as ref, softmax as sm  # noqa: E402

try:
    import torch
    import torch.nn.functional as F
except Exception:  # not installed, or broken: the torch column stays empty
    torch = None


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def measure(impls: dict, reps: int, budget: float) -> dict:
    """Warm up each callable, then time them interleaved; reps shrinks to fit the time budget."""
    first = {name: timed(fn) for name, fn in impls.items()}  # compiles / warms caches
    first = {name: timed(fn) for name, fn in impls.items()}
    per_round = sum(first.values())
    reps = max(min(reps, 5), min(reps, int(budget / max(per_round, 1e-9))))
    times = {name: [] for name in impls}
    for _ in range(reps):
        for name, fn in impls.items():
            times[name].append(timed(fn))
    stats = {name: dict(median=statistics.median(t), min=min(t), max=max(t), reps=len(t)) for name, t in times.items()}
    if "kernel" in times and "reference" in times:
        stats["ratio"] = statistics.median(r / k for r, k in zip(times["reference"], times["kernel"]))
    if "kernel" in times and "torch" in times:
        stats["torch_ratio"] = statistics.median(t / k for t, k in zip(times["torch"], times["kernel"]))
    return stats


def _arrays(result) -> list:
    """The arrays a call returned (one, a tuple, torch tensors), as float64 NumPy arrays."""
    items = result if isinstance(result, (tuple, list)) else (result,)
    out = []
    for item in items:
        if torch is not None and isinstance(item, torch.Tensor):
            item = item.detach().numpy()
        out.append(np.asarray(item, dtype=np.float64))
    return out


def check_agreement(name: str, impls: dict, dtype: str) -> dict:
    """Before timing: the kernel must compute what its reference computes (and torch, where comparable).

    Returns the largest absolute differences; raises AssertionError naming the kernel otherwise.
    """
    rtol, atol = (2e-4, 1e-5) if dtype == "float32" else (1e-9, 1e-12)
    want = _arrays(impls["reference"]())
    diffs = {}
    for other in ("kernel", "torch"):
        if other not in impls:
            continue
        got = _arrays(impls[other]())
        if other == "torch" and (len(got) > len(want) or any(g.shape != w.shape for g, w in zip(got, want))):
            continue  # torch's op returns a different set of arrays: nothing to compare element by element
        pairs = list(zip(got, want))
        for i, (g, w) in enumerate(pairs):
            # relative to the array's scale: a sum of thousands of float32 products that lands
            # near 0 carries the rounding error of its large terms, not of its small result
            scale = float(np.max(np.abs(w), initial=0.0, where=np.isfinite(w)))
            if not np.allclose(g, w, rtol=0, atol=atol + rtol * scale, equal_nan=True):
                raise AssertionError(f"{name} ({dtype}): {other} output {i} differs from the reference by up "
                                     f"to {np.max(np.abs(g - w)):.3g}; timing it would be meaningless")
        diffs[other] = max((float(np.max(np.abs(g - w))) if g.size else 0.0 for g, w in pairs), default=0.0)
    return diffs


def copy_bandwidth(n_bytes: int) -> float:
    """GB/s of a large np.copyto (bytes read + bytes written): the machine's practical ceiling."""
    src = np.ones(n_bytes // 8)
    dst = np.empty_like(src)
    np.copyto(dst, src)
    best = min(timed(lambda: np.copyto(dst, src)) for _ in range(5))
    return 2 * src.nbytes / best / 1e9


def torch_op(make):
    """A torch callable from ``make()``, or None if torch is absent or the op is not available."""
    if torch is None:
        return None
    try:
        fn = make()
        fn()
        return fn
    except Exception:
        return None


# ---------------------------------------------------------------------------
# Cases
# ---------------------------------------------------------------------------

ELEMENTWISE = {  # name: (inputs, torch op on torch tensors)
    "sigmoid_backward": (2, lambda y, g: torch.ops.aten.sigmoid_backward(g, y)),
    "tanh_backward": (2, lambda y, g: torch.ops.aten.tanh_backward(g, y)),
    "relu_backward": (2, lambda x, g: torch.ops.aten.threshold_backward(g, x, 0)),
    "gelu_forward": (1, lambda x: F.gelu(x)),
    "gelu_backward": (2, lambda x, g: torch.ops.aten.gelu_backward(g, x)),
    "gelu_tanh_forward": (1, lambda x: F.gelu(x, approximate="tanh")),
    "gelu_tanh_backward": (2, lambda x, g: torch.ops.aten.gelu_backward(g, x, approximate="tanh")),
}


def elementwise_cases(sizes, dtypes, rng):
    for name, (n_in, torch_fn) in ELEMENTWISE.items():
        for dtype in dtypes:
            for n in sizes:
                args = [rng.standard_normal(n).astype(dtype) for _ in range(n_in)]
                if name.startswith(("sigmoid_b", "tanh_b")):
                    args[0] = np.tanh(args[0])  # a plausible saved output
                out_k, out_r = np.empty_like(args[0]), np.empty_like(args[0])
                impls = {
                    "kernel": lambda f=getattr(ew, name), a=args, o=out_k: f(*a, out=o),
                    "reference": lambda f=getattr(ref, name), a=args, o=out_r: f(*a, out=o),
                }
                t = torch_op(lambda f=torch_fn, a=args: (lambda ta=[torch.from_numpy(v) for v in a]: f(*ta)))
                if t:
                    impls["torch"] = t
                yield dict(group="elementwise", name=name, dtype=np.dtype(dtype).name, size=n,
                           shape=f"({n},)", bytes=(n_in + 1) * n * np.dtype(dtype).itemsize), impls


def softmax_cases(sizes, dtypes, rng):
    classes = 10
    for dtype in dtypes:
        for n in sizes:
            rows = max(n // classes, 1)
            x = rng.standard_normal((rows, classes)).astype(dtype)
            g = rng.standard_normal((rows, classes)).astype(dtype)
            targets = rng.integers(0, classes, rows)
            y = ref.softmax_forward(x)
            tx, tg, ty = (torch.from_numpy(a) if torch else None for a in (x, g, y))
            tt = torch.from_numpy(targets) if torch else None
            tdt = tx.dtype if torch else None
            ops = {
                "softmax_forward": ((x,), lambda: torch.softmax(tx, -1)),
                "log_softmax_forward": ((x,), lambda: torch.log_softmax(tx, -1)),
                "softmax_backward": ((y, g), lambda: torch.ops.aten._softmax_backward_data(tg, ty, -1, tdt)),
                "cross_entropy_forward": ((x, targets), lambda: F.cross_entropy(tx, tt)),
            }
            for name, (args, torch_fn) in ops.items():
                impls = {"kernel": lambda f=getattr(sm, name), a=args: f(*a),
                         "reference": lambda f=getattr(ref, name), a=args: f(*a)}
                t = torch_op(lambda f=torch_fn: f)
                if t:
                    impls["torch"] = t
                yield dict(group="softmax", name=name, dtype=np.dtype(dtype).name, size=rows * classes,
                           shape=f"({rows},{classes})"), impls


def optim_cases(sizes, dtypes, rng):
    """Plain SGD's in-place update ``p -= lr * g`` (``kernels.sgd_step_``: one pass, no scratch array),
    at a tiny MLP's and a batch-64 MLP's parameter sizes too."""
    for dtype in dtypes:
        for n in [160, 16384] + list(sizes):
            p, g = (rng.standard_normal(n).astype(dtype) for _ in range(2))
            impls = {"kernel": lambda pk=p.copy(), g=g: ew.sgd_step_(pk, g, 0.1),
                     "reference": lambda pr=p.copy(), g=g: ref.sgd_step_(pr, g, 0.1)}
            if torch is not None:
                impls["torch"] = lambda tp=torch.from_numpy(p.copy()), tg=torch.from_numpy(g): tp.add_(tg, alpha=-0.1)
            yield dict(group="optim", name="sgd_step_", dtype=np.dtype(dtype).name, size=n, shape=f"({n},)",
                       bytes=3 * n * np.dtype(dtype).itemsize), impls


def capstone_cases(sizes, dtypes, rng):
    """LayerNorm over rows of 64 (the capstone GPT's width: 16 x 64 tokens = 1024 rows, and bigger), and the
    embedding lookup's gradient (a 63-row table, one lookup per token)."""
    width = 64
    for dtype in dtypes:
        for n in [16 * 64 * width] + [n for n in sizes if n >= 10**6]:
            rows = n // width
            x, g = (rng.standard_normal((rows, width)).astype(dtype) for _ in range(2))
            w, b = (rng.standard_normal(width).astype(dtype) for _ in range(2))
            idx = rng.integers(0, 63, rows)
            tx, tg, tw, tb = (torch.from_numpy(a) if torch else None for a in (x, g, w, b))
            ops = {
                "layer_norm_forward": (norm, (x, w, b, 1e-5), lambda: F.layer_norm(tx, (width,), tw, tb)),
                "layer_norm_backward": (norm, (x, w, g, 1e-5), lambda: torch.ops.aten.native_layer_norm_backward(
                    tg, tx, (width,), *torch.ops.aten.native_layer_norm(tx, (width,), tw, tb, 1e-5)[1:],
                    tw, tb, (True, True, True))),
                "embedding_backward": (emb, (idx, g, 63), lambda: torch.ops.aten.embedding_dense_backward(
                    tg, torch.from_numpy(idx), 63, -1, False)),
            }
            for name, (module, args, torch_fn) in ops.items():
                impls = {"kernel": lambda f=getattr(module, name), a=args: f(*a),
                         "reference": lambda f=getattr(ref, name), a=args: f(*a)}
                if torch:
                    t = torch_op(lambda f=torch_fn: f)
                    if t:
                        impls["torch"] = t
                yield dict(group="capstone", name=name, dtype=np.dtype(dtype).name, size=rows * width,
                           shape=f"({rows},{width})"), impls


CONV_LAYERS = [  # the course's digits network: 1x8x8 images, conv3x3 1->8, then conv3x3 8->16
    ("conv1", 1, 8, 8), ("conv2", 8, 16, None),
]
CONV_SETTINGS = [((1, 1), (0, 0)), ((1, 1), (1, 1)), ((2, 2), (1, 1))]


def conv_cases(batches, dtypes, rng):
    for dtype in dtypes:
        for batch in batches:
            for stride, padding in CONV_SETTINGS:
                h = 8
                for layer, c_in, c_out, _ in CONV_LAYERS:
                    x = rng.standard_normal((batch, c_in, h, h)).astype(dtype)
                    w = (rng.standard_normal((c_out, c_in, 3, 3)) * 0.3).astype(dtype)
                    b = rng.standard_normal(c_out).astype(dtype)
                    y = ref.conv2d_forward(x, w, b, stride, padding)
                    gy = rng.standard_normal(y.shape).astype(dtype)
                    meta = dict(group="conv", dtype=np.dtype(dtype).name, size=x.size,
                                shape=f"{list(x.shape)}*{list(w.shape)} s{stride[0]} p{padding[0]}")
                    fwd = {"kernel": lambda a=(x, w, b, stride, padding): conv.conv2d_forward(*a),
                           "reference": lambda a=(x, w, b, stride, padding): ref.conv2d_forward(*a)}
                    t = torch_op(lambda a=(x, w, b): (lambda tx=[torch.from_numpy(v) for v in a], s=stride, p=padding:
                                                      F.conv2d(*tx, stride=s, padding=p)))
                    if t:
                        fwd["torch"] = t
                    yield dict(meta, name="conv2d_forward"), fwd
                    bwd = {"kernel": lambda a=(x, w, gy, stride, padding): conv.conv2d_backward(*a),
                           "reference": lambda a=(x, w, gy, stride, padding): ref.conv2d_backward(*a)}
                    t = torch_op(lambda a=(x, w, gy): (lambda tx=[torch.from_numpy(v) for v in a], s=stride, p=padding: (
                        torch.nn.grad.conv2d_input(tx[0].shape, tx[1], tx[2], s, p),
                        torch.nn.grad.conv2d_weight(tx[0], tx[1].shape, tx[2], s, p))))
                    if t:
                        bwd["torch"] = t
                    yield dict(meta, name="conv2d_backward"), bwd
                    h = y.shape[2]
    pool_shapes = [(8, 8), (16, 6)]  # after conv1 (padding 1) and conv2 (padding 0)
    for dtype in dtypes:
        for batch in batches:
            for channels, h in pool_shapes:
                x = rng.standard_normal((batch, channels, h, h)).astype(dtype)
                y, idx = ref.max_pool2d_forward(x, 2, 2, 0)
                gy = rng.standard_normal(y.shape).astype(dtype)
                meta = dict(group="pool", dtype=np.dtype(dtype).name, size=x.size, shape=f"{list(x.shape)} k2 s2")
                fwd = {"kernel": lambda x=x: conv.max_pool2d_forward(x, 2, 2, 0),
                       "reference": lambda x=x: ref.max_pool2d_forward(x, 2, 2, 0)}
                t = torch_op(lambda x=x: (lambda tx=torch.from_numpy(x): F.max_pool2d(tx, 2, 2, 0, return_indices=True)))
                if t:
                    fwd["torch"] = t
                yield dict(meta, name="max_pool2d_forward"), fwd
                bwd = {"kernel": lambda a=(gy, idx, x.shape): conv.max_pool2d_backward(*a),
                       "reference": lambda a=(gy, idx, x.shape): ref.max_pool2d_backward(*a)}
                t = torch_op(lambda a=(gy, x, idx): (lambda ta=[torch.from_numpy(v) for v in a]:
                             torch.ops.aten.max_pool2d_with_indices_backward(ta[0], ta[1], [2, 2], [2, 2], [0, 0],
                                                                             [1, 1], False, ta[2])))
                if t:
                    bwd["torch"] = t
                yield dict(meta, name="max_pool2d_backward"), bwd


# ---------------------------------------------------------------------------
# Design experiment: parallel=True, which did not make it into the library
# ---------------------------------------------------------------------------

@numba.njit(parallel=True, error_model="numpy")
def _gelu_forward_parallel(x, out):
    """The parallel twin of elementwise._gelu_forward (compute-bound: erf + nothing else)."""
    for i in numba.prange(x.size):
        v = x[i]
        out[i] = 0.5 * v * (1.0 + math.erf(v * 0.7071067811865476))


def threads_section(sizes, reps, budget):
    """Does parallel=True pay on this machine, alone and right after a BLAS matmul (as in a network)?"""
    rng = np.random.default_rng(1)
    a = rng.standard_normal((512, 512))
    rows = []
    name, serial, parallel = "gelu_forward", ew._gelu_forward, _gelu_forward_parallel
    for n in sizes:
        x = rng.standard_normal(n)
        out = np.empty_like(x)
        for after_matmul in (False, True):
            def run(kernel, after=after_matmul):
                if after:
                    a @ a  # leaves OpenBLAS's threads spinning, as a Linear layer would
                t0 = time.perf_counter()
                kernel(x, out)
                return time.perf_counter() - t0
            run(serial), run(parallel)
            n_reps = max(2, min(reps, int(budget / max(run(serial) + run(parallel) + 1e-3, 1e-9))))
            ts, tp = [], []
            for _ in range(n_reps):
                ts.append(run(serial))
                tp.append(run(parallel))
            rows.append(dict(name=name, size=n, after_matmul=after_matmul, serial=statistics.median(ts),
                             parallel=statistics.median(tp),
                             speedup=statistics.median(s / p for s, p in zip(ts, tp))))
    return rows


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def fmt_time(t: float | None) -> str:
    if t is None:
        return "-"
    return f"{t * 1e6:.1f}us" if t < 1e-3 else f"{t * 1e3:.2f}ms" if t < 1 else f"{t:.2f}s"


def spread(s: dict) -> str:
    return f"{fmt_time(s['median'])} [{fmt_time(s['min'])}-{fmt_time(s['max'])}]"


HEADER = (f"{'kernel':<22} {'dtype':<7} {'shape':<30} {'kernel median [min-max]':<30} "
          f"{'reference median [min-max]':<30} {'torch':>9} {'ref/kern':>8}  GB/s (of copy)")


def print_row(rec: dict) -> None:
    torch_time = fmt_time(rec["torch"]["median"]) if "torch" in rec else "-"
    bw = f"{rec['kernel_GBps']:5.1f} ({rec['bandwidth_fraction']:.0%})" if "kernel_GBps" in rec else ""
    print(f"{rec['name']:<22} {rec['dtype']:<7} {rec['shape']:<30} {spread(rec['kernel']):<30} "
          f"{spread(rec['reference']):<30} {torch_time:>9} {rec['ratio']:7.2f}x  {bw}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes and 1-2 repetitions (smoke test)")
    parser.add_argument("--json", metavar="PATH", help="write all measurements to PATH as JSON")
    parser.add_argument("--only", metavar="NAMES", help="comma-separated kernel names (or 'threads') to run")
    args = parser.parse_args(argv)
    only = set(args.only.split(",")) if args.only else None

    if args.quick:
        sizes, batches, reps, budget, bw_bytes = [1000], [4], 2, 0.0, 1 << 22
    else:
        sizes, batches, reps, budget, bw_bytes = [10**4, 10**6, 10**7], [64, 512], 30, 1.5, 1 << 28
    dtypes = [np.float32, np.float64]
    rng = np.random.default_rng(0)

    bandwidth = copy_bandwidth(bw_bytes)
    print(f"numpy {np.__version__}, numba {numba.__version__}, torch {torch.__version__ if torch else 'not installed'}, "
          f"{platform.processor() or platform.machine()}, threads: numba {numba.get_num_threads()}")
    print(f"memory bandwidth (np.copyto of {bw_bytes >> 20} MiB, read+write): {bandwidth:.1f} GB/s\n")

    results = []
    groups = [elementwise_cases(sizes, dtypes, rng), softmax_cases(sizes, dtypes, rng),
              capstone_cases(sizes, dtypes, rng), conv_cases(batches, dtypes, rng), optim_cases(sizes, dtypes, rng)]
    current = None
    for cases in groups:
        for meta, impls in cases:
            if only and meta["name"] not in only:
                continue
            if meta["group"] != current:
                current = meta["group"]
                print(f"== {current} ==\n{HEADER}")
            agreement = check_agreement(meta["name"], impls, meta["dtype"])
            stats = measure(impls, reps, budget)
            rec = dict(meta, **stats, max_abs_diff=agreement)
            if "bytes" in meta:
                rec["kernel_GBps"] = meta["bytes"] / stats["kernel"]["median"] / 1e9
                rec["bandwidth_fraction"] = rec["kernel_GBps"] / bandwidth
            results.append(rec)
            print_row(rec)

    threads = threads_section(sizes[-2:], reps, budget) if not only or "threads" in only else []
    if threads:
        print(f"\n== threads: parallel=True twin vs the serial kernel (float64, numba threading layer "
              f"{numba.threading_layer()}) ==")
    for row in threads:
        print(f"{row['name']:<14} n={row['size']:<9} {'after a 512x512 matmul' if row['after_matmul'] else 'alone':<23}"
              f" serial {fmt_time(row['serial']):>9}  parallel {fmt_time(row['parallel']):>9}  speedup {row['speedup']:.2f}x")

    print("\n== verdict: ref/kernel ratios at >= 1e6 elements (elementwise, softmax) or on every course "
          "shape (conv, pool, capstone); within 5% counts as a tie ==")
    ratios = {}
    for rec in results:
        if rec["group"] in ("conv", "pool", "capstone") or rec["size"] >= 10**6 or args.quick:
            ratios.setdefault(rec["name"], []).append(rec["ratio"])
    verdict = {}
    for name, rs in ratios.items():
        worst, typical = min(rs), statistics.median(rs)
        verdict[name] = ("kernel wins" if worst > 1.05 else  # must beat the reference everywhere
                         "tie: no measurable win -> reference" if worst >= 0.95 else "reference wins")
        print(f"{name:<22} worst {worst:5.2f}x  median {typical:5.2f}x  -> {verdict[name]}")

    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(dict(
            numpy=np.__version__, numba=numba.__version__, torch=torch.__version__ if torch else None,
            machine=platform.machine(), copy_bandwidth_GBps=bandwidth, quick=args.quick,
            results=results, threads=threads, verdict=verdict), indent=1))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
