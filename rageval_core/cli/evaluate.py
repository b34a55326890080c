"""``evaluate``: score a dataset, export the results, print the summary, gate on thresholds."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rageval_core.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_INTERRUPTED,
    EXIT_NOT_KEPT,
    EXIT_OK,
    EXIT_THRESHOLD,
    UsageError,
    add_provider_args,
    err,
    find_run,
    open_store,
    echo,
)
from rageval_core.cli import evaluate_output as output
from rageval_core.cli.dataset_flags import add_map_args, add_naming_arg, adopt_resumed_map, column_map_of
from rageval_core.cli.dataset_report import invalid_rows, report_dataset
from rageval_core.cli.evaluate_run import batch_flags, load_rows, run_scorers, scorers_from_args, spec_from_args
from rageval_core.cli.trust_checks import add_repeat_args
from rageval_core.analysis.thresholds import check_thresholds, parse_threshold

if TYPE_CHECKING:
    from rageval_core.data.datasets.live import LiveDataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.run.persist import Run
    from rageval_core.run.spec import RunSpec
    from rageval_core.store.runs import Store


def _calibration(args: argparse.Namespace, store: Store, thresholds: list[Any], cfg: ProviderConfig) -> dict[Any, Any]:
    """``--calibration RUN``: each ``--fail-under`` target's threshold calibrated on RUN's dev split (a usage
    error, before anything is evaluated, when RUN lacks one or calibrated it under another judge model)."""
    if not getattr(args, "calibration", None):
        return {}
    if not thresholds:
        raise UsageError("--calibration RUN sets the pass threshold of --fail-under: give --fail-under too, "
                         "e.g. --fail-under faithfulness=0.8 (at least 80 % of rows reach RUN's calibrated threshold)")
    from rageval_core.analysis.thresholds import calibrated_for

    return calibrated_for(find_run(store, args.calibration), thresholds, cfg.provider, cfg.resolved_model())


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score a dataset, export the results and print the summary; the exit code follows the module docstring."""
    from rageval_core.core.method_labels import display_method
    from rageval_core.run import estimate
    from rageval_core.run.persist import stream_cost_by_scorer
    from rageval_core.providers.tokens import token_counter

    if args.data is None:
        # `--fail-under a=0.8 data.json` lets the flag's list swallow the dataset: take it back from there.
        stray = [t for t in args.fail_under or [] if "=" not in t]
        if len(stray) != 1:
            raise UsageError("give the dataset file, e.g. evaluate sample_data/ml_qa_ja.json --provider offline ...")
        args.data = stray[0]
        args.fail_under = [t for t in args.fail_under if t != stray[0]]
    naming = getattr(args, "naming", None)
    out = _out_file(args.out, naming)
    adopt_resumed_map(args, open_store)  # a bad --map is a usage error first; --resume RUN takes RUN's own map
    if args.batch and getattr(args, "judges", None):
        raise UsageError("--batch sends the run's provider through its batch API; judges from --judges call their own "
                         "providers one request at a time: run --judges without --batch")
    thresholds = [parse_threshold(t) for t in args.fail_under or []]
    scorers = scorers_from_args(args)
    produced = {(display_method(s.method, getattr(s, "group", None)), m) for s in scorers for m in s.metrics}
    for rule in getattr(args, "jury", None) or []:
        produced |= {(f"jury:{rule}", m) for s in scorers for m in s.metrics}
    for t in thresholds:
        if (t.method, t.metric) not in produced:
            raise UsageError(f"--fail-under {t.label}: this run does not compute {t.metric} by {t.method}")
    dataset, invalid = open_rows(args)
    live = getattr(dataset, "streamed", False)
    spec = spec_from_args(args, dataset, invalid, scorers)
    cfg = spec.provider
    assert cfg is not None  # spec_from_args always records the flags' configuration
    store = open_store(args, writes="evaluate")  # a read-only store is refused before anything is computed
    calibrated = _calibration(args, store, thresholds, cfg)

    counter = token_counter(cfg)  # OpenAI's encodings, or Claude's / Gemini's counting endpoint, else approximate
    if live:
        from rageval_core.run.feed import HEAD_ROWS

        head = dataset.head(HEAD_ROWS)
        est = estimate(head, scorers, provider=args.provider, model=args.model, discount=_discount(args),
                       total_rows=max(dataset.expected_rows, len(head)), reask=getattr(args, "reask", 1), counter=counter)
        rows_said = f"~{est.n_samples} rows (the file is read while the run goes)"
        scaled = f" (from the first {len(head)} rows, scaled to the file's {est.n_samples} rows)" if est.from_rows else ""
    else:
        est = estimate(dataset.samples, scorers, provider=args.provider, model=args.model, discount=_discount(args),
                       reask=getattr(args, "reask", 1), counter=counter)
        rows_said = f"{len(dataset.samples)} rows"
        scaled = f" (scaled up from {est.from_rows} evenly spaced rows)" if est.from_rows else ""
    cost = "unknown (model not in the price table)" if est.cost_usd is None else f"${est.cost_usd:.4f}"
    if args.batch:
        cost += " at the batch rate"
    err(
        f"estimate: {rows_said} × {len(scorers)} scorers, ~{est.llm_calls} LLM calls"
        + (f" (up to {est.max_llm_calls} with every re-ask)" if est.max_llm_calls > est.llm_calls else "") + ", "
        f"~{est.embedding_calls} embedding calls, ~{est.input_tokens + est.output_tokens} tokens, cost {cost}{scaled}"
    )
    err(f"estimate: {est.tokens_note()}")
    cache_line = output.prompt_cache_line(est, batch=bool(args.batch))
    if cache_line:
        err(cache_line)
    if not args.quiet:
        err(output.estimate_table(est))
    if est.embedding_calls:
        print_embedding_fallback(cfg)
    spec = _with_spill_room(spec, store, out)
    try:
        result = run_scorers(spec, store, quiet=args.quiet, batch=batch_flags(args))
    finally:  # the room goes back if the run never started (a spill, once written, stays)
        if spec.spill is not None:
            spec.spill.release()
    if live:
        invalid = _report_live(dataset)
    _add_juries(args, store, result)

    texts: Any = None
    if out is not None and (out.suffix.lower() == ".csv" or naming):
        from rageval_core.data.datasets.live import SequentialSamples

        # the CSV's question and answer columns, or the rows of a named export
        texts = SequentialSamples(dataset.reopen()) if live else {s.id: s for s in dataset.samples}
    _export(args, store, result, out, texts)
    output.print_summary(result)
    echo(output.actual_table(est, stream_cost_by_scorer(store, result.run_id)))
    output.print_analysis(store, result.run_id, dataset.categories if live else _categories(dataset.samples))
    output.print_call_totals(result)
    if args.batch:
        output.print_batch(store.get_run(result.run_id))
    output.print_failures(store, result.run_id)
    if result.repeats > 1:
        from rageval_core.cli.trust_checks import print_stability_report
        from rageval_core.analysis.trust.checks import stability_for_run

        print_stability_report(stability_for_run(store, result.run_id, aggregate=args.aggregate))
    output.print_store_warnings(result, out, store.path)
    said = f"{result.status}{'' if result.kept_whole else ', results not kept'}"
    echo(f"run {result.run_id} ({said}) → {out}" if out is not None else
         f"run {result.run_id} ({said}) stored; export it with: runs export {result.run_id} --out results.json")
    if not result.kept_whole:  # exit 4 wins: a partial run never passes a gate, nor ends as done
        _judge_partial(result, thresholds, calibrated)
        err(f"exit 4: results not kept; free space, then resume with: --resume {result.run_id}")
        return EXIT_NOT_KEPT
    if result.status == "cancelled":
        err(f"run cancelled; resume with: --resume {result.run_id}")
        return EXIT_INTERRUPTED

    if result.scored_results == 0:
        err("nothing could be evaluated: every result is unscored (the reasons are listed above)")
        return EXIT_BAD_INPUT
    ok = _judge(result, thresholds, calibrated)
    code = EXIT_OK if ok else EXIT_THRESHOLD
    if args.strict and invalid:
        err(f"--strict: {len(invalid)} bad row(s) in the dataset")
        return EXIT_BAD_INPUT
    return code



