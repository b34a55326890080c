"""``annotate RUN_ID``: the annotation queue from the command line. With no action it prints each annotator's
progress; ``--hand-out`` picks rows (label next, a category filter or a seeded random sample) and deals them to
the named annotators, two per row by default; ``--import FILE`` stores a labels file naming its annotators;
``--settle ROW CRITERION 0|1`` settles a disagreement. Exit 0, or 2 on bad input (a labels file with a value that
is not a label, a column mixing 0/1 with 2-5, no row of the run or no annotator: each named on stderr)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import EXIT_OK, UsageError, echo, err, find_run, open_store, table

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo, Store


def _ranked(store: Store, info: RunInfo) -> list[str]:
    """Row ids in the label-next order (most informative first), from the run's scores and its labels; never a row
    already labelled nor one of the split's test set."""
    from rageval_core.analysis.trust.run_report import samples_of_run, label_next_for_run

    rows = [r.sample_id for r in store.rows(info.id) if r.valid]
    ranked = label_next_for_run(store, info, samples_of_run(store, info), store.results(info.id), rows)
    return list(dict.fromkeys(c.row_id for c in ranked))


def _hand_out(args: argparse.Namespace, store: Store, info: RunInfo) -> None:
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


def _import(args: argparse.Namespace, store: Store, info: RunInfo) -> None:
    """Store a labels file's named labels; refuse the file (exit 2) for values that are not labels (unless
    --skip-bad-labels), a column mixing 0/1 with 2-5, no row of this run or no annotator; name everything left out."""
    from rageval_core.analysis.trust.label_import import plan_import
    from rageval_core.analysis.trust.run_report import read_label_rows
    from rageval_core.store import annotations

    plan = plan_import(read_label_rows(args.import_file), {r.sample_id for r in store.rows(info.id)}, info.id)
    refusal = plan.refusal(skip_bad=args.skip_bad_labels)
    if refusal:
        for line in refusal[:-1]:
            err(f"--import {args.import_file}: {line}")
        raise UsageError(f"--import {args.import_file}: {refusal[-1]}")
    for line in plan.warnings():
        err(f"--import {args.import_file}: {line}")
    annotations.import_labels(store, info.dataset_hash or "", plan.named)
    echo(f"imported {len(plan.named)} label(s) from {plan.people()} annotator(s)")


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
    p.add_argument("--import", dest="import_file", metavar="FILE",
                   help="store a labels file naming its annotators; a value that is not a label (0/1, true/false, "
                        "pass/fail, or a whole column on the 1-5 scale) refuses the file, naming each row")
    p.add_argument("--skip-bad-labels", action="store_true",
                   help="with --import: skip the rows whose values are not labels (each named on stderr) instead")
    p.add_argument("--settle", nargs=3, metavar=("ROW", "CRITERION", "LABEL"), help="settle a disagreement as 0 or 1")
    p.add_argument("--by", help="who settles (with --settle)")
    p.set_defaults(func=cmd_annotate)


__all__ = ["add_command", "cmd_annotate"]
