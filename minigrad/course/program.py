"""Rebuild a worksheet's program from a trusted template and a learner's cells.

Grading never runs the submitted notebook as it is. It takes our own copy of
the worksheet (the *template*), swaps in the learner's code for each solution
cell, found by its nbgrader ``grade_id``, and ignores everything else in the
submission: outputs, tags, edited locked cells, extra cells.

Two kinds of template cells are left out of the program: graded self-check
cells (``grade: true``), which grading replaces with its own checks, and
cells tagged ``demo``, which only show the learner's code at work (training
a network, drawing a picture) and would cost time without adding a check.
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


@dataclass(frozen=True)
class ProgramCell:
    index: int  # cell index in the template notebook
    grade_id: str | None  # set for solution cells
    source: str


@dataclass(frozen=True)
class CellError:
    index: int
    grade_id: str | None
    type: str
    message: str
    line: int | None

    def describe(self) -> str:
        where = f"cell '{self.grade_id}'" if self.grade_id else f"cell {self.index}"
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
        filename = cell_file(_process_cells_dir(), cell.grade_id or cell.index, cell.source)
        try:
            exec(compile(cell.source, filename, "exec"), namespace)
        except SyntaxError as e:
            errors.append(CellError(cell.index, cell.grade_id, "SyntaxError", e.msg or str(e), e.lineno))
        except Exception as e:  # noqa: BLE001 - a learner's cell may raise anything
            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == filename]
            errors.append(CellError(cell.index, cell.grade_id, type(e).__name__, str(e)[:300],
                                    frames[-1].lineno if frames else None))
    return namespace, errors


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