def _export(args: argparse.Namespace, store: Store, result: Run, out: Path | None, texts: Any) -> None:
    """``--out`` (every computed result, those the store did not keep too) and ``--calls-out``; without ``--out``
    the summary and the stored run (`runs export RUN --out FILE` later)."""
    from rageval_core.analysis.export import export_calls_jsonl, export_run, export_run_named

    naming, unkept = getattr(args, "naming", None), result.not_kept
    if out is None:
        pass
    elif naming:
        _written(lambda: export_run_named(store, result.run_id, out, texts, naming, unkept), out, result)
    else:
        _written(lambda: export_run(store, result.run_id, out, include_details=args.details, samples=texts,
                                    not_kept=unkept, lost=result.warnings), out, result)
    if args.calls_out:
        _written(lambda: export_calls_jsonl(store, result.run_id, args.calls_out), Path(args.calls_out), result)


def _judge(result: Run, thresholds: list[Any], calibrated: dict[Any, Any]) -> bool:
    """Print each ``--fail-under`` check on every computed result of the run (``Run.summary`` and ``Run.results``
    include those the store did not keep); True when all pass."""
    if calibrated:
        from rageval_core.analysis.thresholds import check_pass_rates

        return output.print_pass_rates(check_pass_rates(result.results, calibrated))
    return output.print_thresholds(check_thresholds(result.summary, thresholds))


