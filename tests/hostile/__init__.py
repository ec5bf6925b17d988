"""Hostile and broken submissions for the grader's tests, generated into a folder at test time.

Each ``Case`` writes one submission (a notebook, or a file that pretends to be one)
for stage 04, and says what grading it must give: the points, and words that
the feedback of given checks (or the "could not be graded" message) must hold.
Nothing big is committed: the 100 MB notebook is written by the test.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[2]
STAGE = "04_topological_backward"
SOLUTION = ROOT / "solutions" / f"{STAGE}.ipynb"
ORDER_CHECKS = ("order_complete", "order_topological", "order_deep_chain", "order_diamonds", "order_drives_engine")
BACKWARD_CHECKS = ("backward_simple", "backward_accumulates", "backward_frees", "backward_retain_graph")
ORDER_POINTS, BACKWARD_POINTS = 6, 5
FULL = ORDER_POINTS + BACKWARD_POINTS


def solution_notebook() -> dict:
    with open(SOLUTION, encoding="utf-8") as f:
        return json.load(f)


def cell_index(nb: dict, grade_id: str) -> int:
    (index,) = [i for i, c in enumerate(nb["cells"])
                if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]
    return index


def source_of(nb: dict, grade_id: str) -> str:
    source = nb["cells"][cell_index(nb, grade_id)]["source"]
    return "".join(source) if isinstance(source, list) else source


def with_cells(cells: dict[str, str], base: dict | None = None) -> dict:
    """The solution notebook with some solution cells' sources replaced."""
    nb = copy.deepcopy(base or solution_notebook())
    for grade_id, source in cells.items():
        nb["cells"][cell_index(nb, grade_id)]["source"] = source
    return nb


def prepend(grade_id: str, code: str) -> dict:
    nb = solution_notebook()
    return with_cells({grade_id: code + "\n" + source_of(nb, grade_id)}, nb)


def write_json(path: Path, nb: dict) -> None:
    path.write_text(json.dumps(nb, indent=1), encoding="utf-8")


@dataclass
class Case:
    name: str
    make: Callable[[Path], None]  # writes the submission at this path
    points: float | None  # None: the file cannot be graded
    feedback: dict[str, str] = field(default_factory=dict)  # check id (or "message", "stdout") -> words
    slow: bool = False  # costs a wall-clock or CPU limit
    flags: tuple[str, ...] = ()  # kinds of review flags expected


def nb_case(name: str, build: Callable[[], dict], points, feedback=None, slow=False, flags=()) -> Case:
    return Case(name, lambda path: write_json(path, build()), points, feedback or {}, slow, flags)


# -- the learner's code in hostile cells ----------------------------------------------------------
SYNTAX_ERROR = '''def topological_order(root):
    order = [root]
    for node in order
        order.extend(child for child, _ in node.next_functions if child is not None)
    return order
'''

NOT_DONE = "def {name}(*args, **kwargs):\n    raise NotImplementedError()\n"

FAKE_OUTPUT = '''print("order_complete PASSED")
print("[PASS ] order_complete (1/1): lists every node exactly once")
print('{"score": 11, "tests": [{"name": "everything", "score": 11, "max_score": 11, "status": "passed"}]}')
print('{"kind": "observation", "check": "order_complete", "observation": {"status": "ok", "value": {}}}')
import sys
sys.stderr.write("All tests PASSED: 11 / 11 points\\n")
def topological_order(root):
    raise NotImplementedError()
'''

MONKEYPATCH = '''import numpy as np
import numpy.testing
import minigrad.course.checks as checks
import minigrad.course.stages.s04_topological_backward as s04
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.isclose = lambda *a, **k: np.True_
numpy.testing.assert_allclose = lambda *a, **k: None
checks.close = lambda *a, **k: True
checks.judge = lambda *a, **k: checks.Verdict(True)
checks.run_stage = lambda *a, **k: None
for name in dir(s04):
    if name.startswith("judge_"):
        setattr(s04, name, lambda mine, ref: checks.Verdict(True))
def topological_order(root):
    return [root]
'''

ALWAYS_EQUAL = '''class AlwaysEqual:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __hash__(self): return 0
    def name(self): return self
    def __len__(self): return 0
    def __iter__(self): return iter(())
def topological_order(root):
    return [AlwaysEqual() for _ in range(8)]
'''

