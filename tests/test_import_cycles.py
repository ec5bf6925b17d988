"""No import cycle inside a package: a reader can start at the bottom module and never jump up.

The walk reads the source (``ast``), so it sees every ``import`` a module holds, the ones
inside functions too: an import moved into a function defers a cycle, it does not remove
it (that is how ``grade_cli`` and ``gradescope`` once imported each other). A package's
``__init__`` counts as a module of its own; ``from pkg import name`` points at the
submodule ``pkg.name`` when there is one, else at ``pkg``.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The packages kept free of cycles: all of minigrad (autograd below the tensor, the tensor below
# the ops that give it its methods, the course and the grader above them all).
PACKAGES = ("minigrad",)


def modules_of(root: Path, package: str) -> dict[str, Path]:
    """Dotted name -> file, for every module of ``package`` (its folder under ``root``)."""
    folder = root.joinpath(*package.split("."))
    modules = {}
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules among ``modules`` that ``name`` (at ``path``) imports, anywhere in its source."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def within(dotted: str) -> str | None:
        """``dotted``, or its longest prefix that is one of ``modules``."""
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(within(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
            source = ".".join(base + ([node.module] if node.module else []))
            for alias in node.names:
                found.add(within(f"{source}.{alias.name}") if f"{source}.{alias.name}" in modules else within(source))
    return found - {None, name}


def import_graph(root: Path, package: str) -> dict[str, set[str]]:
    modules = modules_of(root, package)
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as ``[a, b, ..., a]``, or None: a depth-first walk that meets a module still on its path."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> list[str] | None:
        if name in path:
            return path[path.index(name):] + [name]
        if name in done:
            return None
        path.append(name)
        for target in sorted(graph.get(name, ())):
            cycle = visit(target)
            if cycle:
                return cycle
        path.pop()
        done.add(name)
        return None

    return next((cycle for name in sorted(graph) if (cycle := visit(name))), None)


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycle(package):
    graph = import_graph(ROOT, package)
    assert any(graph.values()), f"the walk found no imports in {package}: is it reading them?"
    cycle = find_cycle(graph)
    assert cycle is None, (
        f"import cycle in {package}: {' -> '.join(cycle)}. Move what the modules need from each other "
        "into a module below both (as grading/options.py holds the limit flags both grading commands take).")


def test_the_walk_finds_a_cycle_hidden_in_a_function(tmp_path):
    """The checker can fail: a cycle through an import inside a function, and a relative import."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "cli.py").write_text("import json\n\ndef main():\n    from pkg.sub import bundle\n")
    (pkg / "sub" / "bundle.py").write_text("def build():\n    from ..cli import main\n")
    (pkg / "low.py").write_text("X = 1\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.cli"] == {"pkg.sub.bundle"} and graph["pkg.sub.bundle"] == {"pkg.cli"}
    assert find_cycle(graph) == ["pkg.cli", "pkg.sub.bundle", "pkg.cli"]

    (pkg / "sub" / "bundle.py").write_text("from pkg import low\nfrom . import VERSION\n")
    graph = import_graph(tmp_path, "pkg")
    assert graph["pkg.sub.bundle"] == {"pkg.low", "pkg.sub"}
    assert find_cycle(graph) is None
