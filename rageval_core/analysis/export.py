"""Exports of a stored run: the documented JSON format, a wide CSV and the call log as JSON Lines.

The JSON keys ``run_id``, ``provider``, ``model``, ``rows[].id``, ``rows[].results[].{metric, method,
value, unscored_reason, reason}`` and ``summary`` are the public contract (DESIGN.md); everything else
is extra and may grow (``trust``: the run's last saved trust report, when one was computed). Keys are never
exported: the store never holds one, and everything exported passes the redaction step (``rageval_core.core.redact``)
once more, which also covers runs stored before that step existed.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence

from rageval_core.core.csvsafe import dumps_csv
from rageval_core.core.redact import redact_data
from rageval_core.store import export_rows
from rageval_core.store.runs import Store
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, MetricResult, Sample
from rageval_core.core.method_labels import base_method, display_method, judge_of, result_method
from rageval_core.core.private import open_private
from rageval_core.core.errors import ConfigError

if TYPE_CHECKING:
    from rageval_core.run.spill import NotKept
    from rageval_core.store.runs import RunInfo

FORMAT_VERSION = 1


def _result_dict(r: MetricResult, include_details: bool) -> dict[str, Any]:
    out: dict[str, Any] = {
        "metric": r.metric,
        "method": r.method,
        "value": r.value,
        "unscored_reason": r.unscored_reason,
        "reason": r.reason,
        "raw_score": r.raw_score,
        "provider": r.provider,
        "model": r.model,
        "calls": r.calls,
        "cached_calls": r.cached_calls,
        "usage": r.usage.to_dict(),
        "cost_usd": r.cost_usd,
        "latency_s": round(r.latency_s, 4),
    }
    judge = judge_of(r.details)
    if judge:  # a run with several judge configurations: which one scored this (extra key, contract unchanged)
        out["judge"] = judge
    if include_details:
        out["details"] = r.details
    return out


def result_order(scorers: Sequence[str]) -> Callable[[Any], tuple[int, str, int, str]]:
    """Sort key for one row's results: decomposed first, then judges in the run's scorer order; metrics in
    the standard id order. Results are stored as tasks finish, so without this the order of a row's
    results (and of CSV columns) would change from run to run and diffs of two exports would be noise."""
    judges = [s for s in scorers if s.startswith("judge:")]
    metric_rank = {m: i for i, m in enumerate(METRIC_IDS)}

    def key(r: Any) -> tuple[int, str, int, str]:
        method_rank = 0 if r.method == DECOMPOSED else 1 + (judges.index(r.method) if r.method in judges else len(judges))
        return (method_rank, result_method(r), metric_rank.get(r.metric, len(metric_rank)), r.metric)

    return key


def _rows(store: Store, info: RunInfo, include_details: bool, not_kept: NotKept | None = None) -> Iterator[dict[str, Any]]:
    """The export rows in dataset order, each with the sample it scored (kept with the run) and its results in the
    fixed order, streamed from the store (``store.export_rows``): one row in memory at a time. Results of rows the
    run table does not list come last (never expected, never dropped). ``not_kept``: results this session computed
    but the store did not keep, put in their rows (each replacing a stored result of the same metric and method)."""
    order = result_order(info.scorers)
    extra: dict[str, list[MetricResult]] = {}
    for r in not_kept.results() if not_kept is not None else []:
        extra.setdefault(r.sample_id, []).append(r)
    for stored in export_rows.rows_with_results(store, info.id, include_details):
        row: dict[str, Any] = {"id": stored.id, "category": stored.category}
        if stored.sample is not None:  # the row as scored (a run stored before runs kept their rows has none)
            row.update(_sample_keys(stored.sample))
        results = _with_unkept(stored.results, extra.pop(stored.id, []))
        row["results"] = [_result_dict(r, include_details) for r in sorted(results, key=order)]
        yield redact_data(row)
    for sample_id, results in extra.items():  # rows the store's run table does not list either
        yield redact_data({"id": sample_id, "category": None,
                           "results": [_result_dict(r, include_details) for r in sorted(results, key=order)]})


def _with_unkept(stored: Sequence[MetricResult], unkept: Sequence[MetricResult]) -> list[MetricResult]:
    """A row's stored results with those the store did not keep (which replace the same metric and method)."""
    if not unkept:
        return list(stored)
    fresh = {(r.metric, result_method(r)) for r in unkept}
    return [r for r in stored if (r.metric, result_method(r)) not in fresh] + list(unkept)


