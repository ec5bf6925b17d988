"""Rebuild a worksheet's program: the learner's notebook as it runs top to bottom.

The grader and the self-check must grade the same definitions, so the program
is the submitted notebook's code cells *in the notebook's order*, with:

- each solution cell (nbgrader ``grade_id``) holding the learner's code;
- each cell the learner added (a helper, an import, an experiment) holding the
  learner's code too, since a Restart & Run All runs it;
- every other cell taken from our own copy of the worksheet (the *template*),
  found by ``grade_id``, else by the cell's id, else by its source: an edited
  locked cell runs as the template has it, and a deleted one is put back where
  the template has it.

Left out: graded self-check cells (``grade: true``), which grading replaces
with its own checks, and cells tagged ``demo``, which only show the learner's
code at work (training a network, drawing a picture). IPython syntax in the
learner's cells (``%timeit``, ``!pip``) is not Python: those lines do nothing
in the program (``%time stmt`` runs ``stmt``).
"""
from __future__ import annotations

import atexit
import hashlib
import re
import shutil
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path


ADDED = "added_"  # key prefix of a cell the learner added: "added_7" is cell 7 of their notebook


@dataclass(frozen=True)
class ProgramCell:
    index: int | str  # cell index in the template notebook, or "added_N" for the learner's added cell N
    grade_id: str | None  # set for solution cells
    source: str

    @property
    def key(self) -> str | int:
        """What the cell's file is named after (``cell_file``)."""
        return self.grade_id or self.index

    @property
    def learner(self) -> bool:
        """Whether the learner wrote this cell (a solution cell or an added one)."""
        return self.grade_id is not None or isinstance(self.index, str)


@dataclass(frozen=True)
class CellError:
    index: int | str
    grade_id: str | None
    type: str
    message: str
    line: int | None

    def describe(self) -> str:
        where = (f"cell '{self.grade_id}'" if self.grade_id else
                 f"your added cell {self.index[len(ADDED):]}" if isinstance(self.index, str) else f"cell {self.index}")
        line = f", line {self.line}" if self.line else ""
        return f"{where}{line}: {self.type}: {self.message}"


