"""What ``evaluate`` prints once a run is over: the summary and cost tables, the estimate beside the actual
figures, the per-category and agreement tables, unscored reasons, batch rounds and lost store writes. Each
reads the finished run from the store (or the run's result) and writes to stdout or stderr."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from rageval_core.analysis.thresholds import ThresholdCheck
from rageval_core.cli.common import echo, err, fmt, money, table
from rageval_core.core.termtext import terminal_text

if TYPE_CHECKING:
    from rageval_core.run.persist import Run
    from rageval_core.run.plan import Estimate
    from rageval_core.store.runs import RunInfo, Store


def print_failures(store: Store, run_id: str) -> None:
    """Per unscored reason, the count and the first distinct messages (the actual causes), on stdout; read
    from the store one unscored result at a time."""
    from rageval_core.analysis.failures import failure_lines, summarize_failures
    from rageval_core.run.readback import unscored_results

    lines = failure_lines(summarize_failures(unscored_results(store, run_id)))
    if lines:
        echo("\nunscored results, by reason:")
        for line in lines:
            echo(line)


def print_call_totals(result: Run) -> None:
    """One line on what the run's calls cost: all cache hits, offline heuristics, or provider calls and tokens."""
    total_calls = result.provider_calls + result.cache_hits
    if total_calls and result.all_cached:
        echo(f"all {result.cache_hits} calls were cache hits: 0 provider calls, $0 (unchanged evaluation)")
    elif result.provider == "offline":
        echo(
            f"calls: {result.provider_calls} offline heuristic calls (computed locally on every run, never cached, "
            f"no tokens, $0); wall {result.wall_s:.1f}s"
        )
    else:
        echo(
            f"calls: {result.provider_calls} provider, {result.cache_hits} cache hits, {result.call_errors} errors; "
            f"tokens {result.input_tokens}+{result.output_tokens}{_cached_note(result)}; cost ${result.cost_usd:.4f}; "
            f"wall {result.wall_s:.1f}s"
        )


def cached_share(cached: int, total: int) -> str:
    """A cached-input share as the tables print it: ``62%``, or ``-`` without input tokens."""
    return f"{cached / total:.0%}" if total else "-"


def _cached_note(result: Run) -> str:
    """`` (1234 cached input, 62%)`` when the provider served part of the prompts from its prompt cache."""
    cached = sum(c.cached_input_tokens for c in (getattr(result, "cost", None) or {}).values())
    total = sum(c.input_tokens for c in (getattr(result, "cost", None) or {}).values())
    return f" ({cached} cached input, {cached_share(cached, total)})" if cached else ""


def print_batch(info: RunInfo | None) -> None:
    """What the batch rounds did: jobs, requests, per-request failures (priced at the batch rate)."""
    batch = (info.settings if info is not None else {}).get("batch") or {}
    if batch:
        echo(
            f"batch: {batch.get('rounds', 0)} round(s), jobs {', '.join(batch.get('jobs') or []) or 'none (all answers known)'}; "
            f"{batch.get('requests', 0)} requests, {batch.get('failed_requests', 0)} failed in the job; cost at the batch rate"
        )


LOST_KINDS = {  # the store's own writes a run can lose, as the messages name them (``store.engine.warn`` kinds)
    "cache": "response-cache entries (a rerun of those calls pays for them again)",
    "embedding_cache": "embedding-cache entries (a rerun embeds those texts again)",
    "call_log": "call-log entries (the run's call and cost figures miss those calls)",
    "run_rows": "row-table writes (rows read but not listed with the run)",
    "run_dataset": "dataset record writes (the file's hash and bad rows)",
    "run_status": "status writes (the run stays marked running in the store)",
}


def lost_writes(warnings: Mapping[str, int]) -> str:
    """``270 call-log entries (...), 12 response-cache entries (...)``: what the store lost beside results."""
    return "; ".join(f"{n} {LOST_KINDS.get(kind, kind + ' writes')}" for kind, n in sorted(warnings.items()) if n)


def not_kept_line(result: Run) -> str:
    """Where the results the store did not keep are, what is lost outright, and how to resume (one sentence)."""
    n, spilled = result.unsaved_tasks, result.spilled_tasks
    where = f"{spilled} of them are in the spill file {result.spill_file}" if spilled else "none could be written to a spill file"
    gone = (f"; the other {n - spilled} are lost (a resume scores them again, paying for their calls unless the "
            "response cache kept them)") if n - spilled else ""
    lost = lost_writes(result.warnings)
    return (f"{n} finished task(s) of run {result.run_id} were not kept by the store; {where}{gone}"
            + (f"; also lost: {lost}" if lost else "") + f"; free space, then run the same command with --resume {result.run_id}")


