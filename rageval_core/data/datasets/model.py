"""What loading a dataset produces: ``Issue`` (one problem, naming file, row and field), ``LoadedDataset``
(the good rows plus every issue) and the documented limits that keep a hostile file from exhausting memory
or the interpreter's stack."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from rageval_core.core.types import Sample
from rageval_core.core.errors import DataError

Severity = Literal["error", "warning"]
Format = Literal["json", "jsonl", "csv"]
Naming = Literal["seed", "ragas", "deepeval"]
NAMINGS: tuple[str, ...] = ("seed", "ragas", "deepeval")

# Documented in docs/datasets.md: change them there too.
MAX_FILE_BYTES = 50 * 1024 * 1024  # data read whole (uploads, JSON documents) larger than this is rejected unread
MAX_STREAM_BYTES = 1024 * 1024 * 1024  # JSON Lines / CSV files on disk past MAX_FILE_BYTES are read row by row up to this
MAX_DEPTH = 20  # nesting of JSON arrays / objects, the top level counting as 1 (a normal row needs 4)


@dataclass(frozen=True)
class Issue:
    """One problem found in a dataset. ``row`` is 1-based (None for the whole file).

    Invariant kept by the reader: a row with an ``error`` issue is skipped; a ``warning`` is a fix-up
    (the row loads, changed as the message says)."""

    file: str
    row: int | None
    field: str | None
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        where = self.file + (f" row {self.row}" if self.row is not None else "")
        where += f", {self.field}" if self.field else ""
        return f"{where}: {self.message} ({self.severity})"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "row": self.row, "field": self.field, "message": self.message, "severity": self.severity}


class IssueViews:
    """The views of a dataset's issues the CLI and pages read, over ``_all_issues()``: its ``issues`` (a whole
    read), or what a file read as the run goes has found so far (``LiveDataset`` adds its reader's)."""

    issues: list[Issue]

    def _all_issues(self) -> list[Issue]:
        return self.issues

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self._all_issues() if i.severity == "error"]

    @property
    def warnings(self) -> list[Issue]:
        return [i for i in self._all_issues() if i.severity == "warning"]

    @property
    def file_errors(self) -> list[Issue]:
        """Errors about the whole file (nothing could be read, or no row loaded)."""
        return [i for i in self.errors if i.row is None]

    @property
    def bad_rows(self) -> list[int]:
        """1-based rows that did not load."""
        return sorted({i.row for i in self.errors if i.row is not None})


@dataclass
class LoadedDataset(IssueViews):
    """The good rows of a dataset plus every issue found while reading it."""

    samples: list[Sample]
    issues: list[Issue]
    name: str
    language: str
    content_hash: str
    format: str = "json"
    total_rows: int = 0

    @property
    def ok(self) -> bool:
        return not self.errors


class DatasetError(DataError):
    """A dataset that cannot be written (``save_dataset``) or, from ``LoadedDataset`` callers that need an
    exception, one that could not be read; ``issues`` holds what was found (loading itself never raises)."""

    def __init__(self, message: str, issues: list[Issue] | None = None) -> None:
        super().__init__(message)
        self.issues = list(issues or [])
