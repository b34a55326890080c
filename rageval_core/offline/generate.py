"""The two generative steps done extractively, with no model: synthetic QA and a RAG answer.

Synthetic QA picks a section's most informative sentences, builds a question from each sentence's
key phrase (its topic before は / が, or its subject before the verb in English) and the section
heading, and uses the sentence itself as the ground truth. The RAG answer returns the context
sentences that best match the question. Both are labelled offline by the caller; they are good
enough to exercise the pipeline, not to replace an LLM.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from rageval_core.offline.support import TextEmbedder, squash
from rageval_core.core.text import Language, content_tokens, detect_language, split_sentences

_JA_TOPIC = re.compile(
    r"^(?:また|なお|さらに|ただし|そして|一方|特に)?[、,]?\s*(.{2,30}?)(?:とは|では|には|は|が)"
)
_EN_SUBJECT = re.compile(
    r"^(?:(?:also|however|in addition|additionally|moreover|note that|then)[, ]+)?(.{3,80}?)\s+"
    r"(?:is|are|was|were|has|have|had|must|should|can|cannot|will|may|might|shall|does|do|did|needs?|gets?|receives?)\b",
    re.IGNORECASE,
)


@dataclass
class QAPair:
    question: str
    answer: str
    key_phrase: str
    sentence_index: int


def key_phrase(sentence: str, language: Language) -> str:
    """The sentence's topic: text before は/が (ja) or the subject before the first auxiliary verb (en);
    otherwise its longest content word."""
    s = sentence.strip()
    m = (_JA_TOPIC if language == "ja" else _EN_SUBJECT).match(s)
    if m:
        phrase = m.group(1).strip(" 、,")
        if language == "en":
            phrase = re.sub(r"^(?:the|a|an)\s+", "", phrase, flags=re.IGNORECASE)
            if (
                len(phrase) > 1 and phrase[0].isupper() and phrase[1].islower()
            ):  # "Unused leave" -> "unused leave"
                phrase = phrase[0].lower() + phrase[1:]
        if phrase:
            return phrase
    tokens = content_tokens(s, language)
    return max((t.surface for t in tokens), key=len, default=s[:20])


def _question(key: str, heading: str, title: str, language: Language) -> str:
    place = heading.strip() or title.strip()
    if language == "ja":
        return (
            f"「{place}」によると、{key}についてはどのように定められていますか？"
            if place
            else f"{key}についてはどのように定められていますか？"
        )
    return (
        f'According to "{place}", what is stated about {key}?'
        if place
        else f"What is stated about {key}?"
    )


def informative_sentences(text: str, language: Language) -> list[tuple[int, str]]:
    """(index, sentence) of the text's informative sentences (long enough, two distinct content words),
    most distinct content words first, then document order."""
    min_len = 12 if language == "ja" else 30
    ranked = []
    for i, s in enumerate(split_sentences(text, language)):
        distinct = {t.key for t in content_tokens(s, language)}
        if len(s) >= min_len and len(distinct) >= 2:
            ranked.append((-len(distinct), i, s))
    return [(i, s) for _, i, s in sorted(ranked)]


def synth_qa(
    title: str, heading: str, text: str, n: int, language: Language | None = None
) -> list[QAPair]:
    """Up to ``n`` extractive QA pairs from one section, in document order."""
    lang = language or detect_language(text)
    chosen = sorted(informative_sentences(text, lang)[: max(0, n)])
    pairs = []
    for i, s in chosen:
        key = key_phrase(s, lang)
        pairs.append(QAPair(_question(key, heading, title, lang), s, key, i))
    return pairs


@dataclass
class RagAnswer:
    answer: str
    sentences: list[str]
    scores: list[float]
    found: bool


NOT_FOUND = {
    "ja": "提供された文脈には、この質問に答える情報が見つかりませんでした。",
    "en": "The provided contexts do not contain information that answers this question.",
}


def rag_answer(
    question: str,
    contexts: Sequence[str],
    *,
    embedder: TextEmbedder | None = None,
    language: Language | None = None,
    max_sentences: int = 2,
) -> RagAnswer:
    """The context sentences that best match the question (share of its content words, plus a squashed
    cosine when an embedder is given), in their original order; a fixed "not found" answer otherwise."""
    lang = language or detect_language(question + " " + " ".join(contexts[:1]))
    sentences = [s for c in contexts for s in split_sentences(c or "", lang)]
    q_keys = {t.key for t in content_tokens(question, lang)}
    if not sentences or not q_keys:
        return RagAnswer(NOT_FOUND[lang], [], [], False)
    shares = []
    for s in sentences:
        toks = content_tokens(s, lang)
        keys = {t.key for t in toks} | {t.surface for t in toks}
        shares.append(len(q_keys & keys) / len(q_keys))
    scores = np.asarray(shares, dtype=float)
    if embedder is not None:
        v = np.asarray(embedder.embed([question] + sentences), dtype=np.float32)
        cos = v[1:] @ v[0]
        scores = 0.6 * scores + 0.4 * np.array([squash(float(c)) for c in cos])
    order = [int(i) for i in np.argsort(-scores, kind="stable") if shares[int(i)] > 0][
        :max_sentences
    ]
    if not order:
        return RagAnswer(NOT_FOUND[lang], [], [], False)
    order.sort()
    picked = [sentences[i] for i in order]
    joiner = "" if lang == "ja" else " "
    return RagAnswer(
        joiner.join(picked), picked, [round(float(scores[i]), 4) for i in order], True
    )
