"""The course as a package: the sdist and wheel build (and pass ``twine check``), the wheel
carries the lessons and worksheet templates (never the solutions), and, installed into a
fresh virtual environment outside the checkout, ``minigrad-course init`` makes a course
folder whose lesson runs and ``minigrad-grade`` grades a worksheet without a checkout.

Offline-friendly: the build uses the installed setuptools (``--no-isolation``) and the
venv reaches the packages of *this* interpreter (numpy, numba, Jupyter) through a ``.pth``
file naming its site-packages folders, installing only the wheel itself (``--no-deps``).
Not ``--system-site-packages``: run from inside a venv, that borrows the *base*
interpreter's packages, not the venv's, and fails where the base Python has no numba.
Plain folder lines in a ``.pth`` do not run the ``.pth`` files inside them, so this
interpreter's editable install of minigrad stays out of the venv.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("minigrad", "lessons", "exercises", "pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE")

pytestmark = pytest.mark.slow


def _run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    run = subprocess.run([str(a) for a in argv], capture_output=True, text=True, **kwargs)
    assert run.returncode == 0, f"{argv}\n{run.stdout[-2000:]}\n{run.stderr[-3000:]}"
    return run


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel, built from a copy of the checkout (the wheel from the sdist, as `build` does)."""
    pytest.importorskip("build", reason="the [dev] extra's `build` is not installed")
    folder = tmp_path_factory.mktemp("packaging")
    src = folder / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "content"))
        else:
            shutil.copyfile(path, src / name)
    _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", folder / "dist", src], timeout=900)
    return folder / "dist"


def test_wheel_and_sdist_carry_the_course_and_no_solutions(dist):
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    for folder in ("lessons", "exercises"):
        shipped = sorted(n.rsplit("/", 1)[1] for n in names if n.startswith(f"minigrad/course/content/{folder}/"))
        assert shipped == sorted(p.name for p in (ROOT / folder).glob("[0-9][0-9]_*.ipynb")), folder
    assert not [n for n in names if "solutions" in n or n.startswith("tests/")]
    modules = [p.relative_to(ROOT).as_posix() for p in (ROOT / "minigrad").rglob("*.py")
               if "__pycache__" not in p.parts]
    missing = [m for m in modules if m not in names]
    assert not missing, f"modules missing from the wheel (does each folder have an __init__.py?): {missing}"
    assert {"minigrad/course/GRADING.md", "minigrad/course/AUTHORING.md"} <= set(names)
    assert {"minigrad/data/shakespeare.txt.gz", "minigrad/data/SHAKESPEARE_LICENSE.txt"} <= set(names)
    assert "License-Expression: MIT" in metadata
    with tarfile.open(sdist) as t:
        members = t.getnames()
    assert any(m.endswith("/lessons/00_tour.ipynb") for m in members)
    assert not [m for m in members if "/solutions/" in m or "/tests/" in m]
    if shutil.which("twine") or _has_module("twine"):
        _run([sys.executable, "-m", "twine", "check", "--strict", wheel, sdist], timeout=300)


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_installed_wheel_inits_a_course_runs_a_lesson_and_grades_without_a_checkout(dist, tmp_path):
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", venv], timeout=300)
    bin_dir = venv / "bin"
    python = bin_dir / "python"
    venv_site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    ours = dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
                          *(p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p))])
    (Path(venv_site) / "this-interpreters-packages.pth").write_text("".join(f"{folder}\n" for folder in ours))
    _run([python, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", wheel], timeout=600)
    work = tmp_path / "learner"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    where = _run([python, "-c", "import minigrad; print(minigrad.__file__)"], cwd=work, env=env).stdout.strip()
    assert Path(where).is_relative_to(venv), f"the test imports the checkout's minigrad, not the wheel's: {where}"

    _run([bin_dir / "minigrad-course", "init", "course"], cwd=work, env=env, timeout=300)
    for folder in ("lessons", "exercises"):
        assert sorted(p.name for p in (work / "course" / folder).glob("*.ipynb")) == \
            sorted(p.name for p in (ROOT / folder).glob("[0-9][0-9]_*.ipynb"))

    # A lesson, run top to bottom in a kernel of the venv's Python (jupyter_client runs
    # "python" kernels with the interpreter that starts them).
    run_lesson = ("import sys, nbformat, nbclient\n"
                  "nb = nbformat.read(sys.argv[1], as_version=4)\n"
                  "nb.cells.append(nbformat.v4.new_code_cell('import minigrad; print(\"FROM\", minigrad.__file__)'))\n"
                  "nbclient.NotebookClient(nb, timeout=900, kernel_name='python3',\n"
                  "                        resources={'metadata': {'path': sys.argv[2]}}).execute()\n"
                  "print(nb.cells[-1].outputs[0]['text'])\n")
    lesson = work / "course" / "lessons" / "00_tour.ipynb"
    out = _run([python, "-c", run_lesson, lesson, lesson.parent], cwd=work, env=env, timeout=1800).stdout
    assert f"FROM {venv}" in out

    # Grading, with the templates found inside the installed package (no --templates, no checkout).
    submission = work / "course" / "exercises" / "04_topological_backward.ipynb"
    graded = _run([bin_dir / "minigrad-grade", submission, "--isolation", "none", "--wall", "600"], cwd=work,
                  env=env, timeout=1800)
    assert "04_topological_backward" in graded.stdout and "0/11" in graded.stdout, graded.stdout[-2000:]
    assert not (work / "grades").exists()  # one notebook: a quick look
    # What the Gradescope bundle's run_autograder calls, from the installed package.
    _run([python, "-m", "minigrad.course.grading.gradescope", "--help"], cwd=work, env=env, timeout=300)
    record = _run([bin_dir / "minigrad-grade", work / "course" / "exercises", "--isolation", "none",
                   "--stages", "04", "--wall", "600", "--quiet"], cwd=work, env=env, timeout=1800)
    assert record.returncode == 0
    (summary,) = [json.loads(p.read_text()) for p in (work / "grades" / "results").glob("*.json")]
    assert summary["max_total"] == 11 and summary["isolation"] == "none"
