"""``trust RUN_ID|DATA``: can these scores be trusted? Agreement with human labels, intervals, the
corrected estimate and which rows to label next, printed as the Trust page shows them.

With a dataset file it first evaluates the file (the ``evaluate`` code path, offline provider unless
``--provider`` says otherwise), then reports on that run. The output is a list of sections (``SECTIONS``),
each a function of one ``TrustContext`` that prints its table and may add to ``ctx.report.sections`` or
raise ``ctx.exit_code``; other modules extend the command with ``ARGUMENT_HOOKS`` (their flags) and
their own section functions. The report (with every section's additions) is saved beside the run, so
the run's export JSON carries it as ``trust``, and written to ``--out``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import (
    EXIT_THRESHOLD,
    UsageError,
    add_provider_args,
    echo,
    err,
    find_run,
    fmt,
    open_store,
    short,
    table,
)
from rageval_core.cli.dataset_flags import add_map_args
from rageval_core.cli.trust_annotators import print_annotators
from rageval_core.cli.trust_checks import add_check_args, print_probes, print_stability
from rageval_core.cli.trust_context import TrustContext
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD
from rageval_core.core.types import METRIC_IDS
from rageval_core.core.private import write_private_text

if TYPE_CHECKING:
    from rageval_core.store.runs import Store

SPLITS = ("train", "dev", "test")  # rageval_core.analysis.trust.splits.SPLITS (not imported: numpy at parse time)

Section = Callable[[TrustContext], None]


def ci(stat: Any) -> str:
    """``0.812 [0.701, 0.903]``, or ``-`` when undefined."""
    if stat is None or stat.value is None:
        return "-"
    if stat.low is None:
        return fmt(stat.value)
    return f"{fmt(stat.value)} [{fmt(stat.low)}, {fmt(stat.high)}]"


def ids(cell: list[str], width: int = 36) -> str:
    return f"{len(cell)}" + (f" ({short(', '.join(cell), width)})" if cell else "")


def print_coverage(ctx: TrustContext) -> None:
    report = ctx.report
    echo(f"\nhuman labels ({report.n_rows} rows in the run; 1-5 ratings pass at >= 4):")
    if not report.coverage:
        echo("  none: add label_faithful / label_relevant / label_context / label_correct columns, a --labels file, "
              "or 👍 / 👎 in Inspect")
        return
    echo(table(
        ["criterion", "labelled", "pass", "fail", "sources", "conflicts"],
        [[c.criterion, f"{c.labelled}/{c.rows}", c.positive, c.labelled - c.positive,
          ", ".join(f"{k} {v}" for k, v in c.sources.items()), c.conflicts] for c in report.coverage],
    ))
    for c in report.conflicts:
        echo(f"  conflict {c.row_id} {c.criterion}: " + ", ".join(f"{k} {v}" for k, v in c.values.items()) + f" (used {c.used})")


def print_split(ctx: TrustContext) -> None:
    split = ctx.report.split
    if split is None:
        return
    shares = ", ".join(f"{k} {v:g}" for k, v in split.fractions.items())
    echo(f"\nlabel split (seed {split.seed}; {shares}; stratified by label and category; stored with the labels):")
    rows = [["rows in the run", *(split.rows.get(s, 0) for s in SPLITS)]]
    rows += [[f"labelled {c}", *(v.get(s, 0) for s in SPLITS)] for c, v in split.labelled.items()]
    echo(table(["", *SPLITS], rows))
    for name, shown in split.agreement.items():
        echo(f"\nagreement on {name} (pass = score >= the threshold shown):")
        echo(table(
            ["metric", "method", "n", "threshold", "AUROC", "balanced acc.", "kappa", "best threshold"],
            [[a.metric, a.method, a.n_labelled, threshold_text(a), ci(a.auroc), ci(a.balanced_accuracy), ci(a.kappa),
              ci(a.best_threshold)] for a in shown],
        ))
    if split.test_shown:
        echo(f"test opened {split.test_looks} times (this look counted)")
    for note in split.notes:
        echo(f"  {note}")


def print_bias(ctx: TrustContext) -> None:
    """Judge error (score − label) against row features in the labelled rows: flagged ones and the closest."""
    tests = ctx.report.bias
    if tests is None:
        return
    if not tests:
        echo("\nbias in the labelled rows: too few labelled rows to test (6 or more per metric × method)")
        return
    shown = sorted(tests, key=lambda b: b.p_value)
    shown = [b for b in shown if b.flagged] or shown[:5]
    flagged = sum(b.flagged for b in tests)
    echo(f"\nbias in the labelled rows: error (score − label) against row features; {len(tests)} tests, Holm-adjusted, "
         f"{flagged} flagged (adjusted p < 0.05){'' if flagged else '; the 5 closest'}:")
    echo(table(
        ["metric", "method", "feature", "effect", "n", "p", "adjusted p", "flag", "mean error by group"],
        [[b.metric, b.method, b.feature, f"{'rho' if b.kind == 'spearman' else 'eta2'} {b.effect:+.3f}", b.n,
          fmt(b.p_value), fmt(b.p_adjusted), "BIAS" if b.flagged else "-",
          ", ".join(f"{g} {m:+.2f}" for g, m in b.group_means.items()) or "-"] for b in shown],
    ))


def print_agreement(ctx: TrustContext) -> None:
    report = ctx.report
    if not report.agreement:
        return
    level = f"95% bootstrap intervals, {report.iterations} resamples, seed {report.seed}"
    echo(f"\nagreement with the labels (pass = score >= the threshold: calibrated on dev or the offline judge's "
         f"shipped calibration where it says so, else the default {report.threshold:g}; {level}):")
    echo(table(
        ["metric", "method", "n", "threshold", "AUROC", "balanced acc.", "kappa", "best threshold", "pairs"],
        [[a.metric, a.method, a.n_labelled, threshold_text(a), ci(a.auroc), ci(a.balanced_accuracy), ci(a.kappa),
          ci(a.best_threshold), "-" if a.pairwise is None else f"{ci(a.pairwise)} of {a.n_pairs}"]
         for a in report.agreement],
    ))
    print_notes(report.agreement)
    from rageval_core.analysis.trust.shipped import source_line

    for line in dict.fromkeys(source_line(a.threshold) for a in report.agreement):
        if line:
            echo(f"  {line}")


def threshold_text(a: Any) -> str:
    """``0.63 (dev)`` for a threshold calibrated on dev, ``0.720 (ja) / 0.780 (en) (shipped)`` for the offline
    judge's shipped one, ``0.5 (default)`` otherwise."""
    text = getattr(a.threshold, "text", None)
    if text is not None:
        return f"{text()} (shipped)"
    return f"{a.threshold:.3g} ({'default' if a.threshold_source == 'default' else 'dev'})"