def _judge_partial(result: Run, thresholds: list[Any], calibrated: dict[Any, Any]) -> None:
    """A run the store did not keep whole: its thresholds judged on every computed result, said to be only
    information (the exit is 4 whatever they say)."""
    if not thresholds or result.scored_results == 0:
        return
    n = sum(s["scored"] + s["unscored"] for metrics in result.summary.values() for s in metrics.values())
    err(f"fail-under: judged on all {n} computed results ({result.not_kept.result_count if result.not_kept else 0} "
        "of them not in the store), not on the stored part alone; the exit is 4 (results not kept) whatever they say")
    _judge(result, thresholds, calibrated)


def _with_spill_room(spec: RunSpec, store: Store, out: Path | None) -> RunSpec:
    """The spec with room set aside for results a full store could not keep (beside ``out`` first); when no folder
    has room, said before the run."""
    import dataclasses

    from rageval_core.run.spill import reserve

    folder = None if out is None else out.resolve().parent
    beside = (str(folder),) if folder is not None and folder.is_dir() and folder != Path("/dev") else ()
    spec = dataclasses.replace(spec, spill_beside=beside)
    room = reserve(store, str(spec.run_id), spec.planned_tasks, spec.spill_beside)
    if room.shortfall:
        err(f"warning: {room.shortfall}")
    return dataclasses.replace(spec, spill=room)


def _out_file(out: str | None, naming: str | None) -> Path | None:
    """The export file ``--out`` names (checked before anything runs), or None: without ``--out`` the summary goes
    to stdout and the run is stored, as the README's offline-by-default first run expects."""
    if out is None:
        if naming:
            raise UsageError("--naming writes the rows in that tool's shape: give --out FILE (.json, .jsonl or .csv)")
        return None
    path = Path(out)
    if naming and path.suffix.lower() not in (".json", ".jsonl", ".ndjson", ".csv"):
        raise UsageError(f"--out {out!r}: with --naming use a .json, .jsonl or .csv file")
    if not naming and path.suffix.lower() not in (".json", ".csv"):
        raise UsageError(f"--out {out!r}: use a .json or .csv file (or --naming ragas|deepeval for rows in that tool's shape)")
    return path


def _written(write: Callable[[], Any], target: Path, result: Run) -> None:
    """An export that a full disk or a read-only folder refuses ends the command with one clear line (exit 2,
    or 4 when the run's results were not all kept by the store), the half-written file removed; the run and every
    result already scored stay in the store (and the spill file)."""
    try:
        write()
    except OSError as exc:
        if target.is_file():  # a truncated export is worse than none (never a device: --out /dev/stdout)
            target.unlink(missing_ok=True)
        said = f"cannot write {exc.filename or target}: {exc.strerror or exc}"
        if not result.kept_whole:
            from rageval_core.core.errors import ResultsNotKept

            raise ResultsNotKept(f"{said}; {output.not_kept_line(result)}") from None
        raise UsageError(f"{said}; run {result.run_id} is stored with every result scored: "
                         f"`runs export {result.run_id} --out FILE` once there is room") from None


