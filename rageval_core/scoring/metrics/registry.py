"""The decomposed metrics by id: descriptions for the UI and ``build_scorers`` for the runner and CLI.

Options (all optional; the same keys may also be set per run in ``EvalContext.options``):

- ``answer_relevancy_n`` (int, default 3) and ``answer_relevancy_calls`` ("one_call" | "per_question")
- ``context_precision_calls`` ("one_call" | "per_chunk")
- ``answer_correctness_weights`` ((factuality, similarity), default (0.75, 0.25))
- ``economy`` (bool): faithfulness and answer correctness share one ``verify_claims_with_reference`` call
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rageval_core.scoring.metrics.answer_correctness import AnswerCorrectness
from rageval_core.scoring.metrics.answer_relevancy import AnswerRelevancy
from rageval_core.scoring.metrics.base import CallEstimate, Scorer
from rageval_core.scoring.metrics.context_precision import ContextPrecision
from rageval_core.scoring.metrics.context_recall import ContextRecall
from rageval_core.scoring.metrics.context_relevance import ContextRelevance
from rageval_core.scoring.metrics.faithfulness import Faithfulness
from rageval_core.core.types import (
    ANSWER_CORRECTNESS,
    ANSWER_RELEVANCY,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
    METRIC_IDS,
    Sample,
)

DECOMPOSED_METRICS: dict[str, str] = {
    FAITHFULNESS: "Share of the answer's claims that the retrieved contexts support (claims extracted, then verified one by one).",
    ANSWER_RELEVANCY: "Mean cosine between the question and questions generated back from the answer; 0 only if all are noncommittal.",
    CONTEXT_PRECISION: "Average precision of the per-chunk usefulness verdicts: useful chunks ranked first score higher.",
    CONTEXT_RECALL: "Share of ground-truth sentences that can be attributed to the retrieved contexts (needs a ground truth).",
    CONTEXT_RELEVANCE: "Sentences needed to answer the question / all context sentences (the RAGAS paper's context relevance).",
    ANSWER_CORRECTNESS: "0.75 x F1 of answer vs ground-truth statements (TP/FP/FN) + 0.25 x embedding similarity (needs a ground truth).",
}

DECOMPOSED_METRICS_JA: dict[str, str] = {
    FAITHFULNESS: "回答の主張のうち、検索コンテキストで裏付けられる割合（主張を抽出し、一つずつ検証）。",
    ANSWER_RELEVANCY: "回答から逆生成した質問と元の質問の平均コサイン類似度。すべて曖昧（noncommittal）なら 0。",
    CONTEXT_PRECISION: "チャンクごとの有用性判定の平均適合率。有用なチャンクが上位にあるほど高い。",
    CONTEXT_RECALL: "模範解答の文のうち、コンテキストに帰属できる割合（模範解答が必要）。",
    CONTEXT_RELEVANCE: "質問に答えるのに必要な文の数 ÷ コンテキストの全文数（RAGAS 論文の context relevance）。",
    ANSWER_CORRECTNESS: "0.75 × 回答と模範解答の主張の F1（TP/FP/FN）+ 0.25 × 埋め込み類似度（模範解答が必要）。",
}

KNOWN_OPTIONS = frozenset(
    {"answer_relevancy_n", "answer_relevancy_calls", "context_precision_calls", "answer_correctness_weights", "economy"}
)


def describe(metric_id: str, language: str = "en") -> str:
    """One-line description of a decomposed metric in English or Japanese."""
    table = DECOMPOSED_METRICS_JA if language == "ja" else DECOMPOSED_METRICS
    return table[metric_id]


def build_scorers(metric_ids: Iterable[str], options: Mapping[str, Any] | None = None) -> list[Scorer]:
    """One scorer per metric id, in the order given (duplicates dropped). Unknown ids or options are errors,
    so a typo fails before any call. Faithfulness and answer correctness share the answer's claims through
    the run's memo; when both are built, answer correctness' estimate does not count the shared calls."""
    opts = dict(options or {})
    unknown_opts = sorted(set(opts) - KNOWN_OPTIONS)
    if unknown_opts:
        raise ValueError(f"unknown metric option(s) {', '.join(unknown_opts)}; known: {', '.join(sorted(KNOWN_OPTIONS))}")
    ids = list(dict.fromkeys(metric_ids))
    unknown = [m for m in ids if m not in DECOMPOSED_METRICS]
    if unknown:
        raise ValueError(f"unknown metric id(s) {', '.join(unknown)}; known: {', '.join(METRIC_IDS)}")
    economy = bool(opts.get("economy", False))
    scorers: list[Scorer] = []
    for metric_id in ids:
        if metric_id == FAITHFULNESS:
            scorers.append(Faithfulness(economy=economy))
        elif metric_id == ANSWER_RELEVANCY:
            scorers.append(
                AnswerRelevancy(n=opts.get("answer_relevancy_n", 3), calls=opts.get("answer_relevancy_calls", "one_call"))
            )
        elif metric_id == CONTEXT_PRECISION:
            scorers.append(ContextPrecision(calls=opts.get("context_precision_calls", "one_call")))
        elif metric_id == CONTEXT_RECALL:
            scorers.append(ContextRecall())
        elif metric_id == CONTEXT_RELEVANCE:
            scorers.append(ContextRelevance())
        elif metric_id == ANSWER_CORRECTNESS:
            scorers.append(
                AnswerCorrectness(
                    weights=opts.get("answer_correctness_weights", (0.75, 0.25)),
                    economy=economy,
                    shares_claims=FAITHFULNESS in ids,
                )
            )
    return scorers


def estimate_row(scorers: Iterable[Scorer], sample: Sample) -> CallEstimate:
    """Expected calls and tokens of these scorers on one row (the runner sums it over rows)."""
    total = CallEstimate()
    for scorer in scorers:
        total = total + scorer.estimate(sample)
    return total
