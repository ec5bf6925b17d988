"""A trusted helper process that computes reference observations and judges.

The grader keeps one per parallel slot (``JudgeClient``). It never runs learner
code: it receives observations (plain JSON, already schema-checked by the grader),
computes the same probes on the stage's ``reference()`` from the same seeds, and
returns the judge's verdict. It is a separate process so that a judge fed
adversarial data (a huge order, say) can be stopped after a time limit without
stopping the grader, and so that minigrad's global state (grad mode, the engine's
order function) is never shared between threads.

Protocol: one JSON request per line on stdin, one JSON reply per line on the
original stdout (anything printed while judging goes to stderr). ``reference``
returns a stage's reference observations for a seed (the grader computes them once
per batch and passes them back with each ``judge`` request, so every worker
judges against the same data).
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

WORKER_SCRIPT = Path(__file__).resolve()


class JudgeError(Exception):
    """The judge could not give a verdict (timed out, crashed, or the reference failed)."""


class JudgeClient:
    """The grader's handle on one worker process; restarted after a timeout or crash."""

    def __init__(self, package_root: str, numba_cache: str | None = None, log_path: str | None = None) -> None:
        self.package_root, self.numba_cache, self.log_path = package_root, numba_cache, log_path
        self.proc: subprocess.Popen | None = None
        self._buffer = b""

    def _start(self) -> None:
        env = dict(os.environ)
        if self.numba_cache:
            env["NUMBA_CACHE_DIR"] = self.numba_cache
        log = open(self.log_path, "ab") if self.log_path else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen([sys.executable, "-I", "-B", str(WORKER_SCRIPT), self.package_root],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, env=env,
                                         start_new_session=True)
        finally:
            if log is not subprocess.DEVNULL:
                log.close()
        self._buffer = b""

    def call(self, request: dict, timeout: float) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        try:
            self.proc.stdin.write(json.dumps(request, allow_nan=True).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError as e:
            self.close()
            raise JudgeError(f"the judge process is gone ({e})") from None
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                self.close()
                raise JudgeError(f"judging took longer than {timeout:g} s")
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if ready:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    self.close()
                    raise JudgeError("the judge process exited")
                self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        reply = json.loads(line)
        if not reply.get("ok"):
            raise JudgeError(reply.get("error", "unknown error"))
        return reply

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, 9)
            except (ProcessLookupError, PermissionError):
                pass
            self.proc.wait()
            for stream in (self.proc.stdin, self.proc.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
            self.proc = None


def main() -> None:
    sys.path.insert(0, sys.argv[1])
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # prints from references go to stderr, never into the protocol
    sys.stdout = sys.stderr

    import traceback

    from minigrad.course.checks import check_seed, judge, observe, roundtrip
    from minigrad.course.stages import get_stage

    stages: dict = {}
    references: dict = {}  # (stage, check, seed) -> observation

    def reference(stage_key: str, check, seed: int) -> dict:
        key = (stage_key, check.id, seed)
        if key not in references:
            stage, namespace = stages[stage_key]
            references[key] = roundtrip(observe(check, namespace, seed))
        return references[key]

    for line in sys.stdin:
        try:
            request = json.loads(line)
            key = request["stage"]
            if key not in stages:
                stage = get_stage(key)
                stages[key] = (stage, stage.reference())
            stage, _ = stages[key]
            by_id = {c.id: c for c in stage.checks}
            if request["op"] == "reference":
                seed = int(request["seed"])
                reply = {"ok": True, "references": {c.id: reference(key, c, check_seed(seed, c.id))
                                                    for c in stage.checks}}
            else:
                check = by_id[request["check"]]
                seed = check_seed(int(request["seed"]), check.id)
                expected = request.get("reference") or reference(key, check, seed)
                if expected.get("status") != "ok":
                    raise RuntimeError(f"the reference implementation failed check {check.id}: {expected}")
                try:
                    verdict = judge(check, request["observation"], expected)
                    reply = {"ok": True, "passed": bool(verdict.passed), "feedback": str(verdict.feedback)}
                except Exception as e:  # noqa: BLE001 - data the judge cannot read: the learner's, not ours
                    reply = {"ok": True, "passed": False, "malformed": True,
                             "feedback": f"{type(e).__name__}: {str(e)[:200]}"}
        except Exception:  # noqa: BLE001 - reported to the grader, which records a grading error
            reply = {"ok": False, "error": traceback.format_exc()[-3000:]}
        out.write(json.dumps(reply, allow_nan=True) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