ALWAYS_EQUAL_GRAD = '''class AlwaysEqual:
    shape = None
    def __eq__(self, other): return True
    def __hash__(self): return 0
def run_backward(root, grad, retain_graph=False):
    for node in engine.topological_order([root]):
        if hasattr(node, "variable"):
            node.variable._grad = AlwaysEqual()
'''

NDARRAY_SUBCLASS = '''import numpy as np
class Rigged(np.ndarray):
    def __eq__(self, other): return np.ones(self.shape, dtype=bool)
    def __array_finalize__(self, obj): pass
    def tolist(self): return [1.0] * self.size
def run_backward(root, grad, retain_graph=False):
    for node in engine.topological_order([root]):
        if hasattr(node, "variable"):
            data = np.zeros(node.variable.shape).view(Rigged)
            node.variable._grad = minigrad.tensor(np.zeros(node.variable.shape))
            node.variable._grad._data = data
'''

NAN_GRADS = '''def run_backward(root, grad, retain_graph=False):
    for node in engine.topological_order([root]):
        if hasattr(node, "variable"):  # every leaf gets NaN, and inf in its first element
            node.variable.grad = minigrad.full(node.variable.shape, float("nan"), dtype=minigrad.float64)
            node.variable.grad.view(-1)[0] = float("inf")
'''

INFINITE_LOOP = "while True:\n    pass\n"

IGNORES_SIGINT = '''import signal
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def run_backward(root, grad, retain_graph=False):
    while True:
        try:
            while True:
                pass
        except BaseException:
            pass
'''

MEMORY_BOMB = '''hoard = []
def topological_order(root):
    while True:
        hoard.append(bytearray(50 * 1024 * 1024))
'''

TEN_MILLION_LINES = '''for i in range(1000):  # ten million lines, ten thousand at a time
    print("PASSED all checks: 11 / 11 points\\n" * 10_000, end="")
'''

FORK_BACKGROUND = '''import os, time
for _ in range(3):
    if os.fork() == 0:
        try:
            os.setsid()
            time.sleep(600)
        finally:
            os._exit(0)
'''

STDERR_WARNINGS = '''import sys, warnings
warnings.warn("this is only a warning", DeprecationWarning)
warnings.warn("and so is this", UserWarning)
sys.stderr.write("Warning: numerically unstable? (not really)\\n" * 100)
'''

REFERENCE_CALL = '''try:
    import micrograd
except ImportError:
    pass
def run_backward(root, grad, retain_graph=False):
    engine.run_backward([(root, 0)], [grad], retain_graph=retain_graph, create_graph=False)
'''


def _tags(tags: list[str]) -> dict:
    nb = solution_notebook()
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            cell["metadata"]["tags"] = list(tags)
    nb["metadata"]["kernelspec"] = {"name": "evil", "display_name": "Not Python", "language": "brainfuck"}
    return nb


def _deleted() -> dict:
    nb = solution_notebook()
    del nb["cells"][cell_index(nb, "run_backward")]["metadata"]["nbgrader"]
    return nb


def _duplicated() -> dict:
    nb = solution_notebook()
    index = cell_index(nb, "topological_order")
    nb["cells"].insert(index + 1, copy.deepcopy(nb["cells"][index]))
    return nb


def _edited_locked() -> dict:
    nb = solution_notebook()
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade"):
            cell["source"] = "print('PASSED'); 11"
    nb["cells"][1]["source"] = "import sys; sys.exit(0)"  # the locked imports cell, edited
    return with_cells({"topological_order": NOT_DONE.format(name="topological_order"),
                       "run_backward": NOT_DONE.format(name="run_backward")}, nb)


def _huge_outputs(path: Path) -> None:
    nb = solution_notebook()
    blob = "x" * (1024 * 1024 - 1) + "\n"
    nb["cells"][cell_index(nb, "topological_order")]["outputs"] = [
        {"output_type": "stream", "name": "stdout", "text": [blob] * 100}]
    write_json(path, nb)


def _not_utf8(path: Path) -> None:
    nb = with_cells({"run_backward": "# LATIN1: caf@\n" + source_of(solution_notebook(), "run_backward")})
    raw = json.dumps(nb, indent=1).encode("ascii")  # then one Latin-1 byte: not UTF-8
    path.write_bytes(raw.replace(b"caf@", b"caf\xe9"))


