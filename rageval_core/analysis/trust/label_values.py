"""Which values of a label column are labels, and what reading them keeps, drops and refuses.

A label is 0 / 1, written as a number, a boolean or a word (true / false, pass / fail, yes / no, y / n, good / bad,
👍 / 👎), or a value of a column that is on the 1–5 scale as a whole (every value an integer 1..5 and at least one
above 1; 4 and 5 pass). A blank cell (empty, null, none, "-") is no label. Anything else — 0.5, -1, 7, 3.5, "NaN",
"maybe", a list — is not a label: it is named with its row and column and never read as 0 or dropped unsaid.
A column holding 0 or a word and also 2..5 mixes the two scales: one stray 2 in a 0/1 column used to turn every
1 into a fail. Such a column is refused whole, never re-read as a rating; so is a column of 1s beside one value
from 2..5 only (ten 1s and a 2 read either way), which a 1–5 column using more of its scale never is.

The scale is decided per column over every row (``label_faithful`` and ``label_faithful@alice`` are one column:
the same question put to several people); the nested ``human_labels`` object is one column per criterion.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rageval_core.core.messages import say
from rageval_core.core.types import (
    ANSWER_CORRECTNESS,
    ANSWER_RELEVANCY,
    CONTEXT_PRECISION,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
)

DATASET = "dataset"
FILE = "file"
INSPECTOR = "inspector"
PRECEDENCE = (INSPECTOR, FILE, DATASET)  # first wins
ALL_CRITERIA = "*"

LABEL_COLUMNS: dict[str, tuple[str, ...]] = {
    "label_faithful": (FAITHFULNESS,),
    "label_relevant": (ANSWER_RELEVANCY,),
    "label_context": (CONTEXT_PRECISION, CONTEXT_RELEVANCE),
    "label_context_relevant": (CONTEXT_PRECISION, CONTEXT_RELEVANCE),
    "label_correct": (ANSWER_CORRECTNESS,),
}
RATING_PASS = 4  # 1–5 ratings: 4 and 5 pass


@dataclass(frozen=True)
class Label:
    """One human verdict: ``value`` 1 = good on the criterion; ``raw`` as written (a 1–5 rating stays 4)."""

    row_id: str
    criterion: str
    value: int
    source: str
    raw: float
    annotator: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def as_number(value: Any) -> float | None:
    """A loose number for non-label columns (``preferred``): words as 0 / 1, anything unreadable as None."""
    if value is None or isinstance(value, (list, dict)):
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return None if math.isnan(float(value)) else float(value)
    text = str(value).strip().lower()
    if text in ("", "none", "null", "nan", "-"):
        return None
    if text in ("yes", "true", "y", "good", "👍"):
        return 1.0
    if text in ("no", "false", "n", "bad", "👎"):
        return 0.0
    try:
        return float(text)
    except ValueError:
        return None


def field_of(metadata: Mapping[str, Any], name: str) -> Any:
    """A column at the top level of a row, else under its ``meta`` object."""
    if name in metadata:
        return metadata[name]
    meta = metadata.get("meta")
    return meta.get(name) if isinstance(meta, Mapping) else None


def binarize_label(raw: float, rating: bool) -> int:
    """0/1 as given; a 1–5 rating passes at ``RATING_PASS`` or above."""
    return int(raw >= RATING_PASS) if rating else int(raw >= 0.5)


ANNOTATOR_FIELD = "annotator"


def label_columns(meta: Mapping[str, Any]) -> Iterable[tuple[str, tuple[str, ...], str | None]]:
    """``(column, criteria, annotator)`` of each label column a row holds: ``label_faithful`` (the row's
    ``annotator``, if any) and ``label_faithful@alice``."""
    nested = meta.get("meta")
    keys = list(meta) + ([k for k in nested if k not in meta] if isinstance(nested, Mapping) else [])
    given = field_of(meta, ANNOTATOR_FIELD)
    row_annotator = str(given).strip() or None if given is not None else None
    for key in keys:
        base, at, name = str(key).partition("@")
        if base in LABEL_COLUMNS and (not at or name.strip()):
            yield str(key), LABEL_COLUMNS[base], name.strip() if at else row_annotator


BLANK = ("", "none", "null", "-")
PASS_WORDS = ("1", "true", "pass", "passed", "yes", "y", "good", "👍")
FAIL_WORDS = ("0", "false", "fail", "failed", "no", "n", "bad", "👎")
SCALE = (2, 3, 4, 5)  # 1 is on both scales


@dataclass(frozen=True)
class Value:
    """One cell read: ``kind`` is blank, bit (0 / 1, ``word`` when written as a word or boolean), scale (2..5) or
    bad (not a label)."""

    kind: str
    number: float | None = None
    word: bool = False


def read_value(value: Any) -> Value:
    """What one cell holds (module docstring)."""
    if value is None:
        return Value("blank")
    if isinstance(value, bool):
        return Value("bit", float(value), word=True)
    if isinstance(value, (int, float)):
        return _number(float(value))
    if isinstance(value, str):
        text = value.strip().lower()
        if text in BLANK:
            return Value("blank")
        if text in PASS_WORDS[1:] or text in FAIL_WORDS[1:]:
            return Value("bit", 1.0 if text in PASS_WORDS else 0.0, word=True)
        try:
            return _number(float(text))
        except ValueError:
            return Value("bad")
    return Value("bad")


def _number(number: float) -> Value:
    if math.isnan(number) or math.isinf(number):
        return Value("bad")
    if number in (0.0, 1.0):
        return Value("bit", number)
    if number.is_integer() and int(number) in SCALE:
        return Value("scale", number)
    return Value("bad")


@dataclass(frozen=True)
class Cell:
    """Where a value stands: the file's record number (1-based, in reading order), row id, column."""

    record: int
    row_id: str
    column: str
    value: Any
    annotator: str | None


