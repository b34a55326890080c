"""Cell and value helpers shared by the readers and the row validator: what counts as missing, text
clean-up, CSV cells parsed back to JSON values, and the one pass (``scrub``) that finds what a hostile
file can hide in any value — lone surrogates, NUL characters, NaN / Infinity and excessive nesting."""

from __future__ import annotations

import ast
import json
import math
import re
import sys
from dataclasses import dataclass
from collections.abc import Sequence
from typing import Any

from rageval_core.data.datasets.model import MAX_DEPTH

CONTEXT_SEPARATOR = "|||"
_JSON_SCALAR_RE = re.compile(r"^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false|null)$")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_SCRUBBABLE_RE = re.compile("[\x00\ud800-\udfff]")  # what ``scrub`` changes in a text: NUL, lone surrogates
_NON_FINITE_WORDS = frozenset({"nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"})


@dataclass(frozen=True)
class NonFinite:
    """``NaN`` / ``Infinity`` / ``-Infinity`` read from JSON: kept as a marker so the validator can reject it
    by name instead of carrying a float that breaks means and exports."""

    word: str

    def __str__(self) -> str:
        return self.word


@dataclass
class BadRecord:
    """A row that could not even be parsed (bad JSONL line, ragged CSV row)."""

    message: str


BLANK = object()  # an empty table row (e.g. one just added in the editor): skipped without an issue


def is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float) and math.isnan(value):
        return True
    pd = sys.modules.get("pandas")  # pandas.NA / NaT exist only once pandas is imported: never import it here
    return pd is not None and bool(value is pd.NA or value is pd.NaT)


def is_blank(value: Any) -> bool:
    return is_missing(value) or (isinstance(value, str) and not value.strip())


def is_non_finite(value: Any) -> bool:
    """NaN / ±Infinity from JSON (the marker), a non-finite float other than a table's NaN (= empty cell),
    or a text cell spelling one (``NaN``, ``inf``)."""
    if isinstance(value, NonFinite):
        return True
    if isinstance(value, float):
        return math.isinf(value)
    return isinstance(value, str) and value.strip().lower() in _NON_FINITE_WORDS


def clean_text(value: str) -> str:
    return value.replace("\r\n", "\n").replace("\r", "\n").strip()


def id_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()


