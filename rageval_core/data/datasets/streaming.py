"""JSON Lines and CSV files read from disk row by row, so a large dataset never sits in memory three times
over (the bytes, the text and the parsed records) and may be larger than what is read whole.

The loader streams only files over its whole-read limit (``MAX_FILE_BYTES``): smaller ones keep every
check of the whole-text path. Only plain UTF-8 text (with or without BOM) is streamed, since the encoding
of a file cannot be told safely from its first bytes alone; a byte that is not UTF-8 further on refuses the
file naming the line.
"""

from __future__ import annotations

import codecs
import hashlib
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
import json
import re
from typing import Any, BinaryIO, TextIO

from rageval_core.data.datasets.column_map import ColumnMap
from rageval_core.data.datasets.decoding import head_is_plain_utf8
from rageval_core.data.datasets.formats import CsvAbort, iter_csv, iter_jsonl
from rageval_core.data.datasets.model import Format, Issue
from rageval_core.data.datasets.values import json_decoder
from rageval_core.data.datasets.rows import RowReader, counted
from rageval_core.core.types import Sample
from rageval_core.core.messages import say

HEAD_BYTES = 65536


# Control flow, outside the RagevalError tree on purpose: the loader catches it and records the line as an ``Issue``
# of the file (a dataset's problems are issues, not exceptions). tests/core/test_error_tree.py lists it.
class NotStreamable(Exception):
    """The file turned out not to be UTF-8 after its head (``line``: the first line that is not)."""

    def __init__(self, line: int) -> None:
        super().__init__(f"line {line} is not UTF-8")
        self.line = line


def streamable(path: Path, fmt: Format) -> bool:
    """True for a JSONL or CSV file whose head is plain UTF-8 text."""
    if fmt not in ("jsonl", "csv"):
        return False
    with path.open("rb") as fh:
        head = fh.read(HEAD_BYTES)
    return head_is_plain_utf8(head, complete=len(head) < HEAD_BYTES)


def stream_rows(
    path: Path, fmt: Format, file: str, issues: list[Issue], on_row: Callable[[int], None] | None = None,
    column_map: ColumnMap | None = None,
) -> tuple[list[Sample], list[Issue], int] | None:
    """(samples, row issues, rows read) of a JSONL / CSV file, reading one line at a time; None when the file
    cannot be read at all (the file-level issue is in ``issues``). Raises ``NotStreamable`` on a byte that is
    not UTF-8. ``on_row(n)`` is told every 1,000 rows how many have been read (for a progress line)."""
    reader = RowReader(file, text_cells=(fmt == "csv"), column_map=column_map)
    line_no, text = [0], [False]  # lines read; whether any was not blank
    with path.open("rb") as fh:

        def lines() -> Iterator[str]:
            return file_lines(fh, keep_newlines=fmt == "csv", line_no=line_no, text=text)

        records: Iterator[Any]
        try:
            if fmt == "csv":
                source = lines()
                first = next(source, "")
                records = iter_csv(first.removesuffix("\n"), itertools.chain([first], source), file, issues, column_map)
            else:
                records = iter_jsonl(lines())
            samples = reader.read(counted(records, on_row))
        except CsvAbort:
            if not text[0]:  # only blank lines: say so, as the whole-text reader does
                issues[-1:] = [Issue(file, None, None, say("file.empty"))]
            return None
    if not text[0]:
        issues.append(Issue(file, None, None, say("file.empty")))
    return samples, reader.map_issues() + reader.issues, reader.rows_read