def print_store_warnings(result: Run, out: Any = None, db_path: str | None = None) -> None:
    """What the store could not keep, on stderr: results (an error: exit 4, never success) with where each is kept,
    its own lost writes (cache, call log, the run's record) with what each costs, and exactly how to resume."""
    lost = lost_writes(result.warnings)
    if result.kept_whole:
        if lost:
            err(f"warning: the store could not write {lost}; every result is stored")
        return
    results = result.not_kept.result_count if result.not_kept is not None else 0
    n, spilled = result.unsaved_tasks, result.spilled_tasks
    computed = result.done_tasks - result.skipped_tasks
    if n:
        err(f"error: results not kept: the store could not keep {n} of the {computed} task(s) this run finished "
            f"({results} results) — a full disk or a store that refused writes" + (f" ({db_path})" if db_path else ""))
        if spilled:
            err(f"  kept: {spilled} task(s) in the spill file {result.spill_file} (room set aside before the run)")
        if n - spilled:
            err(f"  {n - spilled} task(s) could not be written to any spill file: they are only in {out or 'the export'}; "
                "--resume scores them again (their calls are paid again unless the response cache kept them)")
        if out is not None:
            err(f"  every computed result is in {out} (marked incomplete: \"complete\": false / {NOT_KEPT_CSV_NOTE})")
    else:
        err("error: results not kept: the store could not keep the run's own record (every result is stored)")
    if lost:
        err(f"  also lost: {lost}")
    err("  to resume: free space" + (f" on the store's disk ({db_path})" if db_path else "") + ", then run the same "
        f"command with --resume {result.run_id}" + (f": it writes the {spilled} spilled task(s) back first and pays for "
                                                   "none of their calls again, then scores only what is missing" if spilled
                                                   else ": it scores only what is missing"))


NOT_KEPT_CSV_NOTE = "a CSV's not_kept_in_store column"


def estimate_table(est: Estimate) -> str:
    """The estimate per scorer (metric or judge) and method, with a total line."""
    rows = [
        [r.scorer, r.method, r.calls_range(), r.embedding_calls, r.input_tokens + r.output_tokens, money(r.cost_usd)]
        for r in est.rows
    ]
    total = str(est.llm_calls) if est.max_llm_calls <= est.llm_calls else f"{est.llm_calls}–{est.max_llm_calls}"
    rows.append(["total", "", total, est.embedding_calls, est.input_tokens + est.output_tokens, money(est.cost_usd)])
    return table(["scorer", "method", "est. calls", "est. embeds", "est. tokens", "est. cost_usd"], rows)


def prompt_cache_line(est: Estimate, *, batch: bool = False) -> str | None:
    """What the provider's prompt cache could take off the estimate, beside it; None when the provider has no
    implicit cache (or bills nothing). An upper bound: each call's shared prefix (the step's fixed instructions,
    with the row's contexts for a step asked again on the row) priced at the cached rate where the provider
    caches a prefix that long (``llm.prompt_cache``)."""
    rule = est.cache_rule
    if rule is None:
        return None
    head = f"prompt cache ({rule.label}, shared prefixes from {rule.min_tokens:,} tokens): "
    cached, saving, cost = est.cached_input_tokens, est.cache_saving_usd, est.cost_usd
    if cached == 0:
        return head + "no call's shared prefix is that long, so nothing is expected from it"
    said = f"up to {cached:,} of {est.input_tokens:,} input tokens ({cached_share(cached, est.input_tokens)}) at the cached rate"
    if saving is None or cost is None:
        return head + said + ", saving unknown (model not in the price table)"
    rate = " at the batch rate" if batch else ""
    return head + said + f", up to ${saving:.4f} less: ${cost - saving:.4f} instead of ${cost:.4f}{rate} (not guaranteed)"


def actual_table(est: Estimate, actual: Mapping[str, Any]) -> str:
    """Estimate next to the actual figures of this run (``actual``: cost per scorer), per scorer (metric or
    judge) and method.

    Actual figures cover every session of the run (a resumed run includes the calls before the
    interruption); cache hits cost nothing and are counted apart from provider calls.
    """
    rows = []
    for r in est.rows:
        a = actual.get(r.scorer)
        rows.append(
            [
                r.scorer, r.method, r.calls_range(), a.calls if a else 0, a.cached_calls if a else 0, a.errors if a else 0,
                r.input_tokens + r.output_tokens, (a.input_tokens + a.output_tokens) if a else 0,
                cached_share(a.cached_input_tokens, a.input_tokens) if a else "-",
                money(r.cost_usd), money(a.cost_usd if a else 0.0),
            ]
        )
    return table(
        ["scorer", "method", "est. calls", "calls", "cached", "errors", "est. tokens", "tokens", "cached in", "est. cost",
         "cost_usd"], rows
    )


