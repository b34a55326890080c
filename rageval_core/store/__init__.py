"""The SQLite store: runs, results, the call log, labels, rubric versions and narrow read models.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "call_log",
    "db",
    "human_labels",
    "light_tables",
    "rubric_versions",
    "run_summary",
    "runs",
]
