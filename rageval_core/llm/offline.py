"""The offline provider: a deterministic heuristic that answers every task from its structured inputs.

It never reads the prompt text (an edited template changes nothing here, and every reason says so);
it computes each step with the lexical-coverage heuristics in ``rageval_core.offline`` and returns
JSON in exactly the schema an LLM would be asked for, so metrics and judges run unchanged with no
key. Usage and cost are zero; ``Completion.raw`` holds the per-item breakdown (coverages, penalties,
cosines) for the sample inspector.
"""

from __future__ import annotations

import functools

import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rageval_core import tasks as T
from rageval_core.llm.base import Completion, Embedder, LLMRequest, ProviderError
from rageval_core.offline import steps
from rageval_core.offline.checks import faithfulness_precheck, is_blank, non_blank
from rageval_core.offline.generate import rag_answer, synth_qa
from rageval_core.offline.question_types import multi_chunk_pairs, out_of_scope_pairs, reasoning_pairs
from rageval_core.offline.relevancy import relevancy_reason
from rageval_core.offline.support import (
    ClaimScore,
    aggregate_support,
    answer_claims,
    squash,
    support_threshold,
)
from rageval_core.text import Language, detect_language
from rageval_core.types import (
    ANSWER_CORRECTNESS,
    ANSWER_RELEVANCY,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
    Unscored,
    Usage,
)

PROVIDER = "offline"
MODEL = "heuristic-v1"
UNSUPPORTED_KEY = "_unsupported"
UNSCORED_KEY = (
    "_unscored"  # {criterion id: unscored reason} for rows the heuristic cannot score
)
SUPPORTED_CRITERIA = (
    FAITHFULNESS,
    ANSWER_RELEVANCY,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    ANSWER_CORRECTNESS,
)
CORRECTNESS_WEIGHTS = (0.75, 0.25)  # F1, similarity (RAGAS's defaults)

_PREFIX = {
    "en": "Offline heuristic (not an LLM; ignores the prompt text): ",
    "ja": "オフラインのヒューリスティック判定（LLMではなく、プロンプト本文は使いません）: ",
}


def _lang(value: str | None) -> Language:
    return "ja" if value == "ja" else "en"


def _msg(lang: Language, en: str, ja: str) -> str:
    return _PREFIX[lang] + (ja if lang == "ja" else en)


def _short(text: str, limit: int = 40) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# (value in [0, 1] or None, pivot for the scale, unscored reason, reason text, breakdown) of one criterion
_CriterionValue = tuple[float | None, float, str | None, str, Any]


@dataclass(frozen=True)
class _JudgeRow:
    """The fields of a ``judge`` request that the standard criteria read."""

    question: str
    contexts: list[str]
    answer: str
    ground_truth: str


def _unscored(lang: Language, reason: str, en: str, ja: str) -> _CriterionValue:
    """``criterion_value``'s answer for a row the heuristic cannot score: no value, the reason and why."""
    return None, 0.5, reason, _msg(lang, en, ja), None


def _scored(lang: Language, value: float, en: str, ja: str, breakdown: Any, pivot: float = 0.5) -> _CriterionValue:
    """``criterion_value``'s answer for a scored row: the value, the scale's pivot, why and the breakdown."""
    return value, pivot, None, _msg(lang, en, ja), breakdown


def to_scale(value: float, lo: int, hi: int, pivot: float = 0.5) -> int:
    """Map a [0, 1] value onto the integer scale lo..hi so that ``pivot`` lands on the scale's middle
    (for a 0/1 scale: 1 exactly when value >= pivot)."""
    v = min(1.0, max(0.0, value))
    if pivot <= 0.0 or pivot >= 1.0:
        u = v
    elif v < pivot:
        u = 0.5 * v / pivot
    else:
        u = 0.5 + 0.5 * (v - pivot) / (1.0 - pivot)
    if hi - lo == 1:
        return hi if u >= 0.5 else lo
    return int(lo + min(hi - lo, max(0, int(u * (hi - lo) + 0.5))))


