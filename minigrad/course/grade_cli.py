"""``minigrad-grade``: grade worksheets, one notebook or a folder of learners; build a Gradescope bundle.

    minigrad-grade PATH... [-j N] [--seed N] [--out DIR] [limits...]
    minigrad-grade gradescope OUT.zip [--seed N] [--stages 04,05] [limits...]

A PATH is a notebook (one learner, named after the file) or a folder: each
subfolder is one learner (every notebook below it: nbgrader's
``submitted/NAME/...`` works as is), each notebook directly inside is one learner;
a folder holding only worksheet-named notebooks (``NN_name.ipynb``) is one
learner. ``--learner NAME`` makes everything given one learner's work.

Writes ``OUT/results/LEARNER.json`` (every check, its feedback, the seed, the
isolation applied, flags for review), ``OUT/gradebook.csv`` (one row per learner,
one column per stage, the total) and keeps finished results in ``OUT/.cache``:
run the same command again after a crash or Ctrl-C and only what is missing is
graded.

Exit codes: 0 every submission was graded; 1 some could not be graded (an
unreadable or unidentifiable file, no notebook in a learner's folder, or a
grader failure: see "problems" in the results); 2 usage error; 130 interrupted
(rerun to resume).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["main"]


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    from minigrad.course.sandbox import Limits

    d = Limits()
    group = parser.add_argument_group("limits per submission and stage (each sandboxed child process)")
    group.add_argument("--cpu", type=float, default=d.cpu_seconds, metavar="SECONDS",
                       help=f"CPU time (default {d.cpu_seconds:g})")
    group.add_argument("--wall", type=float, default=d.wall_seconds, metavar="SECONDS",
                       help=f"wall-clock time, then the process group is killed (default {d.wall_seconds:g})")
    group.add_argument("--memory", type=int, default=d.memory_mb, metavar="MB",
                       help=f"address space (default {d.memory_mb})")
    group.add_argument("--restarts", type=int, default=d.restarts, metavar="N",
                       help="fresh child processes allowed after one hangs or crashes, to grade the "
                            f"remaining checks (default {d.restarts})")
    group.add_argument("--isolation", choices=("auto", "none", "require"), default="auto",
                       help="auto: an unprivileged user and no network where the machine allows it "
                            "(root), else limits only; require: refuse to grade without both; none: limits only")


def limits_from(args: argparse.Namespace):
    from minigrad.course.sandbox import Limits

    if min(args.cpu, args.wall) <= 0 or args.memory < 64 or args.restarts < 0:
        raise ValueError("limits must be positive (--memory at least 64 MB)")
    return Limits(cpu_seconds=args.cpu, wall_seconds=args.wall, memory_mb=args.memory, restarts=args.restarts)


def _grade_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minigrad-grade",
        description="Grade minigrad worksheets in a sandbox. Also: `minigrad-grade gradescope OUT.zip` "
                    "builds a Gradescope autograder.",
        epilog="Exit codes: 0 all graded, 1 some submissions could not be graded, 2 usage error, "
               "130 interrupted (rerun the same command to resume).",
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a notebook, or a folder of submissions")
    parser.add_argument("-j", "--jobs", type=int, default=_cores(), metavar="N",
                        help="grade N submissions in parallel (default: all cores)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the hidden inputs, recorded in every result")
    parser.add_argument("--out", type=Path, default=Path("grades"), metavar="DIR",
                        help="results/, gradebook.csv and the cache go here (default ./grades)")
    parser.add_argument("--cache", type=Path, metavar="DIR", help="results cache (default OUT/.cache)")
    parser.add_argument("--no-cache", action="store_true", help="grade everything again, keep no cache")
    parser.add_argument("--templates", type=Path, metavar="DIR",
                        help="the worksheet templates (default: the nearest exercises/ folder)")
    parser.add_argument("--learner", metavar="NAME", help="everything given is this one learner's work")
    parser.add_argument("--details", action="store_true", help="print every check's verdict and feedback")
    parser.add_argument("--quiet", action="store_true", help="no table, no progress bar")
    add_limit_options(parser)
    return parser


class Progress:
    """A progress bar on stderr (a line every 10% when stderr is not a terminal)."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total, self.enabled = total, enabled and total > 1
        self.tty = sys.stderr.isatty()
        self.started = time.monotonic()
        self.cached = self.failed = 0
        self._last_decile = -1

    def update(self, done: int, total: int, result: dict) -> None:
        self.cached += bool(result.get("cached"))
        self.failed += result.get("status") != "graded"
        if not self.enabled:
            return
        elapsed = time.monotonic() - self.started
        graded = done - self.cached
        rate = f"{60 * graded / elapsed:.0f}/min" if elapsed > 0 and graded else "-"
        width = 30
        bar = "#" * int(width * done / total) + "." * (width - int(width * done / total))
        line = (f"[{bar}] {done}/{total} notebooks  {self.cached} cached  {self.failed} ungradable  "
                f"{rate}  {int(elapsed) // 60}:{int(elapsed) % 60:02d}")
        if self.tty:
            sys.stderr.write("\r" + line + ("\n" if done == total else ""))
            sys.stderr.flush()
        elif done * 10 // total != self._last_decile or done == total:
            self._last_decile = done * 10 // total
            print(line, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "gradescope":
        from minigrad.course.gradescope import build_main

        return build_main(argv[1:])
    if argv and argv[0] == "grade":
        argv = argv[1:]
    parser = _grade_parser()
    args = parser.parse_args(argv)  # exits with 2 on a usage error
    from minigrad.course import grader as g

    try:
        limits = limits_from(args)
    except ValueError as e:
        parser.error(str(e))
    if args.jobs < 1:
        parser.error("-j must be at least 1")
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        parser.error(f"no such file or folder: {', '.join(missing)}")
    learners = g.collect_learners(args.paths, args.learner)
    if not learners:
        parser.error("no notebooks found in " + ", ".join(map(str, args.paths)))
    cache = None if args.no_cache else (args.cache or args.out / ".cache")
    config = g.GradeConfig(seed=args.seed, limits=limits, isolation=args.isolation,
                           templates=args.templates, cache_dir=cache)
    try:
        grader = g.Grader(config, jobs=min(args.jobs, sum(len(l.files) for l in learners) or 1))
    except (FileNotFoundError, RuntimeError) as e:
        print(f"minigrad-grade: error: {e}", file=sys.stderr)
        return g.EXIT_USAGE

    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    summaries: list[dict] = []
    results_dir = args.out / "results"
    stage_keys = list(grader.templates)
    progress = Progress(sum(len(l.files) for l in learners), not args.quiet)

    def on_learner(summary: dict) -> None:
        summaries.append(summary)
        g.write_json(results_dir / f"{g.safe_name(summary['learner'])}.json", summary)

    started = time.monotonic()
    try:
        with grader:
            if not args.quiet and grader.plan.notes:
                print("isolation: " + "; ".join(grader.plan.notes), file=sys.stderr)
            grader.grade_batch(learners, on_result=progress.update, on_learner=on_learner)
    except g.Interrupted:
        _write_gradebook(args.out, summaries, stage_keys)
        print(f"\ninterrupted: {len(summaries)} of {len(learners)} learners graded and saved; run the same "
              "command again to grade the rest (finished notebooks are cached)", file=sys.stderr)
        return g.EXIT_INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)
    elapsed = time.monotonic() - started
    _write_gradebook(args.out, summaries, stage_keys)
    if not args.quiet:
        if args.details or len(summaries) == 1:
            for s in sorted(summaries, key=lambda s: s["learner"]):
                for result in s["stages"].values():
                    print(f"\n{s['learner']}:\n{g.format_stage(result)}")
        print()
        print(g.format_table(summaries, stage_keys))
        problems = [(s["learner"], p) for s in summaries for p in s["problems"]]
        if problems:
            print("\nproblems:")
            for learner, problem in problems:
                print(f"  {learner}: {problem}")
        flagged = [s for s in summaries if s["flags"]]
        if flagged:
            print(f"\n{len(flagged)} learner(s) flagged for review: see 'flags' in their results JSON")
        graded = progress.total - progress.cached
        rate = f", {60 * graded / elapsed:.0f} notebooks/min" if graded and elapsed > 0 else ""
        print(f"\n{progress.total} notebook(s) of {len(summaries)} learner(s) in {elapsed:.1f} s "
              f"({progress.cached} cached{rate}); results in {args.out}/")
    return g.EXIT_UNGRADED if any(s["ungraded"] for s in summaries) else g.EXIT_OK


def _write_gradebook(out: Path, summaries: list[dict], stage_keys: list[str]) -> None:
    from minigrad.course.grader import gradebook_csv

    out.mkdir(parents=True, exist_ok=True)
    path = out / "gradebook.csv"
    tmp = path.with_suffix(".csv.tmp")
    tmp.write_text(gradebook_csv(summaries, stage_keys), encoding="utf-8")
    os.replace(tmp, path)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