def _metric_title(metric: str) -> str:
    return metric.replace("_", " ").title()


def print_analysis(store: Store, run_id: str, categories: Mapping[str, Any]) -> None:
    """The per-category tables of the RAGAS-vs-judge article (one per method) and, with a judge beside decomposed metrics, their
    agreement per shared criterion; an undefined statistic prints as "-" with the reason in ``note``. The results
    are folded as they are read (``run_tables``): nothing of a 100,000-row run is held whole for them, and pandas
    is not imported."""
    from rageval_core.analysis.run_tables import closing_tables
    from rageval_core.analysis.tallies import HEURISTIC_ONLY_NOTE

    tables = closing_tables(store, run_id, categories)
    if any(categories.values()):
        for cat_table in tables.categories:
            echo(f"\nper category, {cat_table.method} (mean over scored rows; - none scored):")
            echo(table(["category"] + [_metric_title(c) for c in cat_table.metrics],
                       [[cat] + [fmt(v) for v in cells] for cat, cells in cat_table.rows]))
    for agreement in tables.agreements:
        echo(f"\nagreement, decomposed vs {agreement.judge} (rows scored by both; kappa at 0.5):")
        if agreement.heuristic_only:
            echo(f"note: {HEURISTIC_ONLY_NOTE}")
        echo(table(
            ["criterion", "n", "pearson", "spearman", "mad", "kappa", "note"],
            [[_metric_title(r["criterion"]), r["n"], fmt(r["pearson"]), fmt(r["spearman"]), fmt(r["mad"]), fmt(r["kappa"]),
              r["note"] or ""] for r in agreement.lines],
        ))


def print_summary(result: Run) -> None:
    rows = []
    for method, metrics in result.summary.items():
        for metric, s in metrics.items():
            reasons = ", ".join(f"{k} {v}" for k, v in s["unscored_reasons"].items())
            reasked = f"re-asked {s.get('reasked', 0)}, recovered {s.get('recovered', 0)}" if s.get("reasked") else "-"
            rows.append([metric, method, fmt(s["mean"]), s["scored"], s["unscored"], reasons, reasked])
    echo(table(["metric", "method", "mean", "scored", "unscored", "unscored reasons", "re-ask"], rows))
    cost_rows = [
        [m, c.calls, c.cached_calls, c.errors, c.input_tokens + c.output_tokens,
         cached_share(c.cached_input_tokens, c.input_tokens), f"{c.cost_usd:.4f}", f"{c.latency_s:.1f}"]
        for m, c in result.cost.items()
    ]
    if cost_rows:
        echo(table(["method", "calls", "cached", "errors", "tokens", "cached in", "cost_usd", "call_s"], cost_rows))
    if result.invalid_rows:
        echo(f"bad rows: {', '.join(terminal_text(r.sample_id) for r in result.invalid_rows)}")


def print_thresholds(checks: Sequence[ThresholdCheck]) -> bool:
    """Print each --fail-under check; True when every one passed."""
    for c in checks:
        verdict = "ok" if c.passed else "MISSED"
        detail = "no scored rows" if c.mean is None else f"mean {c.mean:.3f}"
        echo(f"fail-under {c.threshold.label} >= {c.threshold.minimum:g}: {detail} ({c.scored} scored, {c.unscored} unscored) {verdict}")
    return all(c.passed for c in checks)


def print_pass_rates(checks: Sequence[Any]) -> bool:
    """Print each ``--fail-under ... --calibration RUN`` check (the pass rate at RUN's calibrated threshold,
    the mean beside it); True when every one passed."""
    for c in checks:
        verdict = "ok" if c.passed else "MISSED"
        judge = "/".join(str(x) for x in c.calibrated.judge)
        rate = "no scored rows" if c.rate is None else f"pass rate {c.rate:.3f} ({c.passing} of {c.scored} scored rows)"
        mean = "-" if c.mean is None else f"{c.mean:.3f}"
        echo(f"fail-under {c.threshold.label} >= {c.threshold.minimum:g} as a pass rate at {c.calibrated.threshold:.3g} "
             f"(calibrated on the dev split of run {c.calibrated.run_id} under {judge}): {rate}, mean {mean}, "
             f"{c.unscored} unscored {verdict}")
    return all(c.passed for c in checks)
