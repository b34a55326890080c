"""Context precision (RAGAS): a usefulness verdict per retrieved chunk, then average precision.

The reference is the ground truth, or the answer when the row has none (recorded as reference_kind).
All chunks are judged in one call by default, or one call per chunk as an option. Score =
Σ_k (P@k · v_k) / Σ_k v_k in retrieval order; no useful chunk scores 0.
"""

from __future__ import annotations

from typing import Any

from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.base import CallEstimate, CallTrace, EvalContext
from rageval_core.scoring.metrics.prefix import lead_tokens, repeated
from rageval_core.scoring.metrics.steps import (
    DecomposedScorer,
    Outcome,
    Unscorable,
    approx_tokens,
    ask_items,
    build_request,
    msg,
    mode_checker,
    option,
    prompt_tokens,
    require_contexts,
    require_question,
    required_bit,
    sample_language,
    text_field,
)
from rageval_core.core.tasks import CONTEXT_VERDICTS
from rageval_core.core.types import CONTEXT_PRECISION, Sample, Unscored

ONE_CALL = "one_call"
PER_CHUNK = "per_chunk"
MODES = (ONE_CALL, PER_CHUNK)


check_mode = mode_checker("context precision calls", MODES)


class ContextPrecision(DecomposedScorer):
    """``calls="one_call"`` judges all chunks at once (default); ``"per_chunk"`` sends one request per
    chunk as RAGAS does."""

    metric = CONTEXT_PRECISION

    def __init__(self, *, calls: str = ONE_CALL) -> None:
        self.calls = check_mode(calls)

    @property
    def chain_length(self) -> int:
        # per_chunk sends the row's K calls in turn; K is per row, so a typical 2 stands in for ordering
        return 1 if self.calls == ONE_CALL else 2

    def settings(self) -> dict[str, Any]:
        return {"context_precision_calls": self.calls}

    def compute(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> Outcome:
        require_contexts(sample, language)
        require_question(sample, language)
        contexts = list(sample.contexts)
        reference, kind = _reference(sample)
        if reference is None:
            raise Unscorable(Unscored.EMPTY_ANSWER, msg(language, "no ground truth and the answer is empty",
                                                         "模範解答がなく、回答も空です"))
        mode = option(ctx, "context_precision_calls", self.calls, check_mode)
        details.update({"mode": mode, "reference_kind": kind})
        if mode == ONE_CALL:
            verdicts = self._judge(ctx, sample, language, contexts, reference, kind, trace, details)
        else:
            verdicts = []
            for i, chunk in enumerate(contexts):
                one = self._judge(ctx, sample, language, [chunk], reference, kind, trace, details)[0]
                one["context_index"] = i
                verdicts.append(one)
        bits = [v["useful"] for v in verdicts]
        details["verdicts"] = verdicts
        details["precision_at_k"] = [round(p, 4) for p in scoring.precision_at_k(bits)]
        value = scoring.average_precision(bits)
        return Outcome(value, _summary(language, bits))

    def _judge(
        self, ctx: EvalContext, sample: Sample, language: str, contexts: list[str], reference: str, kind: str,
        trace: list[CallTrace], details: dict[str, Any],
    ) -> list[dict[str, Any]]:
        inputs = {"question": sample.question, "contexts": contexts, "reference": reference, "reference_kind": kind}
        request = build_request(ctx, CONTEXT_VERDICTS, language, inputs, inputs)
        return ask_items(ctx, trace, request, details, key="verdicts", index_key="context_index", expected=len(contexts),
                         what="contexts", convert=lambda items: [
                             {"context_index": i, "useful": required_bit(item, "useful", CONTEXT_VERDICTS), "reason": text_field(item, "reason")}
                             for i, item in enumerate(items)
                         ])

    def estimate(self, sample: Sample) -> CallEstimate:
        lang = sample_language(sample)
        ref, _ = _reference(sample)
        k = max(1, len(sample.contexts))
        fixed = prompt_tokens(CONTEXT_VERDICTS, lang, sample.question, ref)
        ctx_tokens = sum(approx_tokens(c) for c in sample.contexts)
        calls = 1 if self.calls == ONE_CALL else k
        lead = lead_tokens(CONTEXT_VERDICTS, lang)
        if calls == 1:
            prompts = repeated(fixed + ctx_tokens, lead)
        else:  # one chunk a call: each prompt holds another chunk, so only the lead is shared
            prompts = tuple(p for c in sample.contexts for p in repeated(fixed + approx_tokens(c), lead)) or repeated(fixed, lead)
        return CallEstimate(llm_calls=calls, input_tokens=calls * fixed + ctx_tokens, output_tokens=30 * k, prompts=prompts)


def _reference(sample: Sample) -> tuple[str | None, str]:
    """Ground truth when present, else the answer (RAGAS's reference-free variant)."""
    if (sample.ground_truth or "").strip():
        return sample.ground_truth, "ground_truth"
    if (sample.answer or "").strip():
        return sample.answer, "answer"
    return None, "answer"


def _summary(language: str, bits: list[int]) -> str:
    useful = [str(i) for i, b in enumerate(bits) if b]
    ranks = ", ".join(useful) if useful else "-"
    return msg(language, f"{len(useful)} of {len(bits)} chunks useful (useful ranks, 0-based: {ranks})",
               f"{len(bits)}件のチャンクのうち{len(useful)}件が有用（有用な順位、0始まり: {ranks}）")
