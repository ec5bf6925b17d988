"""``minigrad-grade``: grade worksheets, one notebook or a class; merge shards; build a Gradescope bundle.

    minigrad-grade PATH... [-j N] [--seed N] [--out DIR] [--stages 03,04] [--shard K/N] [limits...]
    minigrad-grade merge SHARD_OUT... --out DIR
    minigrad-grade gradescope OUT.zip [--seed N] [--stages 04,05] [limits...]

A PATH is a notebook (one learner, named after the file) or a folder: each
subfolder is one learner (every notebook below it: nbgrader's
``submitted/NAME/...`` works as is), each notebook directly inside is one learner;
a folder holding only worksheet-named notebooks (``NN_name.ipynb``) is one
learner. ``--learner NAME`` makes everything given one learner's work.

The class gradebook lives in ``OUT/gradebook.sqlite``: a run adds or updates the
learners it graded and keeps every other one. ``OUT/gradebook.csv`` (every
learner, one column per stage of the assignment) and ``OUT/results/LEARNER.json``
(every check, its feedback, the seed, the isolation, flags for review) are its
exports. Finished results are cached in ``OUT/.cache``: run the same command again
after a crash or Ctrl-C and only what is missing is graded. One notebook on its own
is a quick look: it prints the verdicts and writes nothing unless ``--record``.

Learner code runs isolated (no network, an unprivileged user) or not at all: when
the machine cannot do that, the grader says why and how to fix it, and grades only
with ``--isolation none``.

Exit codes: 0 every submission was graded; 1 some could not be graded (an
unreadable or unidentifiable file, no notebook in a learner's folder, or a
grader failure: see "problems" in the results); 2 usage error, or isolation
unavailable; 130 interrupted (rerun to resume).
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from minigrad.course.grading.options import (
    EXIT_INTERRUPTED, EXIT_OK, EXIT_UNGRADED, EXIT_USAGE, add_limit_options, limits_from,
)

__all__ = ["main"]

INTERRUPTS = (signal.SIGINT, signal.SIGTERM)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _grade_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minigrad-grade",
        description="Grade minigrad worksheets in a sandbox, into the class gradebook. Also: "
                    "`minigrad-grade merge SHARD_OUT... --out DIR` combines gradebooks, "
                    "`minigrad-grade gradescope OUT.zip` builds a Gradescope autograder.",
        epilog="Exit codes: 0 all graded, 1 some submissions could not be graded, 2 usage error or no "
               "isolation (see the message), 130 interrupted (rerun the same command to resume).",
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
                        help="the worksheet templates (default: those installed with the grader: the wheel's "
                             "copy, or the checkout's exercises/ for an editable install)")
    parser.add_argument("--learner", metavar="NAME", help="everything given is this one learner's work")
    parser.add_argument("--stages", metavar="LIST",
                        help="the assignment: comma-separated stages, by number or name (e.g. 03,04,05); "
                             "default: the stages of the submitted notebooks (by file name or grade_ids)")
    parser.add_argument("--shard", metavar="K/N", type=_shard,
                        help="grade only shard K of N (a fixed 1/N of the learners, by a hash of their "
                             "names); combine the shards' --out folders with `minigrad-grade merge`")
    parser.add_argument("--record", action="store_true",
                        help="record a single notebook in the gradebook too (one notebook alone is a quick "
                             "look: printed, not recorded)")
    parser.add_argument("--details", action="store_true", help="print every check's verdict and feedback")
    parser.add_argument("--quiet", action="store_true", help="no table, no progress bar")
    add_limit_options(parser)
    return parser


def _shard(text: str) -> tuple[int, int]:
    try:
        k, n = (int(part) for part in text.split("/"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not K/N (e.g. 3/8)") from None
    if not 1 <= k <= n:
        raise argparse.ArgumentTypeError(f"{text!r}: K must be between 1 and N")
    return k, n


def in_shard(name: str, shard: tuple[int, int] | None) -> bool:
    """Whether learner ``name`` belongs to shard K of N: the same answer on every machine."""
    if shard is None:
        return True
    k, n = shard
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:8], "big") % n == k - 1


def _assignment(args: argparse.Namespace, learners: list, templates_dir: Path | None
                ) -> tuple[tuple[str, ...], list[Path]]:
    """The assignment's stage keys (--stages, else the stages of the submitted notebooks), and
    the submitted notebooks of other stages (left out of this run)."""
    from minigrad.course.grading import grader as g

    templates = g.load_templates(templates_dir or g.find_templates())
    stage_of = {}
    for learner in learners:
        for path in learner.files:
            key, _ = g.identify_stage(path, None, templates)
            if key is None:  # not named like a worksheet: its grade_ids say which it is
                sub = g.read_submission(path)
                key, _ = g.identify_stage(path, sub.notebook, templates) if sub.notebook else (None, "")
            stage_of[path] = key
    if args.stages:
        stages = tuple(g.choose_stages(templates, [s.strip() for s in args.stages.split(",") if s.strip()]))
    else:
        stages = tuple(k for k in templates if k in stage_of.values()) or tuple(templates)
    others = [path for path, key in stage_of.items() if key is not None and key not in stages]
    return stages, others


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
    with _interruptible():
        if argv and argv[0] == "gradescope":
            from minigrad.course.grading.gradescope import build_main

            return build_main(argv[1:])
        if argv and argv[0] == "merge":
            return merge_main(argv[1:])
        if argv and argv[0] == "grade":
            argv = argv[1:]
        try:
            return _grade_main(argv)
        except KeyboardInterrupt:  # before or after the batch (the batch reports what it kept itself)
            print("\ninterrupted: run the same command again to grade what is missing (finished notebooks "
                  "are cached)", file=sys.stderr)
            return EXIT_INTERRUPTED


@contextlib.contextmanager
def _interruptible():
    """Make Ctrl-C (SIGINT) and SIGTERM raise KeyboardInterrupt here, whatever this process inherited.

    A program started in the background by a shell script (``minigrad-grade ... &``, or a test
    suite run that way) starts with SIGINT ignored, and Python then installs no KeyboardInterrupt
    handler: Ctrl-C or ``kill -INT`` would be lost and grading would go on. So Python's own
    handler (``signal.default_int_handler``) is installed explicitly for SIGINT, and one that
    raises KeyboardInterrupt for SIGTERM. A blocked signal is inherited too, so both are unblocked. The previous handlers and mask come back afterwards (the tests
    call ``main`` in their own process)."""
    previous = {sig: signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else _raise_interrupt)
                for sig in INTERRUPTS}
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, INTERRUPTS) if hasattr(signal, "pthread_sigmask") else None
    try:
        yield
    finally:
        if mask is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for sig, handler in previous.items():
            if handler is not None:  # None: a handler not installed from Python, which cannot be put back
                signal.signal(sig, handler)


def _grade_main(argv: Sequence[str]) -> int:
    """``minigrad-grade PATH...`` (call it through ``main``, which makes Ctrl-C stop it)."""
    parser = _grade_parser()
    args = parser.parse_args(argv)  # exits with 2 on a usage error
    from minigrad.course.grading import grader as g
    from minigrad.course.grading.gradebook import Gradebook
    from minigrad.course.grading.sandbox import IsolationUnavailable

    try:
        limits = limits_from(args)
    except ValueError as e:
        parser.error(str(e))
    if args.jobs < 1:
        parser.error("-j must be at least 1")
    missing = [str(p) for p in args.paths if not p.exists()]
    if missing:
        parser.error(f"no such file or folder: {', '.join(missing)}")
    learners = [l for l in g.collect_learners(args.paths, args.learner) if in_shard(l.name, args.shard)]
    if not learners and args.shard is None:
        parser.error("no notebooks found in " + ", ".join(map(str, args.paths)))
    quick_look = (not args.record and len(args.paths) == 1 and args.paths[0].is_file() and args.shard is None)
    try:
        stages, others = _assignment(args, learners, args.templates)
    except (KeyError, FileNotFoundError) as e:
        parser.error(e.args[0] if e.args else str(e))
    if others:
        print(f"minigrad-grade: left out {len(others)} notebook(s) of stages outside the assignment "
              f"({', '.join(stages)}), e.g. {others[0]}", file=sys.stderr)
        for learner in learners:
            learner.files = [f for f in learner.files if f not in others]
    cache = None if args.no_cache or quick_look else (args.cache or args.out / ".cache")
    config = g.GradeConfig(seed=args.seed, limits=limits, isolation=args.isolation, python=args.python,
                           stages=stages, templates=args.templates, cache_dir=cache,
                           hidden=(*args.paths, *([] if quick_look else [args.out]), *([cache] if cache else [])))
    try:
        grader = g.Grader(config, jobs=min(args.jobs, sum(len(l.files) for l in learners) or 1))
    except IsolationUnavailable as e:
        print(f"minigrad-grade: {e}", file=sys.stderr)  # in full, --quiet or not: nothing was graded
        return EXIT_USAGE
    except (FileNotFoundError, RuntimeError) as e:
        print(f"minigrad-grade: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if grader.plan.level != "full":  # the instructor's explicit choice; said every time, even with --quiet
        print(f"minigrad-grade: isolation: {grader.plan.summary()}", file=sys.stderr)

    book = None if quick_look else Gradebook(args.out)
    assignment = {key: stage.points for key, (stage, _) in grader.templates.items()}
    summaries: list[dict] = []
    progress = Progress(sum(len(l.files) for l in learners), not args.quiet)

    def on_learner(summary: dict) -> None:
        summaries.append(summary)
        if book is not None:
            book.record(summary, assignment)

    started = time.monotonic()
    try:
        with grader:
            grader.grade_batch(learners, on_result=progress.update, on_learner=on_learner)
    except g.Interrupted:
        if book is not None:
            book.export_csv()
        print(f"\ninterrupted: {len(summaries)} of {len(learners)} learners graded and saved; run the same "
              "command again to grade the rest (finished notebooks are cached)", file=sys.stderr)
        return EXIT_INTERRUPTED
    elapsed = time.monotonic() - started
    if book is not None:
        book.export_csv()
    if not args.quiet:
        if args.details or len(summaries) == 1:
            for s in sorted(summaries, key=lambda s: s["learner"]):
                for result in s["stages"].values():
                    print(f"\n{s['learner']}:\n{g.format_stage(result)}")
        print()
        print(f"isolation: {grader.plan.summary()}")
        print(g.format_table(summaries, list(grader.templates)))
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
        where = ("a quick look: nothing recorded (--record to add it to the gradebook)" if quick_look
                 else f"gradebook {args.out / 'gradebook.csv'}")
        print(f"\n{progress.total} notebook(s) of {len(summaries)} learner(s) in {elapsed:.1f} s "
              f"({progress.cached} cached{rate}); {where}")
    return EXIT_UNGRADED if any(s["ungraded"] for s in summaries) else EXIT_OK


def merge_main(argv: Sequence[str]) -> int:
    """``minigrad-grade merge SHARD_OUT... --out DIR``: one gradebook from the shards' stores."""
    from minigrad.course.grading.gradebook import Gradebook

    parser = argparse.ArgumentParser(
        prog="minigrad-grade merge",
        description="Combine gradebooks (the --out folders of shards, or of separate runs) into one: "
                    "every learner of every store; where two hold the same learner and stage, the one "
                    "recorded last wins. Writes DIR/gradebook.sqlite, gradebook.csv and results/.",
        epilog="Exit codes: 0 merged, 2 usage error (a folder without a gradebook).")
    parser.add_argument("sources", nargs="+", type=Path, metavar="SHARD_OUT", help="a folder holding gradebook.sqlite")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="the merged gradebook goes here")
    args = parser.parse_args(list(argv))
    book = Gradebook(args.out)
    sources = [s for s in args.sources if s.resolve() != args.out.resolve()]
    try:
        count = book.merge(sources)
    except FileNotFoundError as e:
        parser.error(str(e))
    path = book.export_csv()
    print(f"merged {count} learner record(s) from {len(sources)} gradebook(s): {len(book.learners())} learners "
          f"in {path}")
    return 0


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    raise SystemExit(main())
