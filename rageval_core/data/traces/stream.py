"""A trace export's JSON read a piece at a time, so a file's memory is its text plus one span at a time, not
every span as Python objects at once (1M one-span traces in 37 MB took 1.1 GB read whole).

``leaves(text)`` yields ``Leaf(prefix, path, value)``: ``prefix`` is ``"line N, "`` (JSON Lines), ``"item N, "``
(a top-level array) or ``"object N, "`` (pretty JSON objects one after another, as ``ConsoleSpanExporter``
prints), ``path`` the keys and indexes inside that document, ``value`` a decoded piece. Only the lists that hold many spans are walked into (``resourceSpans`` → ``scopeSpans`` → ``spans``,
a page's ``data``, a Langfuse download's ``observations``); everything else is decoded whole by the C
decoder of ``limits.DECODER`` (one span, one trace, a page's ``meta``). A top-level object is walked only
when its first key is one of those lists, so a file of plain span objects costs one decoder call a span.

A value nested too deep for the decoder becomes a ``limits.BadValue`` (an object keeps its other keys, so
its span can still be named); bad JSON refuses the file (``JsonSyntaxError``), except on one line of JSON
Lines, which is reported and skipped (lines up to ``LINE_BUFFER`` characters are decoded before any of them
is used, so a bad line leaves nothing half-read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Generator, Iterator
from typing import Any, NamedTuple

from rageval_core.data.traces.limits import DECODER, TOO_DEEP, BadValue
from rageval_core.data.traces.model import TraceFormatError
from rageval_core.core.errors import DataError

WALK_ITEMS = ("resourceSpans", "scopeSpans", "instrumentationLibrarySpans")  # lists of objects that hold lists
LEAF_ITEMS = ("spans", "data", "observations")  # lists of spans, traces or observations
FIRST_KEYS = frozenset((*WALK_ITEMS, *LEAF_ITEMS, "trace"))  # a top-level object starting so is walked
MAX_WALK = 4  # objects walked inside each other (an OTLP request needs 3)
LINE_BUFFER = 4 * 1024 * 1024  # a JSON Lines line up to this is decoded before any of it is used

_WS = re.compile(r"[ \t\n\r]*")
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
# The json module's own scanners (C when available), not in its typed interface: one value, one string at a time.
_scan = DECODER.scan_once  # type: ignore[attr-defined]
_scanstring = json.decoder.scanstring  # type: ignore[attr-defined]


class Leaf(NamedTuple):
    prefix: str
    path: tuple[str | int, ...]
    value: Any


class JsonSyntaxError(DataError):
    """Bad JSON at ``pos`` (a character offset into the text being read)."""

    def __init__(self, pos: int, msg: str) -> None:
        super().__init__(msg)
        self.pos, self.msg = pos, msg


def line_col(text: str, pos: int) -> tuple[int, int]:
    """1-based line and column of ``pos``, as ``json.JSONDecodeError`` counts them."""
    line = text.count("\n", 0, pos) + 1
    return line, pos - text.rfind("\n", 0, pos)


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text

    def ws(self, i: int) -> int:
        text = self.text
        if i >= len(text) or text[i] not in " \t\n\r":
            return i
        return _WS.match(text, i).end()  # type: ignore[union-attr]  # matches the empty string

    def expect(self, i: int, chars: str, msg: str) -> str:
        if i >= len(self.text) or self.text[i] not in chars:
            raise JsonSyntaxError(i, msg)
        return self.text[i]

    def value(self, i: int) -> tuple[Any, int]:
        """One whole value from ``i``: ``(value, end)``."""
        try:
            return _scan(self.text, i)
        except StopIteration as exc:
            raise JsonSyntaxError(exc.value, "Expecting value") from None
        except json.JSONDecodeError as exc:
            raise JsonSyntaxError(exc.pos, exc.msg) from None
        except RecursionError:
            return self.too_deep(i)

    def too_deep(self, i: int) -> tuple[Any, int]:
        """A value too deep for the decoder: an object keeps the keys it can (its ids, to name it), anything
        else is a ``BadValue``; its end found by counting brackets, so the next value can still be read."""
        if self.text[i] != "{":
            return BadValue(TOO_DEEP), self.skip(i)
        out: dict[str, Any] = {}
        i = self.ws(i + 1)
        if self.text.startswith("}", i):
            return out, i + 1
        while True:
            key, start = self.key(i)
            try:
                out[key], end = _scan(self.text, start)
            except RecursionError:
                out[key], end = BadValue(TOO_DEEP), self.skip(start)
            except StopIteration as exc:
                raise JsonSyntaxError(exc.value, "Expecting value") from None
            except json.JSONDecodeError as exc:
                raise JsonSyntaxError(exc.pos, exc.msg) from None
            i = self.ws(end)
            if self.expect(i, ",}", "Expecting ',' delimiter") == "}":
                return out, i + 1
            i = self.ws(i + 1)

    def skip(self, i: int) -> int:
        """The end of the array or object at ``i``, by counting brackets outside strings (no recursion)."""
        depth = 0
        text = self.text
        for m in _TOKEN.finditer(text, i):
            c = text[m.start()]
            if c in "[{":
                depth += 1
            elif c in "]}":
                depth -= 1
                if depth == 0:
                    return m.end()
        raise JsonSyntaxError(len(text), "Unterminated value")

    def key(self, i: int) -> tuple[str, int]:
        """The member key at ``i`` and where its value starts."""
        self.expect(i, '"', "Expecting property name enclosed in double quotes")
        try:
            key, i = _scanstring(self.text, i + 1, True)
        except json.JSONDecodeError as exc:
            raise JsonSyntaxError(exc.pos, exc.msg) from None
        i = self.ws(i)
        self.expect(i, ":", "Expecting ':' delimiter")
        return key, self.ws(i + 1)

    def first_key(self, i: int) -> str | None:
        j = self.ws(i + 1)
        if not self.text.startswith('"', j):
            return None
        try:
            return _scanstring(self.text, j + 1, True)[0]
        except json.JSONDecodeError:
            return None

    def walk(self, i: int, prefix: str, path: tuple[str | int, ...], depth: int) -> Generator[Leaf, None, int]:
        """The object at ``i`` key by key: its span lists item by item, every other key as one leaf; returns
        the object's end."""
        i = self.ws(i + 1)
        if self.text.startswith("}", i):
            return i + 1
        while True:
            key, start = self.key(i)
            here = (*path, key)
            if (key in WALK_ITEMS or key in LEAF_ITEMS) and self.text.startswith("[", start):
                end = yield from self.items(start, prefix, here, depth, walk=key in WALK_ITEMS)
            else:
                value, end = self.value(start)
                yield Leaf(prefix, here, value)
            i = self.ws(end)
            if self.expect(i, ",}", "Expecting ',' delimiter") == "}":
                return i + 1
            i = self.ws(i + 1)

    def items(self, i: int, prefix: str, path: tuple[str | int, ...], depth: int,
              walk: bool) -> Generator[Leaf, None, int]:
        """The array at ``i`` item by item (objects walked when ``walk``); returns the array's end. A top-level
        array (``path`` empty) gives each item its own ``item N`` prefix."""
        i = self.ws(i + 1)
        if self.text.startswith("]", i):
            if path:
                yield Leaf(prefix, path, [])  # an empty span list still says what the file is
            return i + 1
        n = 0
        while True:
            here, where = ((*path, n), prefix) if path else ((), f"{prefix}item {n + 1}, ")
            if walk and depth < MAX_WALK and self.text.startswith("{", i) and (path or self.first_key(i) in FIRST_KEYS):
                end = yield from self.walk(i, where, here, depth + 1)
            else:
                value, end = self.value(i)
                yield Leaf(where, here, value)
            i = self.ws(end)
            if self.expect(i, ",]", "Expecting ',' delimiter") == "]":
                return i + 1
            i = self.ws(i + 1)
            n += 1

    def document(self, i: int, prefix: str) -> Generator[Leaf, None, int]:
        """One top-level value from ``i``: a walked object, a top-level array's items, or one leaf; returns its end."""
        c = self.text[i] if i < len(self.text) else ""
        if c == "{" and self.first_key(i) in FIRST_KEYS:
            return (yield from self.walk(i, prefix, (), 0))
        if c == "[":
            return (yield from self.items(i, prefix, (), 0, walk=True))
        value, end = self.value(i)
        yield Leaf(prefix, (), value)
        return end


