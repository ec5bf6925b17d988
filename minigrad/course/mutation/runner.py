"""Running mutants: the solved worksheet run once in this process (``StageRunner``), each mutant in a
forked child of it, sorted into equivalent, killed and survived."""
from __future__ import annotations

import json
import os
import random
import select
import signal
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from minigrad.course.mutation.justified import course_root, read_justifications
from minigrad.course.mutation.operators import Mutation, generate

EQUIVALENCE_SEEDS = (0, 1, 2, 3)  # run seeds: 0 is the grader's default
GRADING_SEED = 0


@dataclass
class Outcome:
    mutation: Mutation
    status: str  # equivalent | killed | survived | timeout | crashed
    lost: list[str] = field(default_factory=list)  # checks of the part that did not pass
    feedback: dict[str, str] = field(default_factory=dict)
    differs: list[str] = field(default_factory=list)  # checks whose observations differ from the solution's
    seconds: float = 0.0
    seen_elsewhere: list[str] = field(default_factory=list)

    @property
    def killed(self) -> bool:
        return self.status in ("killed", "timeout", "crashed")


@dataclass
class StageResult:
    stage: str
    generated: int
    outcomes: list[Outcome]
    justified: dict[tuple, str] = field(default_factory=dict)

    def count(self, *statuses: str) -> int:
        return sum(o.status in statuses for o in self.outcomes)

    @property
    def killed(self) -> int:
        return self.count("killed", "timeout", "crashed")

    @property
    def survivors(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "survived"]

    @property
    def unjustified(self) -> list[Outcome]:
        return [o for o in self.survivors if o.mutation.key not in self.justified]

    @property
    def score(self) -> float:
        """Killed share of the non-equivalent mutants, counting justified survivors as killed."""
        live = self.killed + len(self.survivors)
        return 1.0 if live == 0 else (self.killed + len(self.survivors) - len(self.unjustified)) / live


def _same(a, b, mask: set, path: str = "") -> bool:
    if path in mask:
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k], mask, f"{path}/{k}") for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y, mask, f"{path}/{i}") for i, (x, y) in enumerate(zip(a, b)))
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) \
                or not isinstance(b, (int, float)):
            return False
        if a != a or b != b:
            return a != a and b != b
        return abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))
    return type(a) is type(b) and a == b


def _noisy_paths(a, b, path: str = "") -> set:
    """Paths where two runs of the same code differ (timings, object ids): ignored when comparing."""
    if isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys():
        return set().union(*(_noisy_paths(a[k], b[k], f"{path}/{k}") for k in a)) if a else set()
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return set().union(*(_noisy_paths(x, y, f"{path}/{i}") for i, (x, y) in enumerate(zip(a, b)))) if a else set()
    return set() if _same(a, b, set()) else {path}


