"""Claim extraction shared within a run, and the economy-mode verification shared by two metrics.

Faithfulness and answer correctness both need the answer's claims. The first scorer to ask extracts
them (one call) through ``ctx.memo``; the second reuses them and records the call as shared instead of
counting it again. Failures are memoised too, so both metrics report the same reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rageval_core.core.messages import say
from rageval_core.scoring.metrics.base import CallTrace, EvalContext
from rageval_core.scoring.metrics.steps import (
    Unscorable,
    align,
    as_index,
    ask_checked,
    build_request,
    field_list,
    required_bit,
    text_field,
)
from rageval_core.core.tasks import EXTRACT_CLAIMS, VERIFY_CLAIMS_WITH_REFERENCE
from rageval_core.core.text import split_sentences
from rageval_core.core.types import ClaimVerdict, Sample, Unscored


@dataclass
class Shared:
    """A memoised step: its value (or the failure) and the calls it cost."""

    value: Any
    error: Unscorable | None
    calls: list[CallTrace]


def _shared_step(ctx: EvalContext, key: tuple, compute, trace: list[CallTrace], details: dict[str, Any], label: str) -> Any:
    """Run ``compute(trace)`` once per key in the run. The scorer that ran it gets the calls in its
    trace (counted); a later scorer gets them in ``details["shared_calls"]`` (not counted twice)."""
    owner = False

    def run() -> Shared:
        nonlocal owner
        owner = True
        calls: list[CallTrace] = []
        try:
            return Shared(compute(calls), None, calls)
        except Unscorable as exc:
            return Shared(None, exc, calls)

    shared: Shared = ctx.memo.get_or_compute(key, run)
    if owner:
        trace.extend(shared.calls)
    else:
        details.setdefault("shared_calls", []).extend({"step": label, **c.to_dict()} for c in shared.calls)
        details.setdefault("shared_steps", []).append(label)
    if shared.error is not None:
        raise Unscorable(shared.error.reason, shared.error.message, raw=shared.error.raw)
    return shared.value


def _extract(ctx: EvalContext, calls: list[CallTrace], question: str, text: str, language: str) -> list[str]:
    request = build_request(
        ctx, EXTRACT_CLAIMS, language, {"question": question, "answer": text}, {"question": question, "answer": text}
    )

    def read(data: dict[str, Any], raw: str | None) -> list[str]:
        out = []
        for claim in field_list(data, "claims", EXTRACT_CLAIMS, raw):
            if isinstance(claim, dict):  # models without structured output often wrap each claim in an object
                claim = next((claim[k] for k in _CLAIM_KEYS if isinstance(claim.get(k), str)), claim)
            if not isinstance(claim, str):
                raise Unscorable(Unscored.PARSE_ERROR, f"{EXTRACT_CLAIMS}: claims must be strings", raw=raw)
            if claim.strip():
                out.append(claim.strip())
        return out

    return ask_checked(ctx, calls, request, read)


_CLAIM_KEYS = ("claim", "statement", "text")


def answer_claims(sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]) -> list[str]:
    """The answer's claims, extracted once per run and shared (key: question, answer, language)."""
    key = ("claims", "answer", language, sample.question, sample.answer)
    return _shared_step(
        ctx, key, lambda calls: _extract(ctx, calls, sample.question, sample.answer, language), trace, details, "answer_claims"
    )


def reference_claims(sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]) -> list[str]:
    """The ground truth's claims (answer correctness), extracted once per run."""
    assert sample.ground_truth is not None
    key = ("claims", "reference", language, sample.question, sample.ground_truth)
    return _shared_step(
        ctx,
        key,
        lambda calls: _extract(ctx, calls, sample.question, sample.ground_truth or "", language),
        trace,
        details,
        "reference_claims",
    )


def reference_sentences(sample: Sample, language: str) -> list[str]:
    """The ground truth split by the project's splitter: economy mode's reference claims (no call)."""
    return split_sentences(sample.ground_truth or "", language)  # type: ignore[arg-type]


@dataclass
class EconomyVerdicts:
    """One ``verify_claims_with_reference`` call: claims checked against contexts and reference at once."""

    claims: list[ClaimVerdict]
    reference_verdicts: list[int]
    reference_reasons: list[str | None]
    reference_claims: list[str]
    missing_reference: list[int]


def verdict_from_item(claim: str, item: dict[str, Any], n_contexts: int, task: str) -> ClaimVerdict:
    """A ClaimVerdict from one judge item; an out-of-range context index is dropped, not trusted."""
    context_index = as_index(item.get("context_index"))
    if context_index is not None and not 0 <= context_index < n_contexts:
        context_index = None
    return ClaimVerdict(
        claim=claim,
        verdict=required_bit(item, "verdict", task),
        reason=text_field(item, "reason"),
        context_index=context_index,
        supporting_sentence=text_field(item, "supporting_sentence"),
        support=_support(item.get("support")),
    )


def _support(value: Any) -> float | None:
    """An optional graded support in [0, 1]; anything else (a bool, text, out of range) is ignored."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    return v if 0.0 <= v <= 1.0 else None


def economy_verdicts(
    sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
) -> EconomyVerdicts:
    """Economy mode: the answer's claims verified against the contexts and the ground truth in one
    call shared by faithfulness and answer correctness (reference claims = ground-truth sentences)."""
    claims = answer_claims(sample, ctx, language, trace, details)
    if not claims:
        raise Unscorable(Unscored.NO_CLAIMS, say("claims.none"))
    ref_claims = reference_sentences(sample, language)
    if not ref_claims:
        raise Unscorable(Unscored.MISSING_FIELD, say("claims.no_reference"))
    contexts = list(sample.contexts)

    def compute(calls: list[CallTrace]) -> EconomyVerdicts:
        values = {"contexts": contexts, "reference": sample.ground_truth, "claims": claims, "reference_claims": ref_claims}
        inputs = {**values, "question": sample.question}  # extra: the offline heuristic exempts names the question uses

        def read(data: dict[str, Any], raw: str | None) -> EconomyVerdicts:
            items, note = align(field_list(data, "verdicts", VERIFY_CLAIMS_WITH_REFERENCE, raw), "claim_index", len(claims),
                                VERIFY_CLAIMS_WITH_REFERENCE, "claims")
            verdicts = [verdict_from_item(c, dict(item), len(contexts), VERIFY_CLAIMS_WITH_REFERENCE) for c, item in zip(claims, items, strict=True)]
            ref_bits = [required_bit(item, "reference_verdict", VERIFY_CLAIMS_WITH_REFERENCE) for item in items]
            missing_raw = data.get("missing_reference_claims", [])
            if not isinstance(missing_raw, list):
                raise Unscorable(Unscored.PARSE_ERROR, f"{VERIFY_CLAIMS_WITH_REFERENCE}: missing_reference_claims must be a list", raw=raw)
            missing = sorted({i for i in (as_index(v) for v in missing_raw) if i is not None and 0 <= i < len(ref_claims)})
            if note:
                details["index_note"] = note
            return EconomyVerdicts(verdicts, ref_bits, [text_field(i, "reason") for i in items], ref_claims, missing)

        return ask_checked(ctx, calls, build_request(ctx, VERIFY_CLAIMS_WITH_REFERENCE, language, inputs, values), read)

    key = ("economy_verdicts", language, sample.question, sample.answer, sample.ground_truth, tuple(contexts))
    return _shared_step(ctx, key, compute, trace, details, "verify_claims_with_reference")
