"""Build the learners' exercise notebooks from the solved worksheets.

``solutions/NN_topic.ipynb`` are the single source. They carry nbgrader's
markers and cell metadata, so an instructor can give them to nbgrader as they
are; this module does the part of ``nbgrader generate_assignment`` the course
needs, without depending on nbgrader:

- a ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region becomes nbgrader's
  stub (``# YOUR CODE HERE`` + ``raise NotImplementedError()`` in code,
  ``YOUR ANSWER HERE`` in markdown), indented like the BEGIN line;
- a solution cell (``solution: true``) with no such region is replaced whole
  by the stub, as nbgrader does: a cell that is all answer needs no markers,
  and in a solution cell only lines outside a region survive;
- ``### BEGIN HIDDEN TESTS`` and ``### BEGIN MARK SCHEME`` regions are removed,
  marker lines included;
- outputs, execution counts and transient metadata are stripped; all other
  metadata (nbgrader's included) is kept;
- cells get nbgrader's locks, as its ``generate_assignment`` release does: an
  answer cell cannot be deleted (``deletable: false``), a check cell or a locked
  cell can be neither deleted nor edited (``editable: false`` too).

A marker is a line whose stripped text is exactly the marker, as in nbgrader.
A line that merely mentions a marker phrase (``# BEGIN SOLUTION``) is an
error rather than ordinary text, because nbgrader matches some markers more
loosely and a near miss would otherwise leak a solution to learners.

nbformat is imported inside the functions so that importing this module (and
``minigrad.course``) stays cheap.
"""
from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = [
    "build_exercise",
    "strip_outputs",
    "strip_file",
    "build_all",
    "find_root",
    "nbgrader_problems",
]

CODE_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
TEXT_STUB = "YOUR ANSWER HERE"
NOTEBOOK_GLOB = "[0-9][0-9]_*.ipynb"

# Region kind -> the nbgrader flag a cell needs to hold it (nbgrader refuses
# a region in a cell without it, so we refuse too).
_REGIONS = {"SOLUTION": "solution", "HIDDEN TESTS": "grade", "MARK SCHEME": "task"}

# UI and run state, not content: dropped so commits and rebuilds are stable.
TRANSIENT_CELL_KEYS = (
    "collapsed", "scrolled", "execution", "ExecuteTime", "heading_collapsed", "hidden",
)
TRANSIENT_NOTEBOOK_KEYS = ("signature", "widgets")


# --- one notebook --------------------------------------------------------------


def build_exercise(solution_nb: NotebookNode) -> NotebookNode:
    """Return the learner's version of ``solution_nb`` (which is left untouched).

    Raises ``ValueError`` naming the cell index, grade_id and line of any
    unbalanced, nested or malformed marker.
    """
    nb = copy.deepcopy(solution_nb)
    for index, cell in enumerate(nb.cells):
        _clear_cell(cell, index)
        _lock_cell(cell)
    nb.metadata.pop("celltoolbar", None)  # nbgrader's authoring toolbar
    return strip_outputs(nb)


def _clear_cell(cell: NotebookNode, index: int) -> None:
    """Replace solution regions and drop hidden regions of one cell, in place."""
    meta = cell.metadata.get("nbgrader", {})
    stub = (CODE_STUB if cell.cell_type == "code" else TEXT_STUB).split("\n")

    def fail(lineno: int, message: str) -> NoReturn:
        where = f"cell {index} (grade_id {meta.get('grade_id')!r}), line {lineno}"
        raise ValueError(f"{where}: {message}")

    out: list[str] = []
    open_kind, open_line, replaced = None, 0, False
    for lineno, line in enumerate(cell.source.split("\n"), start=1):
        try:
            marker = _marker(line)
        except ValueError as err:
            fail(lineno, str(err))
        if marker is None:
            if open_kind is None:
                out.append(line)
            continue
        verb, kind = marker
        if verb == "BEGIN":
            if open_kind is not None:
                fail(lineno, f"'### BEGIN {kind}' nested in '### BEGIN {open_kind}' "
                     f"of line {open_line}")
            if not meta.get(_REGIONS[kind]):
                fail(lineno, f"'### BEGIN {kind}' in a cell without nbgrader {_REGIONS[kind]}=true")
            open_kind, open_line = kind, lineno
            if kind == "SOLUTION":
                indent = line[: len(line) - len(line.lstrip())]
                out += [indent + s for s in stub]
                replaced = True
        elif open_kind != kind:
            inside = f" inside '### BEGIN {open_kind}' of line {open_line}" if open_kind else ""
            fail(lineno, f"'### END {kind}' without a matching '### BEGIN {kind}'{inside}")
        else:
            open_kind = None
    if open_kind is not None:
        fail(open_line, f"'### BEGIN {open_kind}' is never closed by '### END {open_kind}'")
    if meta.get("solution") and not replaced:
        out = stub  # whole-cell rule: a solution cell without markers is all solution
    cell.source = "\n".join(out)