class OfflineLLM:
    """Provider ``offline``, model ``heuristic-v1``: implements the ``LLM`` protocol for every task.

    ``embedder`` supplies the small embedding term and the answer-relevancy cosine; ``None`` uses the
    bundled ``OfflineEmbedder`` (created on first use). ``use_embeddings=False`` makes it lexical only.
    Thread-safe: no mutable state besides the lazily created embedder.
    """

    provider = PROVIDER
    model = MODEL

    def __init__(
        self, embedder: Embedder | None = None, *, use_embeddings: bool = True
    ) -> None:
        self._embedder = embedder
        self._use_embeddings = use_embeddings
        self._lock = threading.Lock()
        self._handlers: dict[
            str, Callable[[Mapping[str, Any], Language], tuple[dict[str, Any], Any]]
        ] = {
            T.EXTRACT_CLAIMS: self._extract_claims,
            T.VERIFY_CLAIMS: self._verify_claims,
            T.VERIFY_CLAIMS_WITH_REFERENCE: self._verify_with_reference,
            T.GENERATE_QUESTIONS: self._generate_questions,
            T.CONTEXT_VERDICTS: self._context_verdicts,
            T.ATTRIBUTE_REFERENCE: self._attribute_reference,
            T.EXTRACT_RELEVANT_SENTENCES: self._relevant_sentences,
            T.CLASSIFY_CORRECTNESS: self._classify_correctness,
            T.JUDGE: self._judge,
            T.SYNTH_QA: self._synth_qa,
            T.SYNTH_REASONING: functools.partial(self._synth_typed, T.SYNTH_REASONING),
            T.SYNTH_MULTI_CHUNK: functools.partial(self._synth_typed, T.SYNTH_MULTI_CHUNK),
            T.SYNTH_OUT_OF_SCOPE: functools.partial(self._synth_typed, T.SYNTH_OUT_OF_SCOPE),
            T.RAG_ANSWER: self._rag_answer,
        }

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(self._handlers)

    @property
    def embedder(self) -> Embedder | None:
        if not self._use_embeddings:
            return None
        if self._embedder is None:
            with self._lock:
                if self._embedder is None:
                    from rageval_core.embeddings.offline import OfflineEmbedder

                    self._embedder = OfflineEmbedder()
        return self._embedder

    def complete(self, request: LLMRequest) -> Completion:
        handler = self._handlers.get(request.task)
        if handler is None:
            raise ProviderError(
                f"the offline provider has no heuristic for task {request.task!r}",
                kind="bad_request",
                retryable=False,
            )
        started = time.perf_counter()
        try:
            data, breakdown = handler(request.inputs or {}, _lang(request.language))
        except (KeyError, TypeError, ValueError) as exc:
            raise ProviderError(
                f"offline {request.task}: bad inputs ({type(exc).__name__}: {exc})",
                kind="bad_request",
                retryable=False,
            ) from exc
        text = json.dumps(data, ensure_ascii=False)
        return Completion(
            texts=[text] * max(1, request.n),
            provider=self.provider,
            model=self.model,
            usage=Usage(),
            latency_s=time.perf_counter() - started,
            cached=False,
            cost_usd=0.0,
            raw={"heuristic": MODEL, "task": request.task, "breakdown": breakdown},
        )

    # ------------------------------------------------------------------------------------ helpers

    @staticmethod
    def _strings(inputs: Mapping[str, Any], key: str) -> list[str]:
        value = inputs.get(key) or []
        if isinstance(value, str):
            return [value]
        return [str(v) for v in value]

    @staticmethod
    def _data_lang(*texts: str | Sequence[str]) -> Language:
        flat = " ".join(t if isinstance(t, str) else " ".join(t) for t in texts)
        return detect_language(flat)

    def _claim_reason(
        self,
        cs: ClaimScore,
        lang: Language,
        evidence_en: str = "contexts",
        evidence_ja: str = "コンテキスト",
    ) -> str:
        sign = "≥" if cs.supported else "<"
        parts_en = [
            f"score {cs.score:.2f} {sign} {cs.threshold:.2f} (support {cs.support:.2f})",
            f"char-trigram coverage {cs.trigram_coverage:.2f}",
            f"content words {cs.token_coverage:.2f}",
        ]
        parts_ja = [
            f"スコア {cs.score:.2f} {sign} {cs.threshold:.2f}（支持度 {cs.support:.2f}）",
            f"文字3-gram被覆 {cs.trigram_coverage:.2f}",
            f"内容語被覆 {cs.token_coverage:.2f}",
        ]
        if cs.embedding_weight:
            parts_en.append(
                f"cosine {cs.embedding_cosine:.2f} (weight {cs.embedding_weight:.2f})"
            )
            parts_ja.append(
                f"埋め込みコサイン {cs.embedding_cosine:.2f}（重み {cs.embedding_weight:.2f}）"
            )
        if cs.missing_numbers:
            parts_en.append(
                f"numbers not in the {evidence_en}: {', '.join(cs.missing_numbers)}"
            )
            parts_ja.append(f"{evidence_ja}にない数値: {', '.join(cs.missing_numbers)}")
        if cs.missing_entities:
            parts_en.append(
                f"names not in the {evidence_en}: {', '.join(cs.missing_entities)}"
            )
            parts_ja.append(
                f"{evidence_ja}にない固有名: {', '.join(cs.missing_entities)}"
            )
        if cs.ignored_context:
            parts_en.append(
                f"{cs.ignored_context} context sentence(s) or passage(s) addressed to the evaluator (or echoing "
                "the answer) not used as evidence"
            )
            parts_ja.append(f"評価者に向けた（または回答をなぞるだけの）コンテキストの文・段落 {cs.ignored_context} 件は証拠にしていません")
        if cs.missing_tokens and not cs.supported:
            parts_en.append(f"missing words: {', '.join(cs.missing_tokens[:5])}")
            parts_ja.append(f"見つからない語: {', '.join(cs.missing_tokens[:5])}")
        return _msg(lang, "; ".join(parts_en), "、".join(parts_ja))

    def _score_inputs(self, inputs: Mapping[str, Any], key: str) -> list[ClaimScore]:
        """Scores of the ``key`` strings of a request's inputs against its contexts."""
        return self._score_against(
            self._strings(inputs, key),
            self._strings(inputs, "contexts"),
            str(inputs.get("question") or ""),
        )

    def _score_against(
        self,
        claims: list[str],
        evidence: list[str],
        question: str,
        lang_hint: Language | None = None,
    ) -> list[ClaimScore]:
        """Each claim scored against the evidence (language from the texts unless given)."""
        return steps.attribute_sentences(
            claims,
            evidence,
            question=question,
            embedder=self.embedder,
            language=lang_hint,
        )

    # -------------------------------------------------------------------------------------- tasks

    def _extract_claims(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        answer = str(inputs.get("answer") or "")
        claims = (
            answer_claims(answer, self._data_lang(answer))
            if not is_blank(answer)
            else []
        )
        return {"claims": claims}, {
            "method": "sentences of the answer (the project's splitter)"
        }

    def _verdicts(
        self, scores: list[ClaimScore], lang: Language
    ) -> list[dict[str, Any]]:
        return [
            {
                "claim_index": i,
                "verdict": int(cs.supported),
                "support": round(cs.support, 4),
                "reason": self._claim_reason(cs, lang),
                "context_index": cs.context_index if cs.supported else None,
                "supporting_sentence": cs.supporting_sentence if cs.supported else None,
            }
            for i, cs in enumerate(scores)
        ]

    def _verify_claims(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        scores = self._score_inputs(inputs, "claims")
        return {"verdicts": self._verdicts(scores, lang)}, [
            cs.to_dict() for cs in scores
        ]

    def _verify_with_reference(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        claims = self._strings(inputs, "claims")
        contexts = self._strings(inputs, "contexts")
        reference = str(inputs.get("reference") or "")
        ref_claims = self._strings(inputs, "reference_claims") or answer_claims(
            reference
        )
        question = str(inputs.get("question") or "")
        scores = self._score_against(claims, contexts, question)
        by_ref = (
            self._score_against(claims, [reference], question)
            if reference.strip()
            else []
        )
        covered = (
            self._score_against(ref_claims, [" ".join(claims)], question)
            if claims
            else []
        )
        verdicts = self._verdicts(scores, lang)
        for v, ref in zip(verdicts, by_ref or [None] * len(verdicts)):
            v["reference_verdict"] = int(ref.supported) if ref is not None else 0
        missing = (
            [i for i, cs in enumerate(covered) if not cs.supported]
            if claims
            else list(range(len(ref_claims)))
        )
        return (
            {"verdicts": verdicts, "missing_reference_claims": missing},
            {
                "contexts": [c.to_dict() for c in scores],
                "reference": [c.to_dict() for c in by_ref],
                "reference_claims_covered": [c.to_dict() for c in covered],
            },
        )

    def _generate_questions(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        answer = str(inputs.get("answer") or "").strip()
        n = max(1, int(inputs.get("n") or 1))
        flag = int(steps.noncommittal_answer(answer)) if answer else 0
        questions = (
            [{"question": answer, "noncommittal": flag} for _ in range(n)]
            if answer
            else []
        )
        note = (
            "no questions can be generated offline: the answer itself stands in for each generated question; "
            "the answer-relevancy metric does not use this on the offline provider (it scores the question's "
            "asks with rageval_core.offline.relevancy instead)"
        )
        return {"questions": questions}, {"method": note, "noncommittal": bool(flag)}

    def _context_verdicts(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        contexts = self._strings(inputs, "contexts")
        reference = str(inputs.get("reference") or "")
        kind = str(inputs.get("reference_kind") or "ground_truth")
        chunks = steps.chunk_usefulness(
            reference, contexts, self._data_lang(reference, contexts[:1])
        )
        what_en = "the reference answer" if kind == "ground_truth" else "the answer"
        what_ja = "参照回答" if kind == "ground_truth" else "回答"
        verdicts = []
        for c in chunks:
            sign = "≥" if c.useful else "<"
            verdicts.append(
                {
                    "context_index": c.index,
                    "useful": int(c.useful),
                    "reason": _msg(
                        lang,
                        f"covers {c.coverage:.2f} {sign} {steps.USEFUL_THRESHOLD:.2f} of the wording of a sentence of {what_en}"
                        + (f" ({_short(c.best_sentence)})" if c.best_sentence else ""),
                        f"{what_ja}の一文の表現を {c.coverage:.2f} {sign} {steps.USEFUL_THRESHOLD:.2f} だけ含みます"
                        + (f"（{_short(c.best_sentence)}）" if c.best_sentence else ""),
                    ),
                }
            )
        return {"verdicts": verdicts}, [c.__dict__ for c in chunks]

    def _attribute_reference(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        scores = self._score_inputs(inputs, "reference_sentences")
        out = [
            {
                "sentence_index": i,
                "attributed": int(cs.supported),
                "reason": self._claim_reason(cs, lang),
            }
            for i, cs in enumerate(scores)
        ]
        return {"attributions": out}, [cs.to_dict() for cs in scores]

    def _relevant_sentences(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        question = str(inputs.get("question") or "")
        contexts = self._strings(inputs, "contexts")
        answer = inputs.get("answer")
        rel = steps.sentence_relevance(
            question,
            contexts,
            str(answer) if answer else None,
            self._data_lang(question, contexts[:1]),
        )
        return {"sentences": [r.sentence for r in rel if r.relevant]}, [
            r.__dict__ for r in rel
        ]

    def _classify_correctness(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        answer_claims_ = self._strings(inputs, "answer_claims")
        reference_claims = self._strings(inputs, "reference_claims")
        result = steps.classify_correctness(
            answer_claims_,
            reference_claims,
            question=str(inputs.get("question") or ""),
            embedder=self.embedder,
            language=self._data_lang(answer_claims_, reference_claims),
        )

        def rows(items: list[ClaimScore], en: str, ja: str) -> list[dict[str, str]]:
            return [
                {"statement": cs.claim, "reason": self._claim_reason(cs, lang, en, ja)}
                for cs in items
            ]

        data = {
            "TP": rows(result.tp, "reference", "参照回答"),
            "FP": rows(result.fp, "reference", "参照回答"),
            "FN": rows(result.fn, "answer", "回答"),
        }
        breakdown = {
            k: [cs.to_dict() for cs in v]
            for k, v in (("TP", result.tp), ("FP", result.fp), ("FN", result.fn))
        }
        return data, breakdown

    def _synth_qa(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        text = str(inputs.get("text") or "")
        pairs = synth_qa(
            str(inputs.get("title") or ""),
            str(inputs.get("heading") or ""),
            text,
            int(inputs.get("n") or 1),
            self._data_lang(text) if text.strip() else lang,
        )
        return (
            {"pairs": [{"question": p.question, "answer": p.answer} for p in pairs]},
            {
                "method": "extractive (offline): key phrase + heading as the question, the sentence as the answer",
                "pairs": [p.__dict__ for p in pairs],
            },
        )

    def _synth_typed(
        self, task: str, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        """Reasoning, multi-chunk and out-of-scope pairs from ``offline.question_types``."""
        n = int(inputs.get("n") or 1)
        if task == T.SYNTH_MULTI_CHUNK:
            text = str(inputs.get("text_a") or "")
            data_lang = self._data_lang(text) if text.strip() else lang
            pairs = multi_chunk_pairs(
                str(inputs.get("heading_a") or ""), text, str(inputs.get("heading_b") or ""),
                str(inputs.get("text_b") or ""), n, data_lang,
            )
            method = "offline multi-chunk: one informative sentence of each passage, asked together"
        elif task == T.SYNTH_OUT_OF_SCOPE:
            text = str(inputs.get("text") or "")
            data_lang = self._data_lang(text) if text.strip() else lang
            pairs = out_of_scope_pairs(
                str(inputs.get("heading") or ""), str(inputs.get("document_text") or text), n, data_lang,
                str(inputs.get("not_found") or ""),
            )
            method = "offline out-of-scope: fixed aspects (phone number, fines, ...) the document never mentions"
        else:
            text = str(inputs.get("text") or "")
            data_lang = self._data_lang(text) if text.strip() else lang
            pairs = reasoning_pairs(str(inputs.get("heading") or ""), text, n, data_lang)
            method = "offline reasoning: a numeric rule of the section applied to a case"
        return (
            {"pairs": [{"question": p.question, "answer": p.answer} for p in pairs]},
            {"method": method, "pairs": [p.__dict__ for p in pairs]},
        )

    def _rag_answer(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        question = str(inputs.get("question") or "")
        contexts = self._strings(inputs, "contexts")
        result = rag_answer(
            question,
            contexts,
            embedder=self.embedder,
            language=self._data_lang(question, contexts[:1]),
        )
        return {"answer": result.answer}, {
            "method": "extractive (offline): best-matching context sentences",
            "sentences": result.sentences,
            "scores": result.scores,
            "found": result.found,
        }

    # -------------------------------------------------------------------------------------- judge

    def criterion_value(
        self,
        cid: str,
        question: str,
        contexts: list[str],
        answer: str,
        ground_truth: str,
        lang: Language,
    ) -> _CriterionValue:
        """(value in [0, 1] or None, pivot for the scale, unscored reason, reason text, breakdown) of one standard criterion."""
        data_lang = (
            self._data_lang(answer, contexts[:1])
            if answer.strip()
            else self._data_lang(question)
        )
        kept = non_blank(contexts)
        if cid in (FAITHFULNESS, ANSWER_RELEVANCY, ANSWER_CORRECTNESS) and is_blank(
            answer
        ):
            return _unscored(
                lang, Unscored.EMPTY_ANSWER, "the answer is blank", "回答が空です"
            )
        row = _JudgeRow(question, contexts, answer, ground_truth)
        if cid == FAITHFULNESS:
            return self._faithfulness_value(row, lang, data_lang)
        if cid == ANSWER_RELEVANCY:
            if is_blank(question):
                return _unscored(
                    lang,
                    Unscored.MISSING_FIELD,
                    "the row has no question",
                    "質問がありません",
                )
            rel = steps.answer_relevancy(question, answer, self.embedder, data_lang)
            text_en, text_ja = relevancy_reason(rel)
            return _scored(lang, rel.value, text_en, text_ja, rel.to_dict())
        if not kept:
            return _unscored(
                lang,
                Unscored.MISSING_FIELD,
                "the row has no contexts",
                "コンテキストがありません",
            )
        by_criterion = {
            CONTEXT_PRECISION: self._context_precision_value,
            CONTEXT_RECALL: self._context_recall_value,
            CONTEXT_RELEVANCE: self._context_relevance_value,
        }
        return by_criterion[cid](row, lang, data_lang)

    def _faithfulness_value(self, row: _JudgeRow, lang: Language, data_lang: Language) -> _CriterionValue:
        """Soft-min support of the answer's sentences by the contexts."""
        reason = faithfulness_precheck(row.answer, row.contexts)
        if reason is not None:
            text = {
                Unscored.MISSING_FIELD: (
                    "the row has no contexts to check against",
                    "照合するコンテキストがありません",
                ),
                Unscored.UNCHECKABLE: (
                    "a bare yes/no answer cannot be checked lexically",
                    "「はい／いいえ」だけの回答は字句的に検証できません",
                ),
            }.get(reason, ("cannot be scored", "採点できません"))
            return _unscored(lang, reason, *text)
        scores = self._score_against(
            answer_claims(row.answer, data_lang), row.contexts, row.question, data_lang
        )
        value = aggregate_support(scores)
        assert value is not None
        weakest = min(scores, key=lambda c: c.score)
        supported = sum(c.supported for c in scores)
        text_en = (
            f"soft-min support {value:.2f} over {len(scores)} sentences ({supported} supported); "
            f"weakest: {_short(weakest.claim)} → {weakest.score:.2f}"
        )
        text_ja = (
            f"{len(scores)}文の支持度のソフト最小 {value:.2f}（支持 {supported}文）。"
            f"最も弱い文: {_short(weakest.claim)} → {weakest.score:.2f}"
        )
        extra = self._claim_reason(weakest, lang)[len(_PREFIX[lang]) :]
        return _scored(
            lang,
            value,
            f"{text_en} ({extra})",
            f"{text_ja}（{extra}）",
            [c.to_dict() for c in scores],
            pivot=support_threshold(data_lang),
        )

    def _context_precision_value(self, row: _JudgeRow, lang: Language, data_lang: Language) -> _CriterionValue:
        """Average precision of chunk usefulness (coverage of the reference, else of the answer)."""
        reference = row.ground_truth if row.ground_truth.strip() else row.answer
        if is_blank(reference):
            return _unscored(
                lang,
                Unscored.MISSING_FIELD,
                "no reference or answer to judge usefulness by",
                "有用性を判断する参照回答も回答もありません",
            )
        chunks = steps.chunk_usefulness(reference, row.contexts, data_lang)
        value = steps.average_precision([c.useful for c in chunks]) or 0.0
        flags = "".join("1" if c.useful else "0" for c in chunks)
        return _scored(
            lang,
            value,
            f"average precision {value:.2f} of chunk usefulness [{flags}] (coverage of the reference)",
            f"チャンク有用性 [{flags}]（参照の被覆）の平均適合率 {value:.2f}",
            [c.__dict__ for c in chunks],
        )

    def _context_recall_value(self, row: _JudgeRow, lang: Language, data_lang: Language) -> _CriterionValue:
        """Share of the ground truth's sentences supported by the contexts."""
        if is_blank(row.ground_truth):
            return _unscored(
                lang,
                Unscored.MISSING_FIELD,
                "needs a ground truth",
                "参照回答（ground truth）が必要です",
            )
        scores = self._score_against(
            answer_claims(row.ground_truth, data_lang), row.contexts, row.question, data_lang
        )
        found = sum(c.supported for c in scores)
        return _scored(
            lang,
            found / len(scores),
            f"{found} of {len(scores)} reference sentences found in the contexts",
            f"参照回答 {len(scores)}文のうち {found}文がコンテキストに見つかりました",
            [c.to_dict() for c in scores],
        )

    def _context_relevance_value(self, row: _JudgeRow, lang: Language, data_lang: Language) -> _CriterionValue:
        """Share of context sentences that cover the question or the answer."""
        value, rel = steps.context_relevance_score(
            row.question, row.contexts, row.answer or None, data_lang
        )
        if value is None:
            return _unscored(
                lang,
                Unscored.MISSING_FIELD,
                "the contexts have no sentences",
                "コンテキストに文がありません",
            )
        n_rel = sum(r.relevant for r in rel)
        return _scored(
            lang,
            value,
            f"{n_rel} of {len(rel)} context sentences cover the question or the answer",
            f"コンテキスト {len(rel)}文のうち {n_rel}文が質問か回答に対応しています",
            [r.__dict__ for r in rel],
        )

    def correctness_value(
        self, question: str, answer: str, ground_truth: str, lang: Language
    ) -> tuple[float | None, str | None, str, Any]:
        if is_blank(answer):
            return (
                None,
                Unscored.EMPTY_ANSWER,
                _msg(lang, "the answer is blank", "回答が空です"),
                None,
            )
        if is_blank(ground_truth):
            return (
                None,
                Unscored.MISSING_FIELD,
                _msg(
                    lang, "needs a ground truth", "参照回答（ground truth）が必要です"
                ),
                None,
            )
        data_lang = self._data_lang(answer, ground_truth)
        result = steps.classify_correctness(
            answer_claims(answer, data_lang),
            answer_claims(ground_truth, data_lang),
            question=question,
            embedder=self.embedder,
            language=data_lang,
        )
        f1 = result.f1 or 0.0
        emb = self.embedder
        sim = squash(steps.cosine(emb, answer, ground_truth)) if emb is not None else f1
        w_f1, w_sim = CORRECTNESS_WEIGHTS
        value = w_f1 * f1 + w_sim * sim
        return (
            value,
            None,
            _msg(
                lang,
                f"TP {len(result.tp)}, FP {len(result.fp)}, FN {len(result.fn)} → F1 {f1:.2f}; similarity {sim:.2f}; "
                f"{w_f1}·F1 + {w_sim}·similarity = {value:.2f}",
                f"TP {len(result.tp)}・FP {len(result.fp)}・FN {len(result.fn)} → F1 {f1:.2f}、類似度 {sim:.2f}、"
                f"{w_f1}·F1 + {w_sim}·類似度 = {value:.2f}",
            ),
            {
                "f1": f1,
                "similarity": sim,
                "tp": len(result.tp),
                "fp": len(result.fp),
                "fn": len(result.fn),
            },
        )

    def _judge(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        question = str(inputs.get("question") or "")
        contexts = self._strings(inputs, "contexts")
        answer = str(inputs.get("answer") or "")
        ground_truth = str(inputs.get("ground_truth") or "")
        out: dict[str, Any] = {}
        unsupported: list[str] = []
        unscored: dict[str, str] = {}
        breakdown: dict[str, Any] = {}
        for crit in inputs.get("criteria") or []:
            cid = str(crit["id"])
            lo, hi = int(crit.get("min", 1)), int(crit.get("max", 5))
            if cid not in SUPPORTED_CRITERIA:
                unsupported.append(cid)
                out[f"{cid}_reason"] = _msg(
                    lang,
                    f"cannot score the custom criterion {crit.get('name') or cid!r}; use an LLM provider",
                    f"カスタム基準「{crit.get('name') or cid}」は採点できません。LLMプロバイダを使ってください",
                )
                continue
            if cid == ANSWER_CORRECTNESS:
                value, reason, text, detail = self.correctness_value(
                    question, answer, ground_truth, lang
                )
                pivot = 0.5
            else:
                value, pivot, reason, text, detail = self.criterion_value(
                    cid, question, contexts, answer, ground_truth, lang
                )
            breakdown[cid] = {
                "value": None if value is None else round(value, 4),
                "pivot": pivot,
                "detail": detail,
            }
            if value is None:
                unscored[cid] = reason or Unscored.OFFLINE_UNSUPPORTED
                out[f"{cid}_reason"] = text
                continue
            score = to_scale(value, lo, hi, pivot)
            out[f"{cid}_score"] = score
            out[f"{cid}_reason"] = f"{text} → {score} ({lo}..{hi})"
        if unsupported:
            out[UNSUPPORTED_KEY] = unsupported
        if unscored:
            out[UNSCORED_KEY] = unscored
        return out, breakdown
