"""Comparison analytics over results: pure functions of MetricResult lists and pandas frames, no I/O.

What the UI and the CLI show side by side: per-row decomposed vs judge values for each shared criterion,
the per-category table of the RAGAS-vs-judge article, agreement statistics per criterion, the rows that disagree most, run A
vs run B deltas, and calls / tokens / cost / latency per method (from the call log).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from rageval_core.analysis.tallies import (  # noqa: F401  (re-exported: the pure, pandas-free part of the analytics)
    HEURISTIC_ONLY_NOTE,
    agreement_note,
    agreement_stats,
)
from rageval_core.run.tallies import COST_KEYS, cost_by_method, cost_by_scorer, cost_dict, method_of_scorer, summarize  # noqa: F401
from rageval_core.core.stats import cohen_kappa, pearson, spearman  # noqa: F401  (re-exported, as before)
from rageval_core.core.types import DECOMPOSED, SEED_METRICS, MetricResult, Usage
from rageval_core.core.method_labels import result_method
from rageval_core.core.versions import version_changes  # noqa: F401  (re-exported: Compare names what changed)

RESULT_COLUMNS = [
    "sample_id",
    "category",
    "metric",
    "method",
    "value",
    "unscored_reason",
    "reason",
    "provider",
    "model",
    "calls",
    "cached_calls",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "latency_s",
]


def cost_table(calls: Iterable[Any]) -> pd.DataFrame:
    """``cost_by_method`` as a frame, one row per method, plus per-call averages."""
    return cost_frame(cost_by_method(calls))


def cost_frame(costs: Mapping[str, Usage]) -> pd.DataFrame:
    """Per-method totals (``cost_by_method`` or ``run_summary.method_costs``) as ``cost_table``'s frame."""
    rows = [cost_dict(method, usage) for method, usage in costs.items()]
    frame = pd.DataFrame(rows, columns=list(COST_KEYS))
    total = frame["calls"] + frame["cached_calls"]
    frame["mean_latency_s"] = (frame["latency_s"] / total.where(total > 0)).astype(float)
    return frame


def cached_input_share(frame: pd.DataFrame) -> tuple[float | None, dict[str, float | None]]:
    """Of a ``cost_frame``: the share of the provider calls' input tokens served from the provider's prompt
    cache, over the run and per method (None where no input tokens were billed)."""
    def share(cached: float, total: float) -> float | None:
        return float(cached) / float(total) if total else None

    if frame.empty:
        return None, {}
    per = {str(r.method): share(r.cached_input_tokens, r.input_tokens) for r in frame.itertuples()}
    return share(frame["cached_input_tokens"].sum(), frame["input_tokens"].sum()), per


# ---- frames --------------------------------------------------------------------------------------------
def results_frame(results: Iterable[MetricResult], categories: Mapping[str, str | None] | None = None) -> pd.DataFrame:
    """One row per result with the columns in ``RESULT_COLUMNS``; ``categories`` maps sample id → category."""
    cats = categories or {}
    rows = [
        {
            "sample_id": r.sample_id,
            "category": cats.get(r.sample_id),
            "metric": r.metric,
            "method": result_method(r),  # judge:rubric5@<judge id> in a run with several judge configurations
            "value": np.nan if r.value is None else float(r.value),
            "unscored_reason": r.unscored_reason,
            "reason": r.reason,
            "provider": r.provider,
            "model": r.model,
            "calls": r.calls,
            "cached_calls": r.cached_calls,
            "input_tokens": r.usage.input_tokens,
            "output_tokens": r.usage.output_tokens,
            "cost_usd": r.cost_usd,
            "latency_s": r.latency_s,
        }
        for r in results
    ]
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame["value"] = frame["value"].astype(float)
    return frame


def first_seen(values: pd.Series) -> list[Any]:
    """The distinct values in the order they first appear (``dict.fromkeys(values.tolist())`` without a Python
    loop over every value: iterating a 100,000-row string column one value at a time takes a second)."""
    return values.unique().tolist()


def _row_order(frame: pd.DataFrame) -> list[str]:
    return first_seen(frame["sample_id"])


def methods_in(frame: pd.DataFrame) -> list[str]:
    """Methods in first-seen order, decomposed first."""
    seen = first_seen(frame["method"])
    return sorted(seen, key=lambda m: (m != DECOMPOSED, seen.index(m)))


def judge_methods(frame: pd.DataFrame) -> list[str]:
    return [m for m in methods_in(frame) if m != DECOMPOSED]


def shared_criteria(frame: pd.DataFrame, method_a: str, method_b: str) -> list[str]:
    """Criteria both methods produced, the article's order first."""
    a = set(frame.loc[frame["method"] == method_a, "metric"].unique())
    b = set(frame.loc[frame["method"] == method_b, "metric"].unique())
    shared = a & b
    seen = first_seen(frame["metric"])
    return sorted(shared, key=lambda m: (SEED_METRICS.index(m) if m in SEED_METRICS else len(SEED_METRICS), seen.index(m)))


