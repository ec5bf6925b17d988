"""The grader's sandbox: run a worksheet program and its probes in a child process.

One ``Sandbox`` is one child process (``sandbox_child.py``), started with

- a clean temporary working directory (also its ``HOME`` and ``TMPDIR``), removed afterwards;
- a scrubbed environment: no variable of the grader's, ``python -I -B``, explicit
  ``NUMBA_*`` settings and a Numba cache directory of its own (a copy of a cache
  warmed by trusted code, so compiled kernels need not be compiled again);
- POSIX resource limits (CPU time, address space, file size, processes, open files);
- a wall-clock limit, after which its whole process group is killed;
- a network namespace of its own (no network) and an unprivileged user: as root, a
  uid with no passwd entry, one per parallel slot (so that every process it leaves
  behind can be found and killed); as an ordinary user, that user, in a user
  namespace of its own (with no capabilities left in it once set up);
- a mount namespace of its own, in which the paths the job lists in ``hide`` (the
  submitted notebooks, the gradebook and results, the results cache) are covered, so
  that learner code cannot read classmates' work or grades.

Isolation fails closed: ``detect_isolation`` raises ``IsolationUnavailable`` (saying
what is wrong and how to fix it) unless children get both, or the instructor asked
for ``none``.

The child reports observations as JSON lines on a private pipe (an inherited fd,
not stdout). Nothing from the child is unpickled or executed; its stdout and stderr
are drained continuously and kept only in part (head and tail). What the child says
after its ``hello`` comes from a process the learner's code controls: callers must
validate it.
"""
from __future__ import annotations

import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

CHILD_SCRIPT = Path(__file__).with_name("sandbox_child.py")
UID_BASE_ENV = "MINIGRAD_SANDBOX_UID_BASE"
DEFAULT_UID_BASE = 61000
# Every child of one grader run carries this run's id in its environment (and its own
# token), so a run (or a test) can tell its own processes from another run's.
RUN_ENV = "MINIGRAD_GRADE_RUN"
RUN_ID = secrets.token_hex(8)
ISOLATION_MODES = ("full", "none")


def run_id() -> str:
    """This grader run's id: ``$MINIGRAD_GRADE_RUN`` when the caller set one, else per process."""
    return os.environ.get(RUN_ENV) or RUN_ID


class IsolationUnavailable(RuntimeError):
    """The machine cannot both cut the network and run learner code as an unprivileged user."""


@dataclass(frozen=True)
class Limits:
    """Per-child limits. ``restarts``: fresh children allowed after one is stopped."""

    cpu_seconds: float = 60.0
    wall_seconds: float = 120.0
    memory_mb: int = 2048
    file_size_mb: int = 64
    processes: int = 64
    open_files: int = 256
    output_kb: int = 16
    message_mb: int = 8
    restarts: int = 2

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class IsolationPlan:
    """What the sandbox will apply on this machine, decided once per grader run."""

    network: bool = False
    uids: tuple[int, ...] = ()  # one per parallel slot; empty: children run as the grader's user
    notes: tuple[str, ...] = ()
    level: str = "none"  # "full": no network and an unprivileged user; "none": limits only
    python: str = sys.executable  # the children's interpreter
    hiding: str = ""  # what the probe child said of its own mount namespace ("hidden ...": it can hide paths)

    def can_hide(self) -> bool:
        return self.hiding.startswith("hidden")

    def uid_for(self, slot: int) -> int | None:
        return self.uids[slot % len(self.uids)] if self.uids else None

    def describe(self) -> dict:
        return {"level": self.level,
                "network": "none (own network namespace)" if self.network else "not isolated",
                "user": "a dedicated unprivileged uid per slot" if self.uids else
                        ("root" if os.geteuid() == 0 else "the grader's own (non-root) user"),
                "notes": list(self.notes)}

    def summary(self) -> str:
        """One line for tables and logs."""
        if self.level == "full":
            return f"full ({self.describe()['user']}, no network)"
        return "NONE (--isolation none: learner code runs as " + (
            "root" if os.geteuid() == 0 else "the grader's user") + ", with network)"


# -- deciding what the machine allows ---------------------------------------------------
_plans: dict[tuple, IsolationPlan] = {}
_plans_lock = threading.Lock()


def package_root() -> str:
    """The folder holding the ``minigrad`` package the grader itself imported."""
    import minigrad

    return str(Path(minigrad.__file__).resolve().parent.parent)