def kept_block(run_id: str, not_kept: NotKept | None, warnings: Mapping[str, int]) -> dict[str, Any]:
    """``complete`` and, for a run the store did not keep whole, ``not_kept``: what is missing from the store, where
    it is kept and how to resume (extra keys; the rows and summary above cover every computed result)."""
    if not_kept is None:
        return {}
    return {"complete": False, "not_kept": {
        "tasks": len(not_kept.tasks), "results": not_kept.result_count,
        "in_spill_file": not_kept.spilled, "spill_file": not_kept.spill_file,
        "only_in_this_export": len(not_kept.tasks) - not_kept.spilled, "lost_writes": dict(warnings),
        "resume": f"free space, then run the same evaluate command with --resume {run_id}",
    }}


def _sample_keys(sample: Sample) -> dict[str, Any]:
    """A row's texts in the export, under the dataset format's names (extra keys of the contract)."""
    keys = {"question": sample.question, "contexts": list(sample.contexts), "answer": sample.answer,
            "ground_truth": sample.ground_truth, "metadata": dict(sample.metadata)}
    if sample.external_scores:  # another tool's scores the row came with
        keys["external_scores"] = dict(sample.external_scores)
    return keys


def _head(store: Store, run_id: str, not_kept: NotKept | None = None,
          lost: Mapping[str, int] | None = None) -> tuple[Any, dict[str, Any], dict[str, Any]]:
    """The run, the export keys before ``rows`` and those after it (summary and cost streamed from the store;
    with ``not_kept``, the summary covers those results too and ``complete`` says the store lacks them)."""
    from rageval_core.run.persist import merged_summary, stream_cost, stream_summary
    from rageval_core.run.tallies import cost_dict

    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    before = {
        "format_version": FORMAT_VERSION,
        "run_id": info.id,
        "provider": info.provider,
        "model": info.model,
        "base_url": info.base_url,
        "status": info.status,
        **kept_block(info.id, not_kept, lost or info.warnings),
        "created_at": info.created_at,
        "finished_at": info.finished_at,
        "dataset": {"name": info.dataset_name, "hash": info.dataset_hash},
        "scorers": info.scorers,
        "versions": info.versions,
        "settings": info.settings,
    }
    after = {
        "invalid_rows": [
            {"id": m.sample_id, "position": m.position, "error": m.error} for m in store.rows(info.id) if not m.valid
        ],
        "summary": stream_summary(store, info.id) if not_kept is None else merged_summary(store, info.id, not_kept),
        "cost": {k: cost_dict(k, v) for k, v in stream_cost(store, info.id).items()},
        "warnings": dict(lost) if lost else info.warnings,
        **_trust_block(store, info.id),
        **_stability_block(store, info),
    }
    return info, redact_data(before), redact_data(after)