class StageRunner:
    """One stage: the solved worksheet run once in this process; each mutant in a forked child."""

    def __init__(self, stage_key: str, root: Path) -> None:
        from minigrad.course.checks import check_seed, observe, roundtrip
        from minigrad.course.program import build_program, load_notebook
        from minigrad.course.stages import get_stage

        (self.path,) = sorted((root / "solutions").glob(f"{stage_key}*.ipynb"))
        self.key = self.path.stem
        self.stage = get_stage(self.key)
        self.template = load_notebook(self.path)
        self.program = build_program(self.template, {})
        self.namespace = None
        self._check_seed, self._observe, self._roundtrip = check_seed, observe, roundtrip
        self.checks = {c.id: c for c in self.stage.checks}

    def sources(self) -> dict[str, str]:
        return {cell.grade_id: cell.source for cell in self.program if cell.grade_id in self.stage.parts}

    def part_checks(self, part: str) -> list:
        return [c for c in self.stage.checks if c.part == part]

    def closure(self, part: str) -> list:
        """The part's checks and every check they need, in the stage's order."""
        wanted = {c.id for c in self.part_checks(part)}
        changed = True
        while changed:
            changed = False
            for c in self.stage.checks:
                if c.id in wanted:
                    for need in c.needs:
                        if need not in wanted:
                            wanted.add(need)
                            changed = True
        return [c for c in self.stage.checks if c.id in wanted]

    def prepare(self) -> None:
        """Run the solved worksheet, then probe it and the reference (what the mutants are compared with)."""
        from minigrad.course.program import execute_program

        with _quiet():
            self.namespace, errors = execute_program(self.program)
        if errors:
            raise RuntimeError(f"{self.key}: the solved worksheet fails: {[e.describe() for e in errors]}")
        with _quiet():
            reference_ns = self.stage.reference()
            self.reference = {c.id: self._roundtrip(self._observe(c, reference_ns, self._check_seed(GRADING_SEED, c.id)))
                              for c in self.stage.checks}
            self.solution, self.noise, self.seconds = {}, {}, {}
            for c in self.stage.checks:
                start = time.perf_counter()
                for s in EQUIVALENCE_SEEDS:
                    first = self._roundtrip(self._observe(c, self.namespace, self._check_seed(s, c.id)))
                    second = self._roundtrip(self._observe(c, self.namespace, self._check_seed(s, c.id)))
                    self.solution[c.id, s] = first
                    self.noise[c.id, s] = _noisy_paths(first, second)
                self.seconds[c.id] = (time.perf_counter() - start) / (2 * len(EQUIVALENCE_SEEDS))

    def timeout(self, part: str) -> float:
        return 20.0 + 10 * sum(self.seconds[c.id] for c in self.closure(part)) * len(EQUIVALENCE_SEEDS)

    # -- in the child ------------------------------------------------------------------------
    def evaluate(self, mutation: Mutation) -> dict:
        """Run one mutant (in a forked child): its cell and the cells after it, then its part's probes."""
        from minigrad.course.checks import judge
        from minigrad.course.program import ProgramCell, execute_program

        index = next(i for i, cell in enumerate(self.program) if cell.grade_id == mutation.part)
        cells = [ProgramCell(self.program[index].index, mutation.part, mutation.source), *self.program[index + 1:]]
        namespace = self.namespace
        _, errors = execute_program(cells, namespace)
        passed: set[str] = set()
        lost, feedback, differs = [], {}, []
        observations = {}
        for check in self.closure(mutation.part):
            if any(n not in passed for n in check.needs):
                if check.part == mutation.part:
                    lost.append(check.id)
                    feedback[check.id] = "not run: needs " + ", ".join(n for n in check.needs if n not in passed)
                continue
            observation = self._roundtrip(self._observe(check, namespace, self._check_seed(GRADING_SEED, check.id)))
            observations[check.id, GRADING_SEED] = observation
            verdict = judge(check, observation, self.reference[check.id])
            if verdict.passed:
                passed.add(check.id)
            elif check.part == mutation.part:
                lost.append(check.id)
                feedback[check.id] = verdict.feedback
            else:
                feedback[check.id] = verdict.feedback
        if lost:
            return {"status": "killed", "lost": lost, "feedback": feedback, "errors": [e.describe() for e in errors]}
        for check in self.part_checks(mutation.part):
            for s in EQUIVALENCE_SEEDS:
                observation = observations.get((check.id, s))
                if observation is None:
                    observation = self._roundtrip(self._observe(check, namespace, self._check_seed(s, check.id)))
                if not _same(observation, self.solution[check.id, s], self.noise[check.id, s]):
                    differs.append(f"{check.id} (run seed {s})")
                    break
        if not differs:  # equivalent on its part's probes: do the other parts' probes see it? (for authors)
            for check in self.stage.checks:
                if check.part == mutation.part:
                    continue
                observation = self._roundtrip(self._observe(check, namespace, self._check_seed(GRADING_SEED, check.id)))
                if not _same(observation, self.solution[check.id, GRADING_SEED], self.noise[check.id, GRADING_SEED]):
                    differs.append(f"{check.id} (another part's check)")
            return {"status": "equivalent", "lost": [], "feedback": feedback, "seen_elsewhere": differs,
                    "errors": [e.describe() for e in errors]}
        return {"status": "survived" if differs else "equivalent", "lost": [], "feedback": feedback,
                "differs": differs, "errors": [e.describe() for e in errors]}