def _nbgrader(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def solution_sources(notebook) -> dict[str, str]:
    """``grade_id -> source`` of every solution code cell (raises on duplicates)."""
    found: dict[str, str] = {}
    for cell in notebook["cells"]:
        meta = _nbgrader(cell)
        if cell.get("cell_type") == "code" and meta.get("solution"):
            grade_id = meta.get("grade_id")
            if grade_id in found:
                raise ValueError(f"the notebook has two cells with grade_id '{grade_id}'")
            found[grade_id] = _source(cell)
    return found


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def build_program(template, learner_cells: dict[str, str]) -> list[ProgramCell]:
    """The template's code cells, with each solution cell replaced by the learner's version."""
    program = []
    for index, cell in enumerate(template["cells"]):
        meta = _nbgrader(cell)
        tags = cell.get("metadata", {}).get("tags", [])
        if cell.get("cell_type") != "code" or meta.get("grade") or "demo" in tags:
            continue
        grade_id = meta.get("grade_id") if meta.get("solution") else None
        source = learner_cells.get(grade_id, _source(cell)) if grade_id else _source(cell)
        program.append(ProgramCell(index, grade_id, source))
    return program


def _included(cell) -> bool:
    """A template code cell that belongs in the program (not a self-check, not a demo)."""
    tags = cell.get("metadata", {}).get("tags", [])
    return cell.get("cell_type") == "code" and not _nbgrader(cell).get("grade") and "demo" not in tags


def learner_program(template, notebook) -> tuple[list[ProgramCell], dict[str, str], dict[str, str]]:
    """The program a Restart & Run All of ``notebook`` runs, with trusted template cells.

    Returns ``(program, sources, problems)``: the cells in the notebook's order
    (see the module docstring), ``grade_id -> source`` of the solution cells
    found, and ``grade_id -> message`` for those missing or duplicated (run as
    the template's stub).
    """
    sources, problems = learner_cells(notebook, solution_grade_ids(template))
    order: list = []  # template indices and ("added", learner index, source)
    placed: set[int] = set()
    for position, index, source in match_cells(template, notebook):
        if index is None:
            if source.strip():
                order.append(("added", position, source))
        elif index not in placed:
            placed.add(index)
            order.append(index)
    # A template cell the notebook lost goes back right after the template cell before it.
    after: dict[int, list[int]] = {}
    for i, cell in enumerate(template["cells"]):
        if _included(cell) and i not in placed:
            after.setdefault(max((p for p in placed if p < i), default=-1), []).append(i)
    merged: list = after.get(-1, [])
    for entry in order:
        merged.append(entry)
        if isinstance(entry, int):
            merged += after.get(entry, [])
    program = []
    for entry in merged:
        if isinstance(entry, tuple):
            program.append(ProgramCell(f"{ADDED}{entry[1]}", None, python_source(entry[2])))
            continue
        cell = template["cells"][entry]
        if not _included(cell):
            continue
        grade_id = _nbgrader(cell).get("grade_id") if _nbgrader(cell).get("solution") else None
        source = python_source(sources[grade_id]) if grade_id in sources else _source(cell)
        program.append(ProgramCell(entry, grade_id, source))
    return program, sources, problems


def match_cells(template, notebook) -> list[tuple[int, int | None, str]]:
    """``(position, template index or None, source)`` for each code cell of ``notebook``: the
    template cell it is (by ``grade_id``, else by cell id, else by its source), or None for a cell
    the learner added. A template cell matched twice (a copied cell keeps its ``grade_id`` and
    id) is matched by its first copy; a later copy also gives its index."""
    by_grade_id, by_id, by_source = {}, {}, {}
    for index, cell in enumerate(template["cells"]):
        if cell.get("cell_type") != "code":
            continue
        if isinstance(_nbgrader(cell).get("grade_id"), str):
            by_grade_id[_nbgrader(cell)["grade_id"]] = index
        if isinstance(cell.get("id"), str):
            by_id[cell["id"]] = index
        if not _nbgrader(cell).get("solution"):
            by_source.setdefault(_source(cell).strip(), []).append(index)
    matched: list[tuple[int, int | None, str]] = []
    placed: set[int] = set()
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    for position, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        meta = cell.get("metadata")
        meta = meta.get("nbgrader") if isinstance(meta, dict) else None
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) and all(isinstance(x, str) for x in source) else source
        if not isinstance(source, str):
            continue
        index = by_grade_id.get(gid) if isinstance(gid, str) else None
        if index is None and isinstance(cell.get("id"), str):
            index = by_id.get(cell["id"])
        if index is None:
            index = next((i for i in by_source.get(source.strip(), ()) if i not in placed), None)
        if index is not None:
            placed.add(index)
        matched.append((position, index, source))
    return matched


_TIMING_MAGICS = ("time", "timeit", "capture", "prun")


def python_source(source: str) -> str:
    """A cell's code without IPython syntax, which a plain Python program cannot run.

    ``%magic`` and ``!shell`` lines become ``pass`` (``%time stmt`` becomes
    ``stmt``); a ``%%time``-like cell magic is dropped and its body kept; any
    other cell magic (``%%bash``, ``%%writefile``) empties the cell. Source that
    compiles as it is is returned unchanged.
    """
    try:
        compile(source, "<cell>", "exec")
        return source  # plain Python (a line may well start with `%` inside an expression)
    except (SyntaxError, ValueError):
        pass
    lines = source.splitlines(keepends=True)
    if lines and lines[0].lstrip().startswith("%%"):
        if lines[0].strip()[2:].split(" ")[0] not in _TIMING_MAGICS:
            return ""
        lines = lines[1:]
    out = []
    for line in lines:
        stripped = line.lstrip()
        if not stripped.startswith(("%", "!")):
            out.append(line)
            continue
        indent = line[: len(line) - len(stripped)]
        if stripped.startswith("%time ") and not stripped.startswith("%timeit"):
            out.append(indent + stripped[len("%time "):])
        else:
            out.append(f"{indent}pass  # {stripped.rstrip()}\n")
    return "".join(out)


