"""Raw records (dicts from any format) to ``Sample`` rows, with an issue for every problem.

The invariant the CLI and the export rely on: a row with an ``error`` issue is skipped, a row that loads
has only warnings (each one a fix-up the message describes). Nothing is guessed silently: a value that
cannot be read as the field it sits in either becomes a warning that says what was done, or skips the row.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from rageval_core.data.datasets.formats import FIELD_ALIASES
from rageval_core.data.datasets.model import MAX_DEPTH, Issue, Severity
from rageval_core.data.datasets.values import (
    BLANK,
    BadRecord,
    NonFinite,
    cell_value,
    clean_text,
    flatten_contexts,
    id_text,
    is_blank,
    is_clean_text,
    is_missing,
    is_non_finite,
    scrub,
    split_contexts_cell,
)
from rageval_core.core.types import Sample
from rageval_core.core.messages import say

_CONTEXT_TEXT_KEYS = ("text", "content", "page_content")
_CORE = {alias: canonical for canonical, aliases in FIELD_ALIASES.items() for alias in aliases}


def _kind(value: Any) -> str:
    """The JSON word for ``value``'s type, with its article ("a number", "an object")."""
    if isinstance(value, bool):
        return say("kind.boolean")
    if isinstance(value, (int, float)):
        return say("kind.number")
    if isinstance(value, Mapping):
        return say("kind.object")
    if isinstance(value, (list, tuple)):
        return say("kind.list")
    return say("kind.other", type=type(value).__name__)


def _control_char(text: str) -> str | None:
    """The first control / format character (newline, ANSI escape, bidi override, ...) in ``text``."""
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Cf") and ch not in "\u200d":  # ZWJ joins emoji
            return f"U+{ord(ch):04X}"
    return None


def counted(records: Iterable[Any], on_row: Callable[[int], None] | None, every: int = 1000) -> Iterator[Any]:
    """``records`` as they are, telling ``on_row(n)`` every ``every`` records how many were read (progress)."""
    for n, record in enumerate(records, 1):
        if on_row is not None and n % every == 0:
            on_row(n)
        yield record


def _plain(value: Any) -> bool:
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


def _alias_index(record: Mapping[str, Any]) -> dict[str, list[str]]:
    """The record's keys under each core field they name, in the aliases' order of preference (one pass over
    the keys instead of one per field)."""
    index: dict[str, list[str]] = {}
    for key in record:
        canonical = _CORE.get(str(key).strip().lower())
        if canonical is not None:
            index.setdefault(canonical, []).append(key)
    for canonical, keys in index.items():
        if len(keys) > 1:
            keys.sort(key=lambda k: FIELD_ALIASES[canonical].index(str(k).strip().lower()))
    return index


_FAST_TEXT = ("question", "answer", "ground_truth")


def _fast_row(row: int, record: dict[Any, Any]) -> Sample | None:
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
        canonical = _CORE.get(key.lower())
        if canonical is None:
            if value is None:
                continue  # dropped, as the careful path drops a null
            if key.startswith("label_") or not _plain(value) or type(value) is list or (type(value) is float and value != value):
                return None
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
        if not is_clean_text(sample_id) or _control_char(sample_id):
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


