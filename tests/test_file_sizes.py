"""Readable by layout (issue 24 item 4): no source file of the package is over 800 lines.

Lines as ``wc -l`` counts them (newline characters), every ``.py`` and ``.md`` file under
``minigrad/``. A file that grows past the limit is split by concept, as the stages
(``minigrad/course/stages/sNN_name/``) and ``nn/functional/`` are, not trimmed.
"""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "minigrad"
MAX_LINES = 800


def wc_l(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def test_the_counter_counts_as_wc_l(tmp_path):
    (tmp_path / "a.py").write_bytes(b"x = 1\n\ny = 2")  # two newlines: wc -l says 2
    assert wc_l(tmp_path / "a.py") == 2


def test_no_file_of_the_package_is_over_800_lines():
    files = sorted(p for suffix in ("*.py", "*.md") for p in PACKAGE.rglob(suffix))
    assert len(files) > 100, f"found only {len(files)} files under {PACKAGE}"
    too_long = {str(p.relative_to(PACKAGE.parent)): n for p in files if (n := wc_l(p)) > MAX_LINES}
    assert not too_long, f"files over {MAX_LINES} lines (split them by concept): {too_long}"
