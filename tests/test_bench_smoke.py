"""Smoke tests of bench/: the suite (--quick) and the hot-path profiler run, exit 0 and report everything (no timing assertions)."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POOL_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
WORKLOADS = ("overhead", "mlp", "cnn", "startup", "deep", "kernels", "grading")
# every case timed against MyGrad when it is installed: (workload, case)
MYGRAD_CASES = (("overhead", "custom_function"), ("overhead", "mul_add_sum"), ("mlp", "tiny batch 10"),
                ("mlp", "batch 64"), ("mlp", "full batch"), ("cnn", "batch 64"))


def run_suite(tmp_path, *args, env=None) -> dict:
    out = tmp_path / "suite.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_suite.py"), "--quick", "--json", str(out), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return json.loads(out.read_text())


def test_bench_suite_quick(tmp_path):
    data = run_suite(tmp_path)
    assert "threads" in data["meta"] and "env" in data["meta"]["threads"]
    # each framework was timed in a process of its own, which reported its thread settings
    assert {"minigrad", "numpy"} <= set(data["meta"]["worker_threads"]), data["meta"]["worker_threads"]
    for name in WORKLOADS:
        assert name in data["workloads"], name
        assert "aborted" not in data["workloads"][name], data["workloads"][name]
    if importlib.util.find_spec("mygrad") is not None:  # the [bench] extra
        assert data["meta"]["mygrad"]
        for workload, case in MYGRAD_CASES:
            stats = data["workloads"][workload]["cases"][case]
            assert "mygrad" in stats and "minigrad/mygrad" in stats, (workload, case)
            if workload != "overhead":  # the models were checked against MyGrad's step before timing
                assert "mygrad" in stats["max_abs_diff"], (workload, case)


def test_bench_suite_skips_the_mygrad_column_when_mygrad_is_missing(tmp_path):
    hidden = tmp_path / "hide"
    hidden.mkdir()
    (hidden / "mygrad.py").write_text("raise ImportError('hidden by the test')\n")  # shadows an installed MyGrad
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(hidden), os.environ.get("PYTHONPATH")) if p),
               OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2", MKL_NUM_THREADS="2")  # overridden by --threads 1
    data = run_suite(tmp_path, "--only", "overhead,cnn", "--threads", "1", env=env)
    assert data["meta"]["mygrad"] is None
    assert data["meta"]["threads_pinned"] == 1  # --threads 1: every pool of every framework's process pinned
    for framework, threads in data["meta"]["worker_threads"].items():
        assert {threads["env"][var] for var in POOL_VARS} == {"1"}, (framework, threads["env"])
        assert threads.get("torch_threads", 1) == 1 and threads.get("numba_threads", 1) == 1, (framework, threads)
    for workload, case in (("overhead", "custom_function"), ("cnn", "batch 64")):
        stats = data["workloads"][workload]["cases"][case]
        assert "minigrad" in stats and "mygrad" not in stats and "minigrad/mygrad" not in stats


def test_profile_hot_path_runs_and_charges_every_group():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "profile_hot_path.py"), "--case", "chain"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for group in ("Function.apply + ctx", "engine", "graph nodes", "Tensor objects", "op formulas"):
        assert group in proc.stdout, group


def test_bare_floor_runs_and_agrees_with_minigrad():
    """bench/bare_floor.py checks its bare autograd's results against minigrad's before timing (it
    would exit non-zero on a difference) and prints one row per workload."""
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bare_floor.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for case in ("custom Function y=2x fwd+bwd", "(x*y+z).sum().backward()"):
        assert case in proc.stdout, case
