"""What a submitted notebook's layout changes about its grade, in words for the learner.

The grader runs the worksheet *as shipped* with the learner's solution cells and added
cells (``program.learner_program``). Three layouts make that differ from what the
learner's own kernel ran, and both the grader (a note in the result) and the self-check
say so, with the same sentences:

- one of the worksheet's own cells was edited (a helper appended to the import cell):
  the grader runs the worksheet's version, so the edit is lost;
- a solution cell appears twice (a copied cell keeps its ``grade_id``): the grader cannot
  tell which is the answer and runs the worksheet's stub for it;
- a cell below a part's solution cell defines one of the part's names again (a leftover
  experiment): the grader, like a Restart & Run All, grades that last definition.

Plain data in, sentences out: no learner code runs here.
"""
from __future__ import annotations

import ast

from minigrad.course.program import ADDED, learner_program, match_cells

__all__ = ["layout_problems", "top_level_names"]


def _nbgrader(cell) -> dict:
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    meta = meta.get("nbgrader") if isinstance(meta, dict) else None
    return meta if isinstance(meta, dict) else {}


def _source(cell) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _first_line(source: str) -> str:
    line = next((l.strip() for l in source.splitlines() if l.strip()), "")
    return line if len(line) <= 60 else line[:57] + "..."


def layout_problems(parts: dict, template: dict, notebook: dict, missing_cells: bool = True) -> list[str]:
    """Sentences, one per problem, for a notebook graded against ``template``; [] when its layout
    changes nothing. ``parts``: the stage's ``grade_id -> names`` (``Stage.parts``), or some of
    them; ``missing_cells``: also say which of their cells are missing or duplicated (the grader
    says that in the checks' feedback instead)."""
    problems: list[str] = []
    cells = template["cells"]
    for position, index, source in match_cells(template, notebook):
        if index is None:
            continue
        cell = cells[index]
        meta = _nbgrader(cell)
        tags = cell.get("metadata", {}).get("tags", [])
        if meta.get("solution") or meta.get("grade") or "demo" in tags:
            continue  # the learner's own cell, a self-check or a demo: the grader does not run it as given
        if _normal(source) != _normal(_source(cell)):
            problems.append(f"cell {position} (`{_first_line(_source(cell))}`) is one of the worksheet's own cells, "
                            "and it was edited: the grader runs it as the worksheet has it, so the edit is lost. "
                            "Put your code in a cell of your own (a new cell) and restore this one")
    program, _, missing = learner_program(template, notebook)
    for gid, message in missing.items() if missing_cells else ():
        if gid in parts:
            problems.append(message + "; until then the grader runs the worksheet's stub for it")
    position_of = {gid: i for i, c in enumerate(notebook.get("cells", [])) if isinstance(c, dict)
                   for gid in [_nbgrader(c).get("grade_id")] if isinstance(gid, str)}
    for gid, names in parts.items():
        at = next((n for n, c in enumerate(program) if c.grade_id == gid), None)
        if at is None or gid in missing:
            continue
        for cell in program[at + 1:]:
            again = sorted(set(names) & top_level_names(cell.source))
            if not again:
                continue
            where = (f"cell {cell.index[len(ADDED):]}" if isinstance(cell.index, str) else f"cell {cell.index}")
            shown = ", ".join(f"`{n}`" for n in again)
            problems.append(f"{shown} (part {gid}) is defined again in {where}, below your answer (cell "
                            f"{position_of.get(gid, '?')}): a Restart & Run All and the grader use that last "
                            "definition. Delete or rename the one below")
    return problems


def top_level_names(source: str) -> set[str]:
    """The names a cell binds at module level (def, class, assignment, import, for, with)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    names: set[str] = set()

    def visit(statements) -> None:
        for node in statements:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
                continue
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names.update((a.asname or a.name).split(".")[0] for a in node.names if a.name != "*")
                continue
            for child in ast.walk(node):
                if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
                    names.add(child.id)
                elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                    break
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    visit(inner)

    visit(tree.body)
    return names
