"""Answer relevancy (RAGAS): questions generated back from the answer, compared with the real question.

On the offline provider no question can be generated, so no request is sent and the value is the
offline relevancy heuristic's (``rageval_core.offline.relevancy``), with its parts in the details.

n questions (default 3) are generated in the data's language, each with a noncommittal flag, either in
one request that asks for n questions (default) or in n requests of one question each. The question and
the generated ones are embedded in one batch; the score is the mean cosine, 0 only when every generated
question is flagged noncommittal. Every generated question is kept with its cosine.
"""

from __future__ import annotations

from typing import Any

from rageval_core.llm.base import ProviderError
from rageval_core.scoring.metrics import scoring
from rageval_core.scoring.metrics.base import CallEstimate, CallTrace, EvalContext
from rageval_core.scoring.metrics.offline_checks import OFFLINE_PROVIDER, is_offline
from rageval_core.scoring.metrics.prefix import lead_tokens, repeated
from rageval_core.scoring.metrics.steps import (
    DecomposedScorer,
    Outcome,
    Unscorable,
    approx_tokens,
    ask_checked,
    bit,
    build_request,
    embed,
    field_list,
    mode_checker,
    msg,
    option,
    quote,
    require_answer,
    require_question,
    sample_language,
    template_tokens,
)
from rageval_core.core.tasks import GENERATE_QUESTIONS
from rageval_core.core.text import Language
from rageval_core.core.types import ANSWER_RELEVANCY, Sample, Unscored
from rageval_core.core.errors import ConfigError

OFFLINE_NOTE_EN = (
    "no questions can be generated without an LLM: the offline heuristic checks the question's asks "
    "(answer types, topic words) against the answer, plus the best answer sentence's cosine"
)
ONE_CALL = "one_call"
PER_QUESTION = "per_question"
MODES = (ONE_CALL, PER_QUESTION)


def check_n(value: Any) -> int:
    n = int(value)
    if not 1 <= n <= 10:
        raise ConfigError(f"answer relevancy n must be between 1 and 10, got {value!r}")
    return n


check_mode = mode_checker("answer relevancy calls", MODES)


