"""Trace exports → datasets: OTLP JSON / JSON Lines with OpenInference attributes (``otel``), OpenInference span
JSON Lines (``openinference``), Phoenix span exports (``phoenix``) and Langfuse traces / observations
(``langfuse``), each read into the same ``TraceSpan`` shape (one module per format, ``detect`` picks one),
then ``rebuild`` makes one row per RAG answer. ``importer.import_traces`` ties them together; it never writes a file.

The names below are imported on first use (PEP 562): the CLI's parser reads ``FORMATS`` for ``import-traces
--format`` and should not load every reader to get it.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "FORMATS", "SKIP_REASONS", "SkippedTrace", "TraceFormatError", "TraceImport", "TraceIssue", "TraceMap", "TraceSpan",
    "build_map", "import_trace_file", "import_traces", "load_map",
]


def __getattr__(name: str) -> Any:
    """A public name from the submodule that defines it, imported when first asked for."""
    homes = {
        "model": ("FORMATS", "SKIP_REASONS", "SkippedTrace", "TraceFormatError", "TraceImport", "TraceIssue", "TraceSpan"),
        "mapping": ("TraceMap", "build_map", "load_map"),
        "importer": ("import_trace_file", "import_traces"),
    }
    for home, names in homes.items():
        if name in names:
            value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
            globals()[name] = value
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
