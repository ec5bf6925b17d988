"""Worksheet 12's closing measurement, reproducibly: its code cells run as a script, with the
training budget counted in CPU seconds of this process instead of wall-clock seconds.

On a machine shared with other work, wall-clock time depends on the load, so "4 minutes of
training" gives a different model each run; CPU time is what one dedicated core gives (BLAS on
one thread, as the course's measurements). The script takes the worksheet's code cells from
solutions/12_attention.ipynb (the self-check cells left out), changes only the clock of the
training loop, and prints what the worksheet prints: steps, ms per step, held-out bits per
character on all 39,936 held-out characters, the share of sampled words found in the text, and
the wall-clock time it took.

    OPENBLAS_NUM_THREADS=1 python bench/capstone_measure.py           # mine(..) reads exercises/ (blank: shipped)
    OPENBLAS_NUM_THREADS=1 python bench/capstone_measure.py --course solutions   # every piece the solutions'
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def script(course: Path) -> str:
    cells = json.loads((ROOT / "solutions" / "12_attention.ipynb").read_text(encoding="utf-8"))["cells"]
    code = "\n\n".join("".join(c["source"]) for c in cells
                       if c["cell_type"] == "code" and not "".join(c["source"]).startswith("check("))
    swaps = [("from minigrad.course import check\n", ""),
             ('mine("..")', f"mine({str(course)!r})"),
             ("step, start, last_sample = 0, time.perf_counter(), 0.0",
              "step, start, last_sample = 0, time.process_time(), 0.0\n    wall0 = time.perf_counter()"),
             ("(elapsed := time.perf_counter() - start) < SECONDS", "(elapsed := time.process_time() - start) < SECONDS"),
             ("train_seconds = time.perf_counter() - start",
              "train_seconds = time.process_time() - start\n"
              "print(f'training: {time.perf_counter() - wall0:.0f} s of wall-clock time for {train_seconds:.0f} s of CPU')")]
    for old, new in swaps:
        if old not in code:
            raise SystemExit(f"solutions/12_attention.ipynb changed: {old!r} is no longer in its code; update {__file__}")
        code = code.replace(old, new)
    return code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--course", default=".", help="the folder mine() reads worksheets from (default: the repository, "
                                                       "whose exercises/ are blank)")
    args = parser.parse_args()
    os.environ.pop("MINIGRAD_COURSE_FAST", None)
    exec(compile(script((ROOT / args.course).resolve()), "worksheet-12", "exec"), {"__name__": "__worksheet__"})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