class AnswerRelevancy(DecomposedScorer):
    """``n`` generated questions; ``calls="one_call"`` asks for all n at once, ``"per_question"`` sends
    n requests (temperature ``per_question_temperature``, seeds 0..n-1 so they differ and cache apart)."""

    metric = ANSWER_RELEVANCY

    def __init__(self, *, n: int = 3, calls: str = ONE_CALL, per_question_temperature: float = 0.7) -> None:
        self.n = check_n(n)
        self.calls = check_mode(calls)
        self.per_question_temperature = float(per_question_temperature)

    @property
    def chain_length(self) -> int:
        return 1 if self.calls == ONE_CALL else self.n

    def settings(self) -> dict[str, Any]:
        return {"answer_relevancy_n": self.n, "answer_relevancy_calls": self.calls}

    def compute(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> Outcome:
        require_answer(sample, language)
        require_question(sample, language)
        if is_offline(ctx):
            return _offline(sample, ctx, language, details)
        n = option(ctx, "answer_relevancy_n", self.n, check_n)
        mode = option(ctx, "answer_relevancy_calls", self.calls, check_mode)
        details.update({"n": n, "mode": mode})
        questions: list[dict[str, Any]] = []
        if mode == ONE_CALL:
            questions = self._generate(ctx, sample, language, n, trace)
        else:
            for i in range(n):
                questions.extend(self._generate(ctx, sample, language, 1, trace, seed=i)[:1])
        if not questions:
            raise Unscorable(Unscored.PARSE_ERROR, msg(language, "the judge generated no questions", "質問が生成されませんでした"),
                             raw=trace[-1].response if trace else None)
        if len(questions) > n:  # a model that writes more than asked must not change the mean's size
            details["count_note"] = f"asked for {n} questions, got {len(questions)}; scored over the first {n}"
            details["extra_questions"] = questions[n:]
            questions = questions[:n]
        elif len(questions) < n:
            details["count_note"] = f"asked for {n} questions, got {len(questions)}; scored over those"
        details["questions"] = questions
        vectors = embed(ctx, [sample.question] + [q["question"] for q in questions], details)
        for q, vector in zip(questions, vectors[1:], strict=True):
            q["cosine"] = round(scoring.cosine(vectors[0], vector), 4)
        value = scoring.answer_relevancy([q["cosine"] for q in questions], [q["noncommittal"] for q in questions])
        assert value is not None
        return Outcome(value, _summary(language, questions, value))

    def _generate(
        self, ctx: EvalContext, sample: Sample, language: str, n: int, trace: list[CallTrace], seed: int | None = None
    ) -> list[dict[str, Any]]:
        inputs = {"answer": sample.answer, "contexts": list(sample.contexts), "n": n}
        request = build_request(
            ctx, GENERATE_QUESTIONS, language, inputs, {"answer": sample.answer, "n": n},
            temperature=0.0 if seed is None else self.per_question_temperature, seed=seed,
        )

        def read(data: dict[str, Any], raw: str | None) -> list[dict[str, Any]]:
            out = []
            for item in field_list(data, "questions", GENERATE_QUESTIONS, raw):
                if not isinstance(item, dict) or not isinstance(item.get("question"), str) or not item["question"].strip():
                    raise Unscorable(Unscored.PARSE_ERROR, f"{GENERATE_QUESTIONS}: each item needs a question string", raw=raw)
                flag = bit(item.get("noncommittal", 0))
                if flag is None:
                    raise Unscorable(Unscored.PARSE_ERROR, f"{GENERATE_QUESTIONS}: noncommittal must be 0 or 1", raw=raw)
                out.append({"question": item["question"].strip(), "noncommittal": flag})
            if not out:
                raise Unscorable(Unscored.PARSE_ERROR, f"{GENERATE_QUESTIONS}: the judge generated no questions", raw=raw)
            return out

        return ask_checked(ctx, trace, request, read)

    def estimate(self, sample: Sample, provider: str | None = None) -> CallEstimate:
        """One request (or n), one embedding request for the question and the generated questions. On the
        offline provider no question is generated: no request, one embedding request for the heuristic."""
        if provider == OFFLINE_PROVIDER:
            return CallEstimate(embedding_calls=1)
        lang = sample_language(sample)
        calls = 1 if self.calls == ONE_CALL else self.n
        per_call_in = template_tokens(GENERATE_QUESTIONS, lang) + approx_tokens(sample.answer or "")
        out_per_q = approx_tokens(sample.question or "") + 10
        asked = self.n if calls == 1 else 1  # the questions one call asks for (the template's fixed {n})
        return CallEstimate(llm_calls=calls, embedding_calls=1, input_tokens=calls * per_call_in, output_tokens=self.n * out_per_q,
                            prompts=repeated(per_call_in, lead_tokens(GENERATE_QUESTIONS, lang, n=asked), calls))


def _offline(sample: Sample, ctx: EvalContext, language: str, details: dict[str, Any]) -> Outcome:
    """The offline provider cannot generate questions, so no request is sent: the value is the offline
    relevancy heuristic's, and details hold what it computed (asks, coverage, cosine, noncommittal share)."""
    from rageval_core.offline.relevancy import answer_relevancy, relevancy_reason

    lang: Language = "ja" if language == "ja" else "en"
    try:
        rel = answer_relevancy(sample.question, sample.answer, ctx.embedder, lang)
    except ProviderError as exc:
        raise Unscorable(exc.unscored_reason, f"embedding: {exc}") from None
    details.update({"offline_note": OFFLINE_NOTE_EN, "offline_relevancy": rel.to_dict(),
                    "embedding_calls": int(rel.cosine is not None)})
    text_en, text_ja = relevancy_reason(rel)
    return Outcome(rel.value, msg(language, f"offline: {text_en}", f"オフライン: {text_ja}"))


def _summary(language: str, questions: list[dict[str, Any]], value: float) -> str:
    noncommittal = sum(q["noncommittal"] for q in questions)
    shown = "; ".join(f"{quote(q['question'], 50)} ({q['cosine']:.2f})" for q in questions[:3])
    if noncommittal == len(questions):
        return msg(language, f"every generated question flags the answer as noncommittal → 0; {shown}",
                   f"生成された質問すべてが回答を曖昧（noncommittal）と判定 → 0。{shown}")
    note_en = f"; {noncommittal} noncommittal" if noncommittal else ""
    note_ja = f"（曖昧判定 {noncommittal}件）" if noncommittal else ""
    return msg(language, f"mean cosine {value:.2f} over {len(questions)} generated questions{note_en}: {shown}",
               f"逆生成した{len(questions)}件の質問と元の質問の平均コサイン類似度 {value:.2f}{note_ja}: {shown}")