@dataclass(frozen=True)
class NotALabel:
    """A value that is not a label; its row is skipped (or the file refused)."""

    cell: Cell

    def message(self) -> str:
        return say("labels.not_a_label", where=where(self.cell), column=self.cell.column, value=shown(self.cell.value))


@dataclass(frozen=True)
class MixedColumn:
    """A column that is on neither scale as a whole, refused: 0 / 1 (or words) beside 2..5 (mixed), or 1s beside a
    single value from 2..5 (ambiguous: a 0/1 column with a stray 2, or a 1–5 column using only 1 and 2?)."""

    column: str
    binary: tuple[Cell, ...]
    scale: tuple[Cell, ...]
    ambiguous: bool = False

    def message(self) -> str:
        code = "labels.ambiguous_column" if self.ambiguous else "labels.mixed_column"
        return say(code, column=self.column, binary=_some(self.binary), scale=_some(self.scale))


@dataclass
class LabelRead:
    """Labels read from rows, aligned with where each came from, and what was not read."""

    labels: list[Label] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)  # cells[i] is where labels[i] came from
    not_labels: list[NotALabel] = field(default_factory=list)
    mixed: list[MixedColumn] = field(default_factory=list)

    def messages(self) -> list[str]:
        return [m.message() for m in self.mixed] + [p.message() for p in self.not_labels]


def read_labels(rows: Iterable[tuple[str, Mapping[str, Any]]], source: str = DATASET) -> LabelRead:
    """The labels of ``(row_id, metadata)`` rows (a labels file, a dataset's columns), with every value that is not
    a label and every mixed column named (module docstring)."""
    columns: dict[tuple[str, str], list[tuple[Cell, Value]]] = {}  # (scale key, criteria) -> cells
    for record, (rid, meta) in enumerate(rows, 1):
        for column, criteria, annotator in label_columns(meta):
            cell = Cell(record, str(rid), column, field_of(meta, column), annotator)
            columns.setdefault((column.partition("@")[0], ",".join(criteria)), []).append((cell, read_value(cell.value)))
        nested = meta.get("human_labels")
        if isinstance(nested, Mapping):
            for criterion, value in nested.items():
                cell = Cell(record, str(rid), f"human_labels.{criterion}", value, None)
                columns.setdefault((cell.column, str(criterion)), []).append((cell, read_value(value)))
    out = LabelRead()
    for (key, joined), cells in columns.items():
        scale = tuple(c for c, v in cells if v.kind == "scale")
        binary = tuple(c for c, v in cells if v.kind == "bit" and (v.number == 0.0 or v.word))
        ones = tuple(c for c, v in cells if v.kind == "bit" and v.number == 1.0 and not v.word)
        out.not_labels += [NotALabel(c) for c, v in cells if v.kind == "bad"]
        if scale and binary:
            out.mixed.append(MixedColumn(key, binary, scale))
            continue
        if scale and ones and len({v.number for _, v in cells if v.kind == "scale"}) < 2:
            out.mixed.append(MixedColumn(key, ones, scale, ambiguous=True))
            continue
        for cell, value in cells:
            if value.number is None or value.kind == "bad":
                continue
            for criterion in joined.split(","):
                out.labels.append(Label(cell.row_id, criterion, binarize_label(value.number, bool(scale)), source,
                                        value.number, cell.annotator))
                out.cells.append(cell)
    out.not_labels.sort(key=lambda p: (p.cell.record, p.cell.column))
    return out


def where(cell: Cell) -> str:
    """"row 7 (record 3)": the id a person searches for, and the position when ids repeat or are odd."""
    return say("labels.where", row=cell.row_id, record=cell.record)


def shown(value: Any) -> str:
    """A cell's value as written (quoted text, a list as JSON), short."""
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _some(cells: Sequence[Cell], limit: int = 5) -> str:
    named = ", ".join(f"{c.row_id}={shown(c.value)}" for c in cells[:limit])
    return named + (f" (+{len(cells) - limit})" if len(cells) > limit else "")
