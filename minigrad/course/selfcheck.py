"""``check(stage)``: the self-check cell of a worksheet.

It runs the stage's checks on the notebook's own definitions, in the notebook's
process, and prints the same verdicts the grader would give (the grader runs
the probes in a sandbox instead, but judges them with the same code).

The grader runs the *saved* notebook top to bottom (``program.learner_program``)
and then checks. The kernel may hold other definitions: a cell run out of
order, a helper whose cell was deleted or edited since it ran, a name a later
cell redefines. When the notebook file can be found (Jupyter tells the kernel
its path), the self-check compares the definitions it grades with the ones a
top-to-bottom run of the saved file gives, and says so in one line when they
differ. It also notes, as the grader does for review, a graded name whose code
does not come from the notebook's cells.
"""
from __future__ import annotations

import ast
import dis
import inspect
import linecache
import os
import sys
from dataclasses import replace
from pathlib import Path

from minigrad.course.checks import Stage, StageReport, format_report, run_stage
from minigrad.course.program import (
    borrowed_names,
    cell_key,
    code_files,
    learner_program,
    load_notebook,
)
from minigrad.course.stages import get_stage

RUN_ALL = "the grader runs the saved notebook top to bottom: Restart & Run All before you submit"


def check(stage: str, part: str | None = None, namespace: dict | None = None, seed: int = 0) -> StageReport:
    """Check a stage (or one graded ``part`` of it) against the caller's definitions.

    A part's check reports exactly the points the full check (and the grader)
    gives that part: a check whose ``needs`` lie in another part runs only if
    those pass, as in the full check.
    """
    if namespace is None:
        namespace = inspect.currentframe().f_back.f_globals
    selected = get_stage(stage)
    if part is not None and part not in selected.parts:
        raise KeyError(f"stage {selected.name} has no part {part!r}; its parts are: {', '.join(selected.parts)}")
    report = run_part(selected, namespace, part, seed)
    print(format_report(report))
    for line in notes(selected, part, namespace):
        print(line)
    if report.max_points and not report.points:
        # nbgrader's validate calls a grade cell with stderr output failed (and scores it 0, as
        # here); without it, 0 points would read "Partial credit; passed some but not all".
        print(f"0 of {report.max_points:g} points: no check passes yet (see the table above)", file=sys.stderr)
    return report


def run_part(stage: Stage, namespace: dict, part: str | None = None, seed: int = 0) -> StageReport:
    """The stage's report, or one part's: its checks, judged after the checks they need."""
    if part is None:
        selected = stage
    else:
        by_id = {c.id: c for c in stage.checks}
        wanted = {c.id for c in stage.checks if c.part == part}
        todo = list(wanted)
        while todo:
            for need in by_id[todo.pop()].needs:
                if need not in wanted:
                    wanted.add(need)
                    todo.append(need)
        checks = tuple(c for c in stage.checks if c.id in wanted)
        parts = {p: names for p, names in stage.parts.items() if any(c.part == p for c in checks)}
        selected = replace(stage, parts=parts, checks=checks)
    missing = [n for names in selected.parts.values() for n in names if n not in namespace]
    report = run_stage(selected, _with_stubs(namespace, missing), run_seed=seed)
    if part is not None:
        own = {c.id for c in stage.checks if c.part == part}
        report.results = [r for r in report.results if r.check in own]
    return report


def _with_stubs(namespace: dict, missing: list[str]) -> dict:
    """Names the learner hasn't defined yet count as 'not implemented', not as a crash."""
    if not missing:
        return namespace

    def not_defined(*args, **kwargs):
        raise NotImplementedError

    return {**namespace, **{name: not_defined for name in missing}}


# -- what the grader would see differently -----------------------------------------------------
def notes(stage: Stage, part: str | None, namespace: dict) -> list[str]:
    """One-line notes: definitions the grader would not see, and names not defined by the notebook."""
    parts = stage.parts if part is None else {part: stage.parts[part]}
    lines = []
    try:
        differences = parity_problems(parts, namespace)
    except Exception:  # noqa: BLE001 - a note must never break the self-check
        differences = []
    if differences:
        lines.append(f"note: {'; '.join(differences[:3])}: {RUN_ALL}")
    is_learner = _cell_file_test()
    if is_learner is not None:
        for name_part, names in borrowed_names(parts, namespace, is_learner).items():
            shown = ", ".join(f"`{n}`" for n in names)
            lines.append(f"note: {shown} (part {name_part}) was not defined by your cells, and the grader flags "
                         "that for an instructor's review: write it yourself in the cell")
    return lines