def _free_uids(count: int) -> tuple[int, ...]:
    import pwd

    base = int(os.environ.get(UID_BASE_ENV, DEFAULT_UID_BASE))
    busy = {uid for uid, _ in _tasks_by_uid().items()}
    found = []
    for uid in range(base, base + 10_000):
        if uid in busy:
            continue
        try:
            pwd.getpwuid(uid)
        except KeyError:
            found.append(uid)
            if len(found) == count:
                return tuple(found)
    return tuple(found)


def _tasks_by_uid() -> dict[int, int]:
    """Real uid -> number of tasks (threads count: RLIMIT_NPROC counts them)."""
    counts: dict[int, int] = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status", encoding="ascii", errors="replace") as f:
                uid = threads = None
                for line in f:
                    if line.startswith("Uid:"):
                        uid = int(line.split()[1])
                    elif line.startswith("Threads:"):
                        threads = int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if uid is not None:
            counts[uid] = counts.get(uid, 0) + (threads or 1)
    return counts


def detect_isolation(mode: str = "full", slots: int = 1, python: str | None = None) -> IsolationPlan:
    """Find out, with a short probe child, whether this machine isolates learner code.

    ``mode``: ``full`` (the default) runs children with no network and as an
    unprivileged user, or raises ``IsolationUnavailable`` saying why not and what to
    do; ``none`` applies only the resource limits and a temporary directory (the
    instructor's explicit choice). ``auto`` and ``require``, older names, mean
    ``full``. ``python``: the children's interpreter (default: the grader's).
    """
    if mode in ("auto", "require"):
        mode = "full"
    if mode not in ISOLATION_MODES:
        raise ValueError(f"isolation must be one of {', '.join(ISOLATION_MODES)}, not {mode!r}")
    python = python or sys.executable
    key = (mode, slots, python)
    with _plans_lock:
        if key not in _plans:
            _plans[key] = _detect(mode, slots, python)
        return _plans[key]


def _detect(mode: str, slots: int, python: str) -> IsolationPlan:
    if mode == "none":
        return IsolationPlan(python=python, notes=(
            "isolation turned off (--isolation none): resource limits and a temporary directory only",))
    problems: list[str] = []
    uids: tuple[int, ...] = ()
    network, hiding = False, ""
    if not sys.platform.startswith("linux"):
        problems.append(f"there are no network namespaces or user switches on {sys.platform}")
    else:
        root = os.geteuid() == 0
        if root:
            uids = _free_uids(max(1, slots))
            if len(uids) < max(1, slots):
                problems.append(f"there are not {max(1, slots)} free uids (no passwd entry, no process) "
                                f"from {os.environ.get(UID_BASE_ENV, DEFAULT_UID_BASE)} on")
                uids = ()
        hello, ok, message = _probe(python, uid=uids[0] if uids else None)
        if not ok:
            who = f"the unprivileged uid {uids[0]}" if uids else "a sandboxed child"
            closed = _closed_folder(python) if uids else None
            problems.append(f"{who} cannot run the Python installation {python} with numpy and minigrad: "
                            f"{message}" + (f" (other users cannot enter {closed}: its mode is "
                                            f"{oct(os.stat(closed).st_mode & 0o777)})" if closed else ""))
            uids = ()
        network = bool(hello) and str(hello["isolation"].get("network", "")).startswith("none")
        if hello and not network:
            problems.append(f"the child could not get a network namespace of its own: "
                            f"{hello['isolation'].get('network', '')}")
        hiding = str(hello["isolation"].get("files", "")) if hello else ""
        if root and not uids and not problems:
            problems.append("no unprivileged uid is available")
    if problems:
        raise IsolationUnavailable(_refusal(problems, python))
    return IsolationPlan(network=True, uids=uids, level="full", python=python, hiding=hiding)


def _closed_folder(python: str) -> str | None:
    """The first folder above the interpreter's installation that other users cannot enter."""
    import sysconfig

    paths = [Path(python).resolve()] + ([Path(sysconfig.get_paths()["purelib"])] if python == sys.executable else [])
    for path in paths:
        for folder in reversed(path.parents):
            try:
                if not os.stat(folder).st_mode & 0o001:
                    return str(folder)
            except OSError:
                return str(folder)
    return None