def cell_file(directory: str | Path, key: str | int, source: str) -> str:
    """Write a cell to a real file and return its path, to compile the cell under.

    With a real file, tracebacks show the learner's lines and Numba's
    ``cache=True`` finds the source it needs. The name carries the cell's key
    (``is_cell_file`` matches on it) and a hash of its content, so a changed
    cell never meets a stale Numba cache.
    """
    digest = hashlib.sha1(source.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    path = Path(directory) / f"cell_{re.sub(r'[^A-Za-z0-9_]', '_', str(key))}_{digest}.py"
    if not path.exists():
        path.write_text(source, encoding="utf-8", errors="surrogatepass")
    return str(path)


def is_cell_file(filename: str, key: str | int) -> bool:
    """Whether ``filename`` is a file written by ``cell_file`` for this cell key."""
    return Path(filename).name.startswith(f"cell_{re.sub(r'[^A-Za-z0-9_]', '_', str(key))}_")


_cells_dir: str | None = None


def _process_cells_dir() -> str:
    """One folder per process for in-process execution, removed at exit."""
    global _cells_dir
    if _cells_dir is None:
        _cells_dir = tempfile.mkdtemp(prefix="minigrad-cells-")
        atexit.register(shutil.rmtree, _cells_dir, True)
    return _cells_dir


def execute_program(program: list[ProgramCell], namespace: dict | None = None) -> tuple[dict, list[CellError]]:
    """Run the cells in order in one namespace; a failing cell is recorded and the rest still run."""
    namespace = {"__name__": "__main__"} if namespace is None else namespace
    errors = []
    for cell in program:
        filename = cell_file(_process_cells_dir(), cell.key, cell.source)
        try:
            exec(compile(cell.source, filename, "exec"), namespace)
        except SyntaxError as e:
            errors.append(CellError(cell.index, cell.grade_id, "SyntaxError", e.msg or str(e), e.lineno))
        except Exception as e:  # noqa: BLE001 - a learner's cell may raise anything
            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == filename]
            errors.append(CellError(cell.index, cell.grade_id, type(e).__name__, str(e)[:300],
                                    frames[-1].lineno if frames else None))
    return namespace, errors


def cell_key(filename: str) -> str | None:
    """The key of the cell a ``cell_file`` was written for, or None for any other file."""
    match = re.fullmatch(r"cell_(.+)_[0-9a-f]{12}\.py", Path(filename).name)
    return match.group(1) if match else None


def code_files(obj) -> list[str] | None:
    """The files the code of a function, Numba kernel or class was compiled from.

    None for an object without code (a number, a module's instance). A class
    gives the files of the functions in its own body (its methods, static or
    not), an empty list if it has none (``class Exp(TheirExp): pass``).
    """
    def of_function(f) -> str | None:
        f = getattr(f, "py_func", f)  # a Numba dispatcher
        f = getattr(f, "__func__", f)  # staticmethod, classmethod, bound method
        for _ in range(10):  # through decorators that keep __wrapped__ (once_differentiable, functools.wraps)
            f = getattr(f, "__wrapped__", None) or f
        code = getattr(f, "__code__", None)
        return code.co_filename if code is not None and hasattr(code, "co_filename") else None

    try:
        if isinstance(obj, type):
            files = []
            for value in vars(obj).values():
                if isinstance(value, property):
                    value = value.fget
                name = of_function(value)
                if name is not None:
                    files.append(name)
            return files
        name = of_function(obj)
        return None if name is None else [name]
    except Exception:  # noqa: BLE001 - a learner's object with a hostile __getattr__
        return None


