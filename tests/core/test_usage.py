"""One ``Usage`` type: it adds up, serialises one completion as before, and is what every tally of calls holds
(the estimate, the live counters and progress, a run's totals and its cost per method or scorer, the report's cost
per judge, a provider stack's meter)."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from rageval_core.core.types import MetricResult, Usage

ROOT = Path(__file__).resolve().parents[2]


def test_usages_add_up_with_plus_sum_and_total() -> None:
    a = Usage(100, 10, 40, calls=1, cost_usd=0.25, latency_s=0.5)
    b = Usage(50, 5, cached_calls=1, errors=2, embedding_calls=3, cache_write_tokens=7, latency_s=0.25)
    both = Usage(150, 15, 40, 7, calls=1, cached_calls=1, errors=2, embedding_calls=3, cost_usd=0.25, latency_s=0.75)
    assert a + b == both and sum([a, b]) == both and Usage.total([a, b]) == both
    assert Usage.total([]) == Usage() and sum([], Usage()) == Usage()
    assert both.tokens == 165 and a.cached_share == pytest.approx(0.4) and Usage(errors=1).cached_share is None
    with pytest.raises(TypeError):
        a + 1  # type: ignore[operator]


def test_a_usage_is_a_value() -> None:
    u = Usage(1, 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        u.input_tokens = 3  # type: ignore[misc]
    assert hash(u) == hash(Usage(1, 2)) and {u: 1}[Usage(1, 2)] == 1


def test_one_completion_serialises_as_it_always_has_and_a_tally_adds_what_it_counted() -> None:
    assert Usage(12, 3).to_dict() == {"input_tokens": 12, "output_tokens": 3, "cached_input_tokens": 0}
    tally = Usage(12, 3, calls=2, cost_usd=0.5, cache_write_tokens=4)
    assert tally.to_dict() == {"input_tokens": 12, "output_tokens": 3, "cached_input_tokens": 0, "cache_write_tokens": 4,
                               "calls": 2, "cost_usd": 0.5}
    assert Usage.from_dict(tally.to_dict()) == tally
    assert Usage.from_dict({"input_tokens": 1, "a_key_from_a_newer_version": 9, "calls": None}) == Usage(1)
    result = MetricResult("1", "faithfulness", "decomposed", 1.0, usage=Usage(5, 6, 1))
    assert result.to_dict()["usage"] == {"input_tokens": 5, "output_tokens": 6, "cached_input_tokens": 1}
    assert MetricResult.from_dict(result.to_dict()) == result


def test_tallies_of_calls_are_usages() -> None:
    from rageval_core.analysis.judge_agreement import cost_per_judge
    from rageval_core.run.tallies import COST_KEYS, cost_by_method, cost_dict
    from rageval_core.scoring.metrics.base import CallEstimate

    calls = [
        {"scorer": "faithfulness", "method": "decomposed", "usage": {"input_tokens": 100, "output_tokens": 10,
                                                                     "cached_input_tokens": 60}, "cost_usd": 0.01,
         "latency_s": 0.2, "cached": False, "error": None},
        {"scorer": "faithfulness", "method": "decomposed", "usage": Usage(100, 10), "cost_usd": 0.0, "latency_s": 0.0,
         "cached": True, "error": None},
        {"scorer": "judge:rubric5", "method": "judge:rubric5", "usage": None, "cost_usd": 0.0, "latency_s": 0.0,
         "cached": False, "error": "timeout"},
    ]
    by = cost_by_method(calls)
    assert by == {"decomposed": Usage(100, 10, 60, calls=1, cached_calls=1, cost_usd=0.01, latency_s=0.2),
                  "judge:rubric5": Usage(errors=1)}
    # the export's keys and their order (README: export JSON keys are never renamed)
    assert COST_KEYS == ("method", "calls", "cached_calls", "errors", "input_tokens", "output_tokens", "cost_usd",
                         "latency_s", "cached_input_tokens")
    assert list(cost_dict("decomposed", by["decomposed"])) == list(COST_KEYS)
    assert cost_dict("x", Usage(10, cache_write_tokens=4))["cache_write_tokens"] == 4
    report = cost_per_judge(calls, n_rows=2).set_index("judge")
    assert report["calls"].sum() == 1 and report["cached_calls"].sum() == 1 and report["errors"].sum() == 1
    assert report["cached_share"].dropna().tolist() == [pytest.approx(0.6)]
    estimate = CallEstimate(llm_calls=1, input_tokens=900, output_tokens=60) + CallEstimate(embedding_calls=1)
    assert estimate.usage == Usage(900, 60, calls=1, embedding_calls=1)
    assert (estimate.llm_calls, estimate.embedding_calls, estimate.input_tokens) == (1, 1, 900)


def test_no_other_class_declares_token_counts() -> None:
    """A tally of tokens is a ``Usage``: a record of one call, a result, a run, an estimate or a progress snapshot
    holds one (``usage: Usage``) instead of fields of its own."""
    found = []
    for package in ("rageval_core", "rageval_ui"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ClassDef) and node.name != "Usage":
                    for item in node.body:
                        if (isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
                                and item.target.id in ("input_tokens", "output_tokens", "cached_input_tokens")):
                            found.append(f"{path.relative_to(ROOT)}: {node.name}.{item.target.id}")
    assert not found, found
