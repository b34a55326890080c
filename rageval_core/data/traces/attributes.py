"""Attribute values shared by every format: OTLP ``AnyValue`` decoding, flattening nested attributes to the
OpenInference dotted keys, ISO / nanosecond times, and the lists OpenInference flattens by index
(``retrieval.documents.{i}.document.*``, ``llm.input_messages.{i}.message.*``)."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any

def any_value(value: Any) -> Any:
    """An OTLP/JSON ``AnyValue`` (``{"stringValue": ...}``, ``intValue`` as a string or number, ``arrayValue``,
    ``kvlistValue``) as a plain Python value; ``ValueError`` for an object that is none of them."""
    if not isinstance(value, Mapping):
        raise ValueError(f"attribute value must be an object like {{\"stringValue\": ...}}, got {type(value).__name__}")
    if not value:
        return None
    if "stringValue" in value:
        return str(value["stringValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return {kv["key"]: any_value(kv.get("value", {})) for kv in (value["kvlistValue"] or {}).get("values", [])}
    if "bytesValue" in value:
        return str(value["bytesValue"])
    raise ValueError(f"unknown attribute value type {sorted(value)}")


def flatten(attributes: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attributes (Phoenix's ``{"input": {"value": ...}}``, lists of documents) as flat dotted keys, the
    shape OTLP exporters write (``retrieval.documents.0.document.content``). Lists of scalars stay lists."""
    out: dict[str, Any] = {}
    for key, value in attributes.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten(value, name + "."))
        elif isinstance(value, list) and any(isinstance(v, (Mapping, list)) for v in value):
            for i, item in enumerate(value):
                if isinstance(item, Mapping):
                    out.update(flatten(item, f"{name}.{i}."))
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
        if head.isdigit() and rest:
            items.setdefault(int(head), {})[rest] = value
    return [items[i] for i in sorted(items)]


def iso_ns(value: Any) -> int | None:
    """An ISO 8601 time (``2026-11-30T10:00:00.250Z``), epoch nanoseconds (int or digit string) or ``None``;
    ``ValueError`` for anything else. A time without a zone is read as UTC."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise ValueError(f"not a time: {value!r}")
    if isinstance(value, (int, float)):
        return int(value)
    text = str(value).strip()
    if text.isdigit():
        return int(text)
    stamp = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=dt.timezone.utc)
    delta = stamp - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000_000 + delta.microseconds * 1000


def as_text(value: Any) -> str | None:
    """A value as the text a dataset cell holds: strings as they are, JSON for structures, ``None`` for null."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def parse_json(value: Any) -> Any:
    """``value`` parsed when it is a JSON object or array in a string (``input.value`` with mime type JSON), else as is."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
