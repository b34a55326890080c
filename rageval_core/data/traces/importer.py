"""One trace export's bytes (or file) → the rows rebuilt from it: the file's size checked before reading, its
text read as leaves (``stream``), the format told from the first ones (``detect``), each leaf read into compact
spans kept by trace, then ``rebuild``. It never writes a file.

Memory: the text, the spans (only the attributes the map reads) and the rows; never the whole file as Python
objects. Problems and skipped traces past ``model.MAX_LISTED`` are counted, not kept."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

from rageval_core.data.traces import traceloop
from rageval_core.data.traces.detect import READERS, decode, detect_format, read_text
from rageval_core.data.traces.mapping import TraceMap, build_map, read_keys
from rageval_core.data.traces.model import FORMATS, Issues, TraceFormatError, TraceImport, TraceSpan
from rageval_core.data.traces.rebuild import group_traces, rebuild_rows
from rageval_core.data.traces.spans import ReadContext, keep_keys
from rageval_core.data.traces.stream import leaves

__all__ = ["import_trace_file", "import_traces"]


def _check(fmt: str, trace_url: str | None) -> None:
    if fmt != "auto" and fmt not in FORMATS:
        raise TraceFormatError(f"unknown trace format {fmt!r}; use auto or one of {', '.join(FORMATS)}")
    if trace_url is not None and "{trace_id}" not in trace_url:
        raise TraceFormatError(f"--trace-url {trace_url!r} has no {{trace_id}} placeholder")


def import_traces(data: bytes | str, file: str, fmt: str = "auto", trace_map: TraceMap | None = None,
                  trace_url: str | None = None) -> TraceImport:
    """Rows rebuilt from one export's bytes (``file`` names it in messages). ``trace_url`` (with ``{trace_id}``)
    adds a ``trace_url`` link to each row. ``TraceFormatError`` only when nothing at all can be read."""
    _check(fmt, trace_url)
    text = data if isinstance(data, str) else decode(data, file)
    return _import_text(text, file, fmt, trace_map, trace_url)


def import_trace_file(path: str | Path, fmt: str = "auto", trace_map: TraceMap | None = None,
                      trace_url: str | None = None) -> TraceImport:
    """``import_traces`` on a file on disk; its size is checked (``stat``) before a byte is read."""
    _check(fmt, trace_url)
    p = Path(path)
    return _import_text(read_text(p, str(p)), str(p), fmt, trace_map, trace_url)


def _import_text(text: str, file: str, fmt: str, trace_map: TraceMap | None, trace_url: str | None) -> TraceImport:
    trace_map = trace_map or build_map()
    issues = Issues(file)
    stream = leaves(text, file, issues.add)
    chosen, seen = detect_format(stream, file) if fmt == "auto" else (fmt, [])
    reader = READERS[chosen](ReadContext(issues, keep_keys(read_keys(trace_map) | traceloop.KEYS)))

    def spans() -> Iterator[TraceSpan]:
        for leaf in itertools.chain(seen, stream):
            yield from reader.read(leaf)
        yield from reader.finish()

    groups, n_spans = group_traces(spans())
    if not groups:
        first = f" (first problem: {issues.items[0].where}: {issues.items[0].message})" if issues.items else ""
        raise TraceFormatError(f"{file}: no span could be read as {chosen}{first}")
    rows, skipped, counts = rebuild_rows(groups, chosen, trace_map, issues)
    if trace_url:
        for row in rows:
            row["trace_url"] = trace_url.replace("{trace_id}", row["trace_id"])
    return TraceImport(file, chosen, rows, skipped, issues.items, n_spans=n_spans, counts=counts, n_issues=issues.count)
