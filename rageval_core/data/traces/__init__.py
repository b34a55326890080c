"""Trace exports → datasets: OTLP JSON / JSON Lines with OpenInference or OpenLLMetry attributes (``otel``, protobuf's
JSON mapping too), span objects (``openinference``: OpenInference JSON Lines, the OpenTelemetry SDK's ``to_json()``),
Phoenix span exports (``phoenix``: REST, otlpv1, dataframes) and Langfuse traces, observations and UI downloads
(``langfuse``), each read into the same ``TraceSpan`` shape (one module per format, ``detect`` picks one), then
``rebuild`` makes one row per RAG answer. ``importer.import_traces`` ties them together; it never writes a file.
Reading is streamed and bounded (``stream``, ``limits``): a hostile file is named, never an internal error.

The names below are imported on first use (PEP 562): the CLI's parser reads ``FORMATS`` for ``import-traces
--format`` and should not load every reader to get it.
"""

from __future__ import annotations

from rageval_core.core.lazy import lazy_attributes

__all__ = [
    "FORMATS", "SKIP_REASONS", "SkippedTrace", "TraceFormatError", "TraceImport", "TraceIssue", "TraceMap", "TraceSpan",
    "build_map", "import_trace_file", "import_traces", "load_map",
]


__getattr__ = lazy_attributes(__name__, globals(), {
    "model": ("FORMATS", "SKIP_REASONS", "SkippedTrace", "TraceFormatError", "TraceImport", "TraceIssue", "TraceSpan"),
    "mapping": ("TraceMap", "build_map", "load_map"),
    "importer": ("import_trace_file", "import_traces"),
})
