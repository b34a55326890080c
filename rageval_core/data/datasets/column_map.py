"""A column map: which of a file's columns holds each field, for files whose names the loader does not know
(``--map question=prompt,contexts=docs`` in the CLI, the mapping step on the Dataset page).

A mapped field is read from its column only: another column that would name the same field (``question`` beside a
mapped ``prompt``) stays metadata. ``contexts_separator`` says how a contexts text cell is split when the file joins
them in one text ("|", a blank line, ...); without it the file's own conventions apply (docs/datasets.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rageval_core.data.datasets.dialects import BLANK_LINE

MAPPABLE: tuple[str, ...] = ("id", "question", "contexts", "answer", "ground_truth")
# Separators by name, for the command line and the page (any other text is used as it is, with \n and \t unescaped).
SEPARATOR_NAMES: dict[str, str] = {"blank-line": BLANK_LINE, "newline": "\n", "pipe": "|", "triple-pipe": "|||"}


@dataclass(frozen=True)
class ColumnMap:
    """Field → the file's column (``{"question": "prompt"}``) and how contexts joined in one text are split."""

    columns: Mapping[str, str] = field(default_factory=dict)
    contexts_separator: str | None = None

    def __post_init__(self) -> None:
        unknown = sorted(set(self.columns) - set(MAPPABLE))
        if unknown:
            raise ValueError(f"cannot map {', '.join(unknown)}: the fields are {', '.join(MAPPABLE)}")
        blank = [f for f, c in self.columns.items() if not str(c).strip()]
        if blank:
            raise ValueError(f"no column given for {', '.join(blank)}")
        used: dict[str, str] = {}
        for name, column in self.columns.items():
            if column in used:
                raise ValueError(f"column {column!r} is mapped to both {used[column]} and {name}")
            used[column] = name
        if self.contexts_separator == "":
            raise ValueError("the contexts separator is empty")

    def __bool__(self) -> bool:
        return bool(self.columns) or self.contexts_separator is not None

    def field_of(self, column: str) -> str | None:
        """The field a column is mapped to, if any."""
        return next((f for f, c in self.columns.items() if c == column), None)

    def to_settings(self) -> dict[str, object]:
        """The map as a run stores it (``from_settings`` reads it back), so the run's file can be read again."""
        return {"columns": dict(self.columns), "contexts_separator": self.contexts_separator}

    @classmethod
    def from_settings(cls, data: object) -> ColumnMap | None:
        """The map a run stored, or None (no map, or not one this version can read)."""
        if not isinstance(data, Mapping):
            return None
        columns, separator = data.get("columns") or {}, data.get("contexts_separator")
        try:
            made = cls({str(k): str(v) for k, v in dict(columns).items()}, None if separator is None else str(separator))
        except (TypeError, ValueError):
            return None
        return made or None

    def describe(self) -> str:
        """``question=prompt, contexts=docs`` (and the separator), for messages and run settings."""
        parts = [f"{f}={c}" for f, c in self.columns.items()]
        if self.contexts_separator is not None:
            parts.append(f"contexts separated by {self.contexts_separator!r}")
        return ", ".join(parts)


def parse_separator(text: str) -> str:
    """A separator by name (``blank-line``, ``newline``, ``pipe``, ``triple-pipe``) or as written, with ``\\n`` and
    ``\\t`` read as a newline and a tab."""
    named = SEPARATOR_NAMES.get(text.strip().lower())
    if named is not None:
        return named
    return text.replace("\\n", "\n").replace("\\t", "\t")


def parse_column_map(specs: Iterable[str], contexts_separator: str | None = None) -> ColumnMap:
    """``["question=input,answer=actual_output", "contexts=docs"]`` (repeatable, comma-separated ``field=column``) as
    a ``ColumnMap``; ``ValueError`` naming the part that cannot be read."""
    columns: dict[str, str] = {}
    for spec in specs:
        for part in spec.split(","):
            if not part.strip():
                continue
            name, sep, column = part.partition("=")
            name, column = name.strip().lower(), column.strip()
            if not sep or not name or not column:
                raise ValueError(f"cannot read {part.strip()!r} in the column map: write field=column, e.g. question=input")
            if name in columns and columns[name] != column:
                raise ValueError(f"{name} is mapped twice ({columns[name]!r} and {column!r})")
            columns[name] = column
    separator = parse_separator(contexts_separator) if contexts_separator is not None else None
    return ColumnMap(columns, separator)
