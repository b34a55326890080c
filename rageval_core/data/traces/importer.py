"""One trace export's bytes (or file) → the rows rebuilt from it: the formats' readers, ``detect`` and ``rebuild``
tied together. It never writes a file."""

from __future__ import annotations

from pathlib import Path

from rageval_core.data.traces.detect import READERS, detect_format, documents
from rageval_core.data.traces.mapping import TraceMap
from rageval_core.data.traces.model import FORMATS, TraceFormatError, TraceImport, TraceIssue
from rageval_core.data.traces.rebuild import rebuild_rows

__all__ = ["import_trace_file", "import_traces"]


def import_traces(data: bytes, file: str, fmt: str = "auto", trace_map: TraceMap | None = None,
                  trace_url: str | None = None) -> TraceImport:
    """Rows rebuilt from one export's bytes (``file`` names it in messages). ``trace_url`` (with ``{trace_id}``)
    adds a ``trace_url`` link to each row. ``TraceFormatError`` only when nothing at all can be read."""
    if fmt != "auto" and fmt not in FORMATS:
        raise TraceFormatError(f"unknown trace format {fmt!r}; use auto or one of {', '.join(FORMATS)}")
    if trace_url is not None and "{trace_id}" not in trace_url:
        raise TraceFormatError(f"--trace-url {trace_url!r} has no {{trace_id}} placeholder")
    issues: list[TraceIssue] = []
    docs = documents(data, file, issues)
    chosen = detect_format(docs, file) if fmt == "auto" else fmt
    spans = READERS[chosen](docs, file, issues)
    if not spans:
        raise TraceFormatError(f"{file}: no span could be read as {chosen}" + (f" (first problem: {issues[0]})" if issues else ""))
    rows, skipped = rebuild_rows(spans, chosen, trace_map)
    if trace_url:
        for row in rows:
            row["trace_url"] = trace_url.replace("{trace_id}", row["trace_id"])
    return TraceImport(file, chosen, rows, skipped, issues, n_spans=sum(1 for s in spans if s.kind != "MALFORMED"))


def import_trace_file(path: str | Path, fmt: str = "auto", trace_map: TraceMap | None = None,
                      trace_url: str | None = None) -> TraceImport:
    """``import_traces`` on a file on disk."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise TraceFormatError(f"{p}: cannot read ({exc.strerror or exc})") from None
    return import_traces(data, str(p), fmt, trace_map, trace_url)
