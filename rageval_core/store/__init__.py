"""The SQLite store: runs, results (their columns defined once), the call log, labels, their splits and the
annotation queue, rubric versions, the caches' tables, narrow read models, and texts stored once (prompts and responses by
reference, packed details).

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "annotations",
    "cache_tables",
    "call_log",
    "columns",
    "db",
    "details_codec",
    "human_labels",
    "label_splits",
    "light_tables",
    "migrate_texts",
    "packing",
    "rubric_versions",
    "runs",
    "texts",
]
