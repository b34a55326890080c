"""Their score vs ours: another tool's earlier scores (``Sample.external_scores``, e.g. a ragas results CSV's
``faithfulness`` column) beside the scores this run computed, row by row, with their agreement.

Why: a team moving from ragas (or DeepEval) wants to know whether our numbers tell the same story as the ones
they already have before trusting either. Their score comes from the file, labelled with its source tool and
column; it is never one of our methods and never enters our aggregates. Pure functions of a results frame and the
run's samples (the page, the CLI and the report read the same ``TheirsVsOurs``).

Matching: a column is compared with the metric of ours that measures the same thing, by name
(``METRIC_ALIASES``; ``pairs`` overrides or adds a match). A column with no such metric, or whose metric this run
did not compute, is listed as unmatched with the reason.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from rageval_core.analysis.compare import first_seen, methods_in, wide
from rageval_core.analysis.tallies import agreement_stats
from rageval_core.core.stats import mean_difference, pass_agreement
from rageval_core.core.types import DECOMPOSED, SEED_METRICS, Sample

# (source tool, its metric name normalised by ``_normal``) -> our metric id. Only names that measure the same thing
# on the same inputs: ragas's non-LLM precision / recall compare against reference contexts, its factual_correctness
# is a claim F1 without the similarity term, and Phoenix's evals are labels (hallucination is faithfulness upside
# down); those stay unmatched unless the user pairs them (``pairs``).
METRIC_ALIASES: dict[tuple[str, str], str] = {
    ("ragas", "faithfulness"): "faithfulness",
    ("ragas", "answer_relevancy"): "answer_relevancy",
    ("ragas", "response_relevancy"): "answer_relevancy",
    ("ragas", "context_precision"): "context_precision",
    ("ragas", "llm_context_precision_with_reference"): "context_precision",
    ("ragas", "llm_context_precision_without_reference"): "context_precision",
    ("ragas", "context_recall"): "context_recall",
    ("ragas", "llm_context_recall"): "context_recall",
    ("ragas", "context_relevance"): "context_relevance",
    ("ragas", "answer_correctness"): "answer_correctness",
    ("deepeval", "faithfulness"): "faithfulness",
    ("deepeval", "answer_relevancy"): "answer_relevancy",
    ("deepeval", "contextual_precision"): "context_precision",
    ("deepeval", "contextual_recall"): "context_recall",
    ("deepeval", "contextual_relevancy"): "context_relevance",
}

NO_METRIC = "no_metric"  # no metric of ours measures what the column does
NOT_IN_RUN = "not_in_run"  # we have that metric, but this run did not compute it
NEVER = ""  # a ``pairs`` value that keeps a column out of the comparison

AGREEMENT_COLUMNS = ["source", "column", "metric", "method", "n", "pearson", "spearman", "mad", "mean_diff", "agree",
                     "kappa", "threshold", "unscored_theirs", "unscored_ours", "note"]
ROW_COLUMNS = ["sample_id", "category", "theirs", "ours", "diff", "abs_diff"]


@dataclass(frozen=True)
class Column:
    """One external score column: ``key`` as the row keeps it (``ragas:faithfulness``), its source tool and
    column name, the metric of ours it is compared with (None: unmatched, ``why`` says why), and how many of the
    run's rows carry it and how many of those the tool scored."""

    key: str
    source: str
    column: str
    metric: str | None
    why: str | None
    rows: int
    scored: int


@dataclass(frozen=True)
class TheirsVsOurs:
    """What Compare's "their score vs ours" view shows. ``agreement``: one line per matched column and method of
    ours that computed its metric (``mean_diff`` and ``diff`` are ours − theirs; ``agree`` the share of rows both
    put on the same side of ``threshold``)."""

    columns: list[Column]
    methods: list[str]
    agreement: pd.DataFrame
    threshold: float
    _theirs: pd.DataFrame = field(repr=False)  # sample_id index, one column per key
    _ours: pd.DataFrame = field(repr=False)  # ``wide(frame)``
    _categories: pd.Series = field(repr=False)
    _pairs: frozenset[tuple[str, str]] = field(repr=False, default=frozenset())  # (metric, method) the run computed

    @property
    def matched(self) -> list[Column]:
        return [c for c in self.columns if c.metric is not None]

    @property
    def unmatched(self) -> list[Column]:
        return [c for c in self.columns if c.metric is None]

    def methods_for(self, column: Column) -> list[str]:
        """Our methods that computed ``column``'s metric (decomposed first)."""
        return [m for m in self.methods if (column.metric, m) in self._pairs]  # ``wide`` has every metric × method

    def rows(self, column: Column, method: str) -> pd.DataFrame:
        """Their score beside ours on each row, the rows where they disagree most first (rows either side left
        unscored last, in dataset order)."""
        if column.metric is None or (column.metric, method) not in self._pairs:
            return pd.DataFrame(columns=ROW_COLUMNS)
        ids = self._theirs.index[self._theirs[f"has:{column.key}"].to_numpy(bool)]  # the rows that carry it
        theirs = self._theirs.loc[ids, column.key].astype(float)
        ours = self._ours[f"{column.metric}|{method}"].reindex(ids).astype(float)
        out = pd.DataFrame({"sample_id": list(ids), "category": self._categories.reindex(ids).to_numpy(),
                            "theirs": theirs.to_numpy(), "ours": ours.to_numpy()})
        out["diff"] = out["ours"] - out["theirs"]
        out["abs_diff"] = out["diff"].abs()
        order = np.lexsort((np.arange(len(out)), -out["abs_diff"].fillna(-1.0).to_numpy()))
        return out.iloc[order].reset_index(drop=True)[ROW_COLUMNS]


