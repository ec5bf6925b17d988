"""Smoke tests of bench/: the suite (--quick) and the hot-path profiler run, exit 0 and report everything (no timing assertions)."""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORKLOADS = ("overhead", "mlp", "cnn", "startup", "deep", "kernels", "grading")


def test_bench_suite_quick(tmp_path):
    out = tmp_path / "suite.json"
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_suite.py"), "--quick", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(out.read_text())
    assert "threads" in data["meta"] and "env" in data["meta"]["threads"]
    for name in WORKLOADS:
        assert name in data["workloads"], name
        assert "aborted" not in data["workloads"][name], data["workloads"][name]


def test_profile_hot_path_runs_and_charges_every_group():
    proc = subprocess.run([sys.executable, str(ROOT / "bench" / "profile_hot_path.py"), "--case", "chain"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for group in ("Function.apply + ctx", "engine", "graph nodes", "Tensor objects", "op formulas"):
        assert group in proc.stdout, group
