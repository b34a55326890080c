"""The metric registry: ids, options, the Scorer protocol and per-row estimates."""

import pytest

from rageval_core.scoring.metrics.base import Scorer
from rageval_core.scoring.metrics.registry import (
    DECOMPOSED_METRICS,
    DECOMPOSED_METRICS_JA,
    build_scorers,
    describe,
    estimate_row,
)
from rageval_core.core.types import METRIC_IDS, SEED_METRICS, Sample

ROW = Sample(
    "1",
    "機械学習における過学習とは何ですか？",
    ("過学習とは、モデルが訓練データに過度に適合する現象です。", "正則化やドロップアウトで防げます。"),
    "過学習は訓練データに過度に適合する現象です。正則化で防げます。",
    "過学習とは訓練データに過度に適合する現象で、正則化で対策できる。",
)


def test_every_metric_id_is_described_in_both_languages():
    assert list(DECOMPOSED_METRICS) == list(METRIC_IDS) and set(DECOMPOSED_METRICS_JA) == set(METRIC_IDS)
    assert "claims" in describe("faithfulness") and "主張" in describe("faithfulness", "ja")


def test_build_scorers_follows_the_protocol_and_order():
    scorers = build_scorers(reversed(METRIC_IDS))
    assert [s.name for s in scorers] == list(reversed(METRIC_IDS))
    for s in scorers:
        assert isinstance(s, Scorer) and s.method == "decomposed" and s.metrics == (s.name,)


def test_unknown_ids_and_options_fail_early():
    with pytest.raises(ValueError, match="faithfulnes"):
        build_scorers(["faithfulnes"])
    with pytest.raises(ValueError, match="answer_relevancy_k"):
        build_scorers(["answer_relevancy"], {"answer_relevancy_k": 3})
    with pytest.raises(ValueError):
        build_scorers(["answer_correctness"], {"answer_correctness_weights": (0, 0)})


def test_options_reach_the_scorers():
    [ar, cp, ac] = build_scorers(
        ["answer_relevancy", "context_precision", "answer_correctness"],
        {"answer_relevancy_n": 5, "answer_relevancy_calls": "per_question", "context_precision_calls": "per_chunk",
         "answer_correctness_weights": (0.5, 0.5)},
    )
    assert (ar.n, ar.calls, cp.calls, ac.weights) == (5, "per_question", "per_chunk", (0.5, 0.5))


def test_estimates_for_the_seed_metrics():
    default = estimate_row(build_scorers(SEED_METRICS), ROW)
    assert (default.llm_calls, default.embedding_calls) == (6, 2)  # RAGAS: 2 + 1 + K + 3 = 8 LLM, 4 embedding
    economy = estimate_row(build_scorers(SEED_METRICS, {"economy": True}), ROW)
    assert (economy.llm_calls, economy.embedding_calls) == (4, 2)
    per_chunk = estimate_row(build_scorers(SEED_METRICS, {"context_precision_calls": "per_chunk"}), ROW)
    assert per_chunk.llm_calls == 7
    alone = estimate_row(build_scorers(["answer_correctness"]), ROW)
    assert alone.llm_calls == 3  # it pays for the answer's claims itself
    assert default.input_tokens > 0 and default.output_tokens > 0
    everything = estimate_row(build_scorers(METRIC_IDS), ROW)
    assert everything.llm_calls == 8


def test_describe_records_settings_for_the_run():
    scorers = build_scorers(METRIC_IDS, {"economy": True, "answer_relevancy_n": 4})
    settings = {s.name: s.describe()["settings"] for s in scorers}
    assert settings["faithfulness"] == {"economy": True}
    assert settings["answer_relevancy"] == {"answer_relevancy_n": 4, "answer_relevancy_calls": "one_call"}
    assert settings["answer_correctness"]["answer_correctness_weights"] == [0.75, 0.25]
    assert settings["context_recall"] == {}


def test_chain_lengths_let_the_runner_start_long_chains_first():
    chains = {s.name: s.chain_length for s in build_scorers(METRIC_IDS)}
    assert chains == {"faithfulness": 2, "answer_relevancy": 1, "context_precision": 1, "context_recall": 1,
                      "context_relevance": 1, "answer_correctness": 3}
    assert build_scorers(["answer_correctness"], {"economy": True})[0].chain_length == 2