def wide(frame: pd.DataFrame) -> pd.DataFrame:
    """Values pivoted to one row per sample and a ``metric|method`` column each (NaN when unscored)."""
    if frame.empty:
        return pd.DataFrame(index=pd.Index([], name="sample_id"))
    table = frame.pivot_table(index="sample_id", columns=["metric", "method"], values="value", aggfunc="mean", dropna=False)
    table.columns = [f"{metric}|{method}" for metric, method in table.columns]
    table = table.reindex(_row_order(frame))
    ordered = sorted(
        table.columns,
        key=lambda c: (
            SEED_METRICS.index(c.split("|")[0]) if c.split("|")[0] in SEED_METRICS else len(SEED_METRICS),
            c.split("|")[0],
            c.split("|")[1] != DECOMPOSED,
            c.split("|")[1],
        ),
    )
    return table[ordered]


def side_by_side(frame: pd.DataFrame, judge: str | None = None, decomposed: str = DECOMPOSED, *,
                 table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per-row table: for each shared criterion the decomposed value, the judge value and their difference.

    Columns: ``sample_id``, ``category``, then ``<metric>|decomposed``, ``<metric>|<judge>``,
    ``<metric>|diff`` (judge − decomposed; NaN when either side is unscored) for each shared criterion.
    ``table`` is ``wide(frame)`` when the caller keeps it (a pivot of every result).
    """
    judge = judge or next(iter(judge_methods(frame)), None)
    out = pd.DataFrame({"sample_id": _row_order(frame)})
    cats = frame.drop_duplicates("sample_id").set_index("sample_id")["category"]
    out["category"] = out["sample_id"].map(cats)
    if judge is None:
        return out
    table = wide(frame) if table is None else table
    for metric in shared_criteria(frame, decomposed, judge):
        a = table[f"{metric}|{decomposed}"].reindex(out["sample_id"]).to_numpy()
        b = table[f"{metric}|{judge}"].reindex(out["sample_id"]).to_numpy()
        out[f"{metric}|{decomposed}"] = a
        out[f"{metric}|{judge}"] = b
        out[f"{metric}|diff"] = b - a
    return out


def category_table(frame: pd.DataFrame, method: str, metrics: Sequence[str] | None = None) -> pd.DataFrame:
    """The RAGAS-vs-judge article's layout for one method: a row per category (first-seen order), a column per criterion.

    Cells are means over scored rows; NaN ("-" in the article) when no row of the category was scored.
    """
    sub = frame[frame["method"] == method]
    metrics = list(metrics) if metrics is not None else _metric_order(sub)
    cats = first_seen(frame["category"].fillna("(none)"))
    sub = sub.assign(category=sub["category"].fillna("(none)"))
    if sub.empty:
        table = sub.pivot_table(index="category", columns="metric", values="value", aggfunc="mean", dropna=False)
    else:  # the same means as pivot_table's, a few times faster: the page draws one table per method and criterion
        table = sub.groupby(["category", "metric"], sort=False)["value"].mean().unstack("metric")
    table = table.reindex(index=cats, columns=metrics)
    table.index.name = "category"
    table.columns.name = None
    return table


def category_comparison(frame: pd.DataFrame, metric: str, methods: Sequence[str] | None = None) -> pd.DataFrame:
    """The RAGAS-vs-judge article's comparison tables: one criterion, a row per category, a column per method."""
    methods = list(methods) if methods is not None else methods_in(frame)
    cols = {m: category_table(frame, m, [metric])[metric] for m in methods}
    table = pd.DataFrame(cols)
    table.index.name = "category"
    return table


def _metric_order(frame: pd.DataFrame) -> list[str]:
    seen = first_seen(frame["metric"])
    return sorted(seen, key=lambda m: (SEED_METRICS.index(m) if m in SEED_METRICS else len(SEED_METRICS), seen.index(m)))


# ---- agreement statistics (the math lives in rageval_core.core.stats; undefined is None there) -------
def agreement(
    frame: pd.DataFrame,
    method_a: str = DECOMPOSED,
    method_b: str | None = None,
    *,
    threshold: float = 0.5,
    table: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Agreement per shared criterion over rows scored by both methods (``table``: ``wide(frame)`` if kept).

    Columns: criterion, n, pearson, spearman, mad (mean absolute difference), kappa (at ``threshold``),
    threshold, unscored_a, unscored_b, note (why a statistic is NaN: n < 2, a constant side, one label).
    """
    method_b = method_b or next(iter(m for m in methods_in(frame) if m != method_a), None)
    columns = ["criterion", "n", "pearson", "spearman", "mad", "kappa", "threshold", "unscored_a", "unscored_b", "note"]
    if method_b is None:
        return pd.DataFrame(columns=columns)
    table = wide(frame) if table is None else table
    rows = []
    for metric in shared_criteria(frame, method_a, method_b):
        a = table[f"{metric}|{method_a}"]
        b = table[f"{metric}|{method_b}"]
        both = a.notna() & b.notna()
        x, y = a[both].to_numpy(), b[both].to_numpy()
        rows.append(
            {
                "criterion": metric,
                **agreement_stats(x, y, threshold, (method_a, method_b)),
                "threshold": threshold,
                "unscored_a": int(a.isna().sum()),
                "unscored_b": int(b.isna().sum()),
            }
        )
    return pd.DataFrame(rows, columns=columns)


def disagreements(
    frame: pd.DataFrame, method_a: str = DECOMPOSED, method_b: str | None = None, *, top: int = 10
) -> pd.DataFrame:
    """The (row, criterion) pairs where the two methods differ most, largest absolute difference first."""
    method_b = method_b or next(iter(m for m in methods_in(frame) if m != method_a), None)
    columns = ["sample_id", "category", "criterion", "value_a", "value_b", "abs_diff",
               *(["reason_a", "reason_b"] if "reason" in frame.columns else [])]  # a page's frame may have no reasons
    if method_b is None:
        return pd.DataFrame(columns=columns)
    criteria = shared_criteria(frame, method_a, method_b)
    last = frame.drop_duplicates(["sample_id", "metric", "method"], keep="last")
    last = last[last["metric"].isin(criteria) & last["value"].notna()]
    reason = ["reason"] if "reason" in frame.columns else []
    side_a = last[last["method"] == method_a][["sample_id", "metric", "category", "value", *reason]]
    side_b = last[last["method"] == method_b][["sample_id", "metric", "value", *reason]]
    out = side_a.merge(side_b, on=["sample_id", "metric"], suffixes=("_a", "_b"))
    # the largest difference first; ties criterion by criterion, rows in dataset order (integer keys from
    # index lookups: a dict lookup per result was most of this on a large run)
    value_a, value_b = out["value_a"].astype(float).to_numpy(), out["value_b"].astype(float).to_numpy()
    abs_diff = np.abs(value_a - value_b)
    crit = pd.Index(criteria).get_indexer(out["metric"])
    row = pd.Index(_row_order(frame)).get_indexer(out["sample_id"])
    pick = np.lexsort((row, crit, -abs_diff))[:top]
    out = out.iloc[pick].rename(columns={"metric": "criterion"}).assign(
        value_a=value_a[pick], value_b=value_b[pick], abs_diff=abs_diff[pick])
    return out[columns].reset_index(drop=True)


def pair_methods(frame_a: pd.DataFrame, frame_b: pd.DataFrame) -> dict[str, str]:
    """Which judge of run B to line up with which judge of run A when their names differ.

    Two runs with different rubrics (``judge:rubric5`` in A, ``judge:binary`` in B) share no method name,
    so a plain comparison would show every row as "only in A" / "only in B". When each run has exactly one
    judge the runs do not share, they are paired: ``{method in B: method in A}``. Ambiguous cases pair
    nothing (pass ``methods`` to ``run_delta`` explicitly).
    """
    ja, jb = set(judge_methods(frame_a)), set(judge_methods(frame_b))
    only_a, only_b = sorted(ja - jb), sorted(jb - ja)
    if len(only_a) == 1 and len(only_b) == 1:
        return {only_b[0]: only_a[0]}
    return {}


def run_delta(
    frame_a: pd.DataFrame,
    frame_b: pd.DataFrame,
    *,
    changed_only: bool = False,
    tol: float = 1e-9,
    methods: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Run A vs run B per (row, metric, method): both values, delta (B − A) and whether anything changed.

    A row counts as changed when the values differ by more than ``tol`` or it is scored on one side
    only or its unscored reason changed; rows present in one run only are changed too (``present`` says
    "both", "A" or "B") unless their (metric, method) is one only that run computed at all: a judge only run A
    had is one difference (``one_sided``), not a change on every row. ``methods`` maps a
    method of B onto a method of A (see ``pair_methods``): those results are compared with each other,
    ``method`` shows A's name and ``method_b`` B's. ``reason_a`` / ``reason_b`` are there when both frames have
    reasons (the pages' frames leave them out).
    """
    keys = ["sample_id", "metric", "method"]
    mapping = dict(methods or {})
    reason = ["reason"] if "reason" in frame_a.columns and "reason" in frame_b.columns else []
    a = frame_a[keys + ["category", "value", "unscored_reason", *reason]].drop_duplicates(keys, keep="last")
    b = frame_b[keys + ["category", "value", "unscored_reason", *reason]].drop_duplicates(keys, keep="last")
    b = b.assign(method_b=b["method"], method=b["method"].replace(mapping) if mapping else b["method"])
    merged = a.merge(b, on=keys, how="outer", suffixes=("_a", "_b"), indicator=True)
    merged["method_b"] = merged["method_b"].where(merged["method_b"].notna(), merged["method"])
    merged["category"] = merged["category_a"].combine_first(merged["category_b"])
    merged["delta"] = merged["value_b"] - merged["value_a"]
    scored_a, scored_b = merged["value_a"].notna(), merged["value_b"].notna()
    value_changed = (scored_a & scored_b) & (merged["delta"].abs() > tol)
    status_changed = scored_a != scored_b
    reason_changed = (~scored_a & ~scored_b) & (
        merged["unscored_reason_a"].fillna("") != merged["unscored_reason_b"].fillna("")
    )
    # A (metric, method) only one run computed is not a change of each of its rows: ``one_sided`` lists it once.
    pairs = lambda f: pd.MultiIndex.from_frame(f[["metric", "method"]].drop_duplicates())  # noqa: E731 - a few pairs
    in_both = pd.MultiIndex.from_frame(merged[["metric", "method"]]).isin(pairs(a).intersection(pairs(b)))
    merged["changed"] = (value_changed | status_changed | reason_changed | (merged["_merge"] != "both")) & in_both
    merged["present"] = merged["_merge"].map({"both": "both", "left_only": "A", "right_only": "B"}).astype(str)
    # rows in dataset order (A's, then B's own), each row's results by metric and method: sorted on integer
    # codes (a stable lexsort), not on 200,000 strings or a dict lookup per result
    rows = pd.Index(first_seen(pd.concat([frame_a["sample_id"], frame_b["sample_id"]])))
    codes = [pd.factorize(merged[c], sort=True)[0] for c in ("method", "metric")]
    merged = merged.iloc[np.lexsort((*codes, rows.get_indexer(merged["sample_id"])))]
    out = merged[
        keys
        + ["method_b", "category", "value_a", "value_b", "delta", "unscored_reason_a", "unscored_reason_b",
           *(["reason_a", "reason_b"] if reason else []), "present", "changed"]
    ].reset_index(drop=True)
    return out[out["changed"]].reset_index(drop=True) if changed_only else out


def summary_delta(frame_a: pd.DataFrame, frame_b: pd.DataFrame, *, methods: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Mean per (metric, method) in A and B, the difference, and how many rows changed."""
    return delta_summary(run_delta(frame_a, frame_b, methods=methods))


def delta_summary(delta: pd.DataFrame) -> pd.DataFrame:
    """``summary_delta`` of an already computed ``run_delta`` (all rows, not ``changed_only``)."""
    rows = []
    for (metric, method, method_b), group in delta.groupby(["metric", "method", "method_b"], sort=False):
        rows.append(
            {
                "metric": metric,
                "method": method if method == method_b else f"{method} → {method_b}",
                "mean_a": float(group["value_a"].mean()) if group["value_a"].notna().any() else math.nan,
                "mean_b": float(group["value_b"].mean()) if group["value_b"].notna().any() else math.nan,
                "unscored_a": int(group["unscored_reason_a"].notna().sum()),
                "unscored_b": int(group["unscored_reason_b"].notna().sum()),
                "changed_rows": int(group["changed"].sum()),
            }
        )
    out = pd.DataFrame(
        rows, columns=["metric", "method", "mean_a", "mean_b", "unscored_a", "unscored_b", "changed_rows"]
    )
    out["delta"] = out["mean_b"] - out["mean_a"]
    return out


def one_sided(frame_a: pd.DataFrame, frame_b: pd.DataFrame, methods: Mapping[str, str] | None = None) -> tuple[list[str], list[str]]:
    """``metric/method`` pairs only run A computed and only run B computed (after ``methods`` pairing)."""
    mapping = dict(methods or {})
    pairs = lambda f: f[["metric", "method"]].drop_duplicates().itertuples(index=False)  # noqa: E731 - few pairs
    pa = {(m, meth) for m, meth in pairs(frame_a)}
    pb = {(m, mapping.get(meth, meth)) for m, meth in pairs(frame_b)}
    fmt = lambda pairs: [f"{m} ({meth})" for m, meth in sorted(pairs)]  # noqa: E731
    return fmt(pa - pb), fmt(pb - pa)


def heuristic_only(frame: pd.DataFrame, method_a: str, method_b: str) -> bool:
    """True when every result of both methods was computed by the offline provider: their agreement is the
    heuristic agreeing with itself (context precision 1.000, binary and binary-strict identical)."""
    part = frame[frame["method"].isin([method_a, method_b])]
    if part.empty or set(part["method"].unique()) != {method_a, method_b}:  # not a Python set of every value
        return False
    return bool((part["provider"] == "offline").all())
