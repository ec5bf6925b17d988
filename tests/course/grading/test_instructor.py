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

ROOT = Path(__file__).resolve().parents[3]
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
    from minigrad.course.stages import _modules

    rows = re.findall(r"^\| (\d\d) \| (\w+) \|.*\| ([\d.]+) \|$", README, re.M)
    assert sorted(f"{n}_{name}" for n, name, _ in rows) == sorted(m[1:] for m in _modules().values()), rows
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
    forgot = subprocess.run(_argv("minigrad-course open --allow-root --no-browser"), cwd=tmp_path, env=_env(tmp_path),
                            capture_output=True, text=True, timeout=300)
    assert forgot.returncode == 2 and ("JupyterLab's own flags go after `--`: minigrad-course open -- --allow-root "
                                       "--no-browser") in forgot.stderr, forgot.stderr


# -- the isolation refusal's first fix, run where it is printed ------------------------------------
def _link_packages(site: Path, names=("numpy", "numpy.libs", "numba", "llvmlite")) -> None:
    """What the printed ``pip install`` would bring, offline: this interpreter's numpy and numba,
    hard-linked (copied across file systems) into the new venv, so that every user can read them."""
    import importlib.util
    import shutil

    ours = Path(importlib.util.find_spec("numpy").origin).parent.parent
    for name in names:
        source = ours / name
        if not source.is_dir():
            continue
        try:
            subprocess.run(["cp", "-al", str(source), str(site / name)], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            shutil.copytree(source, site / name)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0,
                    reason="the refusal this runs is root's with a Python other users cannot read")