def _marker(line: str) -> tuple[str, str] | None:
    """Return ``(verb, kind)`` if ``line`` is a marker; raise on a near miss."""
    text = line.strip()
    for kind in _REGIONS:
        for verb in ("BEGIN", "END"):
            if text == f"### {verb} {kind}":
                return verb, kind
            if f"{verb} {kind}" in line:
                raise ValueError(
                    f"malformed marker {text!r}: write '### {verb} {kind}' alone on its line"
                )
    return None


def _lock_cell(cell: NotebookNode) -> None:
    """nbgrader's ``LockCells`` with its defaults: answer cells stay editable, graded and
    locked cells become read-only; none of them can be deleted."""
    meta = cell.metadata.get("nbgrader", {})
    if meta.get("solution"):
        cell.metadata["deletable"] = False
    elif meta.get("grade") or meta.get("locked"):
        cell.metadata["deletable"] = False
        cell.metadata["editable"] = False


def strip_outputs(nb: NotebookNode) -> NotebookNode:
    """Remove outputs, execution counts and transient metadata, in place.

    Committed notebooks then differ only when their content does. Returns
    ``nb`` for chaining.
    """
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
        for key in TRANSIENT_CELL_KEYS:
            cell.metadata.pop(key, None)
    for key in TRANSIENT_NOTEBOOK_KEYS:
        nb.metadata.pop(key, None)
    return nb


# --- files ---------------------------------------------------------------------


def _dumps(nb: NotebookNode) -> str:
    """The exact text ``nbformat.write(nb, path, version=4)`` puts in a file."""
    import nbformat

    text = nbformat.writes(nb, version=4)  # sorted keys, one-space indent
    return text if text.endswith("\n") else text + "\n"


def _read_text(path: Path) -> str | None:
    return path.read_text(encoding="utf-8") if path.exists() else None


def _up_to_date(expected: NotebookNode, path: Path) -> bool:
    """Compare content, not bytes: both sides go through nbformat's reader/writer."""
    import nbformat

    if not path.exists():
        return False
    try:
        current = nbformat.read(path, as_version=4)
    except Exception:  # unreadable or not a notebook: rebuild it
        return False
    return _dumps(current) == _dumps(expected)


def strip_file(path: Path) -> bool:
    """Strip the notebook at ``path`` in place; return whether the file changed."""
    import nbformat

    path = Path(path)
    nb = strip_outputs(nbformat.read(path, as_version=4))
    if _read_text(path) == _dumps(nb):
        return False
    nbformat.write(nb, path, version=4)
    return True