def run_to_dict(store: Store, run_id: str, *, include_details: bool = False, not_kept: NotKept | None = None,
                lost: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The export JSON of one run as a dict (rows in dataset order, results in a fixed order; invalid rows
    listed separately). For large runs write it with ``export_json``, which streams."""
    info, before, after = _head(store, run_id, not_kept, lost)
    return {**before, "rows": list(_rows(store, info, include_details, not_kept)), **after}


def _stability_block(store: Store, info: RunInfo) -> dict[str, Any]:
    """``{"stability": report}`` for a run made with repeats (rows keep repeat 0, as every export does)."""
    if int((info.settings or {}).get("repeats", 1)) < 2:
        return {}
    from rageval_core.analysis.trust.checks import stability_for_run

    return {"stability": stability_for_run(store, info.id).to_dict()}


def _trust_block(store: Store, run_id: str) -> dict[str, Any]:
    """``{"trust": report}`` when a trust report of the run was computed and saved, else nothing."""
    from rageval_core.store.trust_reports import saved_report

    report = saved_report(store, run_id)
    return {} if report is None else {"trust": report}


def export_json(store: Store, run_id: str, path: str | Path, *, include_details: bool = False,
                not_kept: NotKept | None = None, lost: Mapping[str, int] | None = None) -> Path:
    """Write the export JSON row by row (memory stays flat however many rows the run has); ``not_kept`` (and the
    session's lost writes, ``lost``) for a run the store did not keep whole."""
    info, before, after = _head(store, run_id, not_kept, lost)
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)

    def dump(value: Any, indent: int) -> str:
        text = json.dumps(value, ensure_ascii=False, indent=2)
        return text.replace("\n", "\n" + " " * indent)

    with open_private(target, "w") as fh:
        fh.write("{\n")
        for key, value in before.items():
            fh.write(f"  {json.dumps(key)}: {dump(value, 2)},\n")
        fh.write('  "rows": [')
        for i, row in enumerate(_rows(store, info, include_details, not_kept)):
            fh.write(("," if i else "") + "\n    " + dump(row, 4))
        fh.write("\n  ],\n")
        items = list(after.items())
        for i, (key, value) in enumerate(items):
            fh.write(f"  {json.dumps(key)}: {dump(value, 2)}" + (",\n" if i + 1 < len(items) else "\n"))
        fh.write("}\n")
    return target


NOT_KEPT_COLUMN = "not_kept_in_store"  # a partial run's CSV: per row, its results the store lacks (in this file)


def column_name(metric: str, method: str) -> str:
    """CSV column of one metric by one method, e.g. ``decomposed/faithfulness``, ``judge:rubric5/faithfulness``."""
    return f"{method}/{metric}"


def run_to_csv(store: Store, run_id: str, samples: Mapping[str, Sample] | None = None) -> str:
    """One line per sample: id, category, row_error, question, answer, then per metric and method its value,
    ``…/unscored`` and ``…/reason`` columns, so the file reads without the dataset beside it.

    Question and answer are the run's own rows as scored (kept with the run). A run stored before runs kept their
    rows takes them from ``samples`` (id → Sample: the rows found for it, by hash), else leaves those columns empty.
    Cells go through ``csvsafe`` (no formula injection)."""
    return "".join(csv_lines(store, run_id, samples))


def csv_lines(store: Store, run_id: str, samples: Mapping[str, Sample] | None = None,
              not_kept: NotKept | None = None) -> Iterator[str]:
    """``run_to_csv`` a line at a time: the columns come from one query over the run's (method, metric)
    pairs, then the rows are streamed from the store (one row's results in memory at a time)."""
    from rageval_core.run.readback import result_pairs

    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    texts = samples or {}
    order = result_order(info.scorers)
    found = result_pairs(store, info.id)
    if not_kept is not None:  # the columns of results the store did not keep too
        found = list(dict.fromkeys([*found, *((display_method(r.method, judge_of(r.details)), r.metric)
                                              for r in not_kept.results())]))
    pairs = sorted(found, key=lambda p: order(
        SimpleNamespace(method=base_method(p[0]), metric=p[1], details={"judge": p[0].partition("@")[2]})))
    header = ["id", "category", "row_error", "question", "answer"]
    for method, metric in pairs:
        name = column_name(metric, method)
        header += [name, name + "/unscored", name + "/reason"]
    unkept: dict[str, int] = {}
    if not_kept is not None:  # a partial run says so on every row: how many of its results the store lacks
        header.append(NOT_KEPT_COLUMN)
        for res in not_kept.results():
            unkept[res.sample_id] = unkept.get(res.sample_id, 0) + 1
    yield dumps_csv([], header)
    for row in _rows(store, info, False, not_kept):
        cells = {(display_method(r["method"], r.get("judge")), r["metric"]): r for r in row["results"]}
        sample: Any = row if "question" in row else texts.get(str(row["id"]))
        line: list[Any] = [row["id"], row["category"] or "", "", _text(sample, "question"), _text(sample, "answer")]
        for key in pairs:
            r = cells.get(key)
            line += ["" if r is None or r["value"] is None else r["value"], "" if r is None else (r["unscored_reason"] or ""),
                     "" if r is None else (r.get("reason") or "")]
        if not_kept is not None:
            line.append(unkept.get(str(row["id"]), 0))
        yield dumps_csv([line])
    for bad in store.rows(info.id):
        if not bad.valid:
            yield dumps_csv([[redact_data(bad.sample_id), "", redact_data(bad.error) or "invalid", "", ""]
                             + [""] * (3 * len(pairs) + (not_kept is not None))])


def _text(sample: Any, name: str) -> str:  # Any: an export row (a dict) or a Sample
    """A row's text from an export row (a dict) or a ``Sample``; "" without either."""
    if sample is None:
        return ""
    return str(sample[name] if isinstance(sample, dict) else getattr(sample, name))


def export_csv(store: Store, run_id: str, path: str | Path, samples: Mapping[str, Sample] | None = None,
               not_kept: NotKept | None = None) -> Path:
    """Write the wide CSV a line at a time (memory stays flat however many rows the run has)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open_private(target, "w") as fh:
        fh.writelines(csv_lines(store, run_id, samples, not_kept))
    return target


def call_lines(store: Store, run_id: str) -> Iterator[str]:
    """The run's call log as JSON Lines, redacted: the one form the CLI and the UI download both write."""
    for entry in store.iter_calls(run_id):
        yield json.dumps(redact_data(entry.to_dict()), ensure_ascii=False) + "\n"


def export_calls_jsonl(store: Store, run_id: str, path: str | Path) -> Path:
    """The run's call log, one call a line (prompt, response, tokens, cost, latency, cache hit, error)."""
    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open_private(target, "w") as fh:
        fh.writelines(call_lines(store, info.id))
    return target


def named_rows(store: Store, run_id: str, samples: Mapping[str, Sample], naming: str,
               not_kept: NotKept | None = None) -> list[dict[str, Any]]:
    """The run's valid rows in another tool's shape (``naming``: ragas, deepeval or seed): each row the dataset row as
    ``datasets.row_dict`` writes it, then one column per method and metric (``decomposed/faithfulness``,
    ``judge:rubric5/faithfulness``) holding the score, null where unscored. ``samples`` (id → the rows: those the
    run keeps, ``Store.samples``, or ``--data``'s) must hold every row; a ``KeyError`` names one that is missing."""
    from rageval_core.data.datasets import row_dict

    info = store.find_run(run_id)
    if info is None:
        raise KeyError(f"no run {run_id!r}")
    out = []
    for row in _rows(store, info, False, not_kept):
        sample = samples.get(str(row["id"]))
        if sample is None:
            raise KeyError(f"row {row['id']!r} of run {info.id} is not in the dataset given")
        named = row_dict(sample, naming)  # type: ignore[arg-type]
        for r in row["results"]:
            named.setdefault(column_name(r["metric"], display_method(r["method"], r.get("judge"))), r["value"])
        out.append(redact_data(named))
    return out


def export_run_named(store: Store, run_id: str, path: str | Path, samples: Mapping[str, Sample], naming: str,
                     not_kept: NotKept | None = None) -> Path:
    """``named_rows`` written by extension (.json, .jsonl, .csv) in the shape ``naming``'s tool reads back."""
    from rageval_core.data.datasets import dumps_rows, format_of

    target = Path(path)
    data = dumps_rows(named_rows(store, run_id, samples, naming, not_kept), format_of(target), naming)  # type: ignore[arg-type]
    target.parent.mkdir(parents=True, exist_ok=True)
    with open_private(target, "wb") as fh:
        fh.write(data)
    return target


def export_run(store: Store, run_id: str, path: str | Path, *, include_details: bool = False,
               samples: Mapping[str, Sample] | None = None, not_kept: NotKept | None = None,
               lost: Mapping[str, int] | None = None) -> Path:
    """Export by file extension: ``.json`` results, ``.csv`` wide table (texts from ``samples``), ``.jsonl`` call log.
    ``not_kept``: results the store did not keep, exported with the rest (the JSON says ``complete: false``)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return export_json(store, run_id, path, include_details=include_details, not_kept=not_kept, lost=lost)
    if suffix == ".csv":
        return export_csv(store, run_id, path, samples, not_kept)
    if suffix == ".jsonl":
        return export_calls_jsonl(store, run_id, path)
    raise ConfigError(f"unknown export format {suffix!r}: use .json, .csv or .jsonl (call log)")


def export_labelled_dataset(store: Store, samples: Sequence[Sample], dataset_hash: str, path: str | Path) -> Path:
    """Write the dataset with its stored human labels under each row's ``human_labels``.

    Labels live in the store keyed by dataset hash; they enter a dataset file only through this explicit
    export, so loading a dataset never changes its hash.
    """
    from rageval_core.data.datasets import save_dataset

    labels = store.labels(dataset_hash)
    out = []
    for s in samples:
        got = labels.get(s.id)
        if got:
            merged = {**dict(s.metadata.get("human_labels") or {}), **got}
            s = dataclasses.replace(s, metadata={**dict(s.metadata), "human_labels": merged})
        out.append(s)
    return save_dataset(out, path)
