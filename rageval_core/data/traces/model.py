"""What a trace import works with: one normalised ``TraceSpan`` per span (whatever the export format), the
problems found (``TraceIssue``, naming the file and the span or line), the traces left out with a reason
(``SkippedTrace``) and the result (``TraceImport``). No I/O here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

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


class TraceFormatError(ValueError):
    """Nothing could be read: not JSON, not a known export shape, or no span in the file. The message names
    the file (and the line or span when one is at fault)."""


@dataclass(frozen=True)
class TraceIssue:
    """One problem in an export: ``where`` is ``line 3`` or ``span 9f2c… (retrieve)`` or ``data[4]``."""

    file: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}, {self.where}: {self.message}"


@dataclass
class TraceSpan:
    """One span, normalised: OpenInference attribute names, flat dotted keys (``retrieval.documents.0.document.content``),
    times in nanoseconds since the epoch, kind upper-case (``RETRIEVER``, ``LLM``, ``CHAIN``, ...)."""

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
    skipped: list[SkippedTrace]
    issues: list[TraceIssue]
    n_spans: int = 0

    @property
    def n_traces(self) -> int:
        return len(self.rows) + len(self.skipped)

    def skip_counts(self) -> dict[str, int]:
        """``{reason: traces}`` in the order of ``SKIP_REASONS``."""
        counts: dict[str, int] = {}
        for s in self.skipped:
            counts[s.reason] = counts.get(s.reason, 0) + 1
        return {r: counts[r] for r in [*SKIP_REASONS, *counts] if r in counts}

    def summary(self) -> str:
        """One line: rows, traces, spans and the skips by reason."""
        text = f"{self.file}: {len(self.rows)} row(s) from {self.n_traces} trace(s), {self.n_spans} span(s) ({self.format})"
        counts = self.skip_counts()
        if counts:
            text += "; skipped " + ", ".join(f"{n} {r}" for r, n in counts.items())
        return text
