"""The SQLite store: runs, results (their columns defined once), the call log, labels and their splits, rubric
versions and narrow read models.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "call_log",
    "columns",
    "db",
    "human_labels",
    "label_splits",
    "light_tables",
    "rubric_versions",
    "run_summary",
    "runs",
]