def print_calibration(ctx: TrustContext) -> None:
    """Thresholds chosen on dev: balanced accuracy there (optimistic) and on test (when shown)."""
    calibrations = ctx.report.calibration
    if calibrations is None:
        return
    if not calibrations:
        echo("\ncalibrated thresholds: none (dev has one class only); the default applies everywhere")
        return
    default = f"{ctx.report.threshold:g}"
    echo("\npass thresholds calibrated on dev (best balanced accuracy; used above, by the report and --fail-under):")
    echo(table(
        ["metric", "method", "threshold", "dev bal. acc.", f"dev at {default}", "test bal. acc."],
        [[c.metric, c.method, f"{c.threshold:.3g}", f"{ci(c.dev)} n={c.dev.n}", ci(c.dev_at_default),
          "hidden (--show-test)" if c.test is None else f"{ci(c.test)} n={c.test.n}"] for c in calibrations],
    ))
    echo("  dev figures are optimistic (the threshold was chosen there); test rows played no part in choosing it")


def print_fail_under(ctx: TrustContext) -> None:
    """``--fail-under metric=share``: the share of the run's rows whose verdict passes at the threshold in
    use (calibrated on dev, else the default); a miss exits 1."""
    wanted = getattr(ctx.args, "fail_under", None) or []
    if not wanted:
        return
    from rageval_core.analysis.trust.report import scores_by, threshold_for
    from rageval_core.analysis.thresholds import parse_threshold

    from rageval_core.analysis.trust.shipped import cut

    scores = scores_by(ctx.store.results(ctx.run_id))
    thresholds = {(a.metric, a.method): a.threshold for a in ctx.report.agreement if a.threshold_source != "default"}
    thresholds.update({(c.metric, c.method): c.threshold for c in ctx.report.calibration or []})
    echo("")
    for text in wanted:
        want = parse_threshold(text)
        values = scores.get(want.metric, {}).get(want.method, {})
        t, source = threshold_for(want.metric, want.method, ctx.report.threshold, thresholds)
        share = sum(v >= cut(t, r) for r, v in values.items()) / len(values) if values else None
        ok = share is not None and share >= want.minimum - 1e-12
        detail = "no scored rows" if share is None else f"pass share {share:.3f} of {len(values)} rows"
        shown = t.text() if hasattr(t, "text") else f"{t:.3g}"
        echo(f"fail-under {want.label} >= {want.minimum:g} at threshold {shown} ({source}): {detail} "
             f"{'ok' if ok else 'MISSED'}")
        if not ok:
            ctx.exit_code = EXIT_THRESHOLD


