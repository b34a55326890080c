"""Limits on what a trace export's JSON may hold, so a hostile or broken file ends in a message naming the span
or line, never in an internal error: nesting deeper than ``MAX_DEPTH``, numbers longer than ``MAX_NUMBER_CHARS``
(a million-digit integer), non-finite numbers (``NaN``, ``Infinity``, ``1e400``) and lone surrogates (``\\ud800``,
which no UTF-8 file can hold) are named, never read as values.

Numbers are decoded by the ``DECODER`` below: one that is not a usable number becomes a ``BadValue`` in its
place, so the span holding it can be named when it is used (a bad number in a field nobody reads costs
nothing). ``check_value`` walks a value that will be kept; ``loads_bounded`` parses JSON held inside a string
(``input.value``) under the same limits.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from rageval_core.core.errors import DataError

MAX_DEPTH = 64  # nesting of a span's values (OpenInference needs 4, a LangChain message about 10)
MAX_NUMBER_CHARS = 100  # an int64 has 20 characters, a double about 25
MAX_BYTES = 50 * 1024 * 1024  # a trace export larger than this is refused before it is read (docs/traces.md)

_SURROGATE = re.compile("[\ud800-\udfff]")


class LimitError(DataError):
    """A value past a limit (too deep, a bad number, a lone surrogate); the message says which and where."""


class BadValue:
    """Stands where the file holds no usable value: a non-finite or overlong number, or a value nested too deep
    to read. ``reason`` is said in the message naming the span that holds it."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"BadValue({self.reason!r})"


TOO_DEEP = f"nested more than {MAX_DEPTH} levels deep"


def _preview(text: str) -> str:
    return text if len(text) <= 24 else f"{text[:12]}…{text[-4:]} ({len(text):,} characters)"


def _parse_int(text: str) -> int | BadValue:
    if len(text) > MAX_NUMBER_CHARS:
        return BadValue(f"the number {_preview(text)} is longer than {MAX_NUMBER_CHARS} characters")
    return int(text)


def _parse_float(text: str) -> float | BadValue:
    if len(text) > MAX_NUMBER_CHARS:
        return BadValue(f"the number {_preview(text)} is longer than {MAX_NUMBER_CHARS} characters")
    value = float(text)
    return value if math.isfinite(value) else BadValue(f"the number {text} is too large for a number")


def _parse_constant(text: str) -> BadValue:
    return BadValue(f"{text} is not a number JSON allows")


DECODER = json.JSONDecoder(parse_int=_parse_int, parse_float=_parse_float, parse_constant=_parse_constant)


def surrogate_at(text: str) -> str | None:
    """Where ``text`` holds a lone surrogate (``"\\ud800 at character 6"``), or ``None`` for clean text."""
    if text.isascii():  # a flag on the string: no scan
        return None
    found = _SURROGATE.search(text)
    if found is None:
        return None
    return f"a lone surrogate \\u{ord(found.group()):04x} at character {found.start() + 1} (not text)"


def check_value(value: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """The first problem in a value that will be kept (a ``BadValue``, nesting past ``max_depth``, a lone
    surrogate in a string or key), or ``None``. Iterative, so a deep value cannot exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is str:
            problem = surrogate_at(item)
            if problem:
                return problem
        elif kind is dict or kind is list:
            if depth > max_depth:
                return TOO_DEEP
            if kind is dict:
                for key, child in item.items():
                    problem = surrogate_at(key) if type(key) is str else None
                    if problem:
                        return problem
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif kind is BadValue:
            return item.reason
        elif kind is float and not math.isfinite(item):
            return f"{item} is not a finite number"
    return None


def loads_bounded(text: str) -> Any:
    """JSON held in a string, parsed under the limits: the value, ``ValueError`` when the text is not JSON,
    ``LimitError`` when it is JSON past a limit (nested too deep, a bad number, a lone surrogate)."""
    try:
        value = DECODER.decode(text)
    except RecursionError:
        raise LimitError(f"its JSON is {TOO_DEEP}") from None
    problem = check_value(value)
    if problem:
        raise LimitError(f"its JSON holds {problem}" if not problem.startswith("nested") else f"its JSON is {problem}")
    return value


def expected(what: str, value: Any) -> str:
    """``"<what>, got a list"``, or the reason a ``BadValue`` stands there (``"Infinity is not a number JSON allows"``)."""
    if isinstance(value, BadValue):
        return f"{what.split(' must ')[0]}: {value.reason}" if " must " in what else value.reason
    return f"{what}, got {problem_text(value)}"


def problem_text(value: Any) -> str:
    """A short description of a value for a message (type names a reader knows, never a Python repr)."""
    if isinstance(value, BadValue):
        return value.reason
    names = {str: "a string", list: "a list", dict: "an object", bool: "true / false", int: "a number",
             float: "a number", type(None): "null"}
    return names.get(type(value), "an unknown value")
