"""Faithfulness: share of the answer's claims that the retrieved contexts support (RAGAS F = |V| / |S|).

When the judge grades every claim (``support`` in [0, 1], as the offline heuristic does), the value is
the length-weighted mean of those supports instead: a 0/1 share throws away how close each claim came,
which made the offline metric near chance on paraphrase-heavy data (bench/trust.py).

Two calls per row: claims from the answer (shared with answer correctness), then every claim verified
against all contexts in one call, each with verdict, reason, supporting context index and sentence.
Economy mode with a ground truth uses the one call it shares with answer correctness instead.
"""

from __future__ import annotations

from typing import Any

from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.base import CallEstimate, CallTrace, EvalContext
from rageval_core.scoring.metrics.claims import (
    answer_claims,
    economy_verdicts,
    verdict_from_item,
)
from rageval_core.scoring.metrics.offline_checks import check_answer
from rageval_core.scoring.metrics.prefix import lead_tokens, repeated
from rageval_core.scoring.metrics.steps import (
    DecomposedScorer,
    Outcome,
    approx_tokens,
    ask_items,
    build_request,
    msg,
    no_answer_claims,
    option,
    prompt_tokens,
    quote,
    require_answer,
    require_contexts,
    sample_language,
)
from rageval_core.core.tasks import (
    EXTRACT_CLAIMS,
    VERIFY_CLAIMS,
    VERIFY_CLAIMS_WITH_REFERENCE,
)
from rageval_core.core.text import split_sentences
from rageval_core.core.types import FAITHFULNESS, ClaimVerdict, Sample


class Faithfulness(DecomposedScorer):
    """Claims extracted once, verified against all contexts in one call; ``economy`` shares one call
    with answer correctness when the row has a ground truth."""

    metric = FAITHFULNESS

    def __init__(self, *, economy: bool = False, extraction_shared: bool = False) -> None:
        self.economy = economy
        # Answer correctness is in the run too (default mode): on a row with a ground truth it starts first
        # (longer chain) and makes the shared claim extraction, so its estimate counts that call, not this one.
        self.extraction_shared = extraction_shared

    @property
    def chain_length(self) -> int:
        return 2  # extract, then verify

    def settings(self) -> dict[str, Any]:
        return {"economy": self.economy}

    def compute(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> Outcome:
        require_answer(sample, language)
        require_contexts(sample, language)
        contexts = list(sample.contexts)
        check_answer(sample, ctx, language)
        economy = bool(option(ctx, "economy", self.economy)) and bool((sample.ground_truth or "").strip())
        details["mode"] = "economy" if economy else "default"
        if economy:
            verdicts = economy_verdicts(sample, ctx, language, trace, details).claims
            details["claims"] = [v.to_dict() for v in verdicts]
        else:
            claims = answer_claims(sample, ctx, language, trace, details)
            details["claims"] = [{"claim": c} for c in claims]
            if not claims:
                raise no_answer_claims(language)
            verdicts = self._verify(ctx, language, sample.question, contexts, claims, trace, details)
            details["claims"] = [v.to_dict() for v in verdicts]
        graded = all(v.support is not None for v in verdicts)
        if graded:
            # The judge graded each claim (the offline heuristic does): weight claims by length.
            value = scoring.graded_faithfulness([float(v.support) for v in verdicts], [max(1, len(v.claim)) for v in verdicts])  # type: ignore[arg-type]
            details["aggregation"] = "graded: length-weighted mean of claim support"
        else:
            value = scoring.faithfulness([v.verdict or 0 for v in verdicts])
            details["aggregation"] = "share of supported claims"
        assert value is not None
        return Outcome(value, _summary(language, verdicts, value if graded else None))

    def _verify(
        self, ctx: EvalContext, language: str, question: str, contexts: list[str], claims: list[str],
        trace: list[CallTrace], details: dict[str, Any],
    ) -> list[ClaimVerdict]:
        values = {"contexts": contexts, "claims": claims}
        # "question" is extra to the task's inputs: the offline heuristic exempts names the question uses.
        inputs = {**values, "question": question}
        request = build_request(ctx, VERIFY_CLAIMS, language, inputs, values)
        return ask_items(
            ctx, trace, request, details, key="verdicts", index_key="claim_index", expected=len(claims), what="claims",
            convert=lambda items: [verdict_from_item(c, dict(item), len(contexts), VERIFY_CLAIMS) for c, item in zip(claims, items, strict=True)],
        )

    def estimate(self, sample: Sample) -> CallEstimate:
        """Two calls: extract and verify; the extraction is counted by answer correctness when it shares it on
        this row (it starts first, so the run logs the call under it)."""
        lang = sample_language(sample)
        answer = approx_tokens(sample.answer or "")
        extract_in = prompt_tokens(EXTRACT_CLAIMS, lang, sample.question, sample.answer)
        economy = self.economy and bool((sample.ground_truth or "").strip())
        verify_task = VERIFY_CLAIMS_WITH_REFERENCE if economy else VERIFY_CLAIMS
        verify_in = prompt_tokens(verify_task, lang, sample.answer, contexts=sample.contexts)
        if economy:
            verify_in += 2 * approx_tokens(sample.ground_truth or "")
        n_claims = max(1, len(split_sentences(sample.answer or "", lang)))  # type: ignore[arg-type]
        if self.extraction_shared and not self.economy and (sample.ground_truth or "").strip():
            return CallEstimate(llm_calls=1, input_tokens=verify_in, output_tokens=60 * n_claims,
                                prompts=repeated(verify_in, lead_tokens(verify_task, lang)))
        return CallEstimate(llm_calls=2, input_tokens=extract_in + verify_in, output_tokens=answer + 60 * n_claims,
                            prompts=repeated(extract_in, lead_tokens(EXTRACT_CLAIMS, lang))
                            + repeated(verify_in, lead_tokens(verify_task, lang)))


def _summary(language: str, verdicts: list[ClaimVerdict], graded: float | None = None) -> str:
    supported = sum(1 for v in verdicts if v.verdict == 1)
    unsupported = [quote(v.claim) for v in verdicts if v.verdict != 1]
    head = msg(language, f"{supported} of {len(verdicts)} claims supported", f"{len(verdicts)}件の主張のうち{supported}件がコンテキストで裏付けられました")
    if graded is not None:
        head += msg(language, f"; graded support {graded:.2f} (length-weighted mean over claims)",
                    f"（段階的な支持度の文字数加重平均 {graded:.2f}）")
    if not unsupported:
        return head
    tail = "; ".join(f"「{c}」" if language == "ja" else f'"{c}"' for c in unsupported[:3])
    more = f" (+{len(unsupported) - 3})" if len(unsupported) > 3 else ""
    return head + msg(language, f"; unsupported: {tail}{more}", f"。裏付けなし: {tail}{more}")