def test_the_refusals_printed_fix_gives_full_isolation_that_hides_classmates_and_grades(tmp_path):
    import json
    import shutil
    import tempfile

    from minigrad.course.grading.sandbox import system_python
    from tests.hostile import STAGE, solution_notebook, write_json

    base = system_python()
    if base is None:
        pytest.skip("no system Python every user can read")
    version = subprocess.run([base, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True).stdout.strip()
    if version != str(sys.version_info[:2]):
        pytest.skip(f"{base} is Python {version}: this interpreter's numpy cannot be linked into it")
    # A world-readable folder of submissions (pytest's own tmp folders are private to root).
    public = Path(tempfile.mkdtemp(prefix="minigrad-fix-", dir="/tmp"))
    try:
        public.chmod(0o755)
        subs = public / "subs"
        for name in ("alice", "bob"):
            (subs / name).mkdir(parents=True)
        write_json(subs / "alice" / f"{STAGE}.ipynb", solution_notebook())
        nosy = solution_notebook()  # bob's added cell looks for alice's notebook and the gradebook
        nosy["cells"].insert(1, {"cell_type": "code", "id": "nosy", "metadata": {}, "execution_count": None,
                                 "outputs": [], "source": (
            "import os\n"
            f"for _p in [{str(subs)!r}, {str(subs / 'alice' / (STAGE + '.ipynb'))!r}, {str(public / 'grades')!r},\n"
            f"           {str(public / 'grades' / 'gradebook.csv')!r}]:\n"
            "    try:\n"
            "        _seen = os.listdir(_p) if os.path.isdir(_p) else open(_p).read()[:20]\n"
            "    except OSError as _e:\n"
            "        _seen = type(_e).__name__\n"
            "    print('SEEN', _p, _seen)\n")})
        write_json(subs / "bob" / f"{STAGE}.ipynb", nosy)
        for p in subs.rglob("*"):
            p.chmod(0o755 if p.is_dir() else 0o644)  # as an unzip leaves them
        out = public / "grades"
        grade = [sys.executable, "-m", "minigrad.course.grading.grade_cli", str(subs), "--out", str(out),
                 "--templates", str(ROOT / "exercises"), "-j", "1", "--wall", "600", "--stages", "04"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("MINIGRAD_SANDBOX_UID_BASE", None)
        refused = subprocess.run(grade, cwd=public, env=env, capture_output=True, text=True, timeout=600)
        if refused.returncode == 0:
            pytest.skip("this machine isolates with this Python already: no refusal to fix")
        assert refused.returncode == 2 and "Fixes (any one):" in refused.stderr, refused.stderr
        printed = refused.stderr
        venv_line = re.search(r"^\s+(\S+ -m venv /opt/minigrad)$", printed, re.M).group(1)
        assert re.search(r"^\s+/opt/minigrad/bin/pip install \S+", printed, re.M), printed
        assert "add `--python /opt/minigrad/bin/python`" in printed
        venv = public / "minigrad"
        subprocess.run(shlex.split(venv_line.replace("/opt/minigrad", str(venv))), check=True, timeout=600)
        (site,) = venv.glob("lib/python3*/site-packages")
        _link_packages(site)
        fixed = subprocess.run([*grade, "--python", str(venv / "bin" / "python")], cwd=public, env=env,
                               capture_output=True, text=True, timeout=1200)
        assert fixed.returncode == 0, fixed.stderr[-3000:] + fixed.stdout[-2000:]
        results = {p.stem: json.loads(p.read_text()) for p in (out / "results").glob("*.json")}
        assert results["alice"]["isolation"] == results["bob"]["isolation"] == "full"
        assert results["alice"]["total"] == results["bob"]["total"] == get_stage(STAGE).points
        seen = [line for line in results["bob"]["stages"][STAGE]["stdout"].splitlines() if line.startswith("SEEN")]
        assert len(seen) == 4 and all(line.endswith(("[]", "SEEN", "PermissionError", "FileNotFoundError")) or
                                      line.split(None, 2)[2] in ("", "[]") for line in seen), seen
        assert "tests.hostile" not in " ".join(seen) and "alice" not in " ".join(s.split(None, 2)[2] for s in seen)
        for path in [out / "gradebook.sqlite", out / "gradebook.csv", *(out / "results").glob("*.json"),
                     *(out / ".cache").rglob("*.json")]:
            assert path.stat().st_mode & 0o077 == 0, (path, oct(path.stat().st_mode))
    finally:
        shutil.rmtree(public, ignore_errors=True)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox needs Linux /proc")
def test_the_readmes_grade_line_grades_a_class_or_refuses_with_fixes(tmp_path):
    """``minigrad-grade submissions/ -j 8 --stages 03,04,05`` as written: it grades into ./grades, or
    (where this machine cannot isolate learner code) refuses with its fixes; then the same line with
    the opt-out grades."""
    import csv
    import json

    (line,) = readme_command_lines("minigrad-grade")
    assert line == "minigrad-grade submissions/ -j 8 --stages 03,04,05"
    for name, folder in (("ann", "solutions"), ("ben", "exercises")):
        (tmp_path / "submissions" / name).mkdir(parents=True)
        notebook = json.loads((ROOT / folder / "04_topological_backward.ipynb").read_text(encoding="utf-8"))
        (tmp_path / "submissions" / name / "04_topological_backward.ipynb").write_text(json.dumps(notebook))
    env = {**_env(tmp_path), "MINIGRAD_GRADE_RUN": f"readme-{os.getpid()}"}
    run = subprocess.run(_argv(line), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1200)
    if run.returncode == 2:
        assert "refusing to run learner code" in run.stderr and "Fixes (any one):" in run.stderr, run.stderr
        assert not (tmp_path / "grades").exists()
        run = subprocess.run([*_argv(line), "--isolation", "none"], cwd=tmp_path, env=env, capture_output=True,
                             text=True, timeout=1200)
    assert run.returncode == 0, run.stderr[-3000:]
    with open(tmp_path / "grades" / "gradebook.csv", newline="", encoding="utf-8") as f:
        rows = {row["learner"]: row for row in csv.DictReader(f)}
    points = {key: get_stage(key).points for key in ("03", "04", "05")}
    assert rows["ann"]["total"] == f"{points['04']:g}" and rows["ben"]["total"] == "0"
    assert rows["ann"]["max_total"] == f"{sum(points.values()):g}"