def _add_juries(args: argparse.Namespace, store: Store, result: Run) -> None:
    """``--jury RULE``: store each jury over the run's judges (``--jury-members`` picks them) and refresh the
    run's summary so the jury is listed, exported and gated like any method."""
    rules = list(dict.fromkeys(getattr(args, "jury", None) or []))
    if not rules:
        return
    from rageval_core.scoring.judges.jury_run import add_jury
    from rageval_core.run.persist import stream_summary

    members = [m.strip() for m in (args.jury_members or "").split(",") if m.strip()] or None
    for rule in rules:
        try:
            add_jury(store, result.run_id, rule, members, threshold=args.jury_threshold)
        except ValueError as exc:
            raise UsageError(f"--jury {rule}: {exc}") from None
    result.summary = stream_summary(store, result.run_id)


def _discount(args: argparse.Namespace) -> float:
    """The price factor of this run: batch APIs bill half."""
    if not getattr(args, "batch", False):
        return 1.0
    from rageval_core.run.batch import BATCH_DISCOUNT

    return BATCH_DISCOUNT


def print_embedding_fallback(cfg: ProviderConfig) -> None:
    """Say on stderr when the bundled offline encoder stands in for provider embeddings (no --embedding-model):
    the scores that embed then do not come from the server's model."""
    from rageval_core.providers.config import embedding_choice

    choice = embedding_choice(cfg)
    if choice.fallback:
        err(f"embeddings: {choice.describe()}: answer relevancy / correctness embed with the bundled offline encoder; "
            "pass --embedding-model NAME for the server's embeddings, or --embeddings provider to refuse without one")




LIVE_MIN_BYTES = 4 * 2**20  # JSONL / CSV / JSON array files from this size are read while the run goes (~4,000 seed-size rows)


def open_rows(args: argparse.Namespace) -> tuple[Any, Any]:
    """The dataset of ``evaluate`` and its skipped rows. A JSON Lines or CSV file (or a JSON document that is one
    array of rows) of ``LIVE_MIN_BYTES`` or more is evaluated as it is read (``datasets.live``): the run starts on its first rows and holds only what is in
    flight; its skipped rows are then a callable, answered once the reader is at the end (bad rows are listed
    after the run). Batch runs, and any other file, are read whole first (``load_rows``)."""
    from rageval_core.data.datasets.live import LiveDataset, open_live

    column_map = column_map_of(args)
    if not args.batch:
        opened = open_live(args.data, min_bytes=LIVE_MIN_BYTES, column_map=column_map)
        if isinstance(opened, LiveDataset):  # a file read as the run goes (a small one comes back loaded whole)
            head = opened.head(1)
            if head or not opened.done:
                return opened, lambda: invalid_rows(opened)
            report_dataset(opened, invalid_rows(opened))  # read to the end without one good row
            raise UsageError(f"{args.data}: no valid rows to evaluate (the reasons are above)")
        if opened is not None:  # refused before reading (not UTF-8 further on)
            report_dataset(opened, [])
            raise UsageError(f"{args.data}: no valid rows to evaluate (the reasons are above)")
    return load_rows(args.data, quiet=args.quiet, column_map=column_map)


def _report_live(dataset: LiveDataset) -> list[Any]:
    """After a run over a file read as it went: the warnings and skipped rows (as ``load_rows`` prints them
    before a run), or, when the run stopped before the reader reached the end, how far it read."""
    invalid = invalid_rows(dataset)
    if dataset.done:
        report_dataset(dataset, invalid)
    else:
        err(f"dataset: the run stopped after {dataset.total_rows:,} of ~{dataset.expected_rows:,} rows of {dataset.file}; "
            f"{len(invalid)} bad row(s) among them (the resume reads on from there)")
    return invalid


