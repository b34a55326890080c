"""Reading a written CSV back the way a spreadsheet would, to assert that no cell runs as a formula."""

from __future__ import annotations

import csv
import io
import math

from rageval_core.core.csvsafe import FORMULA_CHARS


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def formula_cells(text: str) -> list[str]:
    """Cells a spreadsheet would evaluate: they start with a formula character and are not a plain number
    (``-0.25`` is read as a number; ``-1+A1`` or ``=HYPERLINK(...)`` as a formula)."""
    cells = [c for row in csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")) for c in row]
    return [c for c in cells if c and c[0] in FORMULA_CHARS and not _is_number(c)]


def cells(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")))
