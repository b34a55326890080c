"""Rows filtered by what they are (issue 38 item 9): the trace's latency, the language and metadata fields
(``row_filter.row_facts``), and a leaderboard line recomputed on the rows a filter leaves (``leaderboard.on_rows``)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from rageval_core.analysis.leaderboard import LeaderRow, leaderboard_frame, on_rows
from rageval_core.analysis.row_filter import RowFilter, fact_options, filter_rows, row_facts
from rageval_core.core.types import Sample
from rageval_core.store.runs import RunInfo

SAMPLES = {
    "t1": Sample("t1", "What is RAG?", ("RAG retrieves.",), "It retrieves documents.", None,
                 {"trace_id": "t1", "latency_ms": 120.0, "env": "prod", "tier": 1, "cached": True, "trace_url": "x"}),
    "t2": Sample("t2", "過学習とは何ですか？", ("過学習は…",), "訓練データに過度に適合することです。", None,
                 {"trace_id": "t2", "latency_ms": 2400.0, "env": "staging", "tier": 2, "cached": False}),
    "t3": Sample("t3", "Who invented backprop?", ("…",), "Rumelhart et al.", None,
                 {"trace_id": "t3", "latency_ms": 900, "env": "prod", "tier": 1, "language": "ja"}),  # as the data says
    "n4": Sample("n4", "No trace here?", ("…",), "None.", None, {"category": "misc"}),
}
FRAME = pd.DataFrame({
    "sample_id": ["t1", "t1", "t2", "t2", "t3", "t3", "n4", "n4"],
    "category": [None] * 8,
    "metric": ["faithfulness", "answer_relevancy"] * 4,
    "method": ["decomposed"] * 8,
    "value": [0.9, 0.8, 0.2, math.nan, 0.6, 0.7, 1.0, 1.0],
    "unscored_reason": [None, None, None, "parse_error", None, None, None, None],
})


def test_facts_of_each_row() -> None:
    facts = row_facts(SAMPLES)
    assert facts["t1"] == {"latency_ms": 120.0, "language": "en", "metadata": {"env": "prod", "tier": "1", "cached": "true"}}
    assert facts["t2"]["language"] == "ja" and facts["t3"]["language"] == "ja"  # detected; given
    assert facts["t3"]["latency_ms"] == 900.0 and facts["n4"]["latency_ms"] is None
    assert "category" not in facts["n4"]["metadata"] and "trace_url" not in facts["t1"]["metadata"]
    span, languages, fields = fact_options(facts)
    assert span == (120.0, 2400.0) and languages == ["en", "ja"]
    assert fields == {"cached": ["false", "true"], "env": ["prod", "staging"], "tier": ["1", "2"]}


@pytest.mark.parametrize(("flt", "kept"), [
    (RowFilter(latency_ms=(100.0, 1000.0)), ["t1", "t3"]),  # n4 has no latency: out once the range is set
    (RowFilter(languages=("ja",)), ["t2", "t3"]),
    (RowFilter(metadata=(("env", ("prod",)),)), ["t1", "t3"]),
    (RowFilter(metadata=(("env", ("prod", "staging")), ("tier", ("2",)))), ["t2"]),
    (RowFilter(languages=("en",), score_range=(0.85, 1.0)), ["t1", "n4"]),
    (RowFilter(latency_ms=(0.0, 5000.0), score_range=(0.0, 0.5)), ["t2"]),
])
def test_filters_on_the_rows_facts(flt: RowFilter, kept: list[str]) -> None:
    assert flt.active()
    assert filter_rows(FRAME, flt, facts=row_facts(SAMPLES)) == kept


def test_a_row_whose_texts_are_not_found_fails_the_fact_filters() -> None:
    facts = row_facts({k: v for k, v in SAMPLES.items() if k != "t1"})
    assert filter_rows(FRAME, RowFilter(languages=("en",)), facts=facts) == ["n4"]
    assert filter_rows(FRAME, RowFilter(languages=("en",)), facts=None) == []


def test_a_leaderboard_line_on_the_rows_a_filter_leaves() -> None:
    info = RunInfo("r1", 0.0, "done", "d", "h", ["faithfulness"], {}, "offline", None, None, {}, n_rows=4)
    whole = LeaderRow(info, ["offline/x"], {"decomposed/faithfulness": 0.675}, scored=7, unscored=1, calls=8, cost_usd=0.5)
    keep = filter_rows(FRAME, RowFilter(languages=("ja",)), facts=row_facts(SAMPLES))
    line = on_rows(whole, FRAME[FRAME["sample_id"].isin(keep)])
    assert line.means == {"decomposed/faithfulness": pytest.approx(0.4), "decomposed/answer_relevancy": pytest.approx(0.7)}
    assert (line.scored, line.unscored, line.rows_kept, line.calls) == (3, 1, 2, 8)
    row = leaderboard_frame([line]).iloc[0]
    assert row["rows"] == 2 and row["unscored share"] == pytest.approx(0.25)
    empty = on_rows(whole, FRAME.iloc[0:0])
    assert (empty.means, empty.rows_kept) == ({}, 0)
