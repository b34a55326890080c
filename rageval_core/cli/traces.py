"""``import-traces FILE --out DATA``: a trace export (OTLP JSON / JSON Lines with OpenInference attributes,
OpenInference span JSON Lines, Phoenix span exports, Langfuse traces or observations) rebuilt into a dataset,
one row per RAG answer. Prints how many traces became rows and how many were skipped and why; each problem
names the file and the span or line. Exit 0 with at least one row, 2 when nothing could be imported."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import EXIT_BAD_INPUT, EXIT_OK, echo, err
from rageval_core.cli.dataset_report import LISTED
from rageval_core.core.termtext import terminal_text

if TYPE_CHECKING:
    from rageval_core.data.traces import TraceImport


def rows_to_samples(rows: list[dict[str, Any]]) -> list[Any]:
    """Imported rows as ``Sample`` objects (everything beyond the four fields goes to metadata)."""
    from rageval_core.core.types import Sample

    out = []
    for row in rows:
        meta = {k: v for k, v in row.items() if k not in ("id", "question", "contexts", "answer", "ground_truth")}
        out.append(Sample(row["id"], row["question"], tuple(row["contexts"]), row["answer"], row.get("ground_truth"), meta))
    return out


def write_imported(result: "TraceImport", summary: str, out: str) -> int:
    """Print an import's problems, summary and skip counts, then write its rows to ``out``: exit 0, or 2 when no
    trace made a row or the file cannot be written. Shared by ``import-traces`` and ``phoenix pull``."""
    from rageval_core.data.datasets import DatasetError, save_dataset
    from rageval_core.data.traces import SKIP_REASONS

    for issue in result.issues[:LISTED]:
        err(f"  {terminal_text(str(issue))}")
    if result.n_issues > LISTED:
        err(f"  … and {result.n_issues - LISTED:,} more problem(s)")
    err(summary)
    for reason, n in result.skip_counts().items():
        err(f"  skipped {n} trace(s): {SKIP_REASONS.get(reason, reason)}")
    if not result.rows:
        err("error: no trace is a complete RAG answer (question, retrieved documents, answer); nothing written")
        return EXIT_BAD_INPUT
    try:
        path = save_dataset(rows_to_samples(result.rows), out)
    except (DatasetError, OSError) as exc:
        err(f"error: cannot write {out}: {exc}")
        return EXIT_BAD_INPUT
    echo(f"{len(result.rows)} row(s) → {path}")
    return EXIT_OK


def cmd_import_traces(args: argparse.Namespace) -> int:
    from rageval_core.data.traces import TraceFormatError, import_trace_file, load_map

    try:
        trace_map = load_map(args.map) if args.map else None
        result = import_trace_file(args.file, args.format, trace_map, args.trace_url)
    except TraceFormatError as exc:
        err(f"error: {terminal_text(str(exc))}")
        return EXIT_BAD_INPUT
    return write_imported(result, result.summary(), args.out)


def add_command(sub: Any) -> None:
    """Register ``import-traces``."""
    from rageval_core.data.traces.model import FORMATS

    p = sub.add_parser(
        "import-traces",
        help="rebuild a dataset from exported traces (OpenTelemetry / OpenInference, Phoenix, Langfuse)",
        description="Read a trace export and write one dataset row per RAG answer: the question, the retrieved contexts "
        "in rank order (their ids and scores in context_ids / context_scores), the answer, latency_ms and trace_id (the "
        "row id, so Inspect names the trace). Traces without a question, retrieved documents or an answer, or that ended "
        "in an error, are skipped and counted by reason. Exit 0 with at least one row, 2 when nothing could be imported.",
    )
    p.add_argument("file", metavar="FILE", help="the export: .json or .jsonl (up to 50 MB, checked before reading)")
    p.add_argument("--format", default="auto", choices=["auto", *FORMATS], help="export format (default: detected)")
    p.add_argument("--map", metavar="FILE", help="JSON file saying which span attribute holds each field (docs/traces.md)")
    p.add_argument("--trace-url", metavar="TEMPLATE",
                   help="link each row back to its trace, e.g. http://localhost:6006/projects/default/traces/{trace_id}")
    p.add_argument("--out", required=True, metavar="DATA", help="dataset to write (.json, .jsonl or .csv)")
    p.set_defaults(func=cmd_import_traces)


__all__ = ["add_command", "cmd_import_traces", "rows_to_samples"]
