"""The course checkout, and the survivors it justifies: the table under "## Mutation survivors"
in ``minigrad/course/AUTHORING.md``."""
from __future__ import annotations

import re
from pathlib import Path

from minigrad.course.mutation.operators import Mutation


def course_root() -> Path:
    """The checkout this package runs from (``minigrad/course/mutation/`` is three levels below it)."""
    return Path(__file__).resolve().parents[3]


JUSTIFICATION_HEADING = "## Mutation survivors"


def read_justifications(root: Path | None = None) -> dict[tuple, str]:
    """The table under "## Mutation survivors" in AUTHORING.md: key -> why the survivor is acceptable.

    Columns: stage | part | operator | before | after | why (code in backticks, ``\\|`` for a bar).
    """
    path = Path(root or course_root()) / "minigrad" / "course" / "AUTHORING.md"
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    if JUSTIFICATION_HEADING not in text:
        return {}
    section = text.split(JUSTIFICATION_HEADING, 1)[1].split("\n## ", 1)[0]
    found = {}
    for line in section.splitlines():
        line = line.strip()
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        if len(cells) != 6 or cells[0] == "stage":
            continue
        stage, part, operator, before, after, why = cells
        found[(stage, part, operator, before.strip("`"), after.strip("`"))] = why
    return found


def justification_row(mutation: Mutation, why: str = "TODO") -> str:
    def cell(x: str) -> str:
        return "`" + x.replace("|", "\\|") + "`"
    return f"| {mutation.stage[:2]} | {mutation.part} | {mutation.operator} | {cell(mutation.before)} | " \
           f"{cell(mutation.after)} | {why} |"