SMALL_N_LEGEND = ("AUROC: Newcombe's score interval; balanced acc.: the mean of the Wilson intervals of TPR and TNR; "
                  "kappa: a smoothed bootstrap (Dirichlet, half a count per cell)")


def print_notes(agreement: Any) -> None:
    """Which rows use small-sample intervals (the bootstrap collapses there), then each figure's notes."""
    small = [f"{a.metric} {a.method}" for a in agreement
             if any(s.interval != "bootstrap" for s in (a.auroc, a.balanced_accuracy, a.kappa))]
    if small:
        echo(f"  small-sample intervals (under 30 labelled rows, a class under 10, or a collapsed bootstrap) for "
             f"{', '.join(small)}: {SMALL_N_LEGEND}")
    for a in agreement:
        for note in a.notes:
            echo(f"  {a.metric} {a.method}: {note}")


def print_confusion(ctx: TrustContext) -> None:
    if not ctx.report.agreement:
        return
    echo("\nconfusion (predicted pass/fail vs people; row ids open in Inspect):")
    rows = []
    for a in ctx.report.agreement:
        m = a.confusion
        rows.append([a.metric, a.method, ids(m.tp), ids(m.fp), ids(m.fn), ids(m.tn)])
    echo(table(["metric", "method", "pass/pass", "pass/FAIL (fp)", "fail/PASS (fn)", "fail/fail"], rows))


def print_estimates(ctx: TrustContext) -> None:
    if not ctx.report.estimates:
        return
    echo("\nshare that passes, corrected by the labels (prediction-powered; 95% intervals):")
    rows = []
    for e in ctx.report.estimates:
        est = e.estimate
        k = "-" if est.effective_labels is None else f"{est.effective_labels:.0f}"
        rg = e.rogan_gladen
        rg_text = "-" if rg is None or rg.value is None else ci(rg)
        rows.append([e.metric, e.method, ci(est.judge_only), f"{ci(est.labels_only)} n={est.labels_only.n}",
                     ci(est.corrected), rg_text, fmt(est.judge_bias), k])
    echo(table(["metric", "method", "score mean", "labels only", "corrected", "Rogan-Gladen", "bias",
                "as tight as k labels"], rows))
    echo("  Rogan-Gladen: the verdict (score >= the threshold in use, as in the agreement table) corrected by its "
         "sensitivity and specificity")
    for e in ctx.report.estimates:
        rg_note = [] if e.rogan_gladen is None or e.rogan_gladen.note is None else [e.rogan_gladen.note]
        for note in [*e.notes, *rg_note]:
            echo(f"  {e.metric} {e.method}: {note}")


def print_label_next(ctx: TrustContext) -> None:
    ranked = ctx.report.label_next[: ctx.args.top]
    if not ranked:
        echo("\nlabel next: every scored row and criterion has a label")
        return
    echo(f"\nlabel next (most informative first; top {len(ranked)}):")
    echo(table(
        ["#", "row", "criterion", "priority", "near threshold", "disagreement", "repeat spread", "why"],
        [[n, c.row_id, c.criterion, fmt(c.priority, 2), fmt(c.uncertainty, 2), fmt(c.disagreement, 2), fmt(c.spread, 2), c.reason]
         for n, c in enumerate(ranked, 1)],
    ))


def diff(d: Any) -> str:
    """``+0.120 [+0.031, +0.209] *`` (the star: the interval excludes 0), ``-`` when undefined."""
    if d.value is None:
        return "-"
    interval = "" if d.low is None else f" [{d.low:+.3f}, {d.high:+.3f}]"
    return f"{d.value:+.3f}{interval}" + (" *" if d.excludes_zero else "")