def cell_value(value: Any) -> Any:
    """A metadata cell from CSV / a table: JSON numbers, booleans and lists/objects are parsed back."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if not isinstance(value, str):
        return value
    text = value.strip()
    if _JSON_SCALAR_RE.match(text) or (text[:1] in "[{" and text[-1:] in "]}"):
        try:
            return json_value(text)
        except (ValueError, RecursionError):
            pass
    if looks_like_list(text):  # e.g. ragas's reference_contexts written by its to_csv
        items, _ = python_list(text)
        return value if items is None else items
    return value


def json_value(text: str) -> Any:
    """``json.loads`` that keeps NaN / Infinity as ``NonFinite`` markers (the standard library turns them
    into floats silently). Raises ``ValueError`` (including ``JSONDecodeError``) or ``RecursionError``."""
    if text.startswith("\ufeff"):  # json.loads names a stray byte order mark; keep its message
        return json.loads(text, parse_constant=NonFinite, object_pairs_hook=_object)
    return _DECODER.decode(text)


class KeyedTwice(dict):
    """A JSON object that named a key more than once (the last value kept, as ``json`` does); the row reader
    warns naming the row and the key, where ``json`` alone would load it silently."""

    duplicate_keys: tuple[str, ...] = ()


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A plain dict, or a ``KeyedTwice`` naming the keys given twice (one len() check on the common path)."""
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    twice = KeyedTwice(obj)
    twice.duplicate_keys = tuple(dict.fromkeys(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return twice


_DECODER = json.JSONDecoder(parse_constant=NonFinite, object_pairs_hook=_object)  # one decoder, not one per JSONL line


def json_decoder() -> json.JSONDecoder:
    """The decoder ``json_value`` parses with (NaN / Infinity kept as ``NonFinite``), for reading a file in parts."""
    return _DECODER


@dataclass
class Scrubbed:
    """What ``scrub`` changed in one value."""

    value: Any
    surrogates: int = 0
    nuls: int = 0
    non_finite: int = 0
    too_deep: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.surrogates or self.nuls or self.non_finite)


def is_clean_text(text: str) -> bool:
    """No NUL character and no lone surrogate: nothing for ``scrub`` to change."""
    return _SCRUBBABLE_RE.search(text) is None


def scrub(value: Any, depth: int = 1) -> Scrubbed:
    """Lone surrogates → U+FFFD, NUL characters removed, NaN / Infinity → ``None``, in keys and values at any
    depth; ``too_deep`` when nesting goes past ``MAX_DEPTH`` counting ``value`` as level ``depth`` (the
    part below the limit is then left as it was)."""
    # The common cases without the walk (a 100,000-row file has ~1.4 M values): clean text, a list of clean texts.
    if type(value) is str and depth <= MAX_DEPTH and is_clean_text(value):
        return Scrubbed(value)
    if type(value) is list and depth < MAX_DEPTH and all(type(v) is str and is_clean_text(v) for v in value):
        return Scrubbed(list(value))
    out = Scrubbed(value)

    def text(s: str) -> str:
        if "\x00" in s:
            out.nuls += s.count("\x00")
            s = s.replace("\x00", "")
        if _SURROGATE_RE.search(s):
            out.surrogates += len(_SURROGATE_RE.findall(s))
            s = _SURROGATE_RE.sub("\ufffd", s)
        return s

    def walk(v: Any, depth: int) -> Any:
        if depth > MAX_DEPTH:
            out.too_deep = True
            return v
        if isinstance(v, str):
            return text(v)
        if isinstance(v, NonFinite) or (isinstance(v, float) and math.isinf(v)):
            out.non_finite += 1
            return None
        if isinstance(v, dict):
            return {text(k) if isinstance(k, str) else k: walk(x, depth + 1) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [walk(x, depth + 1) for x in v]
        return v

    out.value = walk(value, depth)
    return out


def flatten_contexts(value: Sequence[Any]) -> tuple[list[Any], int]:
    """Nested lists of contexts flattened in order (``[["a", "b"], "c"]`` → ``["a", "b", "c"]``); returns the
    items and how many nested lists were opened, so the caller can warn."""
    items: list[Any] = []
    opened = 0
    stack: list[Any] = [iter(value)]
    while stack:
        for item in stack[-1]:
            if isinstance(item, (list, tuple)):
                opened += 1
                stack.append(iter(item))
                break
            items.append(item)
        else:
            stack.pop()
    return items, opened


# A list cell as Python writes it (``str(list)``: what ragas's ``to_csv`` and pandas' ``to_csv`` put in a cell):
# "[" then a quote (with an optional string prefix), a nested "[" or the closing "]".
_LIST_LITERAL_RE = re.compile(r"^\[\s*(?:[rRuUbB]{0,2}['\"]|\[|\])")


def looks_like_list(text: str) -> bool:
    """True when ``text`` (stripped) opens as a list of strings written as JSON or as a Python repr: such a cell is
    read as a list or refused, never kept as one string holding the repr."""
    return _LIST_LITERAL_RE.match(text) is not None


def _string_items(node: ast.AST, depth: int) -> str | None:
    """None when ``node`` is a list / tuple whose items are strings or such lists (at most ``MAX_DEPTH`` deep), else
    what is wrong."""
    if depth > MAX_DEPTH:
        return f"nested deeper than {MAX_DEPTH} levels"
    if not isinstance(node, (ast.List, ast.Tuple)):
        return "not a list"
    for i, item in enumerate(node.elts, 1):
        if isinstance(item, (ast.List, ast.Tuple)):
            problem = _string_items(item, depth + 1)
            if problem:
                return problem
        elif not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return f"item {i} is not a quoted string"
    return None


_SPACE_RE = re.compile(r"\s*")
_STRING_RE = re.compile(r"""([rRuUbB]{0,2})('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""", re.DOTALL)
AST_MAX_CHARS = 65536  # a cell the scanner cannot read is parsed to a syntax tree only up to this size (memory)


def _scan_strings(text: str) -> list[str] | None:
    """The items of a flat list or tuple of string literals (what ``repr`` writes for a list of strings), read by a
    scanner that holds one item at a time (a syntax tree of a 5 MB cell took 1 GB); None for anything else."""
    t = text.strip()
    if not t or t[0] not in "[(":
        return None
    close = "]" if t[0] == "[" else ")"
    items: list[Any] = []
    pos, comma = 1, False
    while True:
        pos = _SPACE_RE.match(t, pos).end()  # type: ignore[union-attr]
        if t[pos:pos + 1] == close and (close == "]" or comma or not items):
            pos += 1
            break
        found = _STRING_RE.match(t, pos)
        if found is None or "b" in found.group(1).lower():
            return None
        prefix, body = found.groups()
        items.append(body[1:-1] if "\\" not in body else ast.literal_eval(prefix + body))
        pos = _SPACE_RE.match(t, found.end()).end()  # type: ignore[union-attr]
        nxt = t[pos:pos + 1]
        if nxt == ",":
            pos, comma = pos + 1, True
        elif nxt == close and (close == "]" or comma):
            pos += 1
            break
        else:
            return None
    return items if not t[pos:].strip() else None


AST_MAX_DEPTH = 32  # a list of strings needs 2 levels; anything deeper is refused before it is parsed


def _bracket_depth(text: str) -> int:
    """The deepest nesting of brackets and parentheses in ``text`` (quotes ignored: an over-count only refuses)."""
    depth = deepest = 0
    for ch in text:
        if ch in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in ")]}":
            depth -= 1
    return deepest


def python_list(text: str) -> tuple[list[Any] | None, str | None]:
    """A list of strings written as a Python literal (``['a', "b's"]``), read without evaluating anything: a scanner
    reads a flat list / tuple of string literals item by item (each one decoded by ``ast.literal_eval`` when it holds
    an escape); a smaller cell it cannot read is parsed to a syntax tree, which must be a list or tuple of string
    constants (nested lists allowed) before ``ast.literal_eval`` sees it. Returns (items, None) or (None, what is
    wrong)."""
    items = _scan_strings(text)
    if items is not None:
        return items, None
    if len(text) > AST_MAX_CHARS:
        return None, "not a list of quoted strings"
    if _bracket_depth(text) > AST_MAX_DEPTH:  # before ast.parse: on CPython 3.11 a RecursionError inside it leaves the
        # AST module's depth counter off, and every later compile in the process fails ("recursion depth mismatch")
        return None, f"not a valid list (nested more than {AST_MAX_DEPTH} levels deep)"
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        return None, f"not a valid list ({exc.msg})"
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, f"not a valid list ({type(exc).__name__})"
    problem = _string_items(node, 2)
    if problem:
        return None, problem
    return list(ast.literal_eval(node)), None


def list_cell(text: str) -> tuple[list[Any] | None, str | None]:
    """A cell that ``looks_like_list``: its items from JSON or, failing that, from a Python literal; (None, why)
    when it is neither (a cut-off or hand-edited repr)."""
    try:
        value = json_value(text)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, list):
        return value, None
    return python_list(text)


def split_contexts_cell(cell: str) -> list[Any] | None:
    """The items of a contexts text cell (CSV, table editor): a JSON list, ``|||``-separated, or one per
    line. JSON list items come back as parsed (possibly nested, possibly not text) for the validator to
    check; ``None`` for an empty cell."""
    text = clean_text(cell)
    if not text:
        return None
    if text.startswith("["):
        try:
            value = json_value(text)
        except (ValueError, RecursionError):
            value = None
        if isinstance(value, list):
            return value
    parts = text.split(CONTEXT_SEPARATOR) if CONTEXT_SEPARATOR in text else text.split("\n")
    return [p.strip() for p in parts]
