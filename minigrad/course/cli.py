"""Command line for the course tooling: ``python -m minigrad.course`` (or ``minigrad-course``).

    init DIR                        copy the lessons and worksheets into DIR, to work in
    open [DIR]                      JupyterLab at the course's root, on lesson 00
    build [--check] [--root PATH]   write exercises/ from solutions/
    strip PATH...                   strip outputs from notebooks, in place
    mutate [--stages 04] [--report] mutation testing of the stages' checks (minigrad/course/mutation/)

Exit codes: 0 ok; 1 ``build --check`` found stale exercises, or a solution
notebook is malformed, or ``mutate`` found a survivor not justified in AUTHORING.md; 2 usage error (bad arguments, no course root found).
The builder is imported only when a command runs, so ``--help`` is instant.
"""
from __future__ import annotations

import argparse
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main", "course_source"]

FIX_COMMAND = "python -m minigrad.course build"
COURSE_FOLDERS = ("lessons", "exercises")
FIRST_LESSON = "lessons/00_tour.ipynb"


def course_source() -> Path:
    """Where this installation's lessons and worksheets are: inside the wheel
    (``minigrad/course/content``), or the checkout an editable install points at."""
    here = Path(__file__).resolve().parent
    for root in (here / "content", here.parent.parent):
        if all((root / folder).is_dir() for folder in COURSE_FOLDERS):
            return root
    raise FileNotFoundError(f"this installation of minigrad has no lessons/ and exercises/ (looked in {here / 'content'} "
                            f"and {here.parent.parent}): reinstall it from a wheel or a checkout")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minigrad.course",
        description="Course tooling: build the exercise notebooks, strip outputs.",
        epilog="Exit codes: 0 ok, 1 stale exercises (--check) or bad solution notebook, "
        "2 usage error.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = commands.add_parser(
        "init",
        help="copy the lessons and worksheets into DIR (a writable folder to work in)",
        description="Copy lessons/ and exercises/ of this installation into DIR, so that you can run and "
        "edit them (links between lessons and worksheets are relative: keep the two folders side by side). "
        "Existing files are never overwritten. Then: minigrad-course open DIR.",
    )
    init.add_argument("dir", type=Path, metavar="DIR")

    open_ = commands.add_parser(
        "open",
        help="start JupyterLab at the course's root, on lesson 00",
        description="Start JupyterLab with the course folder (holding lessons/ and exercises/) as its root, "
        f"so that links between lessons and worksheets work, and open {FIRST_LESSON}. The same as "
        f"`jupyter lab --ServerApp.root_dir=DIR DIR/{FIRST_LESSON}`.",
    )
    open_.add_argument("dir", type=Path, nargs="?", metavar="DIR",
                       help="the course folder (default: the current folder or the nearest one above it "
                       "holding lessons/; else this installation's)")
    open_.add_argument("jupyter_args", nargs="*", metavar="-- ARGS",
                       help="more arguments for jupyter lab, after `--` (e.g. -- --allow-root --no-browser "
                       "--port 8890)")

    build = commands.add_parser(
        "build",
        help="generate exercises/NN_*.ipynb from solutions/NN_*.ipynb",
        description="Generate exercises/NN_*.ipynb from the solved worksheets in solutions/: "
        "solution regions become stubs, hidden tests are removed, outputs are stripped. "
        "Exercises whose solution is gone are deleted.",
    )
    build.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and list the exercises that are missing or out of date",
    )
    build.add_argument(
        "--root",
        type=Path,
        metavar="PATH",
        help="course root holding solutions/ and exercises/ "
        "(default: nearest folder at or above the current one that has solutions/)",
    )

    strip = commands.add_parser(
        "strip",
        help="remove outputs and execution counts from notebooks, in place",
        description="Remove outputs, execution counts and transient metadata in place, "
        "so that committed notebooks are clean and diffs stable. "
        "A folder stands for every .ipynb file below it.",
    )
    strip.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="notebook or folder")

    mutate = commands.add_parser(
        "mutate",
        help="mutation testing: does every small change to a solution lose points in its part?",
        description="Mutate each graded cell of solutions/NN_*.ipynb (operators: minigrad/course/mutation/operators.py), "
        "run each mutant as the grader runs the worksheet, and print per stage: generated, equivalent (same "
        "observations as the solution at several seeds), killed (its part lost points) and survived, with the "
        "survivors. Exit 1 when a survivor is not justified in minigrad/course/AUTHORING.md.",
    )
    from minigrad.course.mutation import add_arguments

    add_arguments(mutate)

    mine = commands.add_parser(
        "mine",
        help="run minigrad with the pieces of the core you wrote in your worksheets",
        description="Grade each worksheet's core pieces (03 the ctx, 04 the engine, 05 Functions, 06 "
        "un-broadcasting, 07 kernels, 08 saved tensors, 10 layers and optimizers, 11 conv), put each that "
        "passes in place of the shipped one, print whose code runs, and run the core's checks on the mix, "
        "naming the piece a failure came from (minigrad/course/yours.py). Exit 1 when a check fails.",
    )
    mine.add_argument("dir", nargs="?", type=Path, default=Path("."), metavar="COURSE_DIR",
                      help="the course folder (with exercises/), or a folder of worksheets (default: .)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (see the module docstring)."""
    parser = _parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    extra: list[str] = []
    if argv[:1] == ["open"] and "--" in argv:
        # Everything after `--` is JupyterLab's: split it off before argparse, which (on Python
        # 3.10-3.13) would read `open -- --allow-root` as the folder `--allow-root`.
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    args, unknown = parser.parse_known_args(argv)  # exits with 2 on a usage error
    if unknown:
        hint = ""
        if args.command == "open":  # JupyterLab's flags without the `--` before them
            folder = f"{args.dir} " if args.dir is not None else ""
            hint = f"; JupyterLab's own flags go after `--`: minigrad-course open {folder}-- {' '.join(unknown)}"
        parser.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
    if args.command == "init":
        return _init(parser, args.dir)
    if args.command == "open":
        return _open(parser, args.dir, [*args.jupyter_args, *extra])
    if args.command == "build":
        return _build(parser, args.root, args.check)
    if args.command == "mutate":
        from minigrad.course.mutation import run_cli

        return run_cli(args)
    if args.command == "mine":
        from minigrad.course.yours import main as mine_main

        return mine_main(args.dir)
    return _strip(parser, args.paths)


def _init(parser: argparse.ArgumentParser, target: Path) -> int:
    try:
        source = course_source()
    except FileNotFoundError as err:
        parser.error(str(err))
    copied = kept = 0
    for folder in COURSE_FOLDERS:
        (target / folder).mkdir(parents=True, exist_ok=True)
        for notebook in sorted((source / folder).glob("[0-9][0-9]_*.ipynb")):
            destination = target / folder / notebook.name
            if destination.exists():
                kept += 1
                continue
            shutil.copyfile(notebook, destination)
            copied += 1
    print(f"copied {copied} notebooks into {target}" + (f" (kept {kept} you already had)" if kept else ""))
    print(f"Open the course: minigrad-course open {target}")
    return 0


def _open(parser: argparse.ArgumentParser, folder: Path | None, extra: list[str]) -> int:
    if folder is None:
        here = Path.cwd().resolve()
        folder = next((p for p in (here, *here.parents) if (p / FIRST_LESSON).is_file()), None)
        if folder is None:
            try:
                folder = course_source()
            except FileNotFoundError as err:
                parser.error(str(err))
    if not (folder / FIRST_LESSON).is_file():
        parser.error(f"{folder} has no {FIRST_LESSON}: make a course folder there with `minigrad-course init "
                     f"{folder}`, then `minigrad-course open {folder}` (JupyterLab's own flags go after `--`)")
    folder = folder.resolve()
    from minigrad.course.lab_settings import lab_arguments  # no widget state saved (static copies), news off, lines wrapped

    command = [sys.executable, "-m", "jupyter", "lab", f"--ServerApp.root_dir={folder}", str(folder / FIRST_LESSON),
               *lab_arguments(folder), *extra]
    print("running: " + " ".join(command), file=sys.stderr)
    return _run_forwarding_signals(command)


def _run_forwarding_signals(command: list[str]) -> int:
    """Run ``command`` and wait for it; SIGTERM and SIGHUP to this process are passed on to it (a
    service manager or ``kill`` stops JupyterLab too, not only this wrapper), Ctrl-C reaches it
    through the terminal's process group. Returns its exit code (130 after Ctrl-C)."""
    child = subprocess.Popen(command)
    forwarded = (signal.SIGTERM, signal.SIGHUP)

    def forward(signum, frame):
        try:
            child.send_signal(signum)
        except ProcessLookupError:
            pass

    previous = {sig: signal.signal(sig, forward) for sig in forwarded}
    try:
        while True:
            try:
                code = child.wait()
                break
            except KeyboardInterrupt:  # the child got the same Ctrl-C: let it shut down
                try:
                    child.send_signal(signal.SIGINT)
                except ProcessLookupError:
                    pass
                try:
                    child.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    child.terminate()
                child.wait()
                return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return code


def _build(parser: argparse.ArgumentParser, root: Path | None, check: bool) -> int:
    from minigrad.course.build import build_all, find_root

    fix = FIX_COMMAND if root is None else f"{FIX_COMMAND} --root {root}"
    if root is None:
        try:
            root = find_root()
        except FileNotFoundError:
            parser.error(f"no folder with solutions/ at or above {Path.cwd()}; pass --root PATH")
    elif not (root / "solutions").is_dir():
        parser.error(f"--root {root} has no solutions/ folder")
    try:
        changed = build_all(root, check=check)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    readme = root / "README.md"
    if readme.is_file():
        text = readme.read_text(encoding="utf-8")
        updated = readme_with_points(text)
        if updated != text:
            if not check:
                readme.write_text(updated, encoding="utf-8")
            changed = [*changed, readme]
    if check and changed:
        print("exercises/ (or the README's points column) is out of date with solutions/ and the stages:",
              file=sys.stderr)
        for path in changed:
            print(f"  {_shown(path, root)}", file=sys.stderr)
        print(f"Fix it with: {fix}", file=sys.stderr)
        return 1
    for path in changed:
        print(f"{'wrote' if path.exists() else 'removed'} {_shown(path, root)}")
    if not changed:
        print("exercises/ is up to date")
    return 0


_STAGE_ROW = re.compile(r"^\| (\d\d) \| ([A-Za-z0-9_]+) \|(.*)\| ([^|]*) \|$")


def readme_with_points(text: str) -> str:
    """``text`` (the README) with the points column of its course table (``| NN | name | ... | points |``)
    set from the stage registry, the single source of the points (``Stage.points``)."""
    from minigrad.course.stages import get_stage

    lines = text.split("\n")
    for i, line in enumerate(lines):
        match = _STAGE_ROW.match(line)
        if not match:
            continue
        try:
            stage = get_stage(f"{match.group(1)}_{match.group(2)}")
        except KeyError:
            continue
        lines[i] = f"| {match.group(1)} | {match.group(2)} |{match.group(3)}| {stage.points:g} |"
    return "\n".join(lines)


def _strip(parser: argparse.ArgumentParser, paths: Sequence[Path]) -> int:
    from minigrad.course.build import strip_file

    notebooks: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(path.rglob("*.ipynb"))
            notebooks += [nb for nb in found if ".ipynb_checkpoints" not in nb.parts]
        elif path.suffix == ".ipynb" and path.is_file():
            notebooks.append(path)
        else:
            parser.error(f"{path} is not a notebook or a folder")
    for notebook in notebooks:
        if strip_file(notebook):
            print(f"stripped {notebook}")
    return 0


def _shown(path: Path, root: Path) -> Path:
    """``path`` relative to ``root`` when possible: shorter, copy-pasteable messages."""
    try:
        return path.resolve().relative_to(Path(root).resolve())
    except ValueError:
        return path


if __name__ == "__main__":
    raise SystemExit(main())