def file_lines(fh: BinaryIO, *, keep_newlines: bool, line_no: list[int], text: list[bool]) -> Iterator[str]:
    """The lines of a binary file, decoded one at a time, so a byte that is not UTF-8 is named by its line
    (``NotStreamable``); line endings become "\n" as in the whole-text reader (CRLF and a lone CR too). CSV
    keeps each line's newline (a quoted cell may span lines); JSONL lines are split as the whole-text reader
    splits them. ``line_no[0]`` counts the lines given, ``text[0]`` says whether any was not blank."""
    for raw in fh:
        try:
            line = raw.decode("utf-8-sig" if line_no[0] == 0 else "utf-8")
        except UnicodeDecodeError:
            raise NotStreamable(line_no[0] + 1) from None
        if "\r" in line:
            line = line.replace("\r\n", "\n").replace("\r", "\n")
        for part in line.split("\n")[:-1] if line.endswith("\n") else line.split("\n"):
            line_no[0] += 1
            text[0] = text[0] or bool(part.strip())
            yield part + "\n" if keep_newlines else part


@dataclass(frozen=True)
class Precheck:
    """One quick pass over a file's bytes before a run reads it row by row: its SHA-256 (what a resume checks
    the file against without reading its rows), how many non-blank lines it has (a JSON Lines file's rows,
    for the progress total until the reader reaches the end) and the first line that is not UTF-8, if any."""

    sha256: str
    lines: int
    bad_line: int | None


PRECHECK_BLOCK = 1 << 20


def precheck(path: Path) -> Precheck:
    """``Precheck`` of ``path``, reading it a megabyte at a time (about 0.5 s for 100 MB here)."""
    digest = hashlib.sha256()
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    lines = newlines = 0
    bad: int | None = None
    carry = b""
    with path.open("rb") as fh:
        while True:
            block = fh.read(PRECHECK_BLOCK)
            digest.update(block)
            if bad is None:
                try:
                    decoder.decode(block, final=not block)
                except UnicodeDecodeError as exc:
                    bad = newlines + (carry + block)[: len(carry) + exc.start].count(b"\n") + 1
            if not block:
                break
            parts = (carry + block).split(b"\n")
            carry = parts.pop()
            newlines += len(parts)
            lines += sum(1 for part in parts if part.strip())
    lines += 1 if carry.strip() else 0
    return Precheck(digest.hexdigest(), lines, bad)


_SPACE = re.compile(r"[ \t\n\r]*")
ARRAY_BLOCK = 1 << 16


def iter_json_array(fh: TextIO, block: int = ARRAY_BLOCK) -> Iterator[Any]:
    """The elements of a JSON document that is one top-level array, parsed one at a time from a text stream, as
    the values a whole read gives (the same decoder). Raises ``ValueError`` (or ``RecursionError``) when the
    document is not such an array or not valid JSON: the whole read then names the problem. An element cut by
    the end of what was read is retried with twice as much text, so a large element costs O(its size)."""
    decoder = json_decoder()
    buf, pos, eof = "", 0, False

    def more(n: int) -> bool:
        nonlocal buf, pos, eof
        chunk = fh.read(n)
        if not chunk:
            eof = True
            return False
        buf, pos = buf[pos:] + chunk, 0
        return True

    def skip_space() -> str:
        nonlocal pos
        while True:
            pos = _SPACE.match(buf, pos).end()  # type: ignore[union-attr]
            if pos < len(buf) or not more(block):
                return buf[pos:pos + 1]

    if skip_space() != "[":
        raise ValueError("not a top-level array")
    pos += 1
    if skip_space() == "]":
        pos += 1
    else:
        while True:
            skip_space()
            want = block
            while True:
                try:
                    value, end = decoder.raw_decode(buf, pos)
                    if end < len(buf) or eof:  # a number at the end of the text may go on in the next block
                        break
                except json.JSONDecodeError:
                    if eof:
                        raise
                if not more(want):
                    continue  # at the end of the file: parse what there is (the error, if any, is final)
                want *= 2
            yield value
            pos = end
            sep = skip_space()
            pos += 1
            if sep == "]":
                break
            if sep != ",":
                raise ValueError("expected , or ] after an element")
    if skip_space():
        raise ValueError("text after the top-level array")
