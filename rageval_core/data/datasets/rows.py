"""Raw records (dicts from any format) to ``Sample`` rows, with an issue for every problem.

The invariant the CLI and the export rely on: a row with an ``error`` issue is skipped, a row that loads
has only warnings (each one a fix-up the message describes). Nothing is guessed silently: a value that
cannot be read as the field it sits in either becomes a warning that says what was done, or skips the row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from rageval_core.data.datasets.column_map import ColumnMap
from rageval_core.data.datasets.dialects import (
    Dialect,
    context_separator,
    dialect_of,
    external_key,
    deepeval_record,
    rename_phoenix_ids,
    score_value,
    split_text,
)
from rageval_core.data.datasets.model import MAX_DEPTH, Issue, Severity
from rageval_core.data.datasets.rowkeys import CORE, alias_index, control_char, fast_row, plain
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
    json_value,
    looks_like_list,
    python_list,
    scrub,
    split_contexts_cell,
)
from rageval_core.core.types import Sample
from rageval_core.core.messages import say

_CONTEXT_TEXT_KEYS = ("text", "content", "page_content")


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


def counted(records: Iterable[Any], on_row: Callable[[int], None] | None, every: int = 1000) -> Iterator[Any]:
    """``records`` as they are, telling ``on_row(n)`` every ``every`` records how many were read (progress)."""
    for n, record in enumerate(records, 1):
        if on_row is not None and n % every == 0:
            on_row(n)
        yield record


class RowReader:
    """Turns raw records into samples and issues (shared by every format)."""

    def __init__(self, file: str, *, text_cells: bool, column_map: ColumnMap | None = None) -> None:
        self.file = file
        self.text_cells = text_cells
        self.column_map = column_map or None
        self.mapped_seen: set[str] = set()  # mapped fields whose column some row had
        self.first_columns: list[str] = []  # the first row's keys, to name the columns when a mapped one is missing
        self.issues: list[Issue] = []
        self._row_errors = 0
        self._errored: set[str] = set()  # core fields of the current row already reported as errors
        self._aliases: dict[str, list[str]] = {}  # the current row's keys per core field
        self._chosen = ""  # the key the last ``_pick`` read its value from
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

    def map_issues(self) -> list[Issue]:
        """After the last row: a warning for each mapped column no row had (a missing question column already
        refused every row)."""
        if self.column_map is None:
            return []
        shown = ", ".join(repr(c) for c in self.first_columns[:8]) + (" …" if len(self.first_columns) > 8 else "")
        return [Issue(self.file, None, name, say("file.map_unused", field=name, column=repr(column), columns=shown), "warning")
                for name, column in self.column_map.columns.items() if name not in self.mapped_seen and name != "question"]

    # ------------------------------------------------------------------ one row
    def read_row(self, row: int, record: Any) -> Sample | None:
        if type(record) is dict and not self.text_cells and self.column_map is None:
            sample = fast_row(row, record)
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
        if not self.first_columns:
            self.first_columns = [str(k) for k in record]
        dialect = dialect_of(record)
        if dialect == "deepeval":
            record = deepeval_record(record, CORE)
        elif dialect == "phoenix":
            record = rename_phoenix_ids(record)
        consumed: set[str] = set()
        self._aliases = alias_index(record, self.column_map)
        if self.column_map is not None:
            self.mapped_seen |= {f for f in self.column_map.columns if self._aliases.get(f)}

        raw_id, keys = self._pick(row, record, "id")
        consumed |= keys
        sample_id = self._id(row, raw_id)

        question, keys = self._pick(row, record, "question")
        consumed |= keys
        question_text = self._text(row, "question", question)
        mapped_question = self.column_map.columns.get("question") if self.column_map else None
        if question is None and mapped_question and not self._aliases.get("question"):
            self.issue(row, "question", "row.missing_mapped", column=repr(mapped_question), field="question")
        elif question is None and "question" not in self._errored:
            self.issue(row, "question", "row.missing_question")
        elif question_text == "":
            self.issue(row, "question", "row.empty_question")

        contexts, keys = self._pick(row, record, "contexts")
        consumed |= keys
        context_list = self._contexts(row, contexts, self._chosen, dialect, record)

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

        metadata, external = self._metadata(row, record, consumed, dialect)
        if sample_id is None or not question_text or context_list is None:
            return None
        return Sample(
            id=sample_id,
            question=question_text,
            contexts=tuple(context_list),
            answer=answer_text,
            ground_truth=gt_text,
            metadata=metadata,
            external_scores=external,
        )

    def _scrubbed(self, row: int, record: Mapping[Any, Any]) -> dict[str, Any] | None:
        """The record with lone surrogates, NUL characters and NaN / Infinity dealt with, each fix-up a
        warning (an error where the field cannot do without the value); None when nesting is too deep."""
        out: dict[str, Any] = {}
        deep = False
        self._errored = set()
        for key, value in record.items():
            if type(key) is str and is_clean_text(key) and key == key.strip() and plain(value):
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
                core = CORE.get(name.lower())
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
        self._chosen = usable[0] if usable else ""
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
        bad = control_char(sample_id)
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

    def _contexts(self, row: int, value: Any, key: str, dialect: Dialect, record: Mapping[str, Any]) -> list[str] | None:
        """The row's contexts (``[]`` when absent, with a warning); None (with an error) when unreadable."""
        if value is None:
            ideal = next((k for k in record if str(k).strip().lower() == "context" and not is_blank(record[k])), None)
            if dialect == "deepeval" and ideal is not None:
                self.issue(row, "contexts", "row.deepeval_context", "warning")
            else:
                self.issue(row, "contexts", "row.no_contexts", "warning")
            return []
        if isinstance(value, str):
            return self._contexts_text(row, value, key, dialect)
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

    def _contexts_text(self, row: int, value: str, key: str, dialect: Dialect) -> list[str] | None:
        """Contexts held in one text: a list written as JSON or as a Python repr (read as a list, or the row is
        refused: never one context holding the repr), the tool's joined form (``dialects.context_separator``, or
        the column map's separator), a CSV cell's ``|||`` / one per line, else one context (a warning)."""
        text = clean_text(value)
        if text.startswith("[") and text.endswith("]"):
            try:
                items = json_value(text)
            except (ValueError, RecursionError):
                items = None
            if isinstance(items, list):
                if not self.text_cells:
                    self.issue(row, "contexts", "row.contexts_json", "warning")
                return self._context_items(row, items)
        if looks_like_list(text):
            parsed, problem = python_list(text)
            if parsed is None:
                self.issue(row, "contexts", "row.contexts_bad_list", problem=problem)
                return None
            if not self.text_cells:
                self.issue(row, "contexts", "row.contexts_python", "warning")
            return self._context_items(row, parsed)
        separator = self.column_map.contexts_separator if self.column_map else None
        separator = separator or context_separator(dialect, key)
        if separator is not None:
            return self._context_items(row, split_text(text, separator))
        if self.text_cells:
            return self._context_items(row, split_contexts_cell(value) or [])
        self.issue(row, "contexts", "row.contexts_string", "warning")
        return [text]

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

    def _metadata(
        self, row: int, record: Mapping[str, Any], consumed: set[str], dialect: Dialect
    ) -> tuple[dict[str, Any], dict[str, float | None]]:
        """The row's other fields: metadata, and external scores (``dialects.external_key``) apart from it."""
        metadata: dict[str, Any] = {}
        external: dict[str, float | None] = {}
        for key, value in record.items():
            if key in consumed:
                continue
            name = str(key).strip()
            score_key = external_key(name, dialect)
            if score_key is not None:
                score, ok = score_value(value)
                if ok:
                    external[score_key] = score
                else:
                    self.issue(row, name, "row.bad_score", "warning", column=repr(name), value=repr(value)[:60])
                continue
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
        return metadata, external