def print_comparison(ctx: TrustContext) -> None:
    """``--against RUN_B``: run B − run A, judge-only, labels-only and corrected, paired by row, each method's judges
    named; what could not be compared (no shared metric × method, no shared row, one-sided results) is said."""
    if not getattr(ctx.args, "against", None):
        return
    from rageval_core.analysis.trust.compare_run import compare_runs

    other = find_run(ctx.store, ctx.args.against).id
    comparison = compare_runs(ctx.store, ctx.run_id, other, samples_a=ctx.samples)
    ctx.report.comparison = comparison
    echo(f"\nrun B {other} − run A {ctx.run_id}, paired by row (positive: B scores higher; 95% intervals; "
         "* = excludes 0):")
    if comparison.comparisons:
        echo(table(
            ["metric", "method", "judge", "rows", "labelled", "judge only", "labels only", "corrected", "judge vs corrected"],
            [[c.metric, c.method, comparison.judge_of(c.method), c.n_shared, c.n_labelled, diff(c.judge_only),
              diff(c.labels_only), diff(c.corrected), _verdict(c)] for c in comparison.comparisons],
        ))
    for note in comparison.notes:
        echo(f"  {note}")
    for c in comparison.comparisons:
        for note in c.notes:
            echo(f"  {c.metric} {c.method}: {note}")


def _verdict(c: Any) -> str:
    """DISAGREE / agree, or "-" where there is nothing to agree on (no shared row scored, no row labelled in both)."""
    if c.disagree:
        return "DISAGREE"
    return "agree" if c.judge_only.value is not None and c.corrected.value is not None else "-"


def print_offline_limits(ctx: TrustContext) -> None:
    """On an offline run, the error types the offline judge is known to get wrong (its minimal-edit suite)."""
    info = ctx.store.get_run(ctx.run_id)
    if info is not None and info.provider == "offline":
        from rageval_core.offline.limits import limits_text

        echo(f"\n{limits_text('en')}")


SECTIONS: list[Section] = [
    print_offline_limits, print_coverage, print_split, print_agreement, print_annotators, print_confusion, print_estimates, print_bias,
    print_calibration, print_label_next, print_stability, print_probes, print_comparison, print_fail_under,
]
ARGUMENT_HOOKS: list[Callable[[argparse.ArgumentParser], None]] = [add_check_args]


def _default_metrics(samples: list[Any], labels_file: str | None) -> list[str]:
    """The decomposed metrics of the criteria labelled in the dataset or the labels file (faithfulness and
    answer relevancy if none is)."""
    from rageval_core.analysis.trust.labels import dataset_labels
    from rageval_core.analysis.trust.run_report import read_label_rows

    rows = [(s.id, s.metadata) for s in samples] + (read_label_rows(labels_file) if labels_file else [])
    labelled = {lab.criterion for lab in dataset_labels(rows)}
    chosen = [m for m in METRIC_IDS if m in labelled]
    return chosen or ["faithfulness", "answer_relevancy"]


def _say_label_values(path: str) -> None:
    """The labels file's values that are not labels, and its columns on neither scale: they give no label, so the
    report is read without them; said on stderr rather than read as 0 (issue 36)."""
    from rageval_core.analysis.trust.label_values import FILE, read_labels
    from rageval_core.analysis.trust.run_report import read_label_rows

    for line in read_labels(read_label_rows(path), source=FILE).messages():
        err(f"--labels {path}: {line}; not used")


def _evaluate(args: argparse.Namespace, store: Store) -> tuple[str, list[Any]]:
    """Evaluate the dataset file (the evaluate command's code) and return the run id and its samples."""
    from rageval_core.cli.evaluate_run import load_rows, run_scorers, scorers_from_args, spec_from_args

    from rageval_core.cli.dataset_flags import column_map_of

    dataset, invalid = load_rows(args.data, column_map=column_map_of(args))
    if not args.metrics:
        args.metrics = ",".join(_default_metrics(dataset.samples, args.labels))
    if args.judge is None:
        args.judge = ["rubric5"]
    scorers = scorers_from_args(args)
    result = run_scorers(spec_from_args(args, dataset, invalid, scorers), store, quiet=args.quiet)
    err(f"evaluated {len(dataset.samples)} rows: run {result.run_id} ({result.status})")
    if not result.kept_whole:  # a trust report on the stored part of a run would read as the whole: refused
        from rageval_core.cli.evaluate_output import not_kept_line, print_store_warnings
        from rageval_core.core.errors import ResultsNotKept

        print_store_warnings(result, None, store.path)
        raise ResultsNotKept(f"no trust report on a partial run: {not_kept_line(result)}")
    return result.run_id, list(dataset.samples)


