"""Every evaluation step the offline provider performs, built on lexical coverage (``support``).

- chunk usefulness: how much of the reference (ground truth, or the answer) a context chunk covers;
- reference attribution: each reference sentence scored like a claim against the contexts;
- context relevance: the share of context sentences that cover the question or the answer;
- correctness: answer claims supported by the reference are TP, the rest FP; reference claims the
  answer does not cover are FN;
- answer relevancy: no questions can be generated offline; ``relevancy`` reads the question instead
  (its asks and answer types, topic-word coverage, best-sentence cosine, noncommittal sentences).

Pure functions; an embedder is passed in where one is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Answer relevancy lives in ``relevancy``; its names stay importable from here for callers.
from rageval_core.offline.relevancy import (  # noqa: F401
    ASKING_WORDS,
    RELEVANCY_RANGES,
    RelevancyBreakdown,
    answer_relevancy,
    is_noncommittal,
    noncommittal_answer,
    relevancy_range,
)
from rageval_core.offline.support import (
    ClaimScore,
    Evidence,
    TextEmbedder,
    build_evidence,
    score_claims,
    token_coverage,
    trigram_coverage,
)
from rageval_core.core.text import Language, content_tokens, detect_language, split_sentences

# A chunk is useful when it covers at least this share of one reference sentence's wording.
USEFUL_THRESHOLD = 0.35
# A context sentence is relevant when it holds this share of the question's content words, or when
# this share of its own content words reappears in the answer.
QUESTION_SHARE = 0.34
ANSWER_SHARE = 0.5


def _lexical(text: str, ev: Evidence) -> float:
    return 0.5 * trigram_coverage(text, ev) + 0.5 * token_coverage(text, ev)[0]


# --------------------------------------------------------------------------------------------------
# Context usefulness (context precision)


@dataclass
class ChunkVerdict:
    index: int
    useful: bool
    coverage: float  # best coverage of one reference sentence by this chunk
    best_sentence: str | None


def chunk_usefulness(
    reference: str, contexts: Sequence[str], language: Language | None = None
) -> list[ChunkVerdict]:
    """Per context chunk: the best lexical coverage of any reference sentence by the chunk alone."""
    lang = language or detect_language(reference + " " + " ".join(contexts[:1]))
    ref_sentences = split_sentences(reference, lang) or (
        [reference.strip()] if reference.strip() else []
    )
    out: list[ChunkVerdict] = []
    for i, chunk in enumerate(contexts):
        if not chunk or not chunk.strip() or not ref_sentences:
            out.append(ChunkVerdict(i, False, 0.0, None))
            continue
        ev = build_evidence([chunk], lang)
        scored = [(_lexical(s, ev), s) for s in ref_sentences]
        best, sentence = max(scored, key=lambda x: x[0])
        out.append(ChunkVerdict(i, best >= USEFUL_THRESHOLD, best, sentence))
    return out


def average_precision(useful: Sequence[bool]) -> float | None:
    """RAGAS context precision Σₖ(P@k·vₖ)/Σvₖ: 0 when no chunk is useful, ``None`` for no chunks."""
    if not useful:
        return None
    hits = 0
    total = 0.0
    for k, v in enumerate(useful, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


# --------------------------------------------------------------------------------------------------
# Reference attribution (context recall)


def attribute_sentences(
    sentences: Sequence[str],
    contexts: Sequence[str],
    *,
    question: str = "",
    embedder: TextEmbedder | None = None,
    language: Language | None = None,
) -> list[ClaimScore]:
    """Each reference sentence scored against the contexts exactly like an answer claim."""
    return score_claims(
        sentences,
        attribution_evidence(sentences, contexts, language),
        question=question,
        embedder=embedder,
    )


def attribution_evidence(
    sentences: Sequence[str], contexts: Sequence[str], language: Language | None = None
) -> Evidence:
    """The evidence the claims are checked against, in the language of claims + first context (the one
    path the provider and bench/fit_offline.py share, so fitted features are the product's)."""
    lang = language or detect_language(" ".join(sentences) + " " + " ".join(contexts[:1]))
    return build_evidence(list(contexts), lang, against=sentences)


# --------------------------------------------------------------------------------------------------
# Context relevance


@dataclass
class SentenceRelevance:
    context_index: int
    sentence: str
    question_share: float
    answer_share: float | None
    relevant: bool


def _keys(text: str, lang: Language) -> set[str]:
    return {t.key for t in content_tokens(text, lang)} | {
        t.surface for t in content_tokens(text, lang)
    }


def sentence_relevance(
    question: str,
    contexts: Sequence[str],
    answer: str | None = None,
    language: Language | None = None,
) -> list[SentenceRelevance]:
    """Every context sentence with the share of the question it covers and of it that the answer reuses."""
    lang = language or detect_language(question + " " + " ".join(contexts[:1]))
    q_tokens = {t.key for t in content_tokens(question, lang)}
    a_keys = _keys(answer, lang) if answer and answer.strip() else None
    out: list[SentenceRelevance] = []
    for i, chunk in enumerate(contexts):
        for s in split_sentences(chunk or "", lang):
            s_tokens = content_tokens(s, lang)
            s_keys = {t.key for t in s_tokens} | {t.surface for t in s_tokens}
            q_share = len(q_tokens & s_keys) / len(q_tokens) if q_tokens else 0.0
            a_share = None
            if a_keys is not None:
                a_share = (
                    (
                        sum(
                            1
                            for t in s_tokens
                            if t.key in a_keys or t.surface in a_keys
                        )
                        / len(s_tokens)
                    )
                    if s_tokens
                    else 0.0
                )
            relevant = q_share >= QUESTION_SHARE or (
                a_share is not None and a_share >= ANSWER_SHARE
            )
            out.append(SentenceRelevance(i, s, q_share, a_share, relevant))
    return out


def context_relevance_score(
    question: str,
    contexts: Sequence[str],
    answer: str | None = None,
    language: Language | None = None,
) -> tuple[float | None, list[SentenceRelevance]]:
    """Relevant context sentences / all context sentences (the RAGAS paper's context relevance)."""
    rel = sentence_relevance(question, contexts, answer, language)
    if not rel:
        return None, rel
    return sum(r.relevant for r in rel) / len(rel), rel


# --------------------------------------------------------------------------------------------------
# Correctness


@dataclass
class Correctness:
    tp: list[ClaimScore]
    fp: list[ClaimScore]
    fn: list[ClaimScore]

    @property
    def f1(self) -> float | None:
        tp, fp, fn = len(self.tp), len(self.fp), len(self.fn)
        if tp + fp + fn == 0:
            return None
        return tp / (tp + 0.5 * (fp + fn))


def classify_correctness(
    answer_claims: Sequence[str],
    reference_claims: Sequence[str],
    *,
    question: str = "",
    embedder: TextEmbedder | None = None,
    language: Language | None = None,
) -> Correctness:
    """TP: answer claims the reference supports; FP: the other answer claims; FN: reference claims the
    answer does not cover.

    A claim whose numbers the other side does not contain never matches, however much wording it shares:
    "payment by the 15th" against "payment by the 10th" is a wrong fact, not a paraphrase.
    """
    lang = language or detect_language(
        " ".join(answer_claims) + " " + " ".join(reference_claims)
    )
    ans = score_claims(
        answer_claims,
        build_evidence([" ".join(reference_claims)], lang),
        question=question,
        embedder=embedder,
    )
    ref = score_claims(
        reference_claims,
        build_evidence([" ".join(answer_claims)], lang),
        question=question,
        embedder=embedder,
    )
    return Correctness(
        tp=[c for c in ans if _matches(c)],
        fp=[c for c in ans if not _matches(c)],
        fn=[c for c in ref if not _matches(c)],
    )


def _matches(claim: ClaimScore) -> bool:
    return claim.supported and not claim.missing_numbers


# --------------------------------------------------------------------------------------------------
# Answer relevancy stand-in


def cosine(embedder: TextEmbedder, a: str, b: str) -> float:
    v = np.asarray(embedder.embed([a, b]), dtype=np.float32)
    return float(v[0] @ v[1])


def question_coverage(
    question: str, answer: str, language: Language | None = None
) -> float:
    """Share of the question's topic words (content words minus asking words) that the answer uses."""
    lang = language or detect_language(question + " " + answer)
    q = [
        t
        for t in content_tokens(question, lang)
        if t.key not in ASKING_WORDS and t.surface not in ASKING_WORDS
    ]
    if not q:
        return 0.0
    ev = build_evidence([answer], lang)
    return sum(
        1 for t in q if t.key in ev.keys or t.surface in ev.keys or t.surface in ev.norm
    ) / len(q)


def answer_relevancy_score(
    question: str, answer: str, embedder: TextEmbedder | None = None
) -> float:
    """The offline answer-relevancy value (``relevancy.answer_relevancy``); 0 for a noncommittal answer."""
    return answer_relevancy(question, answer, embedder).value
