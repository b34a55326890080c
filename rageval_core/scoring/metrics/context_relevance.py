"""Context relevance, the RAGAS paper's version: needed sentences / all context sentences.

One call extracts the sentences needed to answer the question; both counts use the project's sentence
splitter (the extracted text is split the same way, extra extractions are capped at the total). Each
extracted sentence is kept with whether it was found verbatim in the contexts, so a paraphrasing judge
is visible in the inspector; text that did not come from the contexts at all (under half its character
trigrams found there) is kept but not counted.
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
    ask_checked,
    build_request,
    context_sentences,
    field_list,
    msg,
    prompt_tokens,
    require_question,
    sample_language,
)
from rageval_core.core.tasks import EXTRACT_RELEVANT_SENTENCES
from rageval_core.core.text import char_ngrams, normalize, split_sentences
from rageval_core.core.types import CONTEXT_RELEVANCE, Sample, Unscored


class ContextRelevance(DecomposedScorer):
    """One call: sentences needed to answer, extracted from the contexts."""

    metric = CONTEXT_RELEVANCE

    def compute(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> Outcome:
        contexts = list(sample.contexts)
        all_sentences = context_sentences(contexts, language)
        if not all_sentences:
            raise Unscorable(Unscored.MISSING_FIELD, msg(language, "the row has no contexts", "コンテキストがありません"))
        require_question(sample, language)
        values = {"question": sample.question, "contexts": contexts}
        # "answer" is extra to the task's inputs (the prompt asks about the question only, as in the paper):
        # the offline heuristic, which cannot read, also counts context sentences the answer reuses.
        inputs = {**values, "answer": sample.answer}

        def read(data: dict[str, Any], raw: str | None) -> list[str]:
            extracted: list[str] = []
            for item in field_list(data, "sentences", EXTRACT_RELEVANT_SENTENCES, raw):
                if not isinstance(item, str):
                    raise Unscorable(Unscored.PARSE_ERROR, f"{EXTRACT_RELEVANT_SENTENCES}: sentences must be strings", raw=raw)
                for piece in split_sentences(item, language):  # type: ignore[arg-type]
                    if piece not in extracted:
                        extracted.append(piece)
            return extracted

        extracted = ask_checked(ctx, trace, build_request(ctx, EXTRACT_RELEVANT_SENTENCES, language, inputs, values), read)
        rows = [_match(s, contexts) for s in extracted]
        details["extracted_sentences"] = rows
        details["context_sentence_count"] = len(all_sentences)
        value = scoring.context_relevance(sum(r["counted"] for r in rows), len(all_sentences))
        assert value is not None
        return Outcome(value, _summary(language, rows, len(all_sentences)))

    def estimate(self, sample: Sample) -> CallEstimate:
        lang = sample_language(sample)
        ctx_tokens = sum(approx_tokens(c) for c in sample.contexts)
        tokens = prompt_tokens(EXTRACT_RELEVANT_SENTENCES, lang, sample.question) + ctx_tokens
        return CallEstimate(llm_calls=1, input_tokens=tokens, output_tokens=max(20, ctx_tokens // 3),
                            prompts=repeated(tokens, lead_tokens(EXTRACT_RELEVANT_SENTENCES, lang)))


# An extracted "sentence" with less than this share of its character trigrams in the contexts did not
# come from them (an invented sentence, or "Insufficient information" instead of an empty list): it is
# kept in the details but not counted. A judge's light paraphrase of a context sentence stays well above.
MIN_OVERLAP = 0.5


def _match(sentence: str, contexts: list[str]) -> dict[str, Any]:
    """How an extracted sentence relates to the contexts: verbatim, paraphrased (counted) or not from them."""
    haystack = " ".join(contexts)
    if normalize(sentence) in normalize(haystack):
        return {"sentence": sentence, "in_context": True, "overlap": 1.0, "counted": True}
    grams = char_ngrams(sentence)
    overlap = len(grams & char_ngrams(haystack)) / len(grams) if grams else 0.0
    return {"sentence": sentence, "in_context": False, "overlap": round(overlap, 3), "counted": overlap >= MIN_OVERLAP}


def _summary(language: str, rows: list[dict[str, Any]], total: int) -> str:
    counted = min(sum(r["counted"] for r in rows), total)
    paraphrased = sum(1 for r in rows if r["counted"] and not r["in_context"])
    dropped = sum(1 for r in rows if not r["counted"])
    head = msg(language, f"{counted} of {total} context sentences needed to answer",
               f"コンテキスト{total}文のうち質問に答えるのに必要なのは{counted}文")
    if paraphrased:
        head += msg(language, f" ({paraphrased} extracted sentence(s) not found verbatim in the contexts)",
                    f"（抽出文のうち{paraphrased}文はコンテキストにそのままの形では見つかりません）")
    if dropped:
        head += msg(language, f"; {dropped} extracted text(s) not from the contexts, not counted",
                    f"。コンテキストにない抽出文{dropped}件は数えていません")
    return head
