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
    "clone",
    "columns",
    "db",
    "details_codec",
    "embedding_cache",
    "engine",
    "export_rows",
    "human_labels",
    "label_splits",
    "light_tables",
    "migrate_texts",
    "migrations",
    "packing",
    "page_reads",
    "probe",
    "read_only",
    "readback",
    "response_cache",
    "row_texts",
    "rubric_versions",
    "run_rows",
    "run_tallies",
    "runs",
    "texts",
    "trust_reports",
]