def borrowed_names(parts: dict, namespace: dict, is_learner_file) -> dict[str, list[str]]:
    """``part -> [name, ...]``: objects a part asks for whose code does not come from the learner.

    Every function or class a part asks the learner to define must have been
    compiled from a learner cell (``is_learner_file(co_filename)``). One found
    in the namespace by other means (``from minigrad... import``, or walking
    minigrad's modules with importlib and ``globals().update``) is reported,
    for an instructor's review. A class counts as the learner's when at least one
    function of its own body is (a worksheet's cell may add methods to it), as
    borrowed when none is (``class Exp(TheirExp): pass``).
    """
    found: dict[str, list[str]] = {}
    for part, names in parts.items():
        for name in names:
            if name not in namespace:
                continue
            files = code_files(namespace[name])
            if files is None:
                continue
            mine = [is_learner_file(f) for f in files]
            if not (any(mine) if isinstance(namespace[name], type) else all(mine)):
                found.setdefault(part, []).append(name)
    return found


def is_learner_cell_file(filename: str, grade_ids) -> bool:
    """Whether ``filename`` is the file of a learner's cell: a solution cell or an added one."""
    key = cell_key(filename)
    return key is not None and (key in grade_ids or key.startswith(ADDED))


def load_notebook(path: str | Path):
    """Read a notebook as plain JSON data (nbformat is only needed to write)."""
    import json

    with open(path, encoding="utf-8") as f:
        return json.load(f)


def namespace_for(template_path: str | Path, learner_cells: dict[str, str] | None = None) -> tuple[dict, list[CellError]]:
    """Execute a worksheet's program in this process (for tests and the notebook self-check)."""
    template = load_notebook(template_path)
    return execute_program(build_program(template, learner_cells or {}))


def solution_grade_ids(template) -> list[str]:
    """The grade_ids of the template's solution code cells, in notebook order."""
    return [_nbgrader(cell)["grade_id"] for cell in template["cells"]
            if cell.get("cell_type") == "code" and _nbgrader(cell).get("solution")
            and isinstance(_nbgrader(cell).get("grade_id"), str)]


def learner_cells(notebook, grade_ids) -> tuple[dict[str, str], dict[str, str]]:
    """Find each of ``grade_ids`` in a submitted notebook, without raising.

    Returns ``(sources, problems)``: ``grade_id -> source`` for each id found in
    exactly one code cell, and ``grade_id -> message`` for each id that is
    missing, duplicated, or not a code cell. Everything else in the notebook
    (outputs, tags, kernelspec, other cells) is ignored.
    """
    wanted = set(grade_ids)
    found: dict[str, list] = {gid: [] for gid in grade_ids}
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    for index, cell in enumerate(cells if isinstance(cells, list) else []):
        if not isinstance(cell, dict):
            continue
        meta = cell.get("metadata")
        meta = meta.get("nbgrader") if isinstance(meta, dict) else None
        gid = meta.get("grade_id") if isinstance(meta, dict) else None
        if isinstance(gid, str) and gid in wanted:
            found[gid].append((index, cell))
    sources: dict[str, str] = {}
    problems: dict[str, str] = {}
    for gid in grade_ids:
        hits = found[gid]
        if not hits:
            problems[gid] = (f"no cell with grade_id '{gid}': was the cell deleted, or its metadata edited? "
                             "Copy your code into a fresh copy of the worksheet's cell")
        elif len(hits) > 1:
            where = ", ".join(str(i) for i, _ in hits)
            problems[gid] = (f"{len(hits)} cells (cells {where}) have grade_id '{gid}': a copied cell keeps its "
                             "grade_id. Keep your answer in one of them and delete the others")
        else:
            index, cell = hits[0]
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(line, str) for line in source):
                source = "".join(source)
            if cell.get("cell_type") != "code" or not isinstance(source, str):
                problems[gid] = f"the cell with grade_id '{gid}' (cell {index}) is not a code cell"
            else:
                sources[gid] = source
    return sources, problems
