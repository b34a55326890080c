"""Reading results: comparison, another tool's scores beside ours, tallies, exports (files, and span annotations sent
to Phoenix), leaderboard (runs and the side runs made for them), the report and trust statistics.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "compare",
    "export",
    "external_scores",
    "failures",
    "judge_agreement",
    "leaderboard",
    "phoenix_push",
    "report",
    "row_filter",
    "run_groups",
    "run_tables",
    "tallies",
    "thresholds",
    "trust",
    "trust_defaults",
    "version_grid",
]
