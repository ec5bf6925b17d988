"""Command line for the course tooling: ``python -m minigrad.course`` (or ``minigrad-course``).

    build [--check] [--root PATH]   write exercises/ from solutions/
    strip PATH...                   strip outputs from notebooks, in place

Exit codes: 0 ok; 1 ``build --check`` found stale exercises, or a solution
notebook is malformed; 2 usage error (bad arguments, no course root found).
The builder is imported only when a command runs, so ``--help`` is instant.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]

FIX_COMMAND = "python -m minigrad.course build"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minigrad.course",
        description="Course tooling: build the exercise notebooks, strip outputs.",
        epilog="Exit codes: 0 ok, 1 stale exercises (--check) or bad solution notebook, "
        "2 usage error.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

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
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit code (see the module docstring)."""
    parser = _parser()
    args = parser.parse_args(argv)  # exits with 2 on a usage error
    if args.command == "build":
        return _build(parser, args.root, args.check)
    return _strip(parser, args.paths)


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
    if check and changed:
        print("exercises/ is out of date with solutions/:", file=sys.stderr)
        for path in changed:
            print(f"  {_shown(path, root)}", file=sys.stderr)
        print(f"Fix it with: {fix}", file=sys.stderr)
        return 1
    for path in changed:
        print(f"{'wrote' if path.exists() else 'removed'} {_shown(path, root)}")
    if not changed:
        print("exercises/ is up to date")
    return 0


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
