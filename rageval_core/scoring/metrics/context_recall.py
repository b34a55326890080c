"""Context recall (RAGAS): share of ground-truth sentences that can be attributed to the contexts.

The ground truth is split with the project's splitter (so the denominator does not depend on the judge);
one call attributes every sentence. No ground truth → unscored ``missing_field``.
"""

from __future__ import annotations

from typing import Any

from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.base import CallEstimate, CallTrace, EvalContext
from rageval_core.scoring.metrics.prefix import lead_tokens, repeated
from rageval_core.scoring.metrics.steps import (
    DecomposedScorer,
    Outcome,
    ask_items,
    build_request,
    msg,
    quote,
    require_contexts,
    require_ground_truth,
    required_bit,
    prompt_tokens,
    sample_language,
    text_field,
)
from rageval_core.core.tasks import ATTRIBUTE_REFERENCE
from rageval_core.core.text import split_sentences
from rageval_core.core.types import CONTEXT_RECALL, Sample


class ContextRecall(DecomposedScorer):
    """One call: each ground-truth sentence attributed to the contexts or not."""

    metric = CONTEXT_RECALL

    def compute(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> Outcome:
        require_ground_truth(sample, language, "context recall")
        require_contexts(sample, language)
        contexts = list(sample.contexts)
        sentences = split_sentences(sample.ground_truth or "", language) or [(sample.ground_truth or "").strip()]  # type: ignore[arg-type]
        details["reference_sentences"] = [{"sentence": s} for s in sentences]
        inputs = {"question": sample.question, "contexts": contexts, "reference_sentences": sentences}
        request = build_request(ctx, ATTRIBUTE_REFERENCE, language, inputs, inputs)
        rows = ask_items(ctx, trace, request, details, key="attributions", index_key="sentence_index",
                         expected=len(sentences), what="reference sentences", convert=lambda items: [
                             {"sentence": s, "attributed": required_bit(item, "attributed", ATTRIBUTE_REFERENCE), "reason": text_field(item, "reason")}
                             for s, item in zip(sentences, items, strict=True)
                         ])
        details["reference_sentences"] = rows
        value = scoring.recall([r["attributed"] for r in rows])
        assert value is not None
        return Outcome(value, _summary(language, rows))

    def estimate(self, sample: Sample) -> CallEstimate:
        lang = sample_language(sample)
        tokens = prompt_tokens(ATTRIBUTE_REFERENCE, lang, sample.question, sample.ground_truth, contexts=sample.contexts)
        n = max(1, len(split_sentences(sample.ground_truth or "", lang)))  # type: ignore[arg-type]
        return CallEstimate(llm_calls=1, input_tokens=tokens, output_tokens=30 * n,
                            prompts=repeated(tokens, lead_tokens(ATTRIBUTE_REFERENCE, lang)))


def _summary(language: str, rows: list[dict[str, Any]]) -> str:
    hit = sum(r["attributed"] for r in rows)
    missing = "; ".join(f"「{quote(r['sentence'])}」" if language == "ja" else f'"{quote(r["sentence"])}"'
                        for r in rows if not r["attributed"])
    head = msg(language, f"{hit} of {len(rows)} ground-truth sentences found in the contexts",
               f"模範解答の{len(rows)}文のうち{hit}文がコンテキストに見つかりました")
    return head + (msg(language, f"; not found: {missing}", f"。見つからない文: {missing}") if missing else "")