def _readable_by_all(path: Path) -> bool:
    """Whether every user can reach and read ``path``: o+x on each folder above it, o+r on it."""
    try:
        path = path.resolve()
        return all(os.stat(folder).st_mode & 0o001 for folder in path.parents) and bool(os.stat(path).st_mode & 0o004)
    except OSError:
        return False


def system_python() -> str | None:
    """A system-wide Python 3.10+ that every user can read (preferably this one's version), or None."""
    import re

    names = [f"python{sys.version_info[0]}.{sys.version_info[1]}", "python3"]
    found = []
    for folder in ("/usr/bin", "/usr/local/bin", "/opt/python/bin"):
        for name in names:
            path = Path(folder) / name
            if path.is_file() and _readable_by_all(path) and os.access(path, os.X_OK):
                try:
                    version = subprocess.run([str(path), "-c", "import sys; print(sys.version_info[:2])"],
                                             capture_output=True, text=True, timeout=30).stdout
                except (OSError, subprocess.TimeoutExpired):
                    continue
                numbers = tuple(int(n) for n in re.findall(r"\d+", version)[:2])
                if numbers >= (3, 10):
                    found.append((numbers != sys.version_info[:2], str(path)))
    return min(found)[1] if found else None


def install_target() -> str:
    """What ``pip install`` takes to install this minigrad: its checkout, or the wheel it came from."""
    root = Path(package_root())
    if (root / "pyproject.toml").is_file():
        return f"{root}"
    try:
        from importlib.metadata import version

        number = version("minigrad-course")
    except Exception:  # noqa: BLE001
        number = "VERSION"
    return f"minigrad_course-{number}-py3-none-any.whl"


def _refusal(problems: list[str], python: str) -> str:
    """Why learner code will not run, and every way to fix it: commands that work on this machine."""
    who = "root" if os.geteuid() == 0 else "you"
    prefix = Path(python).resolve().parent.parent
    closed = [str(folder) for folder in reversed(prefix.parents) if folder != Path("/")
              and not (_mode(folder) & 0o001)]
    target = install_target()
    base = system_python()
    lines = ["refusing to run learner code: this machine cannot isolate it (no network and an "
             f"unprivileged user), so it would run as {who}, with network access and your files.",
             "What is wrong:"]
    lines += [f"  - {p}" for p in problems]
    lines.append("Fixes (any one):")
    if base is not None:
        wheel = "" if target.startswith("/") else " (the wheel you installed this grader from; `python -m build` in " \
                                                   "a checkout writes it to dist/)"
        lines += [
            f"  1. Give the sandboxed children a Python that every user can read: a venv made from {base} (a "
            "system Python every user can read; a venv made from a Python in a private folder, such as pyenv's "
            "under /root, links back into it), with minigrad and its numpy and numba:",
            f"       {base} -m venv /opt/minigrad",
            f"       /opt/minigrad/bin/pip install {target}{wheel}",
            "     then add `--python /opt/minigrad/bin/python` to the same minigrad-grade command (or grade with "
            "/opt/minigrad/bin/minigrad-grade).",
        ]
    else:
        lines.append("  1. Install a system-wide Python 3.10+ that every user can read (e.g. `apt-get install "
                     f"python3-venv`), make a venv from it (`/usr/bin/python3 -m venv /opt/minigrad`), install "
                     f"`{target}` into it, and add `--python /opt/minigrad/bin/python`.")
    opened = (f"chmod o+x {' '.join(closed)} && " if closed else "") + f"chmod -R o+rX {prefix}"
    lines += [
        f"  2. Or make the Python in use readable by every user (this opens those folders to every user): {opened}",
        "  3. Or run the grader as an ordinary, dedicated (non-root) user, on a kernel that allows "
        "unprivileged user namespaces (`sysctl kernel.unprivileged_userns_clone=1`, or on Ubuntu "
        "24.04+ `sysctl kernel.apparmor_restrict_unprivileged_userns=0`): children then run as that user, "
        "with no network.",
        "  4. Or grade without isolation, knowingly: `--isolation none` (every result records it). "
        "Only for code you trust, or inside a throwaway container or VM.",
    ]
    return "\n".join(lines)


def hiding_refusal(plan: IsolationPlan) -> IsolationUnavailable:
    """The refusal when children would run isolated but could still read the submissions and gradebook."""
    return IsolationUnavailable(_refusal([
        "the child could not get a mount namespace of its own, to hide the other submissions and the "
        f"gradebook from learner code: {plan.hiding or 'no report'}"], plan.python))