def _cell_file_test():
    """A test for 'this file is a notebook cell', or None outside IPython and the grader's cells."""
    try:
        shell = get_ipython()  # type: ignore[name-defined]  # noqa: F821
    except NameError:
        shell = None
    known = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if known is None:
        return None
    return lambda filename: filename in known or cell_key(filename) is not None


def notebook_path(namespace: dict) -> Path | None:
    """The notebook file this kernel runs, if the front end says (JupyterLab, Notebook, VS Code)."""
    for candidate in (namespace.get("__vsc_ipynb_file__"), namespace.get("__session__"),
                      os.environ.get("JPY_SESSION_NAME")):
        if not isinstance(candidate, str) or not candidate.endswith(".ipynb"):
            continue
        for path in (Path(candidate), Path.cwd() / Path(candidate).name):
            if path.is_file():
                return path
    return None


def parity_problems(parts: dict, namespace: dict, notebook: dict | None = None,
                    executed: set[str] | None = None) -> list[str]:
    """How the graded definitions in ``namespace`` differ from a top-to-bottom run of the saved notebook.

    Looks at the names the parts ask for and, through the globals their code
    uses, at the helpers they call: each must be defined in the kernel exactly
    as the last cell of the notebook that defines it has it. ``executed``: the
    sources of the cells this session ran (default: IPython's history), so that
    a cell that ran and failed is left to the checks.
    """
    if executed is None:
        history = namespace.get("In")
        if isinstance(history, list):
            executed = {_normal(source) for source in history if isinstance(source, str)}
    if notebook is None:
        path = notebook_path(namespace)
        if path is None:
            return []
        notebook = load_notebook(path)
    program, _, _ = learner_program(notebook, notebook)
    defined: dict[str, list[tuple[int | str, str]]] = {}
    for cell in program:
        for name in top_level_names(cell.source):
            defined.setdefault(name, []).append((cell.index, cell.source))
    sources = {_normal(cell.source) for cell in program}
    problems: list[str] = []
    seen: set[str] = set()
    todo = [name for names in parts.values() for name in names]
    demo = {name: index for index, cell in enumerate(notebook["cells"])
            if "demo" in cell.get("metadata", {}).get("tags", []) and cell.get("cell_type") == "code"
            for name in top_level_names("".join(cell.get("source", "")))}
    while todo:
        name = todo.pop(0)
        if name in seen:
            continue
        seen.add(name)
        in_kernel, cells = name in namespace, defined.get(name)
        if not in_kernel and not cells:
            continue  # not defined anywhere: the checks say so
        if not in_kernel:
            if executed is None or _normal(cells[-1][1]) not in executed:  # it ran, and failed: the checks say so
                problems.append(f"`{name}` is defined in cell {cells[-1][0]}, which has not run yet in this session")
            continue
        value = namespace[name]
        files = code_files(value) or []
        kernel_source = _cell_source(files[0]) if files else None
        if not cells:
            where = (f"only by cell {demo[name]}, a demo cell the grader skips" if name in demo else
                     "by no cell of the saved notebook (a deleted cell, or one that is not saved yet)")
            problems.append(f"`{name}` is defined in this session, but {where}")
            continue
        if kernel_source is not None:
            last, kernel_source = _normal(cells[-1][1]), _normal(kernel_source)
            if kernel_source not in sources:
                problems.append(f"`{name}` in this session comes from a cell the saved notebook does not have "
                                f"(it defines `{name}` in cell {cells[-1][0]}): edited since, or not saved yet")
            elif kernel_source != last and (last not in executed if executed is not None else
                                            kernel_source in {_normal(source) for _, source in cells}):
                problems.append(f"`{name}` is redefined further down (cell {cells[-1][0]}), and the grader "
                                "grades the last definition")
        if files and all(_cell_source(f) is not None for f in files):
            todo.extend(n for n in _globals_used(value) if n not in seen)
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


def _cell_source(filename: str) -> str | None:
    """The source of a notebook cell a function was compiled from (IPython keeps it), else None."""
    lines = linecache.cache.get(filename)
    if lines is None or lines[1] is not None:  # IPython caches cells with mtime None
        return None
    return "".join(lines[2])


def _normal(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip().splitlines())


def _globals_used(value) -> set[str]:
    """The global names the code of a function, kernel or class reads."""
    functions = [value] if not isinstance(value, type) else list(vars(value).values())
    names: set[str] = set()
    for f in functions:
        f = getattr(f, "py_func", f)  # a Numba kernel
        f = getattr(f, "__func__", f)  # a static or class method
        code = getattr(f, "__code__", None)
        stack = [code] if code is not None else []
        while stack:
            code = stack.pop()
            for instruction in dis.get_instructions(code):
                if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME"):
                    names.add(instruction.argval)
            stack.extend(c for c in code.co_consts if inspect.iscode(c))
    return names