def _collect(gen: Generator[Leaf, None, int]) -> tuple[list[Leaf], int]:
    out: list[Leaf] = []
    while True:
        try:
            out.append(next(gen))
        except StopIteration as stop:
            return out, stop.value


def leaves(text: str, file: str, bad_line: Callable[[str, str], None]) -> Iterator[Leaf]:
    """Every leaf of a file's text: one JSON document, or JSON Lines (the first value ends on its own line and
    more follow). ``TraceFormatError`` for bad JSON, except a bad line of JSON Lines, which goes to
    ``bad_line(where, message)`` while the other lines are read."""
    reader = _Reader(text)
    start = reader.ws(0)
    if start >= len(text):
        raise TraceFormatError(f"{file}: the file is empty")
    try:
        end = yield from reader.document(start, "")
        rest = reader.ws(end)
        if rest < len(text) and text.find("\n", end, rest) < 0:
            raise JsonSyntaxError(rest, "Extra data")
        n = 2
        while rest < len(text) and text.find("\n", start, end) >= 0:  # pretty objects one after another (ConsoleSpanExporter)
            end = yield from reader.document(rest, f"object {n}, ")
            rest, n = reader.ws(end), n + 1
    except JsonSyntaxError as exc:
        line, col = line_col(text, exc.pos)
        raise TraceFormatError(f"{file}: not JSON (line {line}, column {col}: {exc.msg})") from None
    if rest >= len(text):
        return
    n = text.count("\n", 0, rest) + 1
    pos = text.rfind("\n", 0, rest) + 1
    while pos < len(text):
        eol = text.find("\n", pos)
        eol = len(text) if eol < 0 else eol
        yield from _line(text[pos:eol], n, file, bad_line)
        pos, n = eol + 1, n + 1


def _line(line: str, n: int, file: str, bad_line: Callable[[str, str], None]) -> Iterator[Leaf]:
    """The leaves of one JSON Lines line: decoded whole before any is used when the line is short enough."""
    reader = _Reader(line)
    start = reader.ws(0)
    if start >= len(line):
        return
    prefix = f"line {n}, "
    try:
        if len(line) <= LINE_BUFFER:
            got, end = _collect(reader.document(start, prefix))
        else:
            got, end = [], (yield from reader.document(start, prefix))
        if reader.ws(end) < len(line):
            raise JsonSyntaxError(reader.ws(end), "Extra data")
    except JsonSyntaxError as exc:
        if len(line) > LINE_BUFFER:
            raise TraceFormatError(f"{file}: not JSON (line {n}, column {exc.pos + 1}: {exc.msg}); a line this long is "
                                   "read as it goes, so the whole file is refused") from None
        bad_line(f"line {n}", f"not JSON (column {exc.pos + 1}: {exc.msg})")
        return
    yield from got
