"""The offline provider's one-call judge: the six standard criteria computed from the row's fields with
the heuristics in ``rageval_core.offline`` and mapped onto each criterion's scale (``to_scale``), so
the verdict threshold lands on the scale's middle. Custom criteria are listed as unsupported; rows the
heuristic cannot score are listed as unscored with a reason, never given a 0 or 1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from rageval_core.llm.base import Embedder
from rageval_core.offline.reasons import claim_reason, msg, row_language, short, strings
from rageval_core.offline import steps
from rageval_core.offline.checks import faithfulness_precheck, is_blank, non_blank
from rageval_core.offline.relevancy import relevancy_reason
from rageval_core.offline.support import (
    ClaimScore,
    aggregate_support,
    answer_claims,
    squash,
    support_threshold,
)
from rageval_core.core.text import Language
from rageval_core.core.types import (
    ANSWER_CORRECTNESS,
    ANSWER_RELEVANCY,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    FAITHFULNESS,
    METRIC_IDS,
    Unscored,
)

UNSUPPORTED_KEY = "_unsupported"
UNSCORED_KEY = (
    "_unscored"  # {criterion id: unscored reason} for rows the heuristic cannot score
)
SUPPORTED_CRITERIA = METRIC_IDS  # the offline heuristic scores every standard criterion
CORRECTNESS_WEIGHTS = (0.75, 0.25)  # F1, similarity (RAGAS's defaults)


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
    return None, 0.5, reason, msg(lang, en, ja), None


def _scored(lang: Language, value: float, en: str, ja: str, breakdown: Any, pivot: float = 0.5) -> _CriterionValue:
    """``criterion_value``'s answer for a scored row: the value, the scale's pivot, why and the breakdown."""
    return value, pivot, None, msg(lang, en, ja), breakdown


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


class OfflineJudge:
    """The ``judge`` task of ``OfflineLLM``; ``embedder`` returns the provider's embedder (or ``None``)."""

    def __init__(self, embedder: Callable[[], Embedder | None]) -> None:
        self._embedder = embedder

    @property
    def embedder(self) -> Embedder | None:
        return self._embedder()

    def score_against(
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
            row_language(answer, contexts[:1])
            if answer.strip()
            else row_language(question)
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
        scores = self.score_against(
            answer_claims(row.answer, data_lang), row.contexts, row.question, data_lang
        )
        value = aggregate_support(scores)
        assert value is not None
        weakest = min(scores, key=lambda c: c.score)
        supported = sum(c.supported for c in scores)
        text_en = (
            f"soft-min support {value:.2f} over {len(scores)} sentences ({supported} supported); "
            f"weakest: {short(weakest.claim)} → {weakest.score:.2f}"
        )
        text_ja = (
            f"{len(scores)}文の支持度のソフト最小 {value:.2f}（支持 {supported}文）。"
            f"最も弱い文: {short(weakest.claim)} → {weakest.score:.2f}"
        )
        extra = claim_reason(weakest, lang)
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
        scores = self.score_against(
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
                msg(lang, "the answer is blank", "回答が空です"),
                None,
            )
        if is_blank(ground_truth):
            return (
                None,
                Unscored.MISSING_FIELD,
                msg(
                    lang, "needs a ground truth", "参照回答（ground truth）が必要です"
                ),
                None,
            )
        data_lang = row_language(answer, ground_truth)
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
            msg(
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

    def judge(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        question = str(inputs.get("question") or "")
        contexts = strings(inputs, "contexts")
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
                out[f"{cid}_reason"] = msg(
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
