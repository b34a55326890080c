"""``annotate RUN_ID``: the annotation queue from the command line. With no action it prints each annotator's
progress; ``--hand-out`` picks rows (label next, a category filter or a seeded random sample) and deals them to
the named annotators, two per row by default; ``--import FILE`` stores a labels file naming its annotators;
``--settle ROW CRITERION 0|1`` settles a disagreement. Exit 0, or 2 on bad input."""

from __future__ import annotations

import argparse
from typing import Any

from rageval_core.cli.common import EXIT_OK, UsageError, echo, find_run, open_store, table


def _ranked(store: Any, info: Any) -> list[str]:
    """Row ids in the label-next order (most informative first), from the run's scores and its labels."""
    from rageval_core.analysis.trust import label_next
    from rageval_core.analysis.trust.report import scores_by
    from rageval_core.analysis.trust.run_report import merged_labels, samples_of_run

    labels = merged_labels(samples_of_run(store, info), store.labels(info.dataset_hash or ""))
    return list(dict.fromkeys(c.row_id for c in label_next(scores_by(store.results(info.id)), labels.by_row())))


def _hand_out(args: argparse.Namespace, store: Any, info: Any) -> None:
    from rageval_core.analysis.trust.queue import deal, pick_rows
    from rageval_core.store import annotations

    people = [p.strip() for p in (args.annotators or "").split(",") if p.strip()]
    if not people:
        raise UsageError("--hand-out needs --annotators NAME[,NAME...]")
    run_rows = [r for r in store.rows(info.id) if r.valid]
    rows = [r.sample_id for r in run_rows]
    categories = {r.sample_id: r.category for r in run_rows}
    keep = (lambda r: categories.get(r) in set(args.category)) if args.category else None
    ranked = _ranked(store, info) if args.mode == "label_next" else []
    picked = pick_rows(rows, args.mode, args.rows, ranked=ranked, keep=keep, seed=args.seed)
    criteria = [c.strip() for c in args.criteria.split(",") if c.strip()]
    added = annotations.hand_out(store, info.dataset_hash or "", deal(picked, people, args.per_row), criteria)
    echo(f"handed out {len(picked)} row(s) to {len(people)} annotator(s) on {', '.join(criteria)}: {added} new queue entries")


def _import(args: argparse.Namespace, store: Any, info: Any) -> None:
    from rageval_core.analysis.trust.labels import FILE, dataset_labels
    from rageval_core.analysis.trust.run_report import read_label_rows
    from rageval_core.store import annotations

    rows = {r.sample_id for r in store.rows(info.id)}
    named = [(x.row_id, x.criterion, x.annotator, x.value) for x in dataset_labels(read_label_rows(args.import_file), source=FILE)
             if x.annotator and x.row_id in rows]
    if not named:
        raise UsageError(f"--import {args.import_file}: no label names an annotator for this run's rows "
                         "(an annotator column, or label_x@name columns)")
    annotations.import_labels(store, info.dataset_hash or "", named)
    echo(f"imported {len(named)} label(s) from {len({n[2] for n in named})} annotator(s)")


def cmd_annotate(args: argparse.Namespace) -> int:
    from rageval_core.store import annotations

    store = open_store(args)
    info = find_run(store, args.run)
    if args.import_file:
        _import(args, store, info)
    if args.hand_out:
        _hand_out(args, store, info)
    if args.settle:
        row, criterion, value = args.settle
        if value not in ("0", "1"):
            raise UsageError(f"--settle {row} {criterion} {value}: the label is 0 or 1")
        if not args.by:
            raise UsageError("--settle needs --by NAME (who settled it)")
        annotations.settle(store, info.dataset_hash or "", row, criterion, float(value), args.by)
        echo(f"settled {row} {criterion} as {'👍' if value == '1' else '👎'} (by {args.by})")
    progress = annotations.progress(store, info.dataset_hash or "")
    if not progress:
        echo("annotation queue: empty (annotate RUN --hand-out --annotators a,b)")
        return EXIT_OK
    echo("annotation queue:")
    echo(table(["annotator", "done", "assigned", "next row"], [[p.annotator, p.done, p.assigned, p.next_row or "-"] for p in progress]))
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``annotate``."""
    from rageval_core.analysis.trust_defaults import QUEUE_MODES as MODES  # imports nothing: the parser stays light

    p = sub.add_parser("annotate", help="the annotation queue: hand rows out to annotators, progress, settle disagreements",
                       description="The annotation queue of a run's dataset (docs/annotators.md). Exit 0, 2 on bad input.")
    p.add_argument("run", metavar="RUN_ID", help="a run id (or unique prefix)")
    p.add_argument("--hand-out", action="store_true", help="pick rows and deal them to --annotators")
    p.add_argument("--annotators", help="comma-separated names")
    p.add_argument("--mode", choices=MODES, default="label_next", help="how rows are picked (default label_next)")
    p.add_argument("--rows", type=int, default=10, help="rows to pick (default 10)")
    p.add_argument("--per-row", type=int, default=2, help="annotators per row (default 2, so agreement can be measured)")
    p.add_argument("--criteria", default="faithfulness", help="comma-separated criteria to label (default faithfulness)")
    p.add_argument("--category", action="append", help="with --mode filter: only rows of this category (repeatable)")
    p.add_argument("--seed", type=int, default=0, help="seed of --mode random (default 0)")
    p.add_argument("--import", dest="import_file", metavar="FILE", help="store a labels file naming its annotators")
    p.add_argument("--settle", nargs=3, metavar=("ROW", "CRITERION", "LABEL"), help="settle a disagreement as 0 or 1")
    p.add_argument("--by", help="who settles (with --settle)")
    p.set_defaults(func=cmd_annotate)


__all__ = ["add_command", "cmd_annotate"]
