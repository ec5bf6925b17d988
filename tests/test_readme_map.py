"""The README's map ("Where to read") lists every top-level entry of ``minigrad/``, and names only paths that exist.

An entry (a module or a package) is listed when a path in the map's first column is that entry or
lies inside it (``minigrad/autograd/graph.py`` lists ``minigrad/autograd/``). Every path the map
names, in its first column or as a full path (``minigrad/...``, ``bench/...``) in a description, must exist.
"""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "minigrad"


def map_rows() -> list[tuple[list[str], str]]:
    """(the paths in the first column, the rest of the row) for each row of the map table."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "\n## Where to read" in text, "README.md has no 'Where to read' section"
    section = text.split("\n## Where to read", 1)[1].split("\n## ", 1)[0]
    rows, in_table = [], False
    for line in section.splitlines():
        if line.startswith("| file |"):
            in_table = True
        elif in_table and not line.startswith("|"):
            break
        elif in_table and not set(line) <= set("|-: "):
            first, rest = line.strip().strip("|").split("|", 1)
            rows.append((re.findall(r"`([^`]+)`", first), rest))
    assert rows, "the 'Where to read' section has no table headed | file | what it holds |"
    return rows


def top_level_entries() -> list[str]:
    """``minigrad/x.py`` and ``minigrad/pkg/`` for every module and folder directly in the package."""
    out = []
    for path in sorted(PACKAGE.iterdir()):
        if path.name.startswith((".", "__pycache__")) or path.name.endswith(".egg-info"):
            continue
        if path.is_dir():
            out.append(f"minigrad/{path.name}/")
        elif path.suffix == ".py":
            out.append(f"minigrad/{path.name}")
    return out


def test_the_map_lists_every_top_level_entry_of_the_package():
    named = [path for paths, _ in map_rows() for path in paths]
    missing = [entry for entry in top_level_entries()
               if not any(path == entry or (entry.endswith("/") and path.startswith(entry)) for path in named)]
    assert not missing, (f"README.md's map ('Where to read') does not list {', '.join(missing)}: add a row "
                         "(or add it to a row on the same subject) saying what it holds")


def test_every_path_the_map_names_exists():
    named = []
    for paths, rest in map_rows():
        named += paths
        named += [p for p in re.findall(r"`([^`\s]+)`", rest) if p.startswith(("minigrad/", "bench/", "tests/"))]
    assert len(named) >= len(top_level_entries())
    gone = [p for p in named if not (ROOT / p).exists() or (p.endswith("/") and not (ROOT / p).is_dir())]
    assert not gone, f"README.md's map names paths that do not exist: {', '.join(gone)}"