def has_external_scores(samples: Mapping[str, Sample]) -> bool:
    """Whether any row carries another tool's scores (the view is offered only then)."""
    return any(s.external_scores for s in samples.values())


def _normal(name: str) -> str:
    """A tool's metric name as the alias table spells it: lower case, words joined by "_", no mode suffix
    (``factual_correctness(mode=f1)``), so DeepEval's "Contextual Precision" finds ``contextual_precision``."""
    base = name.strip().split("(", 1)[0]
    return re.sub(r"[\s\-]+", "_", base.strip().lower())


def split_key(key: str) -> tuple[str, str]:
    """``("ragas", "faithfulness")`` of ``ragas:faithfulness`` (a key with no source: ``("", key)``)."""
    source, sep, column = key.partition(":")
    return (source, column) if sep else ("", key)


def our_metric(source: str, column: str) -> str | None:
    """The metric of ours a tool's column measures the same thing as, or None."""
    return METRIC_ALIASES.get((source.lower(), _normal(column)))


def theirs_vs_ours(frame: pd.DataFrame, samples: Mapping[str, Sample], *, pairs: Mapping[str, str] | None = None,
                   threshold: float = 0.5) -> TheirsVsOurs:
    """The view over the rows of ``frame`` (``compare.results_frame`` columns; a filtered page's frame keeps its
    rows only). ``pairs``: key -> our metric id, overriding the alias table (``NEVER`` leaves the column out)."""
    order = first_seen(frame["sample_id"]) if not frame.empty else []
    keys: dict[str, None] = {}
    for sid in order:
        sample = samples.get(sid)
        if sample is not None:
            keys.update(dict.fromkeys(sample.external_scores))
    values: dict[str, list[Any]] = {}
    for key in keys:
        got = [samples[sid].external_scores.get(key) if sid in samples else None for sid in order]
        values[key] = [math.nan if v is None else float(v) for v in got]
        values[f"has:{key}"] = [sid in samples and key in samples[sid].external_scores for sid in order]
    theirs = pd.DataFrame(values, index=pd.Index(order, name="sample_id"))
    ours = wide(frame)
    computed = set(frame["metric"].unique()) if not frame.empty else set()
    columns = [_column(key, theirs, computed, pairs or {}) for key in keys]
    columns.sort(key=lambda c: (c.metric is None, _metric_rank(c.metric or ""), c.source, c.column))
    methods = methods_in(frame) if not frame.empty else []
    categories = frame.drop_duplicates("sample_id").set_index("sample_id")["category"] if not frame.empty else pd.Series(dtype=object)
    pairs_run = frozenset(frame[["metric", "method"]].drop_duplicates().itertuples(index=False, name=None))
    view = TheirsVsOurs(columns, methods, pd.DataFrame(columns=AGREEMENT_COLUMNS), threshold, theirs, ours, categories,
                        pairs_run)
    lines = [_agreement_line(view, c, m) for c in view.matched for m in view.methods_for(c)]
    return dataclasses.replace(view, agreement=pd.DataFrame(lines, columns=AGREEMENT_COLUMNS))


def _metric_rank(metric: str) -> int:
    return SEED_METRICS.index(metric) if metric in SEED_METRICS else len(SEED_METRICS)


def _column(key: str, theirs: pd.DataFrame, computed: set[str], pairs: Mapping[str, str]) -> Column:
    source, name = split_key(key)
    metric = pairs[key] if key in pairs else our_metric(source, name)
    carried = theirs[f"has:{key}"]
    rows, scored = int(carried.sum()), int(theirs[key][carried].notna().sum())
    if not metric:
        return Column(key, source, name, None, NO_METRIC, rows, scored)
    if metric not in computed:
        return Column(key, source, name, None, NOT_IN_RUN + ":" + metric, rows, scored)
    return Column(key, source, name, metric, None, rows, scored)


def _agreement_line(view: TheirsVsOurs, column: Column, method: str) -> dict[str, Any]:
    rows = view.rows(column, method)
    both = rows.dropna(subset=["theirs", "ours"])
    x, y = both["theirs"].to_numpy(), both["ours"].to_numpy()
    stats = agreement_stats(x, y, view.threshold, (f"{column.source} {column.column}", method))
    return {
        "source": column.source, "column": column.column, "metric": column.metric, "method": method, **stats,
        "mean_diff": _nan(mean_difference(x, y)), "agree": _nan(pass_agreement(x, y, view.threshold)),
        "threshold": view.threshold, "unscored_theirs": int(rows["theirs"].isna().sum()),
        "unscored_ours": int(rows["ours"].isna().sum()),
    }


def _nan(value: float | None) -> float:
    return math.nan if value is None else value


def unmatched_reason(column: Column) -> tuple[str, str | None]:
    """(``NO_METRIC`` or ``NOT_IN_RUN``, the metric of ours for the latter) of an unmatched column."""
    why = column.why or NO_METRIC
    kind, _, metric = why.partition(":")
    return kind, metric or None


def default_method(methods: Sequence[str]) -> str | None:
    """The method of ours to show first: decomposed (ragas's metrics are decomposed too), else the first."""
    return DECOMPOSED if DECOMPOSED in methods else (methods[0] if methods else None)
