"""The instructor's path, as the README writes it: its literal command lines run here, as an
instructor pastes them (as root, on a server), and the course table's points are the registry's.
"""
from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigrad.course.cli import readme_with_points
from minigrad.course.stages import get_stage

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def readme_command_lines(program: str) -> list[str]:
    """The lines of the README's shell blocks that start with ``program``, without their comments."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README, re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line.startswith(program + " "):
                lines.append(line)
    return lines


def test_the_readme_points_column_is_the_stage_registrys():
    rows = re.findall(r"^\| (\d\d) \| (\w+) \|.*\| ([\d.]+) \|$", README, re.M)
    assert len(rows) == 12, rows
    for number, name, points in rows:
        assert float(points) == get_stage(f"{number}_{name}").points, (number, name)
    assert readme_with_points(README) == README  # and the generator agrees (`build` rewrites it)
    wrong = README.replace("| 04 | topological_backward |", "| 04 | topological_backward |", 1)
    wrong = re.sub(r"^(\| 04 \| topological_backward \|.*\| )[\d.]+( \|)$", r"\g<1>99\2", wrong, flags=re.M)
    assert wrong != README and readme_with_points(wrong) == README


def _env(tmp_path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JUPYTER_CONFIG_DIR": str(tmp_path / "jconfig"),
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "jruntime"), "JUPYTER_DATA_DIR": str(tmp_path / "jdata")}
    return env


def _argv(line: str) -> list[str]:
    program, *rest = shlex.split(line)
    module = {"minigrad-course": "minigrad.course", "minigrad-grade": "minigrad.course.grading.grade_cli"}[program]
    return [sys.executable, "-m", module, *rest]


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return not any(line.startswith("State:") and line.split()[1] in "ZX" for line in f)
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_readmes_init_and_open_lines_work_and_sigterm_stops_jupyterlab(tmp_path):
    """``minigrad-course init my-course && cd my-course`` then ``minigrad-course open -- --allow-root
    --no-browser``, literally (argparse once read ``--allow-root`` as the folder); a SIGTERM to
    ``open`` stops the JupyterLab it started."""
    (init_line,) = [line for line in readme_command_lines("minigrad-course") if " init " in line]
    (open_line,) = [line for line in readme_command_lines("minigrad-course") if " open -- " in line]
    assert open_line == "minigrad-course open -- --allow-root --no-browser"
    init, cd = init_line.split(" && ")
    env = _env(tmp_path)
    subprocess.run(_argv(init), cwd=tmp_path, env=env, check=True, capture_output=True, timeout=300)
    course = tmp_path / shlex.split(cd)[1]
    assert (course / "lessons" / "00_tour.ipynb").is_file()
    # Port 0 would be a flag of our own: keep the README's line, and let JupyterLab pick a free
    # port from its default (it tries the next ones when 8888 is taken).
    proc = subprocess.Popen(_argv(open_line), cwd=course, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    seen, lab = "", []
    try:
        deadline = time.monotonic() + 240  # a bound for a loaded machine, not a timing assertion
        while time.monotonic() < deadline and "http://" not in seen and proc.poll() is None:
            line = proc.stdout.readline()
            seen += line
        assert "http://" in seen, seen[-3000:]
        assert f"--ServerApp.root_dir={course.resolve()}" in seen and "--allow-root --no-browser" in seen
        lab = _children(proc.pid)
        assert lab and all(_alive(p) for p in lab)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        deadline = time.monotonic() + 60
        while any(_alive(p) for p in lab) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(p) for p in lab), "JupyterLab outlived the SIGTERM to minigrad-course open"
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in {*lab, *_children(proc.pid)}:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        proc.wait()


def test_open_outside_a_course_folder_says_how_to_make_one(tmp_path):
    run = subprocess.run(_argv("minigrad-course open nowhere -- --no-browser"), cwd=tmp_path, env=_env(tmp_path),
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2
    assert "make a course folder there with `minigrad-course init nowhere`" in run.stderr, run.stderr
    assert "--no-browser" not in run.stderr.split("error:", 1)[1].split("(")[0]
