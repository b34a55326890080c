"""The ``trust`` command's stability and probe sections (``--repeats``, ``--probes``, ``--fail-on-probe``), and
the stability table ``evaluate --repeats`` prints. Each section adds its figures to the trust report
(``sections["stability"]``, ``sections["probes"]``), so ``--out`` and the run's export carry them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import EXIT_THRESHOLD, ProgressBar, UsageError, echo, err, fmt, provider_config, table
from rageval_core.scoring.metrics.scoring import AGGREGATES

if TYPE_CHECKING:
    from rageval_core.analysis.trust.stability import StabilityReport
    from rageval_core.cli.trust_context import TrustContext
    from rageval_core.session.probes import ProbeReport
    from rageval_core.store.runs import RunInfo


def add_repeat_args(p: argparse.ArgumentParser | Any) -> None:
    """``--repeats``, ``--repeat-temperature``, ``--aggregate`` (evaluate and trust)."""
    p.add_argument("--repeats", type=int, default=None, metavar="K",
                   help="score every row K times (repeats 1+ vary the seed and bypass the response cache) and report "
                   "the spread, verdict flips and the mean's interval across repeats")
    p.add_argument("--repeat-temperature", type=float, default=None, metavar="T",
                   help="temperature of every repeat (default: each request's own, usually 0)")
    p.add_argument("--aggregate", choices=AGGREGATES, default="mean",
                   help="how repeats combine per row (majority: a value held by more than half of the repeats, "
                   "else unscored no_majority; majority_or_median: else the median). Default mean")


def _probe_list(text: str) -> str:
    """argparse type of ``--probes``: unknown names are a usage error before anything runs."""
    from rageval_core.analysis.trust.probes import parse_probes

    try:
        parse_probes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def add_check_args(p: argparse.ArgumentParser) -> None:
    """The trust command's stability and probe flags."""
    g = p.add_argument_group("stability and probes")
    add_repeat_args(g)
    g.add_argument("--probes", metavar="LIST", type=_probe_list,
                   help="comma-separated: verbosity, order, answer_injection, context_injection (injection = both), "
                   "language, or all; each probe's rows are scored by the run's metrics and judges")
    g.add_argument("--probe-tolerance", action="append", default=[], metavar="PROBE=VALUE",
                   help="tolerated mean shift (defaults: verbosity 0.10, order 0.05, injections 0.05 upwards, language 0.15)")
    g.add_argument("--parallel", metavar="FILE",
                   help="rows in the other language for the language probe (ids X ↔ X-en), when DATA has only one language")
    g.add_argument("--fail-on-probe", action="store_true", help="exit 1 when a probe's shift is beyond its tolerance")


def interval(value: float | None, low: float | None, high: float | None, signed: bool = False) -> str:
    """``0.433 [0.250, 0.550]`` (``+`` sign on shifts), ``-`` when undefined."""
    if value is None:
        return "-"

    def f(v: float) -> str:
        return f"{v:+.3f}" if signed else fmt(v)

    return f(value) if low is None or high is None else f"{f(value)} [{f(low)}, {f(high)}]"


def print_stability_report(report: StabilityReport, top: int = 10) -> None:
    """The per-metric table, the least stable rows, and what repeats mean on this provider."""
    echo(f"\nrepeat stability ({report.repeats} repeats, aggregate {report.aggregate}, verdict pass = score >= "
          f"{report.threshold:g}; mean with its 95% bootstrap interval across repeats):")
    echo(f"  note: {report.note}")
    echo(table(
        ["metric", "method", "rows", "mean [95% across repeats]", "per-repeat means", "mean sd", "max range",
         "flip rate", "rows flipping", "unscored"],
        [[m.metric, m.method, m.n_rows, interval(m.mean, m.low, m.high),
          " / ".join(fmt(v) for v in m.repeat_means), fmt(m.mean_sd), fmt(m.max_range), fmt(m.flip_rate),
          m.rows_flipping, ", ".join(f"{k} {v}" for k, v in m.unscored_rows.items()) or "0"] for m in report.metrics],
    ))
    moving = sorted((r for r in report.rows if r.sd), key=lambda r: -(r.sd or 0))[:top]
    if moving:
        echo(f"least stable rows (top {len(moving)} by sd):")
        echo(table(
            ["row", "metric", "method", "values per repeat", "sd", "range", "flip rate", report.aggregate],
            [[r.row_id, r.metric, r.method, " / ".join(fmt(v) for v in r.values), fmt(r.sd), fmt(r.range),
              fmt(r.flip_rate), fmt(r.value) if r.value is not None else (r.unscored_reason or "-")] for r in moving],
        ))
    elif report.repeats > 1:
        echo("no row moved between repeats" + (" (deterministic provider)" if report.deterministic else ""))


