"""The command-line options both grading commands share: the limits of each sandboxed child,
and the exit codes.

``minigrad-grade`` and ``minigrad-grade gradescope`` take the same limit flags. They live
here, below both commands, so that neither command module imports the other.
"""
from __future__ import annotations

import argparse

from minigrad.course.grading.sandbox import Limits

__all__ = ["add_limit_options", "limits_from", "EXIT_OK", "EXIT_UNGRADED", "EXIT_USAGE", "EXIT_INTERRUPTED"]

# 0 all graded; 1 some submission could not be graded; 2 usage error or isolation unavailable;
# 130 interrupted (rerun to resume)
EXIT_OK, EXIT_UNGRADED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def add_limit_options(parser: argparse.ArgumentParser) -> None:
    """Add ``--cpu``, ``--wall``, ``--memory``, ``--restarts``, ``--isolation`` and ``--python``."""
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
    group.add_argument("--isolation", choices=("full", "none", "auto", "require"), default="full",
                       help="full (default): learner code runs with no network and as an unprivileged user, "
                            "or the grader refuses and says how to fix the machine; none: resource limits only "
                            "(learner code runs as you, with network: for trusted code). auto and require are "
                            "older names for full")
    group.add_argument("--python", metavar="PATH",
                       help="the interpreter of the sandboxed children (default: the grader's own); it must "
                            "import numpy, numba and this minigrad, and be readable by other users")


def limits_from(args: argparse.Namespace) -> Limits:
    """The ``Limits`` those options ask for; ``ValueError`` (for ``parser.error``) when they make no sense."""
    if min(args.cpu, args.wall) <= 0 or args.memory < 64 or args.restarts < 0:
        raise ValueError("limits must be positive (--memory at least 64 MB)")
    return Limits(cpu_seconds=args.cpu, wall_seconds=args.wall, memory_mb=args.memory, restarts=args.restarts)
