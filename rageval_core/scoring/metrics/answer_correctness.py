"""Answer correctness (RAGAS): factual F1 of the answer against the ground truth, blended with semantic
similarity: w_f · F1 + w_s · cos(answer, ground truth), 0.75 / 0.25 by default.

Default: the answer's claims (shared with faithfulness), the ground truth's claims (one call), one
TP / FP / FN classification call and one embedding request. Economy mode: the ground truth's sentences
are its claims and the classification comes from the one ``verify_claims_with_reference`` call shared
with faithfulness (TP = answer claims the reference supports, FP = the others, FN = reference claims
the judge lists as missing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.base import CallEstimate, CallTrace, EvalContext
from rageval_core.scoring.metrics.claims import (
    answer_claims,
    economy_verdicts,
    reference_claims,
)
from rageval_core.scoring.metrics.offline_checks import check_answer
from rageval_core.scoring.metrics.prefix import lead_tokens, repeated
from rageval_core.scoring.metrics.steps import (
    DecomposedScorer,
    Outcome,
    Unscorable,
    approx_tokens,
    ask_checked,
    build_request,
    embed,
    field_list,
    msg,
    no_answer_claims,
    option,
    quote,
    require_answer,
    require_ground_truth,
    sample_language,
    template_tokens,
)
from rageval_core.core.tasks import (
    CLASSIFY_CORRECTNESS,
    EXTRACT_CLAIMS,
    VERIFY_CLAIMS_WITH_REFERENCE,
)
from rageval_core.core.types import ANSWER_CORRECTNESS, Sample, Unscored


class AnswerCorrectness(DecomposedScorer):
    """``weights`` = (factuality, similarity), normalised by their sum; ``economy`` shares one
    verification call with faithfulness."""

    metric = ANSWER_CORRECTNESS

    def __init__(
        self,
        *,
        weights: Sequence[float] = scoring.DEFAULT_CORRECTNESS_WEIGHTS,
        economy: bool = False,
        shares_claims: bool = False,
    ) -> None:
        self.weights = scoring.check_weights(weights)
        self.economy = economy
        # Set by build_scorers when faithfulness runs too: the answer's claims (and in economy mode the
        # verification call) are then paid for once, by faithfulness. Only affects estimate().
        self.shares_claims = shares_claims

    @property
    def chain_length(self) -> int:
        return 2 if self.economy else 3  # answer claims, reference claims, classification

    def settings(self) -> dict[str, Any]:
        return {"answer_correctness_weights": list(self.weights), "economy": self.economy}

    def compute(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> Outcome:
        require_answer(sample, language)
        require_ground_truth(sample, language, "answer correctness")
        check_answer(sample, ctx, language)
        weights = option(ctx, "answer_correctness_weights", self.weights, scoring.check_weights)
        economy = bool(option(ctx, "economy", self.economy))
        details.update({"mode": "economy" if economy else "default", "weights": list(weights)})
        if economy:
            tp, fp, fn = self._economy(sample, ctx, language, trace, details)
        else:
            tp, fp, fn = self._classify(sample, ctx, language, trace, details)
        details.update({"TP": tp, "FP": fp, "FN": fn})
        f1 = scoring.f1(len(tp), len(fp), len(fn))
        if f1 is None:
            raise Unscorable(Unscored.NO_CLAIMS, msg(language, "the judge classified no statements", "分類された主張がありません"))
        vectors = embed(ctx, [sample.answer, sample.ground_truth or ""], details)
        similarity = scoring.cosine(vectors[0], vectors[1])
        value = scoring.answer_correctness(f1, similarity, weights)
        details.update({"f1": round(f1, 4), "similarity": round(similarity, 4)})
        return Outcome(value, _summary(language, tp, fp, fn, f1, similarity, weights))

    def _classify(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> tuple[list[dict], list[dict], list[dict]]:
        claims = answer_claims(sample, ctx, language, trace, details)
        details["answer_claims"] = claims
        if not claims:
            raise no_answer_claims(language)
        ref_claims = reference_claims(sample, ctx, language, trace, details)
        details["reference_claims"] = ref_claims
        if not ref_claims:
            raise Unscorable(Unscored.NO_CLAIMS, msg(language, "no claims could be extracted from the ground truth",
                                                      "模範解答から主張を抽出できませんでした"))
        inputs = {"question": sample.question, "answer_claims": claims, "reference_claims": ref_claims}

        def read(data: dict[str, Any], raw: str | None) -> list[list[dict[str, Any]]]:
            lists = []
            for key in ("TP", "FP", "FN"):
                items = []
                for item in field_list(data, key, CLASSIFY_CORRECTNESS, raw):
                    if isinstance(item, str):
                        item = {"statement": item, "reason": None}
                    if not isinstance(item, dict) or not isinstance(item.get("statement"), str):
                        raise Unscorable(Unscored.PARSE_ERROR, f"{CLASSIFY_CORRECTNESS}: {key} items need a statement", raw=raw)
                    items.append({"statement": item["statement"], "reason": item.get("reason")})
                lists.append(items)
            return lists

        lists = ask_checked(ctx, trace, build_request(ctx, CLASSIFY_CORRECTNESS, language, inputs, inputs), read)
        if len(lists[0]) + len(lists[1]) != len(claims):
            details["count_note"] = (
                f"TP + FP = {len(lists[0]) + len(lists[1])} statements for {len(claims)} answer claims (judge's counts used, as RAGAS does)"
            )
        return lists[0], lists[1], lists[2]

    def _economy(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> tuple[list[dict], list[dict], list[dict]]:
        shared = economy_verdicts(sample, ctx, language, trace, details)
        details["answer_claims"] = [v.claim for v in shared.claims]
        details["reference_claims"] = shared.reference_claims
        tp: list[dict[str, Any]] = []
        fp: list[dict[str, Any]] = []
        for verdict, ref_bit, reason in zip(shared.claims, shared.reference_verdicts, shared.reference_reasons, strict=True):
            (tp if ref_bit else fp).append({"statement": verdict.claim, "reason": reason})
        fn = [{"statement": shared.reference_claims[i], "reason": None} for i in shared.missing_reference]
        return tp, fp, fn

    def estimate(self, sample: Sample) -> CallEstimate:
        """Default: answer claims, reference claims, classification (the answer's claims are shared with
        faithfulness, but this scorer starts first, so it makes and counts that call); economy: nothing beyond
        the call faithfulness shares. One embedding request either way; nothing without a ground truth."""
        if not (sample.ground_truth or "").strip():
            return CallEstimate()  # unscored missing_field before any call
        lang = sample_language(sample)
        answer, ref = approx_tokens(sample.answer or ""), approx_tokens(sample.ground_truth or "")
        question = approx_tokens(sample.question or "")
        own_in = template_tokens(EXTRACT_CLAIMS, lang) + question + answer
        own_extract = CallEstimate(llm_calls=1, input_tokens=own_in, output_tokens=answer,
                                   prompts=repeated(own_in, lead_tokens(EXTRACT_CLAIMS, lang)))
        if self.economy:
            if self.shares_claims:
                return CallEstimate(embedding_calls=1)
            ctx_tokens = sum(approx_tokens(c) for c in sample.contexts)
            verify_in = template_tokens(VERIFY_CLAIMS_WITH_REFERENCE, lang) + ctx_tokens + 2 * ref + answer
            verify = CallEstimate(llm_calls=1, input_tokens=verify_in, output_tokens=60 * 3,
                                  prompts=repeated(verify_in, lead_tokens(VERIFY_CLAIMS_WITH_REFERENCE, lang)))
            return own_extract + verify + CallEstimate(embedding_calls=1)
        ref_in = template_tokens(EXTRACT_CLAIMS, lang) + question + ref
        extract_ref = CallEstimate(llm_calls=1, input_tokens=ref_in, output_tokens=ref,
                                   prompts=repeated(ref_in, lead_tokens(EXTRACT_CLAIMS, lang)))
        classify_in = template_tokens(CLASSIFY_CORRECTNESS, lang) + question + answer + ref
        classify = CallEstimate(
            llm_calls=1, embedding_calls=1, input_tokens=classify_in, output_tokens=2 * (answer + ref),
            prompts=repeated(classify_in, lead_tokens(CLASSIFY_CORRECTNESS, lang)),
        )
        return own_extract + extract_ref + classify


def _summary(language: str, tp: list, fp: list, fn: list, f1: float, similarity: float, weights: tuple[float, float]) -> str:
    wf, ws = weights[0] / sum(weights), weights[1] / sum(weights)
    head = msg(language,
               f"TP {len(tp)}, FP {len(fp)}, FN {len(fn)} → F1 {f1:.2f}; similarity {similarity:.2f}; {wf:.2f}·F1 + {ws:.2f}·sim",
               f"TP {len(tp)}・FP {len(fp)}・FN {len(fn)} → F1 {f1:.2f}、意味的類似度 {similarity:.2f}、{wf:.2f}·F1 + {ws:.2f}·類似度")
    if fp:
        head += msg(language, f"; not in the ground truth: \"{quote(fp[0]['statement'])}\"", f"。模範解答にない主張: 「{quote(fp[0]['statement'])}」")
    if fn:
        head += msg(language, f"; missing: \"{quote(fn[0]['statement'])}\"", f"。欠けている情報: 「{quote(fn[0]['statement'])}」")
    return head