def _categories(samples: Sequence[Any]) -> dict[str, Any]:
    """Id → category label of each row, in dataset order (the per-category tables)."""
    return {s.id: (s.metadata.get("category_label") or s.category) for s in samples}


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def add_command(sub: Any) -> None:
    """Register ``evaluate``."""
    ev = sub.add_parser(
        "evaluate",
        help="score a dataset with decomposed metrics and/or one-call judges",
        description="Score every valid row with the decomposed metrics and one-call judges. The estimate and a "
        "progress bar go to stderr, the summary to stdout. Bad rows are skipped and listed (exit 2 only with "
        "--strict). Keys come from the environment only.",
        epilog="exit codes: 0 done; 1 a --fail-under threshold missed; 2 bad input (no valid rows, bad configuration, "
        "a store that cannot be used); 3 internal error (the log file is named); 4 results not kept (the store's disk "
        "filled mid-run: every computed result is in the spill file and the --out export, said on stderr; free "
        "space, then --resume RUN writes them back without paying their calls again); 130 interrupted (resume with "
        "--resume RUN).",
    )
    ev.add_argument("data", nargs="?", help="dataset file (.json, .jsonl, .csv)")
    add_provider_args(ev, default_provider="offline")
    ev.add_argument("--metrics", default="", help="comma-separated decomposed metric ids: faithfulness, answer_relevancy, "
                    "context_precision, context_recall, context_relevance, answer_correctness")
    ev.add_argument("--judge", action="append", help="rubric5, binary, binary-strict or a rubric JSON file (repeatable)")
    ev.add_argument("--judges", metavar="FILE",
                    help="YAML or JSON list of judge configurations (provider, model, base_url, method: a rubric or "
                    "decomposed with metrics, temperature, seed, rpm, tpm, api_key_env); every one scores every row")
    ev.add_argument("--jury", action="append", choices=("mean", "median", "majority"),
                    help="add a jury over the judges, listed as method jury:RULE (repeatable)")
    ev.add_argument("--jury-members", metavar="M1,M2",
                    help="the jury's members by method label, e.g. judge:rubric5@gpt-4o-mini (default: every judge configuration)")
    ev.add_argument("--jury-threshold", type=float, default=0.5, help="pass threshold of a majority jury's votes (default 0.5)")
    ev.add_argument("--out", help="results file: .json (documented format) or .csv; with --naming, .json, .jsonl or .csv "
                    "rows in that tool's shape with a score column per method and metric (default: no file; the summary "
                    "goes to stdout and the run is stored, `runs export RUN --out FILE` writes it later)")
    ev.add_argument("--calls-out", help="also write the call log as JSON Lines")
    ev.add_argument("--resume", metavar="RUN", help="continue an interrupted run (finished rows are not redone; the file is read through the --map the run was started with)")
    ev.add_argument("--fail-under", action="extend", nargs="+", metavar="METRIC=VALUE",
                    help="minimum mean over scored rows: faithfulness=0.8 targets the decomposed metric, "
                    "judge:rubric5:faithfulness=0.8 a judge's criterion; exit 1 when one is missed (a metric with no "
                    "scored row counts as missed). Several may follow one flag, or repeat the flag")
    ev.add_argument("--calibration", metavar="RUN",
                    help="gate --fail-under at the pass thresholds calibrated on RUN's labelled dev split (trust RUN "
                    "--split): faithfulness=0.8 then means at least 80 %% of scored rows reach RUN's threshold (the pass "
                    "rate, printed beside the mean); a target RUN has no calibrated threshold for, or calibrated under "
                    "another judge model, exits 2")
    ev.add_argument("--strict", action="store_true", help="exit 2 when the dataset has bad rows")
    ev.add_argument("--concurrency", type=int, default=8, help="model calls in flight (default 8)")
    ev.add_argument("--reask", type=_non_negative, default=1, metavar="N",
                    help="re-ask a step up to N times when its answer is unusable (parse_error, verdict_mismatch), "
                    "stating the problem; counted per metric in the summary (default 1, 0 turns it off)")
    ev.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    ev.add_argument("--economy", action="store_true",
                    help="fewer calls: answer claims verified against contexts and ground truth in one call")
    ev.add_argument("--details", action="store_true", help="include claims, verdicts, prompts and responses in the JSON")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    add_map_args(ev)
    add_naming_arg(ev, default=None)
    ev.add_argument("--batch", action="store_true",
                    help="send the model calls through the provider's batch API (OpenAI Batch API, Gemini batch mode) at "
                    "the batch price: one job per dependent step, polled until done; if the process stops, rerun the "
                    "same command to pick up the jobs it submitted (embeddings stay synchronous)")
    ev.add_argument("--batch-job", action="append", metavar="JOB_ID",
                    help="with --batch: collect the answers of a job submitted before (e.g. from another machine); repeatable")
    ev.add_argument("--batch-poll", type=float, default=30.0, metavar="SECONDS", help="with --batch: seconds between status checks (default 30)")
    add_repeat_args(ev)
    ev.set_defaults(func=cmd_evaluate)
