"""The report (a table per stage, the survivors, JSON outcomes) and the command line
(``python -m minigrad.course mutate``)."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from minigrad.course.mutation.justified import course_root, justification_row, read_justifications
from minigrad.course.mutation.operators import generate
from minigrad.course.mutation.runner import Outcome, StageResult, StageRunner, run_stage_mutants, sample


def diagnoses_named(stage_key: str, feedback: dict[str, str]) -> dict[str, list[str]]:
    """check -> the known mistakes (the stage module's DIAGNOSES) that its feedback names."""
    import importlib

    from minigrad.course.stages import _modules

    module = importlib.import_module(f"minigrad.course.stages.{_modules()[stage_key[3:]]}")
    known = getattr(module, "DIAGNOSES", {})
    named = {check: sorted(key for key, phrase in known.items() if phrase in text) for check, text in feedback.items()}
    return {check: keys for check, keys in named.items() if keys}


def outcome_dict(o: Outcome) -> dict:
    m = o.mutation
    return {"stage": m.stage, "part": m.part, "operator": m.operator, "line": m.line, "before": m.before,
            "after": m.after, "status": o.status, "lost": o.lost, "feedback": o.feedback, "differs": o.differs,
            "diagnoses": diagnoses_named(m.stage, o.feedback), "seen_elsewhere": o.seen_elsewhere,
            "seconds": round(o.seconds, 2)}


def format_table(results: list[StageResult]) -> str:
    lines = [f"{'stage':28} {'generated':>9} {'run':>5} {'equiv':>6} {'killed':>7} {'timeout':>7} "
             f"{'survived':>8} {'justified':>9} {'killed%':>8} {'+justified':>10}"]
    for r in results:
        live = r.killed + len(r.survivors)
        share = 100.0 * r.killed / live if live else 100.0
        lines.append(f"{r.stage:28} {r.generated:9d} {len(r.outcomes):5d} {r.count('equivalent'):6d} "
                     f"{r.killed:7d} {r.count('timeout'):7d} {len(r.survivors):8d} {len(r.survivors) - len(r.unjustified):9d} "
                     f"{share:7.1f}% {100.0 * r.score:9.1f}%")
    return "\n".join(lines)


def format_survivors(results: list[StageResult], verbose: bool = False) -> str:
    lines = []
    if verbose:
        for r in results:
            for o in r.outcomes:
                if o.status == "equivalent" and o.seen_elsewhere:
                    lines.append(f"{o.mutation.short()}  [equivalent in its part; another part's check sees it: "
                                 f"{', '.join(o.seen_elsewhere)}]")
    for r in results:
        for o in r.survivors:
            m = o.mutation
            why = r.justified.get(m.key)
            lines.append(f"{m.short()}" + (f"  [justified: {why}]" if why else "  [NOT JUSTIFIED]"))
            if verbose:
                lines.append(f"    differs from the solution on: {', '.join(o.differs)}")
                if not why:
                    lines.append("    AUTHORING.md row: " + justification_row(m))
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m minigrad.course mutate",
                                     description="Mutation testing of the stages' checks (see minigrad/course/mutation/).")
    add_arguments(parser)
    return run_cli(parser.parse_args(argv))


def add_arguments(parser) -> None:
    parser.add_argument("--stages", default="", help="comma-separated stage numbers or names (default: all)")
    parser.add_argument("--cap", type=_caps, default={}, metavar="N[,NN=M...]",
                        help="at most N mutants per part, drawn with --seed (NN=M: M for stage NN), e.g. 20,07=4")
    parser.add_argument("--seed", type=int, default=0, help="seed of the sample drawn under --cap")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="mutants run at once (forked children)")
    parser.add_argument("--report", action="store_true",
                        help="also list where each survivor differs, with a row for AUTHORING.md's table")
    parser.add_argument("--list", action="store_true", help="only list the mutants generated, run nothing")
    parser.add_argument("--root", type=Path, default=None, help="the course checkout (default: this one)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="also write every mutant's outcome (status, lost checks, feedback) to PATH")


def use_fork_safe_threads() -> None:
    """Numba's ``workqueue`` threading layer: the children forked after a ``parallel=True`` kernel ran
    in this process can run it too (GNU OpenMP's layer terminates them). Only before the first launch.
    And PyTorch (stage 12's checks compare with it) on one thread: once its GNU OpenMP team has run
    here, a forked child's first parallel region waits forever for threads it does not have."""
    os.environ["NUMBA_THREADING_LAYER"] = "workqueue"
    if "numba" in sys.modules:
        sys.modules["numba"].config.THREADING_LAYER = "workqueue"
    os.environ["OMP_NUM_THREADS"] = "1"
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _caps(text: str) -> dict:
    """``"20,07=4"`` -> ``{"": 20, "07": 4}``: a cap for every stage, and stages' own."""
    caps = {}
    for item in text.split(","):
        stage, _, value = item.rpartition("=")
        caps[stage.strip()] = int(value)
    return caps


def run_cli(args) -> int:
    use_fork_safe_threads()
    root = args.root or course_root()
    keys = sorted(p.stem for p in (root / "solutions").glob("[0-9][0-9]_*.ipynb"))
    if args.stages:
        wanted = [s.strip() for s in args.stages.split(",") if s.strip()]
        keys = [k for k in keys if any(k == w or k[:2] == w or k[3:] == w for w in wanted)]
    if args.list:
        for key in keys:
            runner = StageRunner(key, root)
            for part, source in runner.sources().items():
                for m in sample(generate(runner.key, part, source), args.cap.get(key[:2], args.cap.get("")),
                                args.seed):
                    print(m.short())
        return 0
    results = []
    justified = read_justifications(root)
    for key in keys:
        start = time.monotonic()
        result = run_stage_mutants(key, root, args.cap.get(key[:2], args.cap.get("")), args.seed, args.jobs,
                                   justified)
        results.append(result)
        print(f"{key}: {len(result.outcomes)} mutants in {time.monotonic() - start:.0f} s", file=sys.stderr)
    print(format_table(results))
    if args.json:
        args.json.write_text(json.dumps([outcome_dict(o) for r in results for o in r.outcomes], indent=1))
    survivors = format_survivors(results, verbose=args.report)
    if survivors:
        print("\nsurvivors (stage part operator line: solution -> mutant)"
              + (", and equivalents that another part's check sees:" if args.report else ":"))
        print(survivors)
    return 0 if all(not r.unjustified for r in results) else 1