def cmd_trust(args: argparse.Namespace) -> int:
    """Report on a run (or evaluate a dataset file first); exit 0, or what a section raised."""
    from rageval_core.analysis.trust.run_report import run_report
    from rageval_core.store.db import StoreReadOnly
    from rageval_core.store.trust_reports import save_report
    from rageval_core.analysis.trust.splits import parse_split
    from rageval_core.analysis.thresholds import parse_threshold

    if args.labels and not Path(args.labels).is_file():
        raise UsageError(f"--labels {args.labels!r}: no such file")
    if args.labels:
        _say_label_values(args.labels)
    try:
        split = parse_split(args.split) if args.split else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for text in args.fail_under or []:
        parse_threshold(text)  # a bad --fail-under is bad input before anything is evaluated
    store = open_store(args)
    if args.against:
        find_run(store, args.against)  # an unknown run B is bad input before anything is evaluated
    target = Path(args.target)
    samples = None
    if target.is_file():
        args.data = str(target.resolve())  # the run remembers its file, so `trust RUN_ID` finds its labels later
        run_id, samples = _evaluate(args, store)
    else:
        run_id = find_run(store, args.target).id
    report = run_report(
        store, run_id, samples=samples, labels_file=args.labels, threshold=args.threshold,
        iterations=args.iterations, seed=args.seed, split=split, show_test=args.show_test,
    )
    ctx = TrustContext(args, store, run_id, report, samples)
    echo(f"trust report of run {run_id}")
    for section in SECTIONS:
        section(ctx)
    try:
        save_report(store, run_id, report.to_dict())
    except StoreReadOnly as exc:  # a read-only store: the report is printed (and --out written), not kept
        err(f"note: {exc}")
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        write_private_text(out, json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
        echo(f"\ntrust report → {out}")
    return ctx.exit_code


def add_command(sub: Any) -> None:
    """Register ``trust``."""
    p = sub.add_parser(
        "trust",
        help="agreement with human labels, intervals, corrected estimate, label next",
        description="Can these scores be trusted? For a run id (or a dataset file, evaluated first with the offline "
        "provider unless --provider is given): human-label coverage, agreement per metric and method (AUROC, balanced "
        "accuracy, kappa, best threshold, with bootstrap intervals), confusion matrices with row ids, the share that "
        "passes corrected by the labels, and the rows to label next. Labels: the dataset's label_* columns, --labels, "
        "and the inspector's 👍 / 👎. --split deals the labels into train / dev / test (test hidden until --show-test, "
        "each look counted) and calibrates each pass threshold on dev; --against compares two runs with the "
        "difference corrected by the labels, as run B − run A (positive: B scores higher), the sign Compare uses. "
        "Exit 0 done, 1 a --fail-under missed, 2 bad input.",
    )
    p.add_argument("target", metavar="RUN_ID|DATA", help="a run id (or unique prefix) or a dataset file to evaluate first")
    p.add_argument("--labels", help="labels file: a dataset or rows with id and label_* columns (JSON, JSONL, CSV)")
    p.add_argument("--out", help="write the report as JSON")
    p.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD, help="pass = score >= this (default 0.5)")
    p.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS, help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the label split and the bootstrap (default 0)")
    p.add_argument("--split", metavar="train=F,dev=F,test=F",
                   help="deal the labelled rows into train / dev / test (stratified by label and category, stored with "
                   "the labels; a split stored earlier is used without this flag), e.g. train=0.2,dev=0.4,test=0.4")
    p.add_argument("--against", metavar="RUN_B",
                   help="compare with another run on the same rows: judge-only, labels-only and corrected difference, "
                   "each run B − run A (positive: B scores higher), for every metric x method both runs scored, "
                   "each side's judge named")
    p.add_argument("--fail-under", action="append", metavar="METRIC=SHARE",
                   help="exit 1 when the share of rows passing (score >= the threshold in use: calibrated on dev where "
                   "a split exists, else --threshold) is below SHARE; faithfulness=0.8 or judge:rubric5:faithfulness=0.8")
    p.add_argument("--show-test", action="store_true",
                   help="include the test split's figures (each look is counted and shown)")
    p.add_argument("--top", type=int, default=10, help="rows shown under label next (default 10)")
    g = p.add_argument_group("evaluating a dataset file first")
    add_provider_args(g, default_provider="offline")
    g.add_argument("--metrics", default="", help="decomposed metrics (default: those of the labelled criteria)")
    g.add_argument("--judge", action="append", help="one-call judges (default rubric5; repeatable)")
    g.add_argument("--concurrency", type=int, default=8, help="model calls in flight (default 8)")
    g.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    g.add_argument("--economy", action="store_true", help="fewer calls (see evaluate --economy)")
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    add_map_args(g)
    for hook in ARGUMENT_HOOKS:
        hook(p)
    p.set_defaults(func=cmd_trust)


__all__ = ["ARGUMENT_HOOKS", "SECTIONS", "Section", "TrustContext", "add_command", "cmd_trust"]