def _mode(path: Path) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


def _probe(python: str, uid: int | None) -> tuple[dict | None, bool, str]:
    """Start a child as the sandbox would (no network, ``uid``); can it import numpy and minigrad?"""
    job = {"probe_only": True, "package_root": package_root(), "limits": {}, "hide": []}
    plan = IsolationPlan(network=True, uids=(uid,) if uid is not None else (), python=python)
    box = Sandbox(job, Limits(wall_seconds=120, cpu_seconds=60), plan, slot=0)
    try:
        box.start()
        hello = box.receive()
        reply = box.receive()
        return hello, bool(reply.get("ok")), str(reply.get("message", ""))
    except (SandboxStopped, OSError) as stop:
        return None, False, f"{stop}: {box.stderr.text().strip()}"
    finally:
        box.stop()


# -- one child --------------------------------------------------------------------------
class SandboxStopped(Exception):
    """The child stopped talking: ``reason`` is timeout, exited, corrupt or interrupted."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason, self.detail = reason, detail


class Capture:
    """A bounded copy of a stream: its first and last ``limit / 2`` bytes, and its size."""

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self.head, self.tail, self.total = bytearray(), bytearray(), 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < self.half:
            take = self.half - len(self.head)
            self.head += data[:take]
            data = data[take:]
        if data:
            self.tail += data[-self.half:]
            if len(self.tail) > self.half:
                del self.tail[: len(self.tail) - self.half]

    def text(self) -> str:
        shown = len(self.head) + len(self.tail)
        if self.total <= shown:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", "replace")
        return (self.head.decode("utf-8", "replace") + f"\n[... {self.total - shown:,} bytes not shown ...]\n"
                + self.tail.decode("utf-8", "replace"))


@dataclass
class ExitInfo:
    returncode: int | None = None
    cpu_seconds: float = 0.0
    max_rss_mb: float = 0.0
    timed_out: bool = False
    killed_leftovers: int = 0
    notes: list[str] = field(default_factory=list)


class Sandbox:
    def __init__(self, job: dict, limits: Limits, plan: IsolationPlan, slot: int = 0,
                 warm_cache: str | None = None, stop_event: threading.Event | None = None) -> None:
        self.job, self.limits, self.plan, self.slot = dict(job), limits, plan, slot
        self.warm_cache, self.stop_event = warm_cache, stop_event
        self.uid = plan.uid_for(slot)
        self.token = secrets.token_hex(16)
        self.stdout = Capture(limits.output_kb * 1024)
        self.stderr = Capture(limits.output_kb * 1024)
        self.exit = ExitInfo()
        self.proc: subprocess.Popen | None = None
        self.workdir: str | None = None
        self._buffer = bytearray()
        self._res = self._cmd = None
        self._open: dict[int, str] = {}
        self._selector: selectors.BaseSelector | None = None
        self._exited = False
        self.deadline = 0.0

    # -- start ---------------------------------------------------------------------------
    def start(self) -> None:
        self.workdir = tempfile.mkdtemp(prefix="minigrad-sandbox-")
        cache = os.path.join(self.workdir, ".numba-cache")
        if self.warm_cache and os.path.isdir(self.warm_cache) and os.listdir(self.warm_cache):
            shutil.copytree(self.warm_cache, cache, ignore=shutil.ignore_patterns("*.tmp", "tmp*"))
        else:
            os.mkdir(cache)
        job_path = os.path.join(self.workdir, ".job.json")
        limits = self.limits
        self.job.update({
            "network": self.plan.network, "uid": self.uid, "gid": self.uid,
            "limits": {
                "cpu_seconds": max(1, int(round(limits.cpu_seconds))),
                "memory_bytes": int(limits.memory_mb) * 1024 * 1024,
                "file_bytes": int(limits.file_size_mb) * 1024 * 1024,
                "processes": _tasks_by_uid().get(self.uid if self.uid is not None else os.getuid(), 0)
                + int(limits.processes),
                "open_files": int(limits.open_files),
            },
        })
        self.job.setdefault("package_root", package_root())
        fd = os.open(job_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(self.job, f)
        if self.uid is not None:
            for root, dirs, files in os.walk(self.workdir):
                for name in dirs + files:
                    if name != ".job.json":
                        os.lchown(os.path.join(root, name), self.uid, self.uid)
            os.chown(self.workdir, self.uid, self.uid)
        os.chmod(self.workdir, 0o700)

        res_r, res_w = os.pipe()
        cmd_r, cmd_w = os.pipe()
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": self.workdir, "TMPDIR": self.workdir,
            "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
            "NUMBA_CACHE_DIR": cache, "NUMBA_NUM_THREADS": "1", "NUMBA_THREADING_LAYER": "workqueue",
            "NUMBA_DISABLE_PERFORMANCE_WARNINGS": "1",
            "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
            "VECLIB_MAXIMUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": os.path.join(self.workdir, ".matplotlib"),
            "MINIGRAD_SANDBOX_TOKEN": self.token, RUN_ENV: run_id(),
        }
        argv = [self.plan.python, "-I", "-B", str(CHILD_SCRIPT), job_path, str(cmd_r), str(res_w)]
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, pass_fds=(cmd_r, res_w), cwd=self.workdir,
                                         env=env, start_new_session=True)
        finally:
            os.close(res_w)
            os.close(cmd_r)
        self._res, self._cmd = res_r, cmd_w
        self.deadline = time.monotonic() + limits.wall_seconds
        self._selector = selectors.DefaultSelector()
        for fd, name in ((res_r, "res"), (self.proc.stdout.fileno(), "out"), (self.proc.stderr.fileno(), "err")):
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ, name)
            self._open[fd] = name

    # -- talk ----------------------------------------------------------------------------
    def send(self, command: dict) -> None:
        try:
            os.write(self._cmd, json.dumps(command).encode() + b"\n")
        except OSError:
            pass  # the child is gone: the next receive() says how

    def receive(self) -> dict:
        """The next message (a dict, unvalidated), or raise ``SandboxStopped``."""
        limit = self.limits.message_mb * 1024 * 1024
        while True:
            newline = self._buffer.find(b"\n")
            if newline >= 0:
                line = bytes(self._buffer[:newline])
                del self._buffer[: newline + 1]
                try:
                    message = json.loads(line)
                except (ValueError, RecursionError) as e:
                    raise SandboxStopped("corrupt", f"a message that is not JSON ({str(e)[:80]})") from None
                if type(message) is not dict:
                    raise SandboxStopped("corrupt", "a message that is not a JSON object")
                return message
            if len(self._buffer) > limit:
                raise SandboxStopped("corrupt", f"a message longer than {self.limits.message_mb} MB")
            if self.stop_event is not None and self.stop_event.is_set():
                self.kill()
                raise SandboxStopped("interrupted")
            now = time.monotonic()
            if now >= self.deadline:
                self.exit.timed_out = True
                self.kill()
                raise SandboxStopped("timeout")
            exited = self._child_exited()
            if "res" not in self._open.values() and not exited:
                end = time.monotonic() + 1.0  # EOF comes as the process exits: let it finish exiting
                while not exited and time.monotonic() < min(end, self.deadline):
                    time.sleep(0.01)
                    exited = self._child_exited()
            if "res" not in self._open.values() or exited:
                self._drain()
                if b"\n" in self._buffer:
                    continue
                if not exited:
                    raise SandboxStopped("corrupt", "the end of its data while the process was still running")
                raise SandboxStopped("exited")
            self._pump(min(0.2, self.deadline - now))

    def _pump(self, timeout: float) -> None:
        for key, _ in self._selector.select(timeout):
            self._read(key.fd, key.data)

    def _read(self, fd: int, name: str) -> bool:
        try:
            data = os.read(fd, 1 << 16)
        except BlockingIOError:
            return False
        except OSError:
            data = b""
        if not data:
            self._selector.unregister(fd)
            del self._open[fd]
            return False
        if name == "res":
            self._buffer += data
        else:
            (self.stdout if name == "out" else self.stderr).add(data)
        return True

    def _drain(self) -> None:
        """Read what is already in the pipes, without waiting for EOF (leftover
        background processes may hold the write ends open)."""
        for _ in range(10_000):
            progressed = False
            for fd, name in list(self._open.items()):
                progressed |= self._read(fd, name)
            if not progressed or len(self._buffer) > self.limits.message_mb * 1024 * 1024:
                break

    def _child_exited(self) -> bool:
        if self._exited:
            return True
        try:
            info = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            info = True
        self._exited = info is not None
        return self._exited

    # -- stop ----------------------------------------------------------------------------
    def kill(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the leader is at worst a zombie: its pgid is ours
        except (ProcessLookupError, PermissionError):
            pass

    def stop(self, grace: float = 1.0) -> ExitInfo:
        """End the child and everything it started; collect its exit; remove its directory."""
        if self.proc is not None:
            if self._cmd is not None:
                os.close(self._cmd)
                self._cmd = None
            end = time.monotonic() + grace
            while not self._child_exited() and time.monotonic() < end:
                self._pump(0.05)
            self.kill()
            self.exit.killed_leftovers = self._sweep()
            try:
                _, status, usage = os.wait4(self.proc.pid, 0)
                self.exit.returncode = os.waitstatus_to_exitcode(status)
                self.exit.cpu_seconds = usage.ru_utime + usage.ru_stime
                self.exit.max_rss_mb = usage.ru_maxrss / 1024
            except ChildProcessError:
                pass
            self.proc.returncode = self.exit.returncode
            self._drain()
            for fd in list(self._open):
                self._selector.unregister(fd)
            self._open.clear()
            for stream in (self.proc.stdout, self.proc.stderr):
                stream.close()
            if self._res is not None:
                os.close(self._res)
                self._res = None
            self._selector.close()
            self.proc = None
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
            if os.path.exists(self.workdir):  # files it could not remove (permissions changed by the child)
                subprocess.run(["rm", "-rf", self.workdir], check=False, capture_output=True)
            self.workdir = None
        return self.exit

    def _sweep(self) -> int:
        """Kill the processes the child left running, even those that left its process group:
        by uid when children run as a dedicated uid, else by the token in their environment."""
        killed: set[int] = set()
        token = f"MINIGRAD_SANDBOX_TOKEN={self.token}".encode()
        skip = {os.getpid(), self.proc.pid}
        for _ in range(50):
            found = 0
            for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
                if not entry.isdigit() or int(entry) in skip:
                    continue
                pid = int(entry)
                try:
                    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
                        status = dict(line.split(":", 1) for line in f if ":" in line)
                    if status.get("State", "").strip().startswith(("Z", "X")):
                        continue  # already dead, waiting for its parent (init) to reap it
                    if self.uid is not None:
                        ours = int(status["Uid"].split()[0]) == self.uid
                    else:
                        with open(f"/proc/{pid}/environ", "rb") as f:
                            ours = token in f.read()
                except (OSError, ValueError, KeyError, IndexError):
                    continue
                if ours:
                    try:
                        os.kill(pid, signal.SIGKILL)
                        killed.add(pid)
                        found += 1
                    except (ProcessLookupError, PermissionError):
                        pass
            if not found:
                break
            time.sleep(0.02)
        return len(killed)

    def explain(self, stop: SandboxStopped) -> str:
        """Words for why the child stopped (call after ``stop()``)."""
        if stop.reason == "timeout":
            return (f"it was still running after the time limit of {self.limits.wall_seconds:g} s "
                    "(an infinite loop, or far too slow?)")
        if stop.reason == "corrupt":
            return (f"the grader's private channel received {stop.detail}: does your code write to "
                    "file descriptors it did not open, or fork?")
        if stop.reason == "interrupted":
            return "grading was interrupted"
        code = self.exit.returncode
        if code is None:
            return "the process stopped"
        if code >= 0:
            return (f"the process exited with status {code} before the grader had its results: "
                    "does your code call sys.exit(), os._exit() or quit()?")
        name = _signal_name(-code)
        # Only the CPU limit sends SIGXCPU (its measured CPU time can read a little low on a busy
        # machine); a SIGKILL is that limit's hard end only when the CPU time says so.
        if -code == signal.SIGXCPU or (-code == signal.SIGKILL and self.exit.cpu_seconds >= self.limits.cpu_seconds - 0.5):
            return f"it used up its CPU time limit of {self.limits.cpu_seconds:g} s (killed by {name})"
        if -code in (signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT):
            return (f"the process crashed ({name}); this can happen when it runs out of its "
                    f"{self.limits.memory_mb} MB of memory")
        if -code == signal.SIGXFSZ:
            return f"it wrote a file larger than the limit of {self.limits.file_size_mb} MB"
        return f"the process was killed by {name}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


__all__ = ["Limits", "IsolationPlan", "IsolationUnavailable", "Sandbox", "SandboxStopped", "Capture",
           "ExitInfo", "detect_isolation", "package_root", "hiding_refusal", "run_id", "RUN_ENV", "ISOLATION_MODES"]
