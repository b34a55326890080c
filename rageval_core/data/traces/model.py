"""What a trace import works with: one normalised ``TraceSpan`` per span (whatever the export format), the
problems found (``TraceIssue``, naming the file and the span or line), the traces left out with a reason
(``SkippedTrace``) and the result (``TraceImport``). No I/O here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal
from rageval_core.core.errors import DataError

MAX_LISTED = 1000  # problems and skipped traces kept by name; past this they are only counted

TraceFormat = Literal["otel", "openinference", "langfuse", "phoenix"]
FORMATS: tuple[str, ...] = ("otel", "openinference", "langfuse", "phoenix")

# Why a trace gave no row (the CLI and the Dataset page print these counts).
NO_QUESTION = "no_question"
NO_ANSWER = "no_answer"
NO_RETRIEVAL = "no_retrieval"
ERROR_STATUS = "error_status"
MALFORMED = "malformed_span"
SKIP_REASONS: dict[str, str] = {
    NO_QUESTION: "no question: neither the root span, a retriever nor an LLM span carries the user's input",
    NO_ANSWER: "no answer: neither the root span nor an LLM span carries an output",
    NO_RETRIEVAL: "no retrieved documents: not a RAG answer (no retriever span with documents)",
    ERROR_STATUS: "the trace ended in an error (a span with status ERROR and no answer after it)",
    MALFORMED: "one of its spans could not be read (see the messages above)",
}


class TraceFormatError(DataError):
    """Nothing could be read: not JSON, not a known export shape, or no span in the file. The message names
    the file (and the line or span when one is at fault)."""


@dataclass(frozen=True)
class TraceIssue:
    """One problem in an export: ``where`` is ``line 3`` or ``span 9f2c… (retrieve)`` or ``data[4]``."""

    file: str
    where: str
    message: str

    def __post_init__(self) -> None:  # an id or name from the file may hold a lone surrogate: shown escaped
        for name in ("where", "message"):
            object.__setattr__(self, name, printable(getattr(self, name)))

    def __str__(self) -> str:
        return f"{self.file}, {self.where}: {self.message}"


def printable(text: str) -> str:
    """``text`` with lone surrogates written as ``\\ud800``, so it can be printed and stored as UTF-8."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@dataclass
class Issues:
    """The problems found while reading, the first ``MAX_LISTED`` kept by name and all of them counted (a file
    of a million bad spans must not hold a million messages)."""

    file: str
    items: list[TraceIssue] = field(default_factory=list)
    count: int = 0

    def add(self, where: str, message: str) -> None:
        self.count += 1
        if len(self.items) < MAX_LISTED:
            self.items.append(TraceIssue(self.file, where, message))


@dataclass(slots=True)
class TraceSpan:
    """One span, normalised: OpenInference attribute names, flat dotted keys (``retrieval.documents.0.document.content``),
    times in nanoseconds since the epoch, kind upper-case (``RETRIEVER``, ``LLM``, ``CHAIN``, ...). Compact (slots,
    only the attributes the trace map reads), since a file may hold a million of them."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str
    start_ns: int | None
    end_ns: int | None
    status: str = "UNSET"
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    where: str = ""


@dataclass(frozen=True)
class SkippedTrace:
    trace_id: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TraceImport:
    """The rows rebuilt from an export (dataset-shaped dicts), the traces skipped and every problem found."""

    file: str
    format: str
    rows: list[dict[str, Any]]
    skipped: list[SkippedTrace]  # the first MAX_LISTED; skip_counts() counts them all
    issues: list[TraceIssue]  # the first MAX_LISTED; n_issues counts them all
    n_spans: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    n_issues: int = 0

    def __post_init__(self) -> None:
        if not self.counts:
            for s in self.skipped:
                self.counts[s.reason] = self.counts.get(s.reason, 0) + 1
        self.n_issues = max(self.n_issues, len(self.issues))

    @property
    def n_traces(self) -> int:
        return len(self.rows) + sum(self.counts.values())

    def skip_counts(self) -> dict[str, int]:
        """``{reason: traces}`` in the order of ``SKIP_REASONS``."""
        return {r: self.counts[r] for r in [*SKIP_REASONS, *self.counts] if r in self.counts}

    def summary(self) -> str:
        """One line: rows, traces, spans and the skips by reason."""
        text = f"{self.file}: {len(self.rows)} row(s) from {self.n_traces} trace(s), {self.n_spans} span(s) ({self.format})"
        counts = self.skip_counts()
        if counts:
            text += "; skipped " + ", ".join(f"{n} {r}" for r, n in counts.items())
        return text
