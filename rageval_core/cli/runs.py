"""``runs``: list the run history, export a run, export its call log."""

from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import EXIT_OK, UsageError, find_run, open_store, echo, table
from rageval_core.cli.dataset_flags import add_map_args, add_naming_arg, column_map_of

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo, Store


def cmd_runs_list(args: argparse.Namespace) -> int:
    store = open_store(args)
    runs = store.list_runs(limit=args.limit)
    if not runs:
        echo("no runs yet")
        return EXIT_OK
    rows = []
    for r in runs:
        done = len(store.finished_tasks(r.id))
        rows.append(
            [
                r.id,
                time.strftime("%Y-%m-%d %H:%M", time.localtime(r.created_at)),
                r.status,
                r.dataset_name or "-",
                f"{r.provider}/{r.model}",
                r.n_rows,
                ",".join(r.scorers),
                f"{done}/{r.n_rows * len(r.scorers)}",
            ]
        )
    echo(table(["run", "created", "status", "dataset", "provider/model", "rows", "scorers", "tasks"], rows))
    return EXIT_OK


def run_samples(store: Store, info: RunInfo, args: argparse.Namespace) -> dict[str, Any]:
    """Id → row of the dataset a run was made on: ``--data`` (checked against the run's content hash), else the rows
    the run keeps; a run stored before runs kept their rows takes its own file when it is still there unchanged
    (found by hash), and without it this is a usage error."""
    from rageval_core.analysis.trust.run_report import dataset_of_run
    from rageval_core.data.datasets import load_dataset

    if args.data:
        loaded = load_dataset(args.data, column_map=column_map_of(args))
        if loaded.content_hash != info.dataset_hash:
            raise UsageError(f"--data {args.data}: not the dataset run {info.id} was made on (content hash "
                             f"{loaded.content_hash[:12]}, the run's {str(info.dataset_hash)[:12]}); give that file, with "
                             "the same --map if it was read through one")
        return {s.id: s for s in loaded.samples}
    kept = store.samples(info.id)
    if kept:
        return kept
    found = dataset_of_run(info)
    if found is None:
        raise UsageError(f"run {info.id} was stored before runs kept their rows, and its file "
                         f"({(info.settings or {}).get('data') or 'unknown'}) is missing or changed: give it with --data FILE")
    return {s.id: s for s in found}


def cmd_runs_export(args: argparse.Namespace) -> int:
    from rageval_core.analysis.export import export_run, export_run_named
    from rageval_core.data.datasets import DatasetError

    store = open_store(args)
    info = find_run(store, args.run)
    try:
        if args.naming:
            path = export_run_named(store, info.id, args.out, run_samples(store, info, args), args.naming)
        else:
            if args.data or args.column_map:
                raise UsageError("--data and --map go with --naming (the other exports read no dataset)")
            path = export_run(store, info.id, args.out, include_details=args.details)
    except (ValueError, KeyError, DatasetError) as exc:
        raise UsageError(str(exc).strip('"')) from None
    echo(f"run {info.id} → {path}")
    return EXIT_OK


def cmd_runs_calls(args: argparse.Namespace) -> int:
    from rageval_core.analysis.export import export_calls_jsonl

    store = open_store(args)
    info = find_run(store, args.run)
    path = export_calls_jsonl(store, info.id, args.out)
    echo(f"call log of {info.id} → {path}")
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``runs list | export | calls``."""
    runs = sub.add_parser("runs", help="run history")
    rsub = runs.add_subparsers(dest="runs_command")  # bare `runs` lists them, as `runs list` does
    runs.set_defaults(func=cmd_runs_list, limit=None)
    ls = rsub.add_parser("list", help="list runs, newest first")
    ls.add_argument("--limit", type=int, default=None, help="show only the newest N runs")
    ls.set_defaults(func=cmd_runs_list)
    ex = rsub.add_parser("export", help="export a run: .json, .csv, or .jsonl (call log); with --naming, its rows in ragas's "
                         "or DeepEval's shape")
    ex.add_argument("run", help="run id or a unique prefix (see `runs list`)")
    ex.add_argument("--out", required=True, help="FILE.json (documented format), FILE.csv (a row per sample, a column "
                    "per metric and method) or FILE.jsonl (the call log)")
    ex.add_argument("--details", action="store_true", help="JSON only: include claims, verdicts and other per-result details")
    add_naming_arg(ex, default=None)
    ex.add_argument("--data", metavar="FILE", help="with --naming: the dataset the run was made on, for the row texts "
                    "(default: the run's own file, when it is still there unchanged)")
    add_map_args(ex)
    ex.set_defaults(func=cmd_runs_export)
    cl = rsub.add_parser("calls", help="export a run's call log as JSON Lines")
    cl.add_argument("run", help="run id or a unique prefix")
    cl.add_argument("--out", required=True, help="FILE.jsonl: one call a line (prompt, response, tokens, latency, cache hit)")
    cl.set_defaults(func=cmd_runs_calls)
