"""``runs``: list the run history, export a run, export its call log, set another tool's scores beside ours."""

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


def cmd_runs_theirs(args: argparse.Namespace) -> int:
    """Another tool's scores the run's rows came with (a ragas results CSV's columns) beside ours: which columns
    were compared with which metric and which not, the agreement, and the rows where they disagree most."""
    from rageval_core.analysis.external_scores import NOT_IN_RUN, default_method, unmatched_reason
    from rageval_core.views.theirs import for_run

    store = open_store(args)
    info = find_run(store, args.run)
    view = for_run(store, info.id, run_samples(store, info, args), threshold=args.threshold)
    if not view.columns:
        raise UsageError(f"run {info.id}: its rows carry no other tool's scores (load a ragas results CSV, or a file "
                         "with ragas:<metric> columns, and evaluate it)")
    echo(f"their scores vs ours, run {info.id}: their scores come from the file (tool and column named), never one "
         "of our methods")
    for c in view.matched:
        echo(f"compared: {c.source} {c.column} -> {c.metric} ({c.scored} of {c.rows} rows scored by {c.source})")
    for c in view.unmatched:
        kind, metric = unmatched_reason(c)
        why = f"this run did not compute {metric}" if kind == NOT_IN_RUN else "no metric of ours measures the same thing"
        echo(f"not compared: {c.source} {c.column} ({why})")
    if view.agreement.empty:
        return EXIT_OK
    fmt = lambda v: "-" if v != v else f"{v:.3f}"  # noqa: E731 - NaN is undefined
    echo(f"\nagreement (rows scored by both; mean diff = ours - theirs; same side and kappa at {args.threshold:g}):")
    echo(table(["their column", "metric", "our method", "n", "pearson", "spearman", "mad", "mean diff", "same side",
                "kappa", "note"],
               [[f"{r.source}:{r.column}", r.metric, r.method, r.n, fmt(r.pearson), fmt(r.spearman), fmt(r.mad),
                 fmt(r.mean_diff), fmt(r.agree), fmt(r.kappa), r.note if isinstance(r.note, str) else ""] for r in view.agreement.itertuples()]))
    frames: list[Any] = []  # every matched column × method, for --out
    for c in view.matched:
        methods = view.methods_for(c)
        method = args.method if args.method in methods else default_method(methods)
        if method is None:
            continue
        rows = view.rows(c, method)
        echo(f"\n{c.source}:{c.column} vs our {c.metric} by {method}, the largest disagreement first:")
        echo(table(["row", "theirs", "ours", "ours - theirs"],
                   [[r.sample_id, fmt(r.theirs), fmt(r.ours), fmt(r.diff)] for r in rows.head(args.limit).itertuples()]))
        frames.extend(view.rows(c, m).assign(source=c.source, column=c.column, metric=c.metric, method=m) for m in methods)
    if args.out:
        import pandas as pd

        pd.concat(frames, ignore_index=True).to_csv(args.out, index=False)
        echo(f"\nevery row beside ours -> {args.out}")
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``runs list | export | calls | theirs``."""
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
    th = rsub.add_parser("theirs", help="another tool's scores the rows came with (a ragas results CSV) beside ours, "
                         "with their agreement")
    th.add_argument("run", help="run id or a unique prefix")
    th.add_argument("--method", default=None, help="our method to list rows for (default: decomposed where it computed "
                    "the metric); the agreement covers every method")
    th.add_argument("--limit", type=int, default=10, help="rows to list per column (default 10)")
    th.add_argument("--threshold", type=float, default=0.5, help="pass threshold for 'same side' and kappa (default 0.5)")
    th.add_argument("--out", help="FILE.csv: every row's two scores, each column and method")
    th.add_argument("--data", metavar="FILE", help="a run stored before runs kept their rows: the dataset it was made on")
    add_map_args(th)
    th.set_defaults(func=cmd_runs_theirs)
