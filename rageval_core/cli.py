"""``python -m rageval_core``: evaluate a dataset in CI, compare runs, list and export run history.

Exit codes (DESIGN.md contract): 0 done; 1 a ``--fail-under`` threshold missed (a threshold whose every
row is unscored counts as missed); 2 nothing could be evaluated (no valid rows, bad configuration, or
``--strict`` with bad rows). A partly bad dataset evaluates its good rows, lists the bad ones on stderr
and in the export. API keys come from the environment only and are never printed.
"""

from __future__ import annotations

import argparse
import math
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence, TextIO

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_BAD_INPUT = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input or configuration: reported on stderr, exit code 2."""


# ---- --fail-under ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Threshold:
    """``faithfulness=0.8`` (decomposed) or ``judge:rubric5:faithfulness=0.8`` (a judge's criterion)."""

    method: str
    metric: str
    minimum: float

    @property
    def label(self) -> str:
        return self.metric if self.method == "decomposed" else f"{self.method}:{self.metric}"


def parse_threshold(text: str) -> Threshold:
    target, sep, value = text.rpartition("=")
    if not sep or not target:
        raise UsageError(f"--fail-under {text!r}: expected metric=value, e.g. faithfulness=0.8 or judge:rubric5:faithfulness=0.8")
    try:
        minimum = float(value)
    except ValueError:
        raise UsageError(f"--fail-under {text!r}: {value!r} is not a number") from None
    if not 0.0 <= minimum <= 1.0:
        raise UsageError(f"--fail-under {text!r}: scores are in [0, 1]")
    if target.startswith("judge:"):
        method, _, metric = target.rpartition(":")
        if method == "judge" or not metric:
            raise UsageError(f"--fail-under {text!r}: a judge threshold is judge:<rubric id>:<criterion>=value")
        return Threshold(method, metric, minimum)
    return Threshold("decomposed", target, minimum)


@dataclass
class ThresholdCheck:
    threshold: Threshold
    mean: float | None
    scored: int
    unscored: int

    @property
    def passed(self) -> bool:
        """A mean at or above the minimum; no scored row at all is a miss, never a pass."""
        return self.mean is not None and self.mean >= self.threshold.minimum - 1e-12


def check_thresholds(summary: dict[str, dict[str, dict[str, Any]]], thresholds: Sequence[Threshold]) -> list[ThresholdCheck]:
    out = []
    for t in thresholds:
        entry = summary.get(t.method, {}).get(t.metric) or {"mean": None, "scored": 0, "unscored": 0}
        out.append(ThresholdCheck(t, entry["mean"], entry["scored"], entry["unscored"]))
    return out


# ---- progress bar ----------------------------------------------------------------------------------------
class ProgressBar:
    """A one-line bar on a TTY (redrawn at most 10×/s), or a line per 10 % when stderr is a file or pipe."""

    def __init__(self, stream: TextIO, width: int = 28, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.width = width
        self.clock = clock
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self._last_draw = 0.0
        self._last_step = -1

    def __call__(self, p: Any) -> None:
        frac = p.fraction
        eta = "?" if p.eta_s is None else f"{p.eta_s:4.0f}s"
        tokens = p.input_tokens + p.output_tokens
        text = (
            f"{p.done}/{p.total} tasks  calls {p.calls} (+{p.cached_calls} cached"
            + (f", {p.errors} errors" if p.errors else "")
            + f")  tokens {tokens}  ${p.cost_usd:.4f}  left {eta}"
        )
        if self.tty:
            now = self.clock()
            if self._last_draw and now - self._last_draw < 0.1 and p.done < p.total:
                return
            self._last_draw = now
            filled = int(round(frac * self.width))
            self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {text}\x1b[K")
            if p.done >= p.total:
                self.stream.write("\n")
        else:
            step = int(frac * 10)
            if step == self._last_step:
                return
            self._last_step = step
            self.stream.write(f"progress {frac * 100:3.0f}%  {text}\n")
        self.stream.flush()


# ---- commands --------------------------------------------------------------------------------------------
def _store(args: argparse.Namespace):
    from rageval_core.store import Store

    return Store(args.db) if getattr(args, "db", None) else Store()


def _err(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[str(h) for h in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(_width(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c + " " * (widths[i] - _width(c)) for i, c in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _width(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _build_scorers(args: argparse.Namespace) -> list[Any]:
    from rageval_core.metrics.judge import JudgeScorer
    from rageval_core.metrics.registry import build_scorers

    metric_ids = [m.strip() for m in (args.metrics or "").split(",") if m.strip()]
    try:
        scorers = list(build_scorers(metric_ids, {"economy": True} if args.economy else {}))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for judge in args.judge or []:
        try:
            scorers.append(JudgeScorer(judge))
        except FileNotFoundError:
            raise UsageError(f"--judge {judge!r}: no such preset or rubric file (presets: rubric5, binary, binary-strict)") from None
        except (ValueError, OSError) as exc:
            raise UsageError(f"--judge {judge!r}: {exc}") from None
    if not scorers:
        raise UsageError("nothing to evaluate: give --metrics and/or --judge")
    names = [s.name for s in scorers]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise UsageError(f"scorer given twice: {', '.join(dupes)}")
    return scorers


def _provider_config(args: argparse.Namespace) -> Any:
    from rageval_core.llm.registry import PROVIDERS, ProviderConfig, check_config

    if args.provider not in PROVIDERS:
        raise UsageError(f"unknown provider {args.provider!r}; known: {', '.join(PROVIDERS)}")
    cfg = ProviderConfig(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        embedding_model=args.embedding_model,
        concurrency=args.concurrency,
        cache=not args.no_cache,
        replay_log=args.replay_log,
        record_log=args.record_log,
        rpm=args.rpm,
        tpm=args.tpm,
        timeout_s=args.timeout,
        max_retries=args.max_retries,
    )
    problems = check_config(cfg)
    if problems:
        raise UsageError("provider configuration: " + "; ".join(problems))
    return cfg


def _invalid_rows(dataset: Any) -> list[Any]:
    from rageval_core.store import RowInfo

    by_row: dict[int, list[str]] = {}
    for issue in dataset.errors:
        if issue.row is not None:
            by_row.setdefault(issue.row, []).append((f"{issue.field}: " if issue.field else "") + issue.message)
    return [RowInfo(f"row {row}", row - 1, None, False, "; ".join(msgs)) for row, msgs in sorted(by_row.items())]


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score a dataset, export the results and print the summary; the exit code follows the module docstring."""
    from rageval_core.export import export_calls_jsonl, export_run
    from rageval_core.llm.base import ProviderError
    from rageval_core.runner import RunError, estimate, run

    if args.data is None:
        # `--fail-under a=0.8 data.json` lets the flag's list swallow the dataset: take it back from there.
        stray = [t for t in args.fail_under or [] if "=" not in t]
        if len(stray) != 1:
            raise UsageError("give the dataset file, e.g. evaluate sample_data/ml_qa_ja.json --provider offline ...")
        args.data = stray[0]
        args.fail_under = [t for t in args.fail_under if t != stray[0]]
    out = Path(args.out)
    if out.suffix.lower() not in (".json", ".csv"):
        raise UsageError(f"--out {args.out!r}: use a .json or .csv file")
    thresholds = [parse_threshold(t) for t in args.fail_under or []]
    scorers = _build_scorers(args)
    produced = {(s.method, m) for s in scorers for m in s.metrics}
    for t in thresholds:
        if (t.method, t.metric) not in produced:
            raise UsageError(f"--fail-under {t.label}: this run does not compute {t.metric} by {t.method}")
    dataset, invalid = _load_rows(args.data)
    cfg = _provider_config(args)
    store = _store(args)

    est = estimate(dataset.samples, scorers, provider=args.provider, model=args.model)
    cost = "unknown (model not in the price table)" if est.cost_usd is None else f"${est.cost_usd:.4f}"
    _err(
        f"estimate: {len(dataset.samples)} rows × {len(scorers)} scorers, ~{est.llm_calls} LLM calls, "
        f"~{est.embedding_calls} embedding calls, ~{est.input_tokens + est.output_tokens} tokens, cost {cost}"
    )
    if not args.quiet:
        _err(_estimate_table(est))
    cancel = threading.Event()
    previous = signal.getsignal(signal.SIGINT)

    def on_sigint(_sig: int, _frame: Any) -> None:
        if cancel.is_set():
            raise KeyboardInterrupt
        _err("\ninterrupted: finishing calls in flight (Ctrl-C again to abort)…")
        cancel.set()

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, on_sigint)
    try:
        result = run(
            dataset.samples,
            scorers,
            config=cfg,
            store=store,
            concurrency=args.concurrency,
            progress=None if args.quiet else ProgressBar(sys.stderr),
            cancel=cancel,
            run_id=args.resume,
            resume=bool(args.resume),
            dataset_name=dataset.name,
            dataset_digest=dataset.content_hash,
            invalid_rows=invalid,
            settings={
                "metrics": [s.name for s in scorers if s.method == "decomposed"],
                "judges": list(args.judge or []),
                "cache": not args.no_cache,
                "replay_log": args.replay_log,
                "data": str(args.data),
            },
        )
    except (RunError, ProviderError) as exc:  # bad run id, or a provider stack that cannot be built
        raise UsageError(str(exc)) from None
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, previous)

    export_run(store, result.run_id, out, include_details=args.details)
    if args.calls_out:
        export_calls_jsonl(store, result.run_id, args.calls_out)
    _print_summary(result)
    print(_actual_table(est, store.calls(result.run_id)))
    _print_analysis(result.results, dataset.samples)
    _print_call_totals(result)
    print(f"run {result.run_id} ({result.status}) → {out}")
    if result.status == "cancelled":
        _err(f"run cancelled; resume with: --resume {result.run_id}")
        return EXIT_INTERRUPTED

    scored = sum(1 for r in result.results if r.value is not None)
    if scored == 0:
        _err("nothing could be evaluated: every result is unscored (see the reasons above)")
        return EXIT_BAD_INPUT
    code = EXIT_OK if _print_thresholds(check_thresholds(result.summary, thresholds)) else EXIT_THRESHOLD
    if args.strict and invalid:
        _err(f"--strict: {len(invalid)} bad row(s) in the dataset")
        return EXIT_BAD_INPUT
    return code


def _load_rows(path: str) -> tuple[Any, list[Any]]:
    """The dataset and its rejected rows; file problems and skipped rows go to stderr."""
    from rageval_core.datasets import load_dataset

    dataset = load_dataset(path)
    invalid = _invalid_rows(dataset)
    for issue in dataset.errors:
        if issue.row is None:
            _err(f"dataset: {issue}")
    if not dataset.samples:
        raise UsageError(f"{path}: no valid rows to evaluate")
    if invalid:
        _err(f"dataset: {len(invalid)} bad row(s) skipped, {len(dataset.samples)} evaluated:")
        for row in invalid:
            _err(f"  {row.sample_id}: {row.error}")
    return dataset, invalid


def _print_call_totals(result: Any) -> None:
    """One line on what the run's calls cost: all cache hits, offline heuristics, or provider calls and tokens."""
    total_calls = result.provider_calls + result.cache_hits
    if total_calls and result.all_cached:
        print(f"all {result.cache_hits} calls were cache hits: 0 provider calls, $0 (unchanged evaluation)")
    elif result.provider == "offline":
        print(
            f"calls: {result.provider_calls} offline heuristic calls (computed locally on every run, never cached, "
            f"no tokens, $0); wall {result.wall_s:.1f}s"
        )
    else:
        print(
            f"calls: {result.provider_calls} provider, {result.cache_hits} cache hits, {result.call_errors} errors; "
            f"tokens {result.input_tokens}+{result.output_tokens}; cost ${result.cost_usd:.4f}; wall {result.wall_s:.1f}s"
        )


def _print_thresholds(checks: Sequence[ThresholdCheck]) -> bool:
    """Print each --fail-under check; True when every one passed."""
    for c in checks:
        verdict = "ok" if c.passed else "MISSED"
        detail = "no scored rows" if c.mean is None else f"mean {c.mean:.3f}"
        print(f"fail-under {c.threshold.label} >= {c.threshold.minimum:g}: {detail} ({c.scored} scored, {c.unscored} unscored) {verdict}")
    return all(c.passed for c in checks)


def _money(value: float | None) -> str:
    return "?" if value is None else f"{value:.4f}"


def _estimate_table(est: Any) -> str:
    """The estimate per scorer (metric or judge) and method, with a total line."""
    rows = [
        [r.scorer, r.method, r.llm_calls, r.embedding_calls, r.input_tokens + r.output_tokens, _money(r.cost_usd)]
        for r in est.rows
    ]
    rows.append(["total", "", est.llm_calls, est.embedding_calls, est.input_tokens + est.output_tokens, _money(est.cost_usd)])
    return _table(["scorer", "method", "est. calls", "est. embeds", "est. tokens", "est. cost_usd"], rows)


def _actual_table(est: Any, calls: Sequence[Any]) -> str:
    """Estimate next to the actual figures of this run, per scorer (metric or judge) and method.

    Actual figures cover every session of the run (a resumed run includes the calls before the
    interruption); cache hits cost nothing and are counted apart from provider calls.
    """
    from rageval_core.compare import cost_by_scorer

    actual = cost_by_scorer(calls)
    rows = []
    for r in est.rows:
        a = actual.get(r.scorer)
        rows.append(
            [
                r.scorer, r.method, r.llm_calls, a.calls if a else 0, a.cached_calls if a else 0, a.errors if a else 0,
                r.input_tokens + r.output_tokens, (a.input_tokens + a.output_tokens) if a else 0,
                _money(r.cost_usd), _money(a.cost_usd if a else 0.0),
            ]
        )
    return _table(
        ["scorer", "method", "est. calls", "calls", "cached", "errors", "est. tokens", "tokens", "est. cost", "cost_usd"], rows
    )


def _metric_title(metric: str) -> str:
    return metric.replace("_", " ").title()


def _print_analysis(results: Sequence[Any], samples: Sequence[Any]) -> None:
    """Seed 000's per-category tables (one per method) and, with a judge beside decomposed metrics, their
    agreement per shared criterion; an undefined statistic prints as "-" with the reason in ``note``."""
    from rageval_core.compare import DECOMPOSED, agreement, category_table, judge_methods, methods_in, results_frame

    categories = {s.id: (s.metadata.get("category_label") or s.category) for s in samples}
    frame = results_frame(results, categories)
    if frame.empty:
        return
    if any(categories.values()):
        for method in methods_in(frame):
            table = category_table(frame, method)
            print(f"\nper category, {method} (mean over scored rows; - none scored):")
            print(_table(["category"] + [_metric_title(c) for c in table.columns],
                         [[cat] + [_fmt(v) for v in row] for cat, row in zip(table.index, table.to_numpy().tolist())]))
    if DECOMPOSED not in set(frame["method"]):
        return
    for judge in judge_methods(frame):
        stats = agreement(frame, DECOMPOSED, judge)
        if stats.empty:
            continue
        print(f"\nagreement, decomposed vs {judge} (rows scored by both; kappa at 0.5):")
        print(_table(
            ["criterion", "n", "pearson", "spearman", "mad", "kappa", "note"],
            [[_metric_title(r.criterion), r.n, _fmt(r.pearson), _fmt(r.spearman), _fmt(r.mad), _fmt(r.kappa), r.note if isinstance(r.note, str) else ""]
             for r in stats.itertuples()],
        ))


def _print_summary(result: Any) -> None:
    rows = []
    for method, metrics in result.summary.items():
        for metric, s in metrics.items():
            reasons = ", ".join(f"{k} {v}" for k, v in s["unscored_reasons"].items())
            rows.append([metric, method, _fmt(s["mean"]), s["scored"], s["unscored"], reasons])
    print(_table(["metric", "method", "mean", "scored", "unscored", "unscored reasons"], rows))
    cost_rows = [
        [m, c.calls, c.cached_calls, c.errors, c.input_tokens + c.output_tokens, f"{c.cost_usd:.4f}", f"{c.latency_s:.1f}"]
        for m, c in result.cost.items()
    ]
    if cost_rows:
        print(_table(["method", "calls", "cached", "errors", "tokens", "cost_usd", "call_s"], cost_rows))
    if result.invalid_rows:
        print(f"bad rows: {', '.join(r.sample_id for r in result.invalid_rows)}")


def _find(store: Any, run_id: str) -> Any:
    info = store.find_run(run_id)
    if info is None:
        matches = [r.id for r in store.list_runs() if r.id.startswith(run_id)]
        if len(matches) > 1:
            raise UsageError(f"run id {run_id!r} is ambiguous: {', '.join(matches[:5])}{' …' if len(matches) > 5 else ''}")
        raise UsageError(f"no run {run_id!r} (see `runs list`)")
    return info


def _short(value: Any, width: int = 40) -> str:
    text = "-" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def _parse_pairs(texts: Sequence[str] | None) -> dict[str, str]:
    """``--pair judge:rubric5=judge:binary`` (method in A = method in B) → ``{method in B: method in A}``."""
    out: dict[str, str] = {}
    for text in texts or []:
        a, sep, b = text.partition("=")
        if not sep or not a or not b:
            raise UsageError(f"--pair {text!r}: expected METHOD_A=METHOD_B, e.g. judge:rubric5=judge:binary")
        out[b] = a
    return out


def _run_config(info: Any) -> dict[str, Any]:
    """What a run was configured with, as ``compare.version_changes`` compares it."""
    return {"provider": info.provider, "model": info.model, "versions": info.versions, "settings": info.settings}


def _print_config_changes(changes: Sequence[tuple[str, Any, Any]], limit: int) -> None:
    """What differs between the two runs' configurations: rubric / template hashes, settings, provider."""
    if not changes:
        print("same provider, model, rubric / template versions and settings")
        return
    print("what differs (A → B):")
    for path, va, vb in changes[:limit]:
        if vb is None and isinstance(va, dict):
            print(f"  {path}: only in A")
        elif va is None and isinstance(vb, dict):
            print(f"  {path}: only in B")
        else:
            print(f"  {path}: {_short(va)} → {_short(vb)}")
    if len(changes) > limit:
        print(f"  … {len(changes) - limit} more")


def cmd_compare(args: argparse.Namespace) -> int:
    """Run A vs run B: configuration differences, means per metric and method, per-row deltas."""
    from rageval_core.compare import one_sided, pair_methods, results_frame, run_delta, summary_delta, version_changes

    store = _store(args)
    a, b = _find(store, args.run_a), _find(store, args.run_b)
    fa = results_frame(store.results(a.id), {r.sample_id: r.category for r in store.rows(a.id)})
    fb = results_frame(store.results(b.id), {r.sample_id: r.category for r in store.rows(b.id)})
    print(f"A = {a.id} ({a.provider}/{a.model}, {a.dataset_name})\nB = {b.id} ({b.provider}/{b.model}, {b.dataset_name})")
    if a.dataset_hash != b.dataset_hash:
        print("note: the runs were made on different datasets")
    _print_config_changes(version_changes(_run_config(a), _run_config(b)), args.limit)
    pairs = _parse_pairs(args.pair) or pair_methods(fa, fb)
    for method_b, method_a in pairs.items():
        print(f"pairing {method_a} (A) with {method_b} (B)")
    only_a, only_b = one_sided(fa, fb, pairs)
    if only_a:
        print(f"only in A (not compared): {', '.join(only_a)}")
    if only_b:
        print(f"only in B (not compared): {', '.join(only_b)}")
    s = summary_delta(fa, fb, methods=pairs)
    s = s[~s.apply(lambda r: f"{r.metric} ({r.method})" in only_a or f"{r.metric} ({r.method})" in only_b, axis=1)] if len(s) else s
    print(
        _table(
            ["metric", "method", "mean A", "mean B", "delta", "unscored A", "unscored B", "changed rows"],
            [
                [r.metric, r.method, _fmt(r.mean_a), _fmt(r.mean_b), _fmt(r.delta), r.unscored_a, r.unscored_b, r.changed_rows]
                for r in s.itertuples()
            ],
        )
    )
    delta = run_delta(fa, fb, changed_only=not args.all, methods=pairs)
    one_sided_pairs = {tuple(x.rsplit(" (", 1)) for x in only_a + only_b}
    delta = delta[[(m, f"{meth})") not in one_sided_pairs for m, meth in zip(delta["metric"], delta["method"])]].reset_index(drop=True)
    if args.out:
        delta.to_csv(args.out, index=False)
        print(f"per-row deltas → {args.out}")
    shown = delta.head(args.limit)
    what = "rows" if args.all else "changed rows"
    if len(shown):
        print()
        print(f"{what} ({len(delta)}):")
        print(
            _table(
                ["row", "metric", "method", "A", "B", "delta"],
                [
                    [
                        r.sample_id,
                        r.metric,
                        r.method if r.method == r.method_b else f"{r.method} → {r.method_b}",
                        _fmt(r.value_a) if not isinstance(r.unscored_reason_a, str) else r.unscored_reason_a,
                        _fmt(r.value_b) if not isinstance(r.unscored_reason_b, str) else r.unscored_reason_b,
                        _fmt(r.delta),
                    ]
                    for r in shown.itertuples()
                ],
            )
        )
        if len(delta) > len(shown):
            print(f"… {len(delta) - len(shown)} more (use --limit or --out)")
    else:
        print("no row changed")
    return EXIT_OK


def cmd_runs_list(args: argparse.Namespace) -> int:
    store = _store(args)
    runs = store.list_runs(limit=args.limit)
    if not runs:
        print("no runs yet")
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
    print(_table(["run", "created", "status", "dataset", "provider/model", "rows", "scorers", "tasks"], rows))
    return EXIT_OK


def cmd_runs_export(args: argparse.Namespace) -> int:
    from rageval_core.export import export_run

    store = _store(args)
    info = _find(store, args.run)
    try:
        path = export_run(store, info.id, args.out, include_details=args.details)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(f"run {info.id} → {path}")
    return EXIT_OK


def cmd_runs_calls(args: argparse.Namespace) -> int:
    from rageval_core.export import export_calls_jsonl

    store = _store(args)
    info = _find(store, args.run)
    path = export_calls_jsonl(store, info.id, args.out)
    print(f"call log of {info.id} → {path}")
    return EXIT_OK


# ---- parser ----------------------------------------------------------------------------------------------
def add_provider_args(parser: argparse.ArgumentParser) -> None:
    """The provider options of every command that calls a model (evaluate, synth, rag): one configuration
    works for all of them (read back by ``_provider_config``)."""
    parser.add_argument("--provider", required=True, help="offline, gemini, openai, openai-compatible, replay")
    parser.add_argument("--model", help="model name (default: the provider's default, e.g. gemini-2.5-flash, gpt-4o-mini)")
    parser.add_argument("--base-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--embedding-model", help="embedding model (needed for openai-compatible servers)")
    parser.add_argument("--replay-log", help="JSON Lines call log to answer from (--provider replay)")
    parser.add_argument("--record-log", help="append every provider call to this JSON Lines log (replayable)")
    parser.add_argument("--rpm", type=float, help="requests per minute limit (e.g. 10 for Gemini's free tier)")
    parser.add_argument("--tpm", type=float, help="tokens per minute limit")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per model call (default 60)")
    parser.add_argument("--max-retries", type=int, default=4, help="retries on 429, 408, 5xx and timeouts (default 4)")


def build_parser() -> argparse.ArgumentParser:
    invoked = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else ""
    parser = argparse.ArgumentParser(
        prog=invoked if invoked.startswith("rageval") else "python -m rageval_core",
        description="RAG Eval Workbench CLI: evaluate datasets (exit 0 ok, 1 threshold missed, 2 bad input), compare and export runs.",
    )
    parser.add_argument("--db", help="SQLite store (default: .rageval/rageval.sqlite or $RAGEVAL_HOME)")
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser(
        "evaluate",
        help="score a dataset with decomposed metrics and/or one-call judges",
        description="Score every valid row with the decomposed metrics and one-call judges. The estimate and a "
        "progress bar go to stderr, the summary to stdout. Exit 0 done, 1 a --fail-under threshold missed, "
        "2 nothing could be evaluated (no valid rows, bad configuration), 130 interrupted (resume with --resume). "
        "Bad rows are skipped and listed (exit 2 only with --strict). Keys come from the environment only.",
    )
    ev.add_argument("data", nargs="?", help="dataset file (.json, .jsonl, .csv)")
    add_provider_args(ev)
    ev.add_argument("--metrics", default="", help="comma-separated decomposed metric ids: faithfulness, answer_relevancy, "
                    "context_precision, context_recall, context_relevance, answer_correctness")
    ev.add_argument("--judge", action="append", help="rubric5, binary, binary-strict or a rubric JSON file (repeatable)")
    ev.add_argument("--out", required=True, help="results file: .json (documented format) or .csv")
    ev.add_argument("--calls-out", help="also write the call log as JSON Lines")
    ev.add_argument("--resume", metavar="RUN", help="continue an interrupted run (finished rows are not redone)")
    ev.add_argument("--fail-under", action="extend", nargs="+", metavar="METRIC=VALUE",
                    help="minimum mean over scored rows: faithfulness=0.8 targets the decomposed metric, "
                    "judge:rubric5:faithfulness=0.8 a judge's criterion; exit 1 when one is missed (a metric with no "
                    "scored row counts as missed). Several may follow one flag, or repeat the flag")
    ev.add_argument("--strict", action="store_true", help="exit 2 when the dataset has bad rows")
    ev.add_argument("--concurrency", type=int, default=8, help="model calls in flight (default 8)")
    ev.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    ev.add_argument("--economy", action="store_true",
                    help="fewer calls: answer claims verified against contexts and ground truth in one call")
    ev.add_argument("--details", action="store_true", help="include claims, verdicts, prompts and responses in the JSON")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    ev.set_defaults(func=cmd_evaluate)

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

    runs = sub.add_parser("runs", help="run history")
    rsub = runs.add_subparsers(dest="runs_command", required=True)
    ls = rsub.add_parser("list", help="list runs, newest first")
    ls.add_argument("--limit", type=int, default=None, help="show only the newest N runs")
    ls.set_defaults(func=cmd_runs_list)
    ex = rsub.add_parser("export", help="export a run: .json, .csv, or .jsonl (call log)")
    ex.add_argument("run", help="run id or a unique prefix (see `runs list`)")
    ex.add_argument("--out", required=True, help="FILE.json (documented format), FILE.csv (a row per sample, a column "
                    "per metric and method) or FILE.jsonl (the call log)")
    ex.add_argument("--details", action="store_true", help="JSON only: include claims, verdicts and other per-result details")
    ex.set_defaults(func=cmd_runs_export)
    cl = rsub.add_parser("calls", help="export a run's call log as JSON Lines")
    cl.add_argument("run", help="run id or a unique prefix")
    cl.add_argument("--out", required=True, help="FILE.jsonl: one call a line (prompt, response, tokens, latency, cache hit)")
    cl.set_defaults(func=cmd_runs_calls)
    from rageval_core.cli_synth import add_commands as add_synth_commands  # synth, rag (seed-003 pipeline)

    add_synth_commands(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on bad usage, which matches the contract
        return int(exc.code or 0)
    if getattr(args, "concurrency", 1) is not None and getattr(args, "concurrency", 1) < 1:
        _err("--concurrency must be at least 1")
        return EXIT_BAD_INPUT
    try:
        return int(args.func(args))
    except UsageError as exc:
        _err(f"error: {exc}")
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        _err("aborted")
        return EXIT_INTERRUPTED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
