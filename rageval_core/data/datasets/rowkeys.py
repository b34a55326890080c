"""Row helpers the reader leans on: which keys name which field (aliases and a column map), control characters
in ids, and the fast path that reads a plain row without the careful checks (a 100,000-row file spent most of its load
time in those)."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from typing import Any

from rageval_core.core.types import Sample
from rageval_core.data.datasets.column_map import ColumnMap
from rageval_core.data.datasets.dialects import RAGAS_METRICS
from rageval_core.data.datasets.formats import FIELD_ALIASES
from rageval_core.data.datasets.values import clean_text, id_text, is_clean_text

CORE = {alias: canonical for canonical, aliases in FIELD_ALIASES.items() for alias in aliases}


def control_char(text: str) -> str | None:
    """The first control / format character (newline, ANSI escape, bidi override, ...) in ``text``."""
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\u200d":  # ZWJ joins emoji
            return f"U+{ord(ch):04X}"
    return None


def plain(value: Any) -> bool:
    """A value ``scrub`` would leave as it is and that cannot nest too deep: clean text, a list of clean texts,
    a finite number, a boolean or null."""
    kind = type(value)
    if kind is str:
        return is_clean_text(value)
    if kind is list:
        return all(type(v) is str and is_clean_text(v) for v in value)
    if kind is float:
        return not math.isinf(value)
    return kind is int or kind is bool or value is None


def _mapped_key(record: Mapping[str, Any], column: str) -> str | None:
    """The record's key for a mapped column: the same name, else the same name in another case."""
    if column in record:
        return column
    lowered = column.strip().lower()
    return next((k for k in record if str(k).strip().lower() == lowered), None)


def alias_index(record: Mapping[str, Any], column_map: ColumnMap | None = None) -> dict[str, list[str]]:
    """The record's keys under each core field they name, in the aliases' order of preference (one pass over
    the keys instead of one per field). A mapped field has its column only; ``context`` (DeepEval's ideal context)
    names the contexts only when no other contexts column is there."""
    index: dict[str, list[str]] = {}
    mapped = dict(column_map.columns) if column_map else {}
    mapped_keys = {f: _mapped_key(record, c) for f, c in mapped.items()}
    taken = {k for k in mapped_keys.values() if k is not None}
    for key in record:
        canonical = CORE.get(str(key).strip().lower())
        if canonical is not None and canonical not in mapped and key not in taken:
            index.setdefault(canonical, []).append(key)
    for canonical, keys in index.items():
        if len(keys) > 1:
            keys.sort(key=lambda k: FIELD_ALIASES[canonical].index(str(k).strip().lower()))
    contexts = index.get("contexts", [])
    if len(contexts) > 1 and any(str(k).strip().lower() == "context" for k in contexts):
        index["contexts"] = [k for k in contexts if str(k).strip().lower() != "context"]
    for name, column in mapped_keys.items():
        index[name] = [] if column is None else [column]
    return index


_FAST_TEXT = ("question", "answer", "ground_truth")


def fast_row(row: int, record: dict[Any, Any]) -> Sample | None:
    """The sample of a row with nothing to report, or None to read it the careful way (``RowReader.read_row``).

    A row qualifies when every key is clean text naming at most one alias per core field, the id is text or
    a whole number without control characters, question and answer are non-blank text, the ground truth absent
    or non-blank text, the contexts a non-empty list of non-blank texts, and every other value a clean scalar
    (no ``label_*`` field, no NaN / Infinity): then the careful path would produce the same sample and no issue,
    at a fifth of the cost (a 100,000-row file spent most of its load time there)."""
    core: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in record.items():
        if type(key) is not str or not is_clean_text(key) or key != key.strip():
            return None
        lowered = key.lower()
        canonical = CORE.get(lowered)
        if canonical is None:
            if value is None:
                continue  # dropped, as the careful path drops a null
            if key.startswith("label_") or not plain(value) or type(value) is list or (type(value) is float and value != value):
                return None
            if ":" in key or "(" in key or lowered in RAGAS_METRICS:
                return None  # maybe an external score (``dialects.external_key``)
            metadata[key] = value
        elif canonical in core:
            return None  # two aliases of one field
        else:
            core[canonical] = value
    raw_id = core.get("id")
    if raw_id is None:
        sample_id = f"row-{row}"
    elif type(raw_id) is str or type(raw_id) is int:
        sample_id = id_text(raw_id)
        if not is_clean_text(sample_id) or control_char(sample_id):
            return None
    else:
        return None
    texts: dict[str, str] = {}
    for name in _FAST_TEXT:
        value = core.get(name)
        if value is None and name == "ground_truth":
            continue
        if type(value) is not str or not is_clean_text(value):
            return None
        text = clean_text(value)
        if not text:
            return None
        texts[name] = text
    contexts = core.get("contexts")
    if type(contexts) is not list or not contexts:
        return None
    cleaned = []
    for item in contexts:
        if type(item) is not str or not is_clean_text(item):
            return None
        text = clean_text(item)
        if not text:
            return None
        cleaned.append(text)
    return Sample(
        id=sample_id, question=texts["question"], contexts=tuple(cleaned), answer=texts["answer"],
        ground_truth=texts.get("ground_truth"), metadata=metadata,
    )
