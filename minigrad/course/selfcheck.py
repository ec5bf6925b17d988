"""``check(stage)``: the self-check cell of a worksheet.

It runs the stage's checks on the notebook's own definitions, in the notebook's
process, and prints the same verdicts the grader would give (the grader runs
the probes in a sandbox instead, but judges them with the same code).

The grader runs the *saved* notebook top to bottom (``program.learner_program``):
the worksheet as shipped (the template in the package's ``exercises/``), with the
learner's solution cells and added cells, and then checks. The kernel may hold
other definitions: a cell run out of order, a helper whose cell was deleted or
edited since it ran, a name a later cell redefines, a helper appended to one of
the worksheet's own cells (which the grader restores), a copied solution cell.
When the notebook file can be found (Jupyter tells the kernel its path), the
self-check compares the kernel with that program (``parity_problems``) and the
notebook's layout with the shipped template (``grading.layout``); when anything
differs it grades the saved notebook as the grader does, in a fresh Python
process (``grade_saved``), prints *that* table and score, says why they differ,
and gives the session's own score in one line. So the score a self-check prints
is the grade. It also notes, as the grader does for review, a graded name whose
code does not come from the notebook's cells.
"""
from __future__ import annotations

import dis
import inspect
import json
import linecache
import os
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from minigrad.course.checks import Result, Stage, StageReport, format_report, run_stage
from minigrad.course.program import (
    borrowed_names,
    cell_key,
    code_files,
    learner_program,
    load_notebook,
)
from minigrad.course.grading.layout import layout_problems, top_level_names
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
    saved = saved_view(selected, part, namespace, seed)
    if saved is not None:
        graded, reasons = saved
        print(format_report(graded))
        for reason in reasons:
            print(f"note: {reason}")
        print(f"note: the table above is the grade of the saved notebook, run top to bottom as the grader runs it "
              f"(the worksheet's own cells as shipped, your solution cells and added cells); in this session your "
              f"cells get {report.points:g} / {report.max_points:g}. Save the notebook (Ctrl-S) if you changed cells "
              f"since; {RUN_ALL}")
        report = graded
    else:
        print(format_report(report))
    for line in notes(selected, part, namespace, parity=saved is None):
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
def notes(stage: Stage, part: str | None, namespace: dict, parity: bool = True) -> list[str]:
    """One-line notes: definitions the grader would not see (unless ``parity`` is off: said
    already), and names not defined by the notebook."""
    parts = stage.parts if part is None else {part: stage.parts[part]}
    lines = []
    try:
        differences = parity_problems(parts, namespace) if parity else []
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
                    executed: set[str] | None = None, template: dict | None = None) -> list[str]:
    """How the graded definitions in ``namespace`` differ from a top-to-bottom run of the saved notebook.

    Looks at the names the parts ask for and, through the globals their code
    uses, at the helpers they call: each must be defined in the kernel exactly
    as the last cell of the program that defines it has it. The program is the
    grader's: ``template`` (the shipped worksheet; default: the notebook itself)
    with the notebook's solution and added cells. ``executed``: the sources of
    the cells this session ran (default: IPython's history), so that a cell that
    ran and failed is left to the checks.
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
    program, _, _ = learner_program(template if template is not None else notebook, notebook)
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
                     "by no cell of the saved notebook that the grader runs (a deleted cell, one that is not "
                     "saved yet, or a worksheet cell you added it to, which the grader restores)")
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


# -- the saved notebook, graded as the grader grades it ---------------------------------------------
REPORT_MARK = "MINIGRAD-SELFCHECK-REPORT "


def shipped_template(stage: Stage) -> dict | None:
    """The worksheet as shipped with this minigrad (the wheel's ``exercises/``, or the checkout's):
    the template the grader restores the worksheet's own cells from."""
    from minigrad.course.grading.grader import find_templates

    try:
        path = find_templates() / f"{stage.number}_{stage.name}.ipynb"
    except FileNotFoundError:
        return None
    return load_notebook(path) if path.is_file() else None


def saved_view(stage: Stage, part: str | None, namespace: dict, seed: int = 0
               ) -> tuple[StageReport, list[str]] | None:
    """``(the grade of the saved notebook, why it differs from this session)``, or None when the
    notebook file is unknown or this session grades the same definitions the grader would."""
    path = notebook_path(namespace)
    if path is None:
        return None
    try:
        notebook, template = load_notebook(path), shipped_template(stage)
        if template is None or not _is_worksheet(notebook, path, stage):
            return None  # a scratch notebook that calls check(): the grader would not see it as this worksheet
        parts = stage.parts if part is None else {part: stage.parts[part]}
        reasons = layout_problems(parts, template, notebook)
        reasons += parity_problems(parts, namespace, notebook, template=template)
    except Exception:  # noqa: BLE001 - a note must never break the self-check
        return None
    if not reasons:
        return None
    graded = grade_saved(stage, part, template, notebook, seed)
    if graded is None:
        return None
    return graded, reasons


