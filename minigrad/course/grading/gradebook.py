"""The class gradebook: every learner's graded stages, kept across runs, in SQLite.

``OUT/gradebook.sqlite`` holds one row per (learner, stage) with the stage's full
result, one row per learner (the problems of their latest run), and the
assignment's stages with their points. A run *adds or updates* the learners and
stages it graded and never drops the others: grading one late submitter, or a
shard of the class, leaves everyone else as they were. ``gradebook.csv`` and
``results/LEARNER.json`` are exports of the store, rewritten atomically.

Runs against the same output folder (several terminals, or shards on a shared
file system) take ``OUT/.gradebook.lock`` (an exclusive ``flock``) around every
change and export, so the store, the CSV and the JSON files agree with each other.
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path

STORE = "gradebook.sqlite"
CSV = "gradebook.csv"
LOCK = ".gradebook.lock"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS stages (
    learner TEXT NOT NULL, stage TEXT NOT NULL, result TEXT NOT NULL, recorded REAL NOT NULL,
    PRIMARY KEY (learner, stage));
CREATE TABLE IF NOT EXISTS learners (
    learner TEXT PRIMARY KEY, record TEXT NOT NULL, recorded REAL NOT NULL);
CREATE TABLE IF NOT EXISTS assignment (stage TEXT PRIMARY KEY, points REAL NOT NULL);
"""


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold ``OUT/.gradebook.lock`` exclusively (blocks until other runs are done writing)."""
    out.mkdir(parents=True, exist_ok=True)
    fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            import fcntl
        except ImportError:  # Windows: SQLite's own locking still keeps the store whole
            yield
            return
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class Gradebook:
    """The store in ``out``. Every method that writes takes the lock itself."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        self.path = self.out / STORE

    def _connect(self) -> sqlite3.Connection:
        self.out.mkdir(parents=True, exist_ok=True)
        if not self.path.exists():  # the instructor's alone: SQLite gives its journal the same mode
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
        conn = sqlite3.connect(self.path, timeout=300)
        conn.executescript(_SCHEMA)
        return conn

    # -- writing ---------------------------------------------------------------------------
    def record(self, summary: dict, assignment: dict[str, float]) -> dict:
        """Add or update one learner's graded stages; return their whole record (every stage
        stored so far) and write it to ``results/LEARNER.json``."""
        with locked(self.out):
            conn = self._connect()
            try:
                with conn:
                    self._record(conn, summary, assignment)
                record = self._learner(conn, summary["learner"])
            finally:
                conn.close()
            write_json(self.out / "results" / f"{safe_name(record['learner'])}.json", record)
        return record

    @staticmethod
    def _record(conn: sqlite3.Connection, summary: dict, assignment: dict[str, float],
                recorded: float | None = None) -> None:
        now = time.time() if recorded is None else recorded
        name = summary["learner"]
        conn.executemany("INSERT OR REPLACE INTO assignment VALUES (?, ?)", sorted(assignment.items()))
        for key, result in summary["stages"].items():
            conn.execute("INSERT OR REPLACE INTO stages VALUES (?, ?, ?, ?)",
                         (name, key, json.dumps(result, allow_nan=True), now))
        learner = {k: summary.get(k) for k in ("seed", "grader_version", "problems", "ungraded", "notebooks")}
        conn.execute("INSERT OR REPLACE INTO learners VALUES (?, ?, ?)", (name, json.dumps(learner), now))

    def merge(self, sources: Iterable[Path]) -> int:
        """Copy every learner of other stores into this one (the most recently recorded row
        wins where both hold the same learner and stage); return how many learners were read."""
        count = 0
        with locked(self.out):
            conn = self._connect()
            try:
                with conn:
                    for source in sources:
                        path = Path(source) / STORE if Path(source).is_dir() else Path(source)
                        if not path.is_file():
                            raise FileNotFoundError(f"no gradebook store {path}: was that folder graded "
                                                    "(minigrad-grade ... --out FOLDER)?")
                        other = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=300)
                        try:
                            conn.executemany("INSERT OR REPLACE INTO assignment VALUES (?, ?)",
                                             other.execute("SELECT stage, points FROM assignment"))
                            for row in other.execute("SELECT learner, stage, result, recorded FROM stages"):
                                conn.execute("INSERT INTO stages VALUES (?, ?, ?, ?) ON CONFLICT (learner, stage) "
                                             "DO UPDATE SET result = excluded.result, recorded = excluded.recorded "
                                             "WHERE excluded.recorded >= stages.recorded", row)
                            for row in other.execute("SELECT learner, record, recorded FROM learners"):
                                count += 1
                                conn.execute("INSERT INTO learners VALUES (?, ?, ?) ON CONFLICT (learner) "
                                             "DO UPDATE SET record = excluded.record, recorded = excluded.recorded "
                                             "WHERE excluded.recorded >= learners.recorded", row)
                        finally:
                            other.close()
                for record in self._all(conn):
                    write_json(self.out / "results" / f"{safe_name(record['learner'])}.json", record)
            finally:
                conn.close()
        return count

    def export_csv(self) -> Path:
        """Rewrite ``gradebook.csv`` from the store (all learners), atomically."""
        with locked(self.out):
            conn = self._connect()
            try:
                records, stages = self._all(conn), self._stages(conn)
            finally:
                conn.close()
            path = self.out / CSV
            write_private(path, gradebook_csv(records, list(stages)))
        return path

    # -- reading ---------------------------------------------------------------------------
    def learners(self) -> list[dict]:
        """Every learner's record, sorted by name."""
        if not self.path.is_file():
            return []
        conn = self._connect()
        try:
            return self._all(conn)
        finally:
            conn.close()

    def stages(self) -> dict[str, float]:
        """The assignment: stage key -> points, in stage order."""
        if not self.path.is_file():
            return {}
        conn = self._connect()
        try:
            return self._stages(conn)
        finally:
            conn.close()

    @staticmethod
    def _stages(conn: sqlite3.Connection) -> dict[str, float]:
        return dict(conn.execute("SELECT stage, points FROM assignment ORDER BY stage"))

    def _all(self, conn: sqlite3.Connection) -> list[dict]:
        names = [row[0] for row in conn.execute("SELECT learner FROM learners ORDER BY learner")]
        return [self._learner(conn, name) for name in names]

    def _learner(self, conn: sqlite3.Connection, name: str) -> dict:
        """One learner's record, in the shape of ``grader.summarize``'s summary."""
        (text,) = conn.execute("SELECT record FROM learners WHERE learner = ?", (name,)).fetchone()
        record = json.loads(text)
        assignment = self._stages(conn)
        stages = {key: json.loads(result) for key, result in conn.execute(
            "SELECT stage, result FROM stages WHERE learner = ? ORDER BY stage", (name,))}
        flags = [{**flag, "stage": key} for key, result in stages.items() for flag in result.get("flags", [])]
        return {"learner": name, **record,
                "total": sum(r["points"] for k, r in stages.items() if k in assignment),
                "max_total": sum(assignment.values()),
                "isolation": isolation_of(stages.values()),
                "stages": stages, "flags": flags}


