"""Read back the score tables a page draws as HTML (``ui.html_table``) as frames: first column the index,
"-" as NaN, other cells as numbers; and the text of an HTML block as a reader sees it."""

from __future__ import annotations

import math
import re
from html.parser import HTMLParser
from typing import Any

import pandas as pd


class _Tables(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self.tables and self.tables[-1]:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _number(cell: str) -> Any:
    return math.nan if cell == "-" else float(cell)


def tables(html: str) -> list[pd.DataFrame]:
    parser = _Tables()
    parser.feed(html)
    frames = []
    for head, *rows in parser.tables:
        frame = pd.DataFrame([[_number(c) for c in r[1:]] for r in rows], columns=head[1:], index=[r[0] for r in rows])
        frame.index.name = head[0]
        frames.append(frame)
    return frames


def page_tables(at: Any) -> list[pd.DataFrame]:
    """Every HTML score table of an AppTest page, in page order."""
    return [frame for block in at.get("html") for frame in tables(block.value)]


def text(html: str) -> str:
    """What a reader sees of an HTML block: its text and images' alt texts, tags (and style sheets) removed."""
    html = re.sub(r"<style\b.*?</style>", " ", html, flags=re.S | re.I)
    alts = " ".join(re.findall(r'alt="([^"]*)"', html))
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip() + (" " + alts if alts else "")