def _is_worksheet(notebook: dict, path: Path, stage: Stage) -> bool:
    """Whether the grader would take ``notebook`` for this stage's worksheet: by its file name
    (``NN_...``) or by one of the stage's solution cells (``grade_id``) in it."""
    if path.name[:2] == stage.number:
        return True
    ids = {(c.get("metadata") or {}).get("nbgrader", {}).get("grade_id") for c in notebook.get("cells", [])
           if isinstance(c, dict) and isinstance(c.get("metadata"), dict)}
    return bool(ids & set(stage.parts))


def grade_saved(stage: Stage, part: str | None, template: dict, notebook: dict, seed: int = 0,
                timeout: float = 300) -> StageReport | None:
    """Grade ``notebook`` as the grader does, in a fresh Python process: the worksheet's program
    (``learner_program``) run top to bottom, then the checks, with the grader's rules for cells
    that are missing, duplicated or raise. None if that process fails."""
    import minigrad

    root = str(Path(minigrad.__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory(prefix="minigrad-selfcheck-") as folder:
        job = Path(folder) / "job.json"
        job.write_text(json.dumps({"stage": f"{stage.number}_{stage.name}", "part": part, "seed": seed,
                                   "template": template, "notebook": notebook}), encoding="utf-8")
        env = {**os.environ, "MPLBACKEND": "Agg",
               "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
        env.pop("JPY_SESSION_NAME", None)
        try:
            run = subprocess.run([sys.executable, "-m", "minigrad.course.selfcheck", str(job)], cwd=folder,
                                 env=env, capture_output=True, text=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            return None
    lines = [line for line in run.stdout.splitlines() if line.startswith(REPORT_MARK)]
    if not lines:
        return None
    data = json.loads(lines[-1][len(REPORT_MARK):])
    return StageReport(data["stage"], [Result(**r) for r in data["results"]], data["seed"])


def _grade_job(job: dict) -> StageReport:
    """The child of ``grade_saved``: the grader's rules (``Grader.grade_stage``), in process."""
    import contextlib
    import io

    from minigrad.course.grading.grader import _cell_error
    from minigrad.course.program import execute_program

    stage, template, notebook = get_stage(job["stage"]), job["template"], job["notebook"]
    program, _, problems = learner_program(template, notebook)
    program = [replace(c, source=_template_source(template, c.index)) if c.grade_id in problems else c
               for c in program]
    cell_problems = {gid: ("failed", message) for gid, message in problems.items()}
    sink = io.StringIO()
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        namespace, errors = execute_program(program)
    for error in errors:
        if error.grade_id and error.grade_id not in problems:
            cell_problems.setdefault(error.grade_id, ("error", _cell_error(error.grade_id, {
                "type": error.type, "message": error.message, "line": error.line})))
    for gid, names in stage.parts.items():
        absent = [n for n in names if n not in namespace]
        if absent and gid not in cell_problems:
            shown = ", ".join(f"`{n}`" for n in absent)
            cell_problems[gid] = ("failed", f"your cell '{gid}' does not define {shown}: keep the function's name "
                                            "and signature as the worksheet gives them")
    for gid in cell_problems:
        for name in stage.parts.get(gid, ()):
            namespace.pop(name, None)  # its checks fail, and the checks that need them are not run
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        report = run_part(stage, namespace, job["part"], job["seed"])
    by_id = {c.id: c for c in stage.checks}
    for result in report.results:
        check = by_id[result.check]
        parts = [check.part] if check.part else list(stage.parts)
        problem = next((cell_problems[p] for p in parts if p in cell_problems), None)
        if problem and result.status != "not_run":
            result.status, result.feedback, result.points = problem[0], problem[1], 0
    return report


def _template_source(template: dict, index) -> str:
    source = template["cells"][index].get("source", "")
    return "".join(source) if isinstance(source, list) else source


if __name__ == "__main__":
    with open(sys.argv[1], encoding="utf-8") as f:
        _job = json.load(f)
    _report = _grade_job(_job)
    sys.stdout.write("\n" + REPORT_MARK + json.dumps(_report.to_dict()) + "\n")
    sys.stdout.flush()
    os._exit(0)