class _quiet:
    """Send stdout and stderr (file descriptors too: Numba, C code) to /dev/null for a while."""

    def __enter__(self):
        sys.stdout.flush()
        sys.stderr.flush()
        self.saved = (os.dup(1), os.dup(2))
        self.py = (sys.stdout, sys.stderr)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
        sys.stdout = sys.stderr = open(os.devnull, "w")
        return self

    def __exit__(self, *exc):
        sys.stdout.close()
        sys.stdout, sys.stderr = self.py
        os.dup2(self.saved[0], 1)
        os.dup2(self.saved[1], 2)
        os.close(self.saved[0])
        os.close(self.saved[1])
        return False


def _run_children(runner: StageRunner, mutations: list[Mutation], jobs: int) -> list[Outcome]:
    """Each mutation in a forked child, ``jobs`` at a time; a child that hangs is killed at its timeout."""
    pending = list(enumerate(mutations))
    running: dict[int, tuple] = {}  # read fd -> (index, pid, started, chunks)
    results: dict[int, Outcome] = {}
    while pending or running:
        while pending and len(running) < jobs:
            index, mutation = pending.pop(0)
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child
                os.close(read)
                code = 0
                try:
                    signal.signal(signal.SIGINT, signal.SIG_DFL)
                    null = os.open(os.devnull, os.O_WRONLY)
                    os.dup2(null, 1)
                    os.dup2(null, 2)
                    sys.setrecursionlimit(max(sys.getrecursionlimit(), 3000))
                    try:
                        data = runner.evaluate(mutation)
                    except BaseException as e:  # noqa: BLE001 - whatever the mutant did
                        data = {"status": "crashed", "lost": [], "feedback": {"": f"{type(e).__name__}: {e}"[:300]}}
                    payload = json.dumps(data, default=str).encode()
                    view = memoryview(payload)
                    while view:
                        view = view[os.write(write, view):]
                except BaseException:  # noqa: BLE001
                    code = 1
                finally:
                    os._exit(code)
            os.close(write)
            running[read] = (index, pid, time.monotonic(), [])
        ready, _, _ = select.select(list(running), [], [], 0.2)
        for fd in ready:
            chunk = os.read(fd, 1 << 16)
            if chunk:
                running[fd][3].append(chunk)
                continue
            index, pid, started, chunks = running.pop(fd)
            os.close(fd)
            _, status = os.waitpid(pid, 0)
            mutation = mutations[index]
            try:
                data = json.loads(b"".join(chunks))
            except ValueError:
                data = {"status": "crashed", "lost": [], "feedback": {"": f"the child died (wait status {status})"}}
            results[index] = Outcome(mutation, data["status"], data.get("lost", []), data.get("feedback", {}),
                                     data.get("differs", []), time.monotonic() - started,
                                     data.get("seen_elsewhere", []))
        now = time.monotonic()
        for fd, (index, pid, started, chunks) in list(running.items()):
            if now - started > runner.timeout(mutations[index].part):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                os.close(fd)
                del running[fd]
                results[index] = Outcome(mutations[index], "timeout", [], {}, [], now - started)
    return [results[i] for i in range(len(mutations))]


def sample(mutations: list[Mutation], cap: int | None, seed: int) -> list[Mutation]:
    """At most ``cap`` mutants of each part, drawn with a fixed seed (the same draw on every machine)."""
    if cap is None:
        return mutations
    by_part: dict[str, list[Mutation]] = {}
    for m in mutations:
        by_part.setdefault(m.part, []).append(m)
    chosen = []
    for part, found in by_part.items():
        if len(found) <= cap:
            chosen += found
        else:
            rng = random.Random(f"{seed}:{found[0].stage}:{part}")
            picked = sorted(rng.sample(range(len(found)), cap))
            chosen += [found[i] for i in picked]
    return chosen


def run_stage_mutants(stage_key: str, root: Path | None = None, cap: int | None = None, seed: int = 0,
                      jobs: int = 1, justified: dict | None = None) -> StageResult:
    root = Path(root) if root else course_root()
    runner = StageRunner(stage_key, root)
    generated = []
    for part, source in runner.sources().items():
        generated += generate(runner.key, part, source)
    chosen = sample(generated, cap, seed)
    runner.prepare()
    outcomes = _run_children(runner, chosen, max(1, jobs))
    return StageResult(runner.key, len(generated), outcomes,
                       justified if justified is not None else read_justifications(root))