def print_probe_report(report: ProbeReport) -> None:
    """Every probe: its cases and skips, every shift with its interval and flag, and the rows that moved most."""
    level = f"95% bootstrap intervals, {report.iterations} resamples, seed {report.seed}"
    echo(f"\nprobes (mean shift = probe − original on scored pairs; {level}):")
    if report.note:
        echo(f"  note: {report.note}")
    for r in report.results:
        skipped = ", ".join(f"{reason} {n}" for reason, n in r.skipped.items()) or "none"
        bound = f"> +{r.tolerance:g}" if r.shifts and r.shifts[0].upward_only else f"|shift| > {r.tolerance:g}"
        status = "FLAGGED" if r.flagged else "ok"
        echo(f"\nprobe {r.probe}: {status}; {r.n_cases} probe rows ({r.note}); skipped: {skipped}; flagged when {bound}"
              + (f"; run {r.run_id}" if r.run_id else ""))
        if not r.shifts:
            echo("  nothing to score")
            continue
        echo(table(
            ["metric", "method", "pairs", "mean shift [95% CI]", "largest row shift", "unscored pairs", "flag"],
            [[s.metric, s.method, s.n, interval(s.mean_shift, s.low, s.high, signed=True),
              "-" if s.max_shift is None else f"{s.max_shift:+.3f}", s.unscored_pairs, "FLAG" if s.flagged else ""]
             for s in r.shifts],
        ))
        moved = [s for s in r.shifts if s.top]
        if moved:
            echo("  rows that moved most (original → probe):")
        for s in moved:
            echo(f"    {s.metric} / {s.method}: " + ", ".join(
                f"{row.row_id}{'→' + row.probe_row_id if row.probe_row_id != row.row_id else ''} "
                f"{fmt(row.original)} → {fmt(row.probe)} ({row.shift:+.3f})" for row in s.top))
    if report.flagged:
        echo(f"\nflagged probes: {', '.join(report.flagged)}")


def print_stability(ctx: TrustContext) -> None:
    """Section: the run's repeat stability (when it has repeats or ``--repeats`` was asked for)."""
    from rageval_core.analysis.trust.checks import stability_for_run

    info = ctx.store.find_run(ctx.run_id)
    stored = int((info.settings or {}).get("repeats", 1))
    asked = getattr(ctx.args, "repeats", None)
    if asked is not None and asked > stored:
        raise UsageError(
            f"run {ctx.run_id} has {stored} repeat(s); evaluate the dataset again with repeats "
            f"(trust DATA --repeats {asked}, or evaluate --repeats {asked}) to measure stability"
        )
    if stored < 2 and asked is None:
        return
    report = stability_for_run(ctx.store, ctx.run_id, threshold=ctx.args.threshold, aggregate=ctx.args.aggregate,
                               iterations=ctx.args.iterations, seed=ctx.args.seed)
    print_stability_report(report, top=ctx.args.top)
    ctx.report.sections["stability"] = report.to_dict()


def _scorers_of_run(info: RunInfo) -> list[Any]:
    """The run's metrics and judges, rebuilt from its settings (as evaluate recorded them)."""
    from rageval_core.cli.evaluate_run import scorers_from_args

    settings = info.settings or {}
    ns = argparse.Namespace(metrics=",".join(settings.get("metrics") or []), judge=list(settings.get("judges") or []),
                            economy=bool(settings.get("economy")))
    return scorers_from_args(ns)


def print_probes(ctx: TrustContext) -> None:
    """Section: the probes asked for with ``--probes``, scored through the runner; flags set the exit code."""
    from rageval_core.data.datasets import load_dataset
    from rageval_core.analysis.trust.probes import parse_probes, parse_tolerances
    from rageval_core.session.probes import run_probes
    from rageval_core.analysis.trust.run_report import samples_of_run

    args = ctx.args
    if not args.probes:
        if args.fail_on_probe:
            raise UsageError("--fail-on-probe needs --probes")
        return
    try:
        names = parse_probes(args.probes)
        tolerances = parse_tolerances(args.probe_tolerance)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    info = ctx.store.find_run(ctx.run_id)
    samples = ctx.samples if ctx.samples is not None else samples_of_run(ctx.store, info)
    if samples is None:  # a run stored before runs kept their rows, whose file is gone or changed
        raise UsageError(f"run {ctx.run_id}: its dataset file is missing or changed; give the file instead of the run id")
    if info.provider != args.provider:
        raise UsageError(f"run {ctx.run_id} was made with --provider {info.provider}: probe it with the same provider")
    parallel = []
    if args.parallel:
        if not Path(args.parallel).is_file():
            raise UsageError(f"--parallel {args.parallel!r}: no such file")
        parallel = list(load_dataset(args.parallel).samples)
    bars: dict[str, ProgressBar] = {}

    def show(name: str, p: Any) -> None:  # one bar per probe run
        bars.setdefault(name, ProgressBar(sys.stderr))(p)

    report = run_probes(
        samples, _scorers_of_run(info), names, store=ctx.store, base_run_id=info.id, config=provider_config(args),
        parallel=parallel, tolerances=tolerances, seed=args.seed, iterations=args.iterations,
        concurrency=args.concurrency, progress=None if args.quiet else show,
        dataset_name=info.dataset_name,
    )
    print_probe_report(report)
    ctx.report.sections["probes"] = report.to_dict()
    if report.flagged and args.fail_on_probe:
        err(f"--fail-on-probe: {', '.join(report.flagged)} beyond tolerance")
        ctx.exit_code = EXIT_THRESHOLD
