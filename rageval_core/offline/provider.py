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
from collections.abc import Callable, Mapping
from typing import Any

from rageval_core.core import tasks as T
from rageval_core.llm.base import Completion, Embedder, LLMRequest, ProviderError
from rageval_core.offline.judge import (  # noqa: F401  (UNSCORED_KEY, UNSUPPORTED_KEY, to_scale: public here too)
    UNSCORED_KEY,
    UNSUPPORTED_KEY,
    OfflineJudge,
    to_scale,
)
from rageval_core.offline.reasons import claim_reason, lang_of, msg, row_language, short, strings
from rageval_core.offline import steps
from rageval_core.offline.checks import is_blank
from rageval_core.offline.generate import rag_answer, synth_qa
from rageval_core.offline.question_types import multi_chunk_pairs, out_of_scope_pairs, reasoning_pairs
from rageval_core.offline.support import ClaimScore, answer_claims
from rageval_core.core.text import Language
from rageval_core.core.types import Usage

PROVIDER = "offline"
MODEL = "heuristic-v4"


class OfflineLLM:
    """Provider ``offline``, model ``heuristic-v4``: implements the ``LLM`` protocol for every task.

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
        self._judge = OfflineJudge(lambda: self.embedder)
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
            T.JUDGE: self._judge.judge,
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
                    from rageval_core.offline.encoder import OfflineEmbedder

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
            data, breakdown = handler(request.inputs or {}, lang_of(request.language))
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

    def _score_inputs(self, inputs: Mapping[str, Any], key: str) -> list[ClaimScore]:
        """Scores of the ``key`` strings of a request's inputs against its contexts."""
        return self._judge.score_against(
            strings(inputs, key),
            strings(inputs, "contexts"),
            str(inputs.get("question") or ""),
        )

    # -------------------------------------------------------------------------------------- tasks

    def _extract_claims(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        answer = str(inputs.get("answer") or "")
        claims = (
            answer_claims(answer, row_language(answer))
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
                "reason": claim_reason(cs, lang),
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
        claims = strings(inputs, "claims")
        contexts = strings(inputs, "contexts")
        reference = str(inputs.get("reference") or "")
        ref_claims = strings(inputs, "reference_claims") or answer_claims(
            reference
        )
        question = str(inputs.get("question") or "")
        scores = self._judge.score_against(claims, contexts, question)
        by_ref = (
            self._judge.score_against(claims, [reference], question)
            if reference.strip()
            else []
        )
        covered = (
            self._judge.score_against(ref_claims, [" ".join(claims)], question)
            if claims
            else []
        )
        verdicts = self._verdicts(scores, lang)
        refs: list[Any] = list(by_ref) or [None] * len(verdicts)  # a reference's verdict per claim, or none
        for v, ref in zip(verdicts, refs):
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
        contexts = strings(inputs, "contexts")
        reference = str(inputs.get("reference") or "")
        kind = str(inputs.get("reference_kind") or "ground_truth")
        chunks = steps.chunk_usefulness(
            reference, contexts, row_language(reference, contexts[:1])
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
                    "reason": msg(
                        lang,
                        f"covers {c.coverage:.2f} {sign} {steps.USEFUL_THRESHOLD:.2f} of the wording of a sentence of {what_en}"
                        + (f" ({short(c.best_sentence)})" if c.best_sentence else ""),
                        f"{what_ja}の一文の表現を {c.coverage:.2f} {sign} {steps.USEFUL_THRESHOLD:.2f} だけ含みます"
                        + (f"（{short(c.best_sentence)}）" if c.best_sentence else ""),
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
                "reason": claim_reason(cs, lang),
            }
            for i, cs in enumerate(scores)
        ]
        return {"attributions": out}, [cs.to_dict() for cs in scores]

    def _relevant_sentences(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        question = str(inputs.get("question") or "")
        contexts = strings(inputs, "contexts")
        answer = inputs.get("answer")
        rel = steps.sentence_relevance(
            question,
            contexts,
            str(answer) if answer else None,
            row_language(question, contexts[:1]),
        )
        return {"sentences": [r.sentence for r in rel if r.relevant]}, [
            r.__dict__ for r in rel
        ]

    def _classify_correctness(
        self, inputs: Mapping[str, Any], lang: Language
    ) -> tuple[dict[str, Any], Any]:
        answer_claims_ = strings(inputs, "answer_claims")
        reference_claims = strings(inputs, "reference_claims")
        result = steps.classify_correctness(
            answer_claims_,
            reference_claims,
            question=str(inputs.get("question") or ""),
            embedder=self.embedder,
            language=row_language(answer_claims_, reference_claims),
        )

        def rows(items: list[ClaimScore], en: str, ja: str) -> list[dict[str, str]]:
            return [
                {"statement": cs.claim, "reason": claim_reason(cs, lang, en, ja)}
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
            row_language(text) if text.strip() else lang,
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
            data_lang = row_language(text) if text.strip() else lang
            pairs = multi_chunk_pairs(
                str(inputs.get("heading_a") or ""), text, str(inputs.get("heading_b") or ""),
                str(inputs.get("text_b") or ""), n, data_lang,
            )
            method = "offline multi-chunk: one informative sentence of each passage, asked together"
        elif task == T.SYNTH_OUT_OF_SCOPE:
            text = str(inputs.get("text") or "")
            data_lang = row_language(text) if text.strip() else lang
            pairs = out_of_scope_pairs(
                str(inputs.get("heading") or ""), str(inputs.get("document_text") or text), n, data_lang,
                str(inputs.get("not_found") or ""),
            )
            method = "offline out-of-scope: fixed aspects (phone number, fines, ...) the document never mentions"
        else:
            text = str(inputs.get("text") or "")
            data_lang = row_language(text) if text.strip() else lang
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
        contexts = strings(inputs, "contexts")
        result = rag_answer(
            question,
            contexts,
            embedder=self.embedder,
            language=row_language(question, contexts[:1]),
        )
        return {"answer": result.answer}, {
            "method": "extractive (offline): best-matching context sentences",
            "sentences": result.sentences,
            "scores": result.scores,
            "found": result.found,
        }

    # -------------------------------------------------------------------------------------- judge
