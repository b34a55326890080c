"""The decomposed metrics by id: descriptions for the UI and ``build_scorers`` for the runner and CLI.

Options (all optional; the same keys may also be set per run in ``EvalContext.options``):

- ``answer_relevancy_n`` (int, default 3) and ``answer_relevancy_calls`` ("one_call" | "per_question")
- ``context_precision_calls`` ("one_call" | "per_chunk")
- ``answer_correctness_weights`` ((factuality, similarity), default (0.75, 0.25))
- ``economy`` (bool): faithfulness and answer correctness share one ``verify_claims_with_reference`` call
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rageval_core.scoring.metrics.answer_correctness import AnswerCorrectness
from rageval_core.scoring.metrics.answer_relevancy import AnswerRelevancy
from rageval_core.scoring.metrics.base import CallEstimate, Scorer
from rageval_core.scoring.metrics.context_precision import ContextPrecision
from rageval_core.scoring.metrics.context_recall import ContextRecall
from rageval_core.scoring.metrics.context_relevance import ContextRelevance
from rageval_core.scoring.metrics.faithfulness import Faithfulness
from rageval_core.scoring.metrics.steps import DecomposedScorer
from rageval_core.core.types import ANSWER_CORRECTNESS, FAITHFULNESS, METRIC_IDS, Sample
from rageval_core.core.errors import ConfigError


@dataclass(frozen=True)
class _Metric:
    """One decomposed metric: its scorer class (which holds the id), descriptions, and how options build it."""

    scorer: type[DecomposedScorer]
    en: str
    ja: str
    build: Callable[[Mapping[str, Any], bool, Sequence[str]], Scorer]  # (options, economy, every id asked for)


# The one table of decomposed metrics, in the order of ``METRIC_IDS``.
_METRICS: tuple[_Metric, ...] = (
    _Metric(Faithfulness,
            "Share of the answer's claims that the retrieved contexts support (claims extracted, then verified one by one).",
            "回答の主張のうち、検索コンテキストで裏付けられる割合（主張を抽出し、一つずつ検証）。",
            lambda opts, economy, ids: Faithfulness(economy=economy, extraction_shared=ANSWER_CORRECTNESS in ids)),
    _Metric(AnswerRelevancy,
            "Mean cosine between the question and questions generated back from the answer; 0 only if all are noncommittal.",
            "回答から逆生成した質問と元の質問の平均コサイン類似度。すべて曖昧（noncommittal）なら 0。",
            lambda opts, economy, ids: AnswerRelevancy(n=opts.get("answer_relevancy_n", 3),
                                                       calls=opts.get("answer_relevancy_calls", "one_call"))),
    _Metric(ContextPrecision,
            "Average precision of the per-chunk usefulness verdicts: useful chunks ranked first score higher.",
            "チャンクごとの有用性判定の平均適合率。有用なチャンクが上位にあるほど高い。",
            lambda opts, economy, ids: ContextPrecision(calls=opts.get("context_precision_calls", "one_call"))),
    _Metric(ContextRecall,
            "Share of ground-truth sentences that can be attributed to the retrieved contexts (needs a ground truth).",
            "模範解答の文のうち、コンテキストに帰属できる割合（模範解答が必要）。",
            lambda opts, economy, ids: ContextRecall()),
    _Metric(ContextRelevance,
            "Sentences needed to answer the question / all context sentences (the RAGAS paper's context relevance).",
            "質問に答えるのに必要な文の数 ÷ コンテキストの全文数（RAGAS 論文の context relevance）。",
            lambda opts, economy, ids: ContextRelevance()),
    _Metric(AnswerCorrectness,
            "0.75 x F1 of answer vs ground-truth statements (TP/FP/FN) + 0.25 x embedding similarity (needs a ground truth).",
            "0.75 × 回答と模範解答の主張の F1（TP/FP/FN）+ 0.25 × 埋め込み類似度（模範解答が必要）。",
            lambda opts, economy, ids: AnswerCorrectness(weights=opts.get("answer_correctness_weights", (0.75, 0.25)),
                                                         economy=economy, shares_claims=FAITHFULNESS in ids)),
)
_BY_ID: dict[str, _Metric] = {m.scorer.metric: m for m in _METRICS}
assert tuple(_BY_ID) == METRIC_IDS, "the decomposed metrics table must list every standard metric id, in order"

DECOMPOSED_METRICS: dict[str, str] = {mid: m.en for mid, m in _BY_ID.items()}
DECOMPOSED_METRICS_JA: dict[str, str] = {mid: m.ja for mid, m in _BY_ID.items()}

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
        raise ConfigError(f"unknown metric option(s) {', '.join(unknown_opts)}; known: {', '.join(sorted(KNOWN_OPTIONS))}")
    ids = list(dict.fromkeys(metric_ids))
    unknown = [m for m in ids if m not in DECOMPOSED_METRICS]
    if unknown:
        raise ConfigError(f"unknown metric id(s) {', '.join(unknown)}; known: {', '.join(METRIC_IDS)}")
    economy = bool(opts.get("economy", False))
    return [_BY_ID[metric_id].build(opts, economy, ids) for metric_id in ids]


def estimate_row(scorers: Iterable[Scorer], sample: Sample) -> CallEstimate:
    """Expected calls and tokens of these scorers on one row (the runner sums it over rows)."""
    total = CallEstimate()
    for scorer in scorers:
        total = total + scorer.estimate(sample)
    return total
