"""Which rows of a run to show: the filters Compare, Inspect and History share (category, method, score range,
disagreement between the decomposed metrics and a judge, unscored results, labelled or not; and from the rows
themselves, ``row_facts``: the trace's latency, the language, metadata fields such as those a trace import keeps).

Pure functions on the results frame (``compare.results_frame``), so a thousand-row run narrows down the same
way on both pages and in tests, with no Streamlit here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rageval_core.core.text import detect_language
from rageval_core.core.types import DECOMPOSED, Sample

LABEL_MODES = ("all", "labelled", "unlabelled")


@dataclass(frozen=True)
class RowFilter:
    """Empty / default fields filter nothing."""

    categories: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    score_range: tuple[float, float] = (0.0, 1.0)
    min_disagreement: float = 0.0  # keep rows where |decomposed − judge| exceeds this on some criterion
    unscored_only: bool = False
    labels: str = "all"  # "labelled": rows with a human label; "unlabelled": rows without
    latency_ms: tuple[float, float] | None = None  # keep rows whose trace latency (``latency_ms``) is in range
    languages: tuple[str, ...] = ()  # keep rows in one of these languages (``row_facts``)
    metadata: tuple[tuple[str, tuple[str, ...]], ...] = ()  # keep rows whose field has one of the values (as text)

    def active(self) -> bool:
        return self != RowFilter()


def disagreement_by_row(frame: pd.DataFrame, judge: str | None) -> dict[str, float]:
    """Largest |decomposed − judge| per row over the criteria both scored (rows with no shared score absent)."""
    if not judge or frame.empty:
        return {}
    keys = ["sample_id", "metric"]
    a = frame[frame["method"] == DECOMPOSED].dropna(subset=["value"]).drop_duplicates(keys, keep="last")
    b = frame[frame["method"] == judge].dropna(subset=["value"]).drop_duplicates(keys, keep="last")
    both = a[keys + ["value"]].merge(b[keys + ["value"]], on=keys, suffixes=("_a", "_b"))
    if both.empty:
        return {}
    gap = (both["value_a"] - both["value_b"]).abs()
    return {str(k): float(v) for k, v in gap.groupby(both["sample_id"]).max().items()}


def filter_rows(
    frame: pd.DataFrame,
    flt: RowFilter,
    *,
    judge: str | None = None,
    labelled: Collection[str] = (),
    order: list[str] | None = None,
    facts: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """Sample ids that pass every filter, in ``order`` (default: first appearance in the frame).

    ``methods`` narrows which results the score, unscored and disagreement tests look at; a row passes the
    score range when one of those results is scored inside it (the full range [0, 1] tests nothing, so
    unscored rows stay). ``labelled`` is the set of rows with a stored human label.
    """
    ids = order if order is not None else frame["sample_id"].unique().tolist()
    if not flt.active() or frame.empty:
        return list(ids)
    part = frame[frame["method"].isin(flt.methods)] if flt.methods else frame
    keep = set(part["sample_id"])
    if flt.categories:
        wanted = set(flt.categories)
        keep &= {sid for sid, cat in zip(frame["sample_id"], frame["category"]) if category_name(cat) in wanted}
    lo, hi = flt.score_range
    if (lo, hi) != (0.0, 1.0):
        scored = part.dropna(subset=["value"])
        inside = scored[(scored["value"] >= lo - 1e-12) & (scored["value"] <= hi + 1e-12)]
        keep &= set(inside["sample_id"])
    if flt.unscored_only:
        keep &= set(part.loc[part["value"].isna(), "sample_id"])
    if flt.min_disagreement > 0:
        gaps = disagreement_by_row(frame, judge)
        keep &= {sid for sid, gap in gaps.items() if gap > flt.min_disagreement}
    if flt.labels == "labelled":
        keep &= set(labelled)
    elif flt.labels == "unlabelled":
        keep -= set(labelled)
    if flt.latency_ms is not None or flt.languages or flt.metadata:
        facts = facts or {}
        keep = {sid for sid in keep if _facts_pass(facts.get(sid), flt)}
    return [sid for sid in ids if sid in keep]


def _facts_pass(facts: Mapping[str, Any] | None, flt: RowFilter) -> bool:
    """A row's own facts against the latency, language and metadata filters (a row without its facts fails them:
    its texts were not found, so nothing is known of it)."""
    if facts is None:
        return False
    if flt.latency_ms is not None:
        latency = facts.get(LATENCY)
        lo, hi = flt.latency_ms
        if not isinstance(latency, (int, float)) or not lo - 1e-9 <= latency <= hi + 1e-9:
            return False
    if flt.languages and facts.get(LANGUAGE) not in flt.languages:
        return False
    meta = facts.get(METADATA) or {}
    return all(field in meta and meta[field] in values for field, values in flt.metadata)


def category_name(category: object) -> str:
    """A row's category as filters and tables name it: "(none)" for a row without one."""
    return "(none)" if category is None or (isinstance(category, float) and pd.isna(category)) or category == "" else str(category)


