"""The one CSV writer of the product: every cell that a spreadsheet would run as a formula is neutralised.

Why: exports carry text from datasets and model answers, so a cell like ``=HYPERLINK("http://x", "click")``
would execute when the file is opened in Excel, LibreOffice or Google Sheets (CSV injection). OWASP's rule:
a text cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return gets a leading ``'``,
which spreadsheets treat as "this is text" and do not display. The full-width forms ``＝ ＋ － ＠`` are
treated the same way as a precaution: Japanese input methods turn them into their ASCII twins.

Numbers stay numbers: an ``int`` or ``float`` value (a score, a delta of -0.25) is written as is, because a
spreadsheet reads ``-0.25`` as a number, never as a formula; only *strings* are prefixed. A string that
happens to look like a number (``"-1"`` in a text column) is still prefixed — the writer does not guess.

The rule is reversible, so a downloaded dataset loads back unchanged: the writer adds one ``'`` to any
text of the form ``'…'<formula character>…`` (zero or more apostrophes, then a formula character), and
``restore_cell`` removes exactly one from any text of that form with at least one apostrophe. The dataset
loader calls it on CSV cells, which also matches what a spreadsheet shows for a ``'=…`` cell.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

FORMULA_CHARS = "=+-@\t\r\uff1d\uff0b\uff0d\uff20"
_NEEDS_PREFIX = re.compile(f"^'*[{re.escape(FORMULA_CHARS)}]")
_ESCAPED = re.compile(f"^'+[{re.escape(FORMULA_CHARS)}]")


def safe_cell(value: Any) -> Any:
    """``value`` ready for a spreadsheet: strings that would start a formula get a leading ``'``; numbers,
    booleans and None pass through (None becomes an empty cell in the csv module)."""
    if isinstance(value, str):
        return "'" + value if _NEEDS_PREFIX.match(value) else value
    if isinstance(value, float) and not math.isfinite(value):
        return safe_cell(str(value))  # "-inf" would read as a formula
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    return safe_cell(str(value))


def restore_cell(text: str) -> str:
    """The inverse of ``safe_cell`` for text read back from a CSV file (one neutralising ``'`` removed)."""
    return text[1:] if _ESCAPED.match(text) else text


def dumps_csv(rows: Iterable[Sequence[Any]], header: Sequence[Any] | None = None, *, lineterminator: str = "\n") -> str:
    """CSV text of ``header`` (when given) and ``rows``, every cell through ``safe_cell``."""
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator=lineterminator)
    if header is not None:
        writer.writerow([safe_cell(c) for c in header])
    for row in rows:
        writer.writerow([safe_cell(c) for c in row])
    return buffer.getvalue()


def dumps_frame(frame: Any, *, lineterminator: str = "\n") -> str:
    """A pandas DataFrame as CSV (no index) through the same writer; NaN becomes an empty cell."""
    header = [str(c) for c in frame.columns]
    rows = (
        ["" if isinstance(v, float) and math.isnan(v) else (v.item() if hasattr(v, "item") else v) for v in row]
        for row in frame.itertuples(index=False, name=None)
    )
    return dumps_csv(rows, header, lineterminator=lineterminator)