CASES: list[Case] = [
    nb_case("syntax_error", lambda: with_cells({"topological_order": SYNTAX_ERROR}), BACKWARD_POINTS,
            {"order_complete": "SyntaxError at line 3"}),
    nb_case("sys_exit_at_import", lambda: prepend("topological_order", "import sys\nsys.exit(0)"), BACKWARD_POINTS,
            {"order_complete": "sys.exit"}),
    nb_case("os_exit_at_import", lambda: prepend("run_backward", "import os\nos._exit(0)"), ORDER_POINTS,
            {"backward_simple": "exited with status 0"}),
    nb_case("infinite_loop", lambda: prepend("topological_order", INFINITE_LOOP), BACKWARD_POINTS,
            {"order_complete": "limit"}, slow=True),
    nb_case("ignores_sigint", lambda: with_cells({"run_backward": IGNORES_SIGINT}), ORDER_POINTS,
            {"backward_simple": "limit"}, slow=True),
    nb_case("memory_bomb", lambda: with_cells({"topological_order": MEMORY_BOMB}), BACKWARD_POINTS,
            {"order_complete": "MemoryError"}),
    nb_case("ten_million_lines", lambda: prepend("run_backward", TEN_MILLION_LINES), FULL,
            {"stdout": "bytes not shown"}),
    nb_case("fake_passed_output", lambda: with_cells({"topological_order": FAKE_OUTPUT,
                                                       "run_backward": NOT_DONE.format(name="run_backward")}), 0,
            {"order_complete": "not implemented yet"}),
    nb_case("monkeypatch_checks_and_numpy", lambda: with_cells({"topological_order": MONKEYPATCH}), BACKWARD_POINTS,
            {"order_complete": "leaves out"}, flags=("tampering",)),
    nb_case("always_equal_order", lambda: with_cells({"topological_order": ALWAYS_EQUAL}), BACKWARD_POINTS,
            {"order_complete": "AlwaysEqual"}),
    nb_case("always_equal_gradient", lambda: with_cells({"run_backward": ALWAYS_EQUAL_GRAD}), ORDER_POINTS,
            {"backward_simple": "AlwaysEqual"}),
    nb_case("ndarray_subclass_gradient", lambda: with_cells({"run_backward": NDARRAY_SUBCLASS}), ORDER_POINTS,
            {"backward_simple": "expected"}),
    nb_case("nan_and_inf_gradients", lambda: with_cells({"run_backward": NAN_GRADS}), ORDER_POINTS,
            {"backward_simple": "nan"}),
    nb_case("skip_execution_and_raises_exception_tags", lambda: _tags(["skip-execution", "raises-exception"]), FULL),
    nb_case("edited_locked_cells_and_kernelspec", _edited_locked, 0, {"order_complete": "not implemented yet"}),
    nb_case("deleted_grade_id", _deleted, ORDER_POINTS, {"backward_simple": "no cell with grade_id 'run_backward'"}),
    nb_case("duplicated_grade_id", _duplicated, BACKWARD_POINTS, {"order_complete": "have grade_id 'topological_order'"}),
    Case("empty_file", lambda path: path.write_bytes(b""), None, {"message": "empty"}),
    Case("invalid_json", lambda path: path.write_text('{"cells": [', encoding="utf-8"), None,
         {"message": "not valid JSON"}),
    Case("not_a_notebook", lambda path: path.write_text('{"hello": "world"}', encoding="utf-8"), None,
         {"message": "not a Jupyter notebook"}),
    Case("huge_outputs_100mb", _huge_outputs, FULL),
    Case("not_utf8", _not_utf8, FULL, {"warning": "not valid UTF-8"}),
    nb_case("fork_background_processes", lambda: prepend("run_backward", FORK_BACKGROUND), FULL,
            {"notes": "left running"}),
    nb_case("stderr_warnings", lambda: prepend("run_backward", STDERR_WARNINGS), FULL,
            {"stderr": "only a warning"}),
    nb_case("reference_call_and_torch", lambda: with_cells({"run_backward": REFERENCE_CALL}), FULL,
            flags=("reference_call", "autograd_import")),
]


def write_case(case: Case, folder: Path) -> Path:
    """Write ``case`` as ``folder/<case.name>/04_topological_backward.ipynb`` (one learner per case)."""
    (folder / case.name).mkdir(parents=True, exist_ok=True)
    path = folder / case.name / f"{STAGE}.ipynb"
    case.make(path)
    return path
