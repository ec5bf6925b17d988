"""The child side of the grader's sandbox: run one worksheet program and its probes.

Started by ``minigrad.course.grading.sandbox`` as a *script* (``python -I -B sandbox_child.py
JOB CMD_FD RES_FD``), so nothing but the standard library is imported until the
trusted bootstrap below has done its work, in this order:

1. read the job file (written by the grader) and delete it;
2. enter a new network namespace if asked (``unshare(CLONE_NEWNET)`` as root; an
   ordinary user enters a user namespace of its own too, mapped to its own uid), and with
   it a mount namespace of its own in which the paths the job names in ``hide`` (the
   submissions, the gradebook, the results cache) are covered: an empty read-only tmpfs
   over a folder, ``/dev/null`` over a file;
3. set the POSIX resource limits (CPU time, address space, file size, processes,
   open files, no core dumps);
4. drop to an unprivileged uid/gid if asked (root only), and set no_new_privs;
5. send ``hello`` with what was actually applied, *before any learner code runs*.

Only then does it import minigrad and the stage, run the program's cells (the
trusted template with the learner's solution cells), and answer the parent's
``check`` commands with observations: plain data, one JSON line each, on the
private pipe ``RES_FD``. It never decides a verdict: the parent judges.

Everything from here on shares the process with the learner's code, which can
tamper with it; the parent treats every message after ``hello`` as untrusted.
"""
from __future__ import annotations

import json
import os
import sys
import time

_write = os.write
_dumps = json.dumps
_monotonic = time.monotonic
_exit = os._exit

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNS = 0x00020000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 4096, 16384, 1 << 18
PR_SET_NO_NEW_PRIVS = 38
AUTOGRAD_LIBRARIES = ("torch", "jax", "jaxlib", "tensorflow", "autograd", "micrograd", "tinygrad",
                      "mxnet", "chainer", "theano", "paddle", "mlx", "keras", "flax", "functorch")