def labelled_rows(labels: Mapping[str, Mapping[str, float | None]]) -> set[str]:
    """Rows with at least one 👍 / 👎 (a note alone is not a label)."""
    return {row for row, by in labels.items() if any(v is not None for v in by.values())}


def next_unlabelled(
    order: Sequence[str],
    current: str | None,
    criteria: Mapping[str, Collection[str]],
    labels: Mapping[str, Mapping[str, float | None]],
) -> str | None:
    """The first row after ``current`` in ``order`` (wrapping round, ``current`` itself last) that lacks a 👍 / 👎 on
    one of its ``criteria`` (row id → the criteria it was scored on); None when every row is labelled on all of them.
    Inspect's "next unlabelled row": labelling goes down the list without skipping a row or criterion."""
    if not order:
        return None
    start = order.index(current) + 1 if current in order else 0
    for sid in [*order[start:], *order[:start]]:
        mine = labels.get(sid, {})
        if any(mine.get(c) is None for c in criteria.get(sid, ())):
            return sid
    return None


LATENCY, LANGUAGE, METADATA = "latency_ms", "language", "metadata"
# Metadata a filter offers no choice on: what other filters cover, links, ids, and the trace import's lists.
NOT_FILTERED = {"category", "category_label", "latency_ms", "language", "trace_url", "trace_id", "context_ids",
                "context_scores", "human_labels", "meta"}
MAX_VALUES = 50  # a field with more distinct values (an id, free text) is not offered as a filter


def row_facts(samples: Mapping[str, Sample]) -> dict[str, dict[str, Any]]:
    """Per row what the latency, language and metadata filters read: ``latency_ms`` (a trace's, or None), the
    language (``metadata["language"]`` when given, else detected from question and answer) and the row's scalar
    metadata fields as text."""
    out: dict[str, dict[str, Any]] = {}
    for sid, sample in samples.items():
        meta = sample.metadata
        latency = meta.get(LATENCY)
        given = str(meta.get(LANGUAGE) or "").lower()
        out[sid] = {
            LATENCY: float(latency) if isinstance(latency, (int, float)) and not isinstance(latency, bool) else None,
            LANGUAGE: given or detect_language(f"{sample.question} {sample.answer}"),
            METADATA: {k: _text(v) for k, v in meta.items()
                       if k not in NOT_FILTERED and isinstance(v, (str, int, float, bool)) and v != ""},
        }
    return out


def _text(value: str | int | float | bool) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def fact_options(facts: Mapping[str, Mapping[str, Any]]) -> tuple[tuple[float, float] | None, list[str], dict[str, list[str]]]:
    """What the filters can offer for these rows: the latency range (None: no row has one), the languages, and
    each metadata field with two or more distinct values (at most ``MAX_VALUES``) and its values, sorted."""
    latencies = [f[LATENCY] for f in facts.values() if f.get(LATENCY) is not None]
    span = (min(latencies), max(latencies)) if latencies else None
    languages = sorted({str(f.get(LANGUAGE)) for f in facts.values() if f.get(LANGUAGE)})
    values: dict[str, set[str]] = {}
    for f in facts.values():
        for field, value in (f.get(METADATA) or {}).items():
            values.setdefault(field, set()).add(value)
    fields = {k: sorted(v) for k, v in sorted(values.items()) if 2 <= len(v) <= MAX_VALUES}
    return span, languages, fields
