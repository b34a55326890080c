"""``report RUN... --out report.html``: one self-contained HTML file of stored runs for people who will not
open the workbench (no script, no network; charts as inline SVG)."""

from __future__ import annotations

import argparse
from typing import Any

from rageval_core.cli.common import EXIT_OK, UsageError, echo, find_run, open_store
from rageval_core.cli.dataset_flags import add_map_args


def cmd_report(args: argparse.Namespace) -> int:
    from rageval_core.views.report import write_report

    if not str(args.out).lower().endswith((".html", ".htm")):
        raise UsageError(f"--out {args.out!r}: use an .html file")
    store = open_store(args)
    ids = [find_run(store, r).id for r in args.runs]
    samples = None
    if args.data:
        from rageval_core.cli.dataset_flags import column_map_of
        from rageval_core.cli.evaluate_run import load_rows

        samples = load_rows(args.data, column_map=column_map_of(args))[0].samples
    rows = [r.strip() for r in (args.rows or "").split(",") if r.strip()] or None
    path = write_report(store, ids, args.out, samples=samples, sample_ids=rows, top=args.top,
                        threshold=args.threshold, title=args.title, language=args.lang)
    echo(f"report of {len(ids)} run(s) → {path} ({path.stat().st_size:,} bytes)")
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``report``."""
    rp = sub.add_parser("report", help="write a self-contained HTML report of one or more runs",
                        description="Opens with the trust answer per metric × method (from human labels), then the dataset summary, per-category tables, decomposed vs judge and judge vs judge agreement, "
                        "trust figures where computed, cost, and chosen rows with claims and reasons, in one HTML file "
                        "that opens with no network.")
    rp.add_argument("runs", nargs="+", metavar="RUN", help="run ids (a unique prefix is enough)")
    rp.add_argument("--out", required=True, help="the .html file to write")
    rp.add_argument("--data", help="the dataset file, for row texts when the run's own file moved")
    add_map_args(rp)
    rp.add_argument("--rows", metavar="ID,ID", help="rows to show in full (default: the most disagreeing)")
    rp.add_argument("--top", type=int, default=3, help="how many of the most disagreeing rows to show (default 3)")
    rp.add_argument("--threshold", type=float, default=0.5, help="pass threshold for kappa (default 0.5)")
    rp.add_argument("--title", help="the report's title (default: 'RAG evaluation report' in the report's language)")
    rp.add_argument("--lang", choices=["auto", "ja", "en"], default="auto",
                    help="the report's language: headings, labels and explanations (default auto: the data's language, "
                    "else English)")
    rp.set_defaults(func=cmd_report)