def isolation_of(results: Iterable[dict]) -> str:
    """The weakest isolation any of these stage results was graded under: ``full`` only if all were."""
    levels = {(r.get("isolation") or {}).get("level", "unknown") for r in results}
    if not levels:
        return ""
    return "full" if levels == {"full"} else ("none" if "none" in levels else "unknown")


def safe_name(name: str) -> str:
    import re

    cleaned = re.sub(r"[^A-Za-z0-9._@+-]+", "_", name).strip("._") or "learner"
    return cleaned[:120]


def write_json(path: Path, data) -> None:
    write_private(path, json.dumps(data, indent=1, allow_nan=True))


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable and writable by the grader's user only
    (0600): learners' results are not for other users of the machine, nor for a sandboxed child."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o600)  # O_CREAT's mode passes through the umask; it can only take bits away
    os.replace(tmp, path)


def gradebook_csv(summaries: list[dict], stage_keys: list[str]) -> str:
    """One row per learner: a column per stage (empty when not submitted), the total, the
    assignment's maximum, the isolation the work was graded under (when recorded), review
    flags and problems."""
    from minigrad.course.review import describe_flag

    with_isolation = any("isolation" in s for s in summaries)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["learner", *stage_keys, "total", "max_total", *(["isolation"] * with_isolation),
                     "review", "problems"])
    for s in sorted(summaries, key=lambda s: s["learner"]):
        row = [s["learner"]]
        for key in stage_keys:
            row.append(f"{s['stages'][key]['points']:g}" if key in s["stages"] else "")
        flags = "; ".join(f"{f['stage']}: {describe_flag(f)}" for f in s["flags"][:5])
        row += [f"{s['total']:g}", f"{s['max_total']:g}", *([s.get("isolation", "")] * with_isolation),
                flags, "; ".join(s["problems"])[:500]]
        writer.writerow(row)
    return out.getvalue()


__all__ = ["Gradebook", "gradebook_csv", "isolation_of", "locked", "safe_name", "write_json", "write_private", "STORE", "CSV"]