def build_all(root: Path, check: bool = False) -> list[Path]:
    """Write ``exercises/NN_*.ipynb`` from every ``solutions/NN_*.ipynb`` under ``root``.

    Exercises without a solution are deleted. Returns the files written or
    deleted. With ``check=True`` nothing is written: returns the exercises
    that are missing, out of date (by content) or stale, so CI can fail.
    Unchanged exercises are not rewritten, and a rebuild is byte-identical.
    """
    import nbformat

    solutions, exercises = Path(root) / "solutions", Path(root) / "exercises"
    if not solutions.is_dir():
        raise FileNotFoundError(f"no solutions/ folder in {root}")
    sources = sorted(solutions.glob(NOTEBOOK_GLOB))
    changed: list[Path] = []
    for source in sources:
        target = exercises / source.name
        try:
            exercise = build_exercise(nbformat.read(source, as_version=4))
        except ValueError as err:
            raise ValueError(f"{source}: {err}") from None
        if check:
            if not _up_to_date(exercise, target):
                changed.append(target)
        elif _read_text(target) != _dumps(exercise):
            exercises.mkdir(exist_ok=True)
            nbformat.write(exercise, target, version=4)
            changed.append(target)
    names = {source.name for source in sources}
    for stale in sorted(exercises.glob(NOTEBOOK_GLOB)):
        if stale.name not in names:
            if not check:
                stale.unlink()
            changed.append(stale)
    return changed


def find_root(start: Path | None = None) -> Path:
    """Return the nearest folder at or above ``start`` (default: cwd) holding ``solutions/``."""
    start = Path.cwd() if start is None else Path(start)
    for folder in (start.resolve(), *start.resolve().parents):
        if (folder / "solutions").is_dir():
            return folder
    raise FileNotFoundError(f"no folder containing solutions/ at or above {start}")


# --- nbgrader metadata -----------------------------------------------------------

_NBGRADER_KEYS = {
    "grade", "solution", "locked", "task", "grade_id", "points",
    "schema_version", "checksum", "cell_type",
}
_GRADE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def nbgrader_problems(nb: NotebookNode) -> list[str]:
    """List what nbgrader (schema v3) would reject in ``nb``'s cell metadata.

    Checked here so that authors learn of it before an instructor runs nbgrader.
    """
    problems: list[str] = []
    seen: dict[str, int] = {}
    for index, cell in enumerate(nb.cells):
        meta = cell.metadata.get("nbgrader")
        if meta is None:
            continue
        found = _cell_problems(cell.cell_type, meta)
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        if _needs_id(meta) and isinstance(gid, str):
            if gid in seen:
                found.append(f"grade_id already used by cell {seen[gid]}")
            seen.setdefault(gid, index)
        problems += [f"cell {index} (grade_id {gid!r}): {p}" for p in found]
    return problems


def _needs_id(meta: object) -> bool:
    """nbgrader tracks (and so identifies) every graded, solution, locked or task cell."""
    flags = ("grade", "solution", "locked", "task")
    return isinstance(meta, dict) and any(meta.get(flag) for flag in flags)


def _cell_problems(cell_type: str, meta: object) -> list[str]:
    """The checks of nbgrader's v3 schema and validator that concern one cell."""
    if not isinstance(meta, dict):
        return ["nbgrader metadata must be an object"]
    found = []
    if extra := sorted(set(meta) - _NBGRADER_KEYS):
        found.append(f"unknown nbgrader keys {extra}")
    if meta.get("schema_version") != 3:
        found.append(f"schema_version must be 3, got {meta.get('schema_version')!r}")
    for flag in ("grade", "solution", "locked"):
        if not isinstance(meta.get(flag), bool):
            found.append(f"{flag!r} must be true or false")
    if not isinstance(meta.get("task", False), bool):
        found.append("'task' must be true or false")
    grade, solution, task = meta.get("grade"), meta.get("solution"), meta.get("task")
    gid = meta.get("grade_id")
    if _needs_id(meta) and not (isinstance(gid, str) and _GRADE_ID.match(gid)):
        found.append("needs a grade_id of letters, digits, '_' or '-'")
    points = meta.get("points")
    if grade or task:
        if isinstance(points, bool) or not isinstance(points, (int, float)) or points < 0:
            found.append(f"a graded cell needs points >= 0, got {points!r}")
    elif "points" in meta:
        found.append("points on a cell that is not graded")
    if task and cell_type != "markdown":
        found.append("task cells must be markdown")
    if not task and cell_type == "markdown" and bool(grade) != bool(solution):
        found.append("a markdown answer cell must be both grade and solution")
    return found