class Channel:
    """JSON lines to the parent on the inherited pipe."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, message: dict) -> None:
        try:
            data = _dumps(message, allow_nan=True).encode("utf-8", "replace") + b"\n"
        except Exception as e:  # noqa: BLE001 - e.g. a learner's object that slipped through
            data = _dumps({"kind": "child_error", "message": f"could not encode a message: {e!r}"[:500]}).encode() + b"\n"
        view = memoryview(data)
        while view:
            try:
                written = _write(self.fd, view)
            except InterruptedError:
                continue
            except OSError:
                _exit(70)  # the parent is gone, or the learner closed our pipe
            view = view[written:]


def _apply_isolation(job: dict) -> dict:
    """Namespaces, limits and user, as far as this machine allows; report what happened."""
    report: dict = {"requested": {k: job.get(k) for k in ("network", "uid", "gid")}}
    if job.get("network"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            uid, gid = os.getuid(), os.getgid()
            # Not root: only a user namespace of our own lets us create a network namespace.
            flags = CLONE_NEWNET if os.geteuid() == 0 else CLONE_NEWNET | CLONE_NEWUSER
            if job.get("hide") is not None:
                flags |= CLONE_NEWNS
            if libc.unshare(flags) != 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
            if flags & CLONE_NEWUSER:  # keep our own uid inside (else we would be "nobody")
                for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
                    with open(f"/proc/self/{name}", "w") as f:
                        f.write(text)
            report["network"] = "none (new network namespace)" + (" in a user namespace" if flags & CLONE_NEWUSER else "")
            if flags & CLONE_NEWNS:
                report["files"] = _hide(libc, job["hide"])
        except Exception as e:  # noqa: BLE001
            report.setdefault("network", f"not isolated ({e})")
            if job.get("hide") is not None:
                report.setdefault("files", f"not hidden ({e})")
    else:
        report["network"] = "not isolated"

    import resource

    limits = job.get("limits", {})
    applied = {}
    wanted = {
        "RLIMIT_CPU": (limits.get("cpu_seconds"), limits.get("cpu_seconds") and limits["cpu_seconds"] + 2),
        "RLIMIT_AS": (limits.get("memory_bytes"),) * 2,
        "RLIMIT_FSIZE": (limits.get("file_bytes"),) * 2,
        "RLIMIT_NPROC": (limits.get("processes"),) * 2,
        "RLIMIT_NOFILE": (limits.get("open_files"),) * 2,
        "RLIMIT_CORE": (0, 0),
    }
    for name, (soft, hard) in wanted.items():
        if soft is None or not hasattr(resource, name):
            continue
        try:
            resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))
            applied[name] = int(soft)
        except (ValueError, OSError) as e:
            applied[name] = f"not set ({e})"
    report["limits"] = applied

    uid, gid = job.get("uid"), job.get("gid")
    if uid is not None:
        try:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
            report["user"] = f"uid {uid} (unprivileged)"
        except OSError as e:
            report["user"] = f"could not drop to uid {uid}: {e}"
    report["uid"] = os.getuid()
    if uid is None and os.getuid() != 0 and job.get("hide") is not None:
        # An ordinary user keeps every capability inside its own user namespace, enough to
        # unmount what hides the other submissions: drop them all (root's setuid above does).
        report["capabilities"] = _drop_capabilities()
    if "user" not in report:
        report["user"] = "root" if os.getuid() == 0 else f"uid {os.getuid()} (same user as the grader)"
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
        report["no_new_privs"] = True
    except Exception:  # noqa: BLE001
        report["no_new_privs"] = False
    return report


def _hide(libc, paths: list) -> str:
    """Cover ``paths`` in this (new, private) mount namespace; say what was done."""
    import ctypes

    def check(result: int, what: str) -> None:
        if result != 0:
            raise OSError(ctypes.get_errno(), f"{what}: {os.strerror(ctypes.get_errno())}")

    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making the mounts private")
    covered = 0
    for path in paths:
        target = os.fsencode(path)
        if os.path.isdir(path):
            check(libc.mount(b"tmpfs", target, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                             b"size=4k,mode=0"), f"covering {path}")
        elif os.path.lexists(path):
            check(libc.mount(b"/dev/null", target, None, MS_BIND, None), f"covering {path}")
        else:
            continue
        covered += 1
    return f"hidden ({covered} of {len(paths)} paths covered)"


def _drop_capabilities() -> str:
    """capset(2) to nothing: effective, permitted and inheritable, both 32-bit words."""
    import ctypes

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]

    libc = ctypes.CDLL(None, use_errno=True)
    header, data = Header(0x20080522, 0), (Data * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        return f"not dropped ({os.strerror(ctypes.get_errno())})"
    return "none"


def _error_line(error: BaseException, filename: str) -> int | None:
    import traceback

    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    return frames[-1].lineno if frames else None


def _describe(error: BaseException) -> str:
    if isinstance(error, SystemExit):
        return f"sys.exit({error.code!r}) was called"
    try:
        return str(error)[:500]
    except Exception:  # noqa: BLE001 - a learner's exception whose __str__ fails
        return "(the exception's message could not be shown)"


def run_cell(cell: dict, namespace: dict) -> dict | None:
    """Execute one program cell; None, or the error it raised (any BaseException)."""
    from minigrad.course.program import cell_file

    try:
        filename = cell_file(os.getcwd(), cell["grade_id"] or cell["index"], cell["source"])
        code = compile(cell["source"], filename, "exec")
    except SyntaxError as e:
        return {"type": type(e).__name__, "message": e.msg or str(e), "line": e.lineno,
                "text": (e.text or "").strip()[:200]}
    except BaseException as e:  # noqa: BLE001 - e.g. RecursionError or MemoryError in the compiler
        return {"type": type(e).__name__, "message": _describe(e), "line": None, "text": ""}
    try:
        exec(code, namespace)
    except BaseException as e:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
        return {"type": type(e).__name__, "message": _describe(e), "line": _error_line(e, filename), "text": ""}
    return None


class CallWatch:
    """Record calls, made from inside a learner's cell, to implementations it must not use.

    A best-effort, dynamic complement to the grader's static check: the learner's
    code shares this process and can undo it.
    """

    def __init__(self) -> None:
        self.events: list[dict] = []
        self._seen: set = set()

    def install(self, forbidden: dict[str, list[str]]) -> None:
        by_target: dict[str, list[str]] = {}
        for part, targets in forbidden.items():
            for target in targets:
                by_target.setdefault(target, []).append(part)
        for target, parts in by_target.items():
            owner, attr = self._resolve(target)
            if owner is None:
                continue
            original = owner.__dict__.get(attr) if isinstance(owner, type) else getattr(owner, attr)
            if original is None or not callable(original):
                continue
            setattr(owner, attr, self._wrap(original, target, tuple(parts)))

    @staticmethod
    def _resolve(target: str):
        import importlib

        pieces = target.split(".")
        for cut in range(len(pieces) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(pieces[:cut]))
            except ImportError:
                continue
            try:
                for name in pieces[cut:-1]:
                    obj = getattr(obj, name)
            except AttributeError:
                return None, None
            return (obj, pieces[-1]) if hasattr(obj, pieces[-1]) else (None, None)
        return None, None

    def _wrap(self, original, target: str, parts: tuple[str, ...]):
        from minigrad.course.program import is_cell_file

        watch, getframe = self, sys._getframe

        def watched(*args, **kwargs):
            frame = getframe(1)
            while frame is not None:
                name = frame.f_code.co_filename
                part = next((p for p in parts if is_cell_file(name, p)), None)
                if part is not None:
                    key = (target, name, frame.f_lineno)
                    if key not in watch._seen and len(watch.events) < 20:
                        watch._seen.add(key)
                        watch.events.append({"kind": "reference_call", "part": part, "line": frame.f_lineno,
                                             "detail": f"called {target} while running",
                                             "source": "dynamic"})
                    break
                frame = frame.f_back
            return original(*args, **kwargs)

        for attr in ("__name__", "__qualname__", "__doc__", "__module__", "__wrapped__"):
            try:
                setattr(watched, attr, getattr(original, attr) if attr != "__wrapped__" else original)
            except (AttributeError, TypeError):
                pass
        return watched


def _imported_libraries() -> list[str]:
    return sorted(name for name in AUTOGRAD_LIBRARIES if name in sys.modules)


def observe_safely(observe, check, namespace: dict, seed: int) -> dict:
    """``checks.observe``, plus the failures it lets through (plain-data refusals, BaseException)."""
    try:
        return observe(check, namespace, seed)
    except TypeError as e:
        message = str(e)
        if message.startswith("a probe returned"):
            kind = message.split()[3].rstrip(";")
            return {"status": "error", "type": "TypeError", "where": "",
                    "message": f"the check got a {kind} object from your code, where it expected "
                               "numbers, lists or tensors"}
        return {"status": "error", "type": "TypeError", "message": message[:500], "where": ""}
    except BaseException as e:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ...
        return {"status": "error", "type": type(e).__name__, "message": _describe(e), "where": ""}


def main(argv: list[str]) -> None:
    job_path, cmd_fd, res_fd = argv[1], int(argv[2]), int(argv[3])
    with open(job_path, encoding="utf-8") as f:
        job = json.load(f)
    os.unlink(job_path)
    channel = Channel(res_fd)
    isolation = _apply_isolation(job)
    channel.send({"kind": "hello", "pid": os.getpid(), "isolation": isolation,
                  "python": sys.version.split()[0]})
    if job.get("probe_only"):
        # Used once per grader run to learn what this machine allows: can the sandbox
        # user import the interpreter's libraries and minigrad?
        try:
            sys.path.insert(0, job["package_root"])
            import numpy  # noqa: F401

            import minigrad  # noqa: F401
            channel.send({"kind": "probe", "ok": True})
        except BaseException as e:  # noqa: BLE001
            channel.send({"kind": "probe", "ok": False, "message": f"{type(e).__name__}: {e}"[:4000]})
        _exit(0)

    # -- trusted imports, then the learner's program ---------------------------------
    sys.path.insert(0, job["package_root"])
    commands = open(cmd_fd, "rb", buffering=0, closefd=False)
    import builtins

    from minigrad.course import checks as checks_module
    from minigrad.course.stages import get_stage

    stage = get_stage(job["stage"])
    by_id = {c.id: c for c in stage.checks}
    observe = checks_module.observe
    watch = CallWatch()
    try:
        watch.install(job.get("forbidden", {}))
    except Exception:  # noqa: BLE001 - the watch is best effort
        pass

    namespace: dict = {"__name__": "__main__", "__builtins__": builtins}
    for cell in job["cells"]:
        channel.send({"kind": "cell_start", "index": cell["index"]})
        started = _monotonic()
        error = run_cell(cell, namespace)
        channel.send({"kind": "cell_end", "index": cell["index"], "error": error,
                      "seconds": round(_monotonic() - started, 3)})
    missing = {}
    for part, names in job["parts"].items():
        absent = [n for n in names if n not in namespace]
        if absent:
            missing[part] = absent
    from minigrad.course.program import borrowed_names, is_learner_cell_file

    try:  # provenance: every object a part asks for must come from the learner's own cells
        gids = set(job["parts"])
        borrowed = borrowed_names(job["parts"], namespace, lambda name: is_learner_cell_file(name, gids))
    except Exception:  # noqa: BLE001 - best effort, like the call watch
        borrowed = {}
    channel.send({"kind": "program_done", "missing": missing, "libraries": _imported_libraries(),
                  "calls": watch.events[:20], "borrowed": borrowed})

    buffer = b""
    while True:
        while b"\n" not in buffer:
            try:
                chunk = commands.read(65536)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                _exit(0)  # the parent closed the commands pipe
            buffer += chunk
        line, buffer = buffer.split(b"\n", 1)
        command = json.loads(line)
        if command.get("op") == "check":
            check = by_id[command["id"]]
            started = _monotonic()
            observation = observe_safely(observe, check, namespace, int(command["seed"]))
            channel.send({"kind": "observation", "check": check.id, "observation": observation,
                          "seconds": round(_monotonic() - started, 3)})
        else:  # finish
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001
                    pass
            channel.send({"kind": "bye", "libraries": _imported_libraries(), "calls": watch.events[:20]})
            _exit(0)


if __name__ == "__main__":
    try:
        main(sys.argv)
    except BaseException as e:  # noqa: BLE001 - a failure of the bootstrap itself, or SystemExit from a probe path
        try:
            sys.stderr.write(f"sandbox child failed: {type(e).__name__}: {e}\n")
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        _exit(71)
