"""Input data: datasets (JSON, JSONL, CSV; validation and streaming), trace exports turned into datasets, traces
pulled from a running Phoenix, and documents for test sets.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "datasets",
    "documents",
    "phoenix",
    "traces",
]
