"""Attribute values shared by every format: OTLP ``AnyValue`` decoding, flattening nested attributes to the
OpenInference dotted keys, ISO / nanosecond times, span and trace ids, and the lists OpenInference flattens by
index (``retrieval.documents.{i}.document.*``, ``llm.input_messages.{i}.message.*``).

Every function here takes whatever the file holds: a wrong shape is a ``ValueError`` whose message names the
field and says what was expected (the reader adds the span), never a ``TypeError`` from deep inside; nesting is
bounded by ``limits.MAX_DEPTH``."""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from rageval_core.data.traces.limits import MAX_DEPTH, TOO_DEEP, BadValue, LimitError, expected, loads_bounded, problem_text

MAX_TIME_NS = 2**64  # OTLP times are fixed64 nanoseconds
_HEX = re.compile(r"[0-9a-fA-F]+")
_INT = re.compile(r"-?[0-9]{1,20}")
_B64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}")


def any_value(value: Any, depth: int = 1) -> Any:
    """An OTLP/JSON ``AnyValue`` (``{"stringValue": ...}``, ``intValue`` as a string or number, ``arrayValue``,
    ``kvlistValue``; the snake_case names of Phoenix's otlpv1 too) as a plain Python value; ``ValueError`` for
    anything else."""
    if depth > MAX_DEPTH:
        raise LimitError(TOO_DEEP)
    if not isinstance(value, dict):
        raise ValueError(expected("must be an object like {\"stringValue\": ...}", value))
    if not value:
        return None
    for key, got in value.items():
        kind = _ANY_KEYS.get(key)
        if kind is not None and got is not None:  # Phoenix's otlpv1 writes every *_value key, the unused ones null
            return kind(got, depth)
    if all(_ANY_KEYS.get(key) and got is None for key, got in value.items()):
        return None
    raise ValueError(f"unknown attribute value type {', '.join(sorted(map(str, value)))}")


def _string(got: Any, depth: int) -> str:
    if not isinstance(got, str):
        raise ValueError(expected("stringValue must be a string", got))
    return got


def _bool(got: Any, depth: int) -> bool:
    if not isinstance(got, bool):
        raise ValueError(expected("boolValue must be true or false", got))
    return got


def _int(got: Any, depth: int) -> int:
    if isinstance(got, str):
        if not _INT.fullmatch(got):
            raise ValueError(f"intValue must be a 64-bit integer, got {got[:24]!r}" + ("…" if len(got) > 24 else ""))
        got = int(got)
    if not isinstance(got, int) or isinstance(got, bool) or not -(2**63) <= got < 2**64:
        raise ValueError(expected("intValue must be a 64-bit integer", got))
    return got


def _double(got: Any, depth: int) -> float:
    if isinstance(got, str) and got in ("NaN", "Infinity", "-Infinity"):
        raise ValueError(f"doubleValue {got} is not a finite number")
    if isinstance(got, bool) or not isinstance(got, (int, float, str)):
        raise ValueError(expected("doubleValue must be a number", got))
    try:
        number = float(got)
    except (ValueError, OverflowError):
        raise ValueError(f"doubleValue must be a number, got {str(got)[:24]!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"doubleValue {str(got)[:24]} is not a finite number")
    return number


def _array(got: Any, depth: int) -> list[Any]:
    values = got.get("values") if isinstance(got, dict) else got
    if not isinstance(got, dict) or not isinstance(values, (list, type(None))):
        raise ValueError(expected("arrayValue must be an object {\"values\": [...]}", got))
    return [any_value(v, depth + 1) for v in values or ()]


def _kvlist(got: Any, depth: int) -> dict[str, Any]:
    values = got.get("values", []) if isinstance(got, dict) else None
    if not isinstance(values, list):
        raise ValueError(expected("kvlistValue must be an object {\"values\": [{key, value}]}", got))
    out: dict[str, Any] = {}
    for kv in values:
        if not isinstance(kv, dict) or not isinstance(kv.get("key"), str):
            raise ValueError("kvlistValue holds an entry with no string key")
        out[kv["key"]] = any_value(kv.get("value") or {}, depth + 1)
    return out


def _bytes(got: Any, depth: int) -> str:
    if not isinstance(got, str):
        raise ValueError(expected("bytesValue must be a base64 string", got))
    return got


_ANY_KEYS = {
    "stringValue": _string, "boolValue": _bool, "intValue": _int, "doubleValue": _double, "arrayValue": _array,
    "kvlistValue": _kvlist, "bytesValue": _bytes,
    "string_value": _string, "bool_value": _bool, "int_value": _int, "double_value": _double, "array_value": _array,
    "kvlist_value": _kvlist, "bytes_value": _bytes,
}


def flatten(attributes: Mapping[str, Any], prefix: str = "", depth: int = 1) -> dict[str, Any]:
    """Nested attributes (Phoenix's ``{"input": {"value": ...}}``, lists of documents) as flat dotted keys, the
    shape OTLP exporters write (``retrieval.documents.0.document.content``). Lists of scalars stay lists."""
    if depth > MAX_DEPTH:
        raise LimitError(TOO_DEEP)
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + ".", depth + 1))
        elif isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    out.update(flatten(item, f"{name}.{i}.", depth + 2))
                else:
                    out[f"{name}.{i}"] = item
        else:
            out[name] = value
    return out


def indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """The items OpenInference flattened under ``prefix.{i}.``, in index order: ``indexed(a, "retrieval.documents")``
    gives ``[{"document.content": ..., "document.id": ...}, ...]``. A missing index leaves no hole."""
    items: dict[int, dict[str, Any]] = {}
    start = prefix + "."
    for key, value in attributes.items():
        if not key.startswith(start):
            continue
        head, _, rest = key[len(start):].partition(".")
        if head.isdigit() and len(head) < 8 and rest:
            items.setdefault(int(head), {})[rest] = value
    return [items[i] for i in sorted(items)]


def iso_ns(value: Any) -> int | None:
    """An ISO 8601 time (``2026-11-30T10:00:00.250Z``), epoch nanoseconds (int or digit string) or ``None``;
    ``ValueError`` for anything else. A time without a zone is read as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, BadValue):
        raise ValueError(value.reason)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"not a time: {problem_text(value)}")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"not a time: {value}")
        value = int(value)
    if isinstance(value, str):
        text = value.strip()
        if text.isdigit() and len(text) <= 20:
            value = int(text)
        elif text.isdigit() or len(text) > 40:
            raise ValueError(f"not a time: {text[:24]!r}…")
        else:
            return _iso(text)
    if not 0 <= value < MAX_TIME_NS:
        raise ValueError(f"not a time: {value} nanoseconds is outside 1970–2554")
    return value


def _iso(text: str) -> int:
    try:
        stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"not a time: {text!r}") from None
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    delta = stamp - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def span_id(value: Any, field: str, n_bytes: int = 0) -> str:
    """A trace or span id as the hex Phoenix and Jaeger show: ``0x`` prefixes dropped, hex lower-cased, and the
    base64 of protobuf's JSON mapping (``S/kvNXezTaajzpKdDg5HNg==``) decoded when it is ``n_bytes`` long; any
    other non-empty string (a Langfuse UUID, ``obs-ret-1``) as it is. ``ValueError`` naming ``field`` otherwise."""
    if type(value) is str and _HEX.fullmatch(value):  # the common case first
        return value.lower()
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{field} missing" if value in (None, "") else expected(f"{field} must be a string", value))
    text = value.strip()
    if text[:2] in ("0x", "0X") and _HEX.fullmatch(text, 2):
        text = text[2:]
    if _HEX.fullmatch(text):
        return text.lower()
    if n_bytes and len(text) == 4 * -(-n_bytes // 3) and _B64.fullmatch(text):
        try:
            raw = base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
        except (binascii.Error, ValueError):
            return text
        if len(raw) == n_bytes:
            return raw.hex()
    return text


def as_text(value: Any) -> str | None:
    """A value as the text a dataset cell holds: strings as they are, JSON for structures, ``None`` for null."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, BadValue):
        raise LimitError(value.reason)
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, default=_not_json)
    except RecursionError:
        raise LimitError(TOO_DEEP) from None
    except ValueError as exc:  # a float NaN / Infinity (never decoded from a file: built by a reader)
        raise LimitError(str(exc)) from None


def _not_json(value: Any) -> Any:
    if isinstance(value, BadValue):
        raise LimitError(value.reason)
    raise LimitError(f"an unknown value ({type(value).__name__})")


def parse_json(value: Any) -> Any:
    """``value`` parsed when it is a JSON object or array in a string (``input.value`` with mime type JSON), else
    as is. ``LimitError`` when that JSON is past a limit (too deep, a bad number): the caller names the span."""
    return _parsed_or_kept(value) if isinstance(value, str) and value[:1] in "{[" else value


def unquote_once(value: Any) -> Any:
    """A value some tools store as JSON text (Langfuse's ``"\\"What is Langfuse?\\""``, the v2 API's raw io):
    a JSON string is unquoted once, a JSON object or array parsed; anything else is left as it is."""
    if isinstance(value, str) and len(value) >= 2 and (value[0], value[-1]) in (('"', '"'), ("{", "}"), ("[", "]")):
        return _parsed_or_kept(value)
    return value


def _parsed_or_kept(text: str) -> Any:
    """``text`` parsed as bounded JSON, or kept as it is when it is not JSON (``LimitError`` goes through)."""
    try:
        return loads_bounded(text)
    except LimitError:
        raise
    except ValueError:
        return text
