"""The SQLite store, the only door to SQL: runs with their rows, results (their columns defined once), the call log,
labels, their splits and the annotation queue, rubric versions, the caches, batch jobs, trust reports, narrow read
models, and texts stored once (prompts, responses and the rows' texts by reference, packed details). One ordered
list of migrations (``migrations``) makes the schema; its version is the file's ``PRAGMA user_version``.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "annotations",
    "batch_ledger",
    "cache_tables",
    "call_log",
    "columns",
    "db",
    "details_codec",
    "embedding_cache",
    "engine",
    "human_labels",
    "label_splits",
    "light_tables",
    "migrate_texts",
    "migrations",
    "packing",
    "read_only",
    "response_cache",
    "rubric_versions",
    "run_rows",
    "runs",
    "texts",
    "trust_reports",
]
