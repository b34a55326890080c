"""Small score tables as one HTML block (``st.html``) instead of ``st.table``.

``st.table`` renders every cell through Streamlit's Markdown pipeline: Compare's per-category tables (a table
per method, a cell per category and criterion) were the largest part of the browser's work on the page's first
open, and the Table and Markdown-with-HTML chunks its first load. One HTML block is parsed by the browser's own
parser and sanitiser, and text in it is plain text (no Markdown: "1. 適用範囲" stays a heading, not a list).
Styles are inline, in the theme's text colour, so the block reads in light and dark themes alike.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import pandas as pd

from rageval_ui.widgets import fmt_score

_TABLE = "border-collapse: collapse; margin: .25rem 0 1rem; font-size: .875rem; color: inherit"
_CELL = "border: 1px solid rgba(128, 128, 128, .25); padding: .25rem .5rem"
_HEAD = _CELL + "; text-align: left; font-weight: 400; opacity: .75"
_NUM = _CELL + "; text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap"


def score_table(frame: pd.DataFrame, *, index_label: str, column_label: Callable[[str], str] = str,
                caption: str | None = None) -> str:
    """``frame`` (an index of row names, columns of [0, 1] scores) as an HTML table, its caption in bold above."""
    head = f'<th style="{_HEAD}">{escape(index_label)}</th>' + "".join(
        f'<th style="{_HEAD}">{escape(column_label(str(c)))}</th>' for c in frame.columns)
    body = "".join(
        f'<tr><td style="{_CELL}">{escape(str(name))}</td>'
        + "".join(f'<td style="{_NUM}">{fmt_score(v)}</td>' for v in row) + "</tr>"
        for name, row in zip(frame.index, frame.itertuples(index=False, name=None)))
    title = f"<p style=\"margin: .5rem 0 .25rem\"><b>{escape(caption)}</b></p>" if caption else ""
    return (f'{title}<table class="rageval-scores" style="{_TABLE}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table>")