class RowReader:
    """Turns raw records into samples and issues (shared by every format)."""

    def __init__(self, file: str, *, text_cells: bool) -> None:
        self.file = file
        self.text_cells = text_cells
        self.issues: list[Issue] = []
        self._row_errors = 0
        self._errored: set[str] = set()  # core fields of the current row already reported as errors
        self._aliases: dict[str, list[str]] = {}  # the current row's keys per core field
        self.rows_read = 0
        self.seen: dict[str, int] = {}

    def issue(self, row: int, field_name: str | None, code: str, severity: Severity = "error", **params: Any) -> None:
        """Report message ``code`` (``rageval_core.core.messages``) filled with ``params`` on ``row``."""
        self.issues.append(Issue(self.file, row, field_name, say(code, **params), severity))
        if severity == "error":
            self._row_errors += 1

    def read(self, records: Iterable[Any]) -> list[Sample]:
        """The samples of ``records`` (read once, in order; a generator is fine); ``rows_read`` counts them all."""
        return list(self.iter_samples(records))

    def iter_samples(self, records: Iterable[Any]) -> Iterator[Sample]:
        """``read`` one sample at a time, for a run that starts while the file is still being read; ``issues``
        and ``seen`` (id → 1-based row of every loaded sample) grow as it goes."""
        seen = self.seen
        for row, record in enumerate(records, 1):
            self.rows_read = row
            before, first = self._row_errors, len(self.issues)
            sample = self.read_row(row, record)
            if sample is None or self._row_errors != before:
                # a skipped row's fix-ups ("no answer; ... unscored") would describe a row that is not there
                self.issues[first:] = [i for i in self.issues[first:] if i.severity == "error"]
                continue
            if sample.id in seen:
                self.issue(row, "id", "row.duplicate_id", id=repr(sample.id), first=seen[sample.id])
                continue
            seen[sample.id] = row
            yield sample

    # ------------------------------------------------------------------ one row
    def read_row(self, row: int, record: Any) -> Sample | None:
        if type(record) is dict and not self.text_cells:
            sample = _fast_row(row, record)
            if sample is not None:
                return sample
        return self.careful_row(row, record)

    def careful_row(self, row: int, record: Any) -> Sample | None:
        """One row with every check and fix-up (each an issue); ``read_row`` comes here unless the row is plain."""
        if record is BLANK:
            return None
        if isinstance(record, BadRecord):
            self.issue(row, None, "row.bad_record", problem=record.message)
            return None
        if not isinstance(record, Mapping):
            self.issue(row, None, "row.not_object", kind=_kind(record))
            return None
        for key in getattr(record, "duplicate_keys", ()):
            self.issue(row, str(key), "row.duplicate_key", "warning", key=repr(key))
        record = self._scrubbed(row, record)
        if record is None:
            return None
        consumed: set[str] = set()
        self._aliases = _alias_index(record)

        raw_id, keys = self._pick(row, record, "id")
        consumed |= keys
        sample_id = self._id(row, raw_id)

        question, keys = self._pick(row, record, "question")
        consumed |= keys
        question_text = self._text(row, "question", question)
        if question is None and "question" not in self._errored:
            self.issue(row, "question", "row.missing_question")
        elif question_text == "":
            self.issue(row, "question", "row.empty_question")

        contexts, keys = self._pick(row, record, "contexts")
        consumed |= keys
        context_list = self._contexts(row, contexts)

        answer, keys = self._pick(row, record, "answer")
        consumed |= keys
        if answer is None:
            self.issue(row, "answer", "row.no_answer", "warning")
        answer_text = self._text(row, "answer", answer) or ""

        ground_truth, keys = self._pick(row, record, "ground_truth")
        consumed |= keys
        if isinstance(ground_truth, list):
            flat, _ = flatten_contexts(ground_truth)
            items = [clean_text(str(g)) for g in flat if not is_blank(g)]
            if len(items) > 1:
                self.issue(row, "ground_truth", "row.references_joined", "warning", n=len(items))
            ground_truth = "\n".join(items) or None
        gt_text = self._text(row, "ground_truth", ground_truth) or None

        metadata = self._metadata(row, record, consumed)
        if sample_id is None or not question_text or context_list is None:
            return None
        return Sample(
            id=sample_id,
            question=question_text,
            contexts=tuple(context_list),
            answer=answer_text,
            ground_truth=gt_text,
            metadata=metadata,
        )

    def _scrubbed(self, row: int, record: Mapping[Any, Any]) -> dict[str, Any] | None:
        """The record with lone surrogates, NUL characters and NaN / Infinity dealt with, each fix-up a
        warning (an error where the field cannot do without the value); None when nesting is too deep."""
        out: dict[str, Any] = {}
        deep = False
        self._errored = set()
        for key, value in record.items():
            if type(key) is str and is_clean_text(key) and key == key.strip() and _plain(value):
                out[key] = list(value) if type(value) is list else value  # nothing to scrub (the common case)
                continue
            key_fix = scrub(str(key))
            name = key_fix.value.strip()
            if key_fix.changed:
                self.issue(row, name, "row.bad_field_name", "warning")
            result = scrub(value, depth=2)  # the row object is level 1
            if result.too_deep:
                self.issue(row, name, "row.too_deep", depth=MAX_DEPTH)
                deep = True
                continue
            if result.surrogates:
                self.issue(row, name, "row.surrogates", "warning", n=result.surrogates)
            if result.nuls:
                self.issue(row, name, "row.nuls", "warning", n=result.nuls)
            if result.non_finite:
                core = _CORE.get(name.lower())
                if core:
                    self.issue(row, name, "row.non_finite_core", field=core)
                    self._errored.add(core)
                elif name.startswith("label_") and isinstance(value, NonFinite):
                    self.issue(row, name, "row.label_not_score", "warning", word=value.word)
                else:
                    self.issue(row, name, "row.non_finite", "warning", n=result.non_finite)
            out[name] = result.value
        return None if deep else out

    def _pick(self, row: int, record: Mapping[str, Any], canonical: str) -> tuple[Any, set[str]]:
        """Value of a field under any accepted name; returns (value or None, keys consumed)."""
        present = self._aliases.get(canonical, [])
        usable = [k for k in present if not is_blank(record[k])]
        if not usable:
            return None, set(present)
        chosen = usable[0]
        for other in usable[1:]:
            if record[other] != record[chosen]:
                self.issue(row, canonical, "row.both_aliases", "warning", chosen=repr(chosen), other=repr(other))
                return record[chosen], {k for k in present if k != other}
        return record[chosen], set(present)

    def _id(self, row: int, raw_id: Any) -> str | None:
        if raw_id is None:
            return f"row-{row}"
        if isinstance(raw_id, (Mapping, list, bool)):
            self.issue(row, "id", "row.bad_id", kind=_kind(raw_id))
            return None
        sample_id = id_text(raw_id)
        bad = _control_char(sample_id)
        if bad:
            self.issue(row, "id", "row.id_control", char=bad)
            return None
        return sample_id

    def _text(self, row: int, name: str, value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, str):
            return clean_text(value)
        if isinstance(value, (Mapping, list, tuple, bool)):
            self.issue(row, name, "row.not_text", field=name, kind=_kind(value))
            return None
        self.issue(row, name, "row.read_as_text", "warning", field=name, kind=_kind(value))
        return clean_text(id_text(value))

    def _contexts(self, row: int, value: Any) -> list[str] | None:
        """The row's contexts (``[]`` when absent, with a warning); None (with an error) when unreadable."""
        if value is None:
            self.issue(row, "contexts", "row.no_contexts", "warning")
            return []
        if isinstance(value, str):
            if self.text_cells:
                return self._context_items(row, split_contexts_cell(value) or [])
            stripped = value.strip()
            if stripped.startswith("["):
                items = split_contexts_cell(stripped)
                if items is not None and stripped.endswith("]") and (items or stripped == "[]"):
                    self.issue(row, "contexts", "row.contexts_json", "warning")
                    return self._context_items(row, items)
            self.issue(row, "contexts", "row.contexts_string", "warning")
            return [clean_text(value)]
        if isinstance(value, (list, tuple)):
            return self._context_items(row, value)
        if isinstance(value, Mapping):
            text = self._context_object_text(value)
            if text is not None:
                self.issue(row, "contexts", "row.contexts_object", "warning")
                return [clean_text(text)]
            keys = ", ".join(repr(str(k)) for k in list(value)[:5])
            self.issue(row, "contexts", "row.contexts_keys", keys=keys or say("kind.none"))
            return None
        self.issue(row, "contexts", "row.contexts_type", kind=_kind(value))
        return None

    @staticmethod
    def _context_object_text(item: Mapping[str, Any]) -> str | None:
        return next((item[k] for k in _CONTEXT_TEXT_KEYS if isinstance(item.get(k), str)), None)

    def _context_items(self, row: int, value: Sequence[Any]) -> list[str]:
        items, opened = flatten_contexts(value)
        if opened:
            self.issue(row, "contexts", "row.contexts_flattened", "warning", lists=opened, n=len(items))
        out: list[str] = []
        for i, item in enumerate(items, 1):
            if is_blank(item):
                self.issue(row, "contexts", "row.context_empty", "warning", i=i)
            elif isinstance(item, str):
                out.append(clean_text(item))
            elif isinstance(item, Mapping):
                text = self._context_object_text(item)
                if text is None:
                    self.issue(row, "contexts", "row.context_no_text", "warning", i=i)
                else:
                    out.append(clean_text(text))
            else:
                self.issue(row, "contexts", "row.context_as_text", "warning", i=i, kind=_kind(item))
                out.append(clean_text(id_text(item)))
        return out

    def _metadata(self, row: int, record: Mapping[str, Any], consumed: set[str]) -> dict[str, Any]:
        metadata: dict[str, Any] = {}
        for key, value in record.items():
            if key in consumed:
                continue
            name = str(key).strip()
            if is_missing(value) or (self.text_cells and isinstance(value, str) and not value.strip()):
                continue
            value = cell_value(value) if self.text_cells else value
            if name.startswith("label_"):
                if is_non_finite(value):
                    self.issue(row, name, "row.label_not_score", "warning", word=str(value).strip())
                    continue
                if not isinstance(value, (int, float, bool)):
                    self.issue(row, name, "row.label_text", "warning", value=repr(value))
            if self.text_cells:
                value = scrub(value).value  # a JSON cell may hold NaN
            metadata[name] = value
        return metadata
