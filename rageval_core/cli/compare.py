"""``compare``: run A vs run B — configuration differences, means per metric and method, per-row deltas."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Sequence

from rageval_core.cli.common import EXIT_OK, UsageError, find_run, fmt, open_store, echo, short, table
from rageval_core.core.csvsafe import dumps_frame
from rageval_core.core.private import write_private_text

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo


def _parse_pairs(texts: Sequence[str] | None) -> dict[str, str]:
    """``--pair judge:rubric5=judge:binary`` (method in A = method in B) → ``{method in B: method in A}``."""
    out: dict[str, str] = {}
    for text in texts or []:
        a, sep, b = text.partition("=")
        if not sep or not a or not b:
            raise UsageError(f"--pair {text!r}: expected METHOD_A=METHOD_B, e.g. judge:rubric5=judge:binary")
        out[b] = a
    return out


def _run_config(info: RunInfo) -> dict[str, Any]:
    """What a run was configured with, as ``compare.version_changes`` compares it."""
    return {"provider": info.provider, "model": info.model, "versions": info.versions, "settings": info.settings}


def _print_config_changes(changes: Sequence[tuple[str, Any, Any]], limit: int) -> None:
    """What differs between the two runs' configurations: rubric / template hashes, settings, provider."""
    if not changes:
        echo("same provider, model, rubric / template versions and settings")
        return
    echo("what differs (A → B):")
    for path, va, vb in changes[:limit]:
        if vb is None and isinstance(va, dict):
            echo(f"  {path}: only in A")
        elif va is None and isinstance(vb, dict):
            echo(f"  {path}: only in B")
        else:
            echo(f"  {path}: {short(va)} → {short(vb)}")
    if len(changes) > limit:
        echo(f"  … {len(changes) - limit} more")


def cmd_compare(args: argparse.Namespace) -> int:
    """Run A vs run B: configuration differences, means per metric and method, per-row deltas."""
    from rageval_core.analysis.compare import one_sided, pair_methods, results_frame, run_delta, summary_delta, version_changes

    store = open_store(args)
    a, b = find_run(store, args.run_a), find_run(store, args.run_b)
    fa = results_frame(store.results(a.id), {r.sample_id: r.category for r in store.rows(a.id)})
    fb = results_frame(store.results(b.id), {r.sample_id: r.category for r in store.rows(b.id)})
    echo(f"A = {a.id} ({a.provider}/{a.model}, {a.dataset_name})\nB = {b.id} ({b.provider}/{b.model}, {b.dataset_name})")
    if a.dataset_hash != b.dataset_hash:
        echo("note: the runs were made on different datasets")
    _print_config_changes(version_changes(_run_config(a), _run_config(b)), args.limit)
    pairs = _parse_pairs(args.pair) or pair_methods(fa, fb)
    for method_b, method_a in pairs.items():
        echo(f"pairing {method_a} (A) with {method_b} (B)")
    only_a, only_b = one_sided(fa, fb, pairs)
    if only_a:
        echo(f"only in A (not compared): {', '.join(only_a)}")
    if only_b:
        echo(f"only in B (not compared): {', '.join(only_b)}")
    s = summary_delta(fa, fb, methods=pairs)
    s = s[~s.apply(lambda r: f"{r.metric} ({r.method})" in only_a or f"{r.metric} ({r.method})" in only_b, axis=1)] if len(s) else s
    echo(
        table(
            ["metric", "method", "mean A", "mean B", "delta", "unscored A", "unscored B", "changed rows"],
            [
                [r.metric, r.method, fmt(r.mean_a), fmt(r.mean_b), fmt(r.delta), r.unscored_a, r.unscored_b, r.changed_rows]
                for r in s.itertuples()
            ],
        )
    )
    delta = run_delta(fa, fb, changed_only=not args.all, methods=pairs)
    one_sided_pairs = {tuple(x.rsplit(" (", 1)) for x in only_a + only_b}
    delta = delta[[(m, f"{meth})") not in one_sided_pairs for m, meth in zip(delta["metric"], delta["method"])]].reset_index(drop=True)
    if args.out:
        write_private_text(args.out, dumps_frame(delta))
        echo(f"per-row deltas → {args.out}")
    shown = delta.head(args.limit)
    what = "rows" if args.all else "changed rows"
    if len(shown):
        echo()
        echo(f"{what} ({len(delta)}):")
        echo(
            table(
                ["row", "metric", "method", "A", "B", "delta"],
                [
                    [
                        r.sample_id,
                        r.metric,
                        r.method if r.method == r.method_b else f"{r.method} → {r.method_b}",
                        fmt(r.value_a) if not isinstance(r.unscored_reason_a, str) else r.unscored_reason_a,
                        fmt(r.value_b) if not isinstance(r.unscored_reason_b, str) else r.unscored_reason_b,
                        fmt(r.delta),
                    ]
                    for r in shown.itertuples()
                ],
            )
        )
        if len(delta) > len(shown):
            echo(f"… {len(delta) - len(shown)} more (use --limit or --out)")
    else:
        echo("no row changed")
    return EXIT_OK


def add_command(sub: Any) -> None:
    """Register ``compare``."""
    cp = sub.add_parser(
        "compare",
        help="run A vs run B: what differs, means and per-row deltas",
        description="Run A vs run B (e.g. two prompt or rubric versions on the same rows): what differs in their "
        "configuration (rubric / template hashes, settings, model), the mean per metric and method, and the "
        "per-row deltas (B - A). Only changed rows are listed unless --all. Two runs with different judges "
        "(judge:rubric5 vs judge:binary) are paired automatically when each has one; --pair sets it by hand.",
    )
    cp.add_argument("run_a", help="run id or a unique prefix (see `runs list`)")
    cp.add_argument("run_b", help="run id or a unique prefix")
    cp.add_argument("--all", action="store_true", help="list unchanged rows too (default: changed rows only)")
    cp.add_argument("--pair", action="append", metavar="METHOD_A=METHOD_B",
                    help="compare a method of A with another of B, e.g. judge:rubric5=judge:my-rubric (repeatable)")
    cp.add_argument("--limit", type=int, default=30, help="rows (and configuration differences) to print (default 30)")
    cp.add_argument("--out", help="write the per-row delta table as CSV (all rows the filter keeps)")
    cp.set_defaults(func=cmd_compare)
