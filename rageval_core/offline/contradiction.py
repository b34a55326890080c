"""Contradiction checks: a claim that overlaps a context sentence but says the opposite of it.

Lexical coverage cannot see a flipped negation (「できる」 against 「できない」 shares every content word), a
swapped name (the same sentence with 大阪 for 東京) or a swapped date (3月5日 against 5月3日: the same
numbers). Each check here is its own small function on one claim and one evidence sentence (or the whole
evidence); ``support`` runs them per claim and vetoes a claim whose best contradicting sentence shares at
least the fitted ``frame gate`` of its content words (``bench/fit_offline.py`` chooses the gate on the dev
halves). Units and currencies are in ``units``.

Pure functions; Japanese reads fugashi morphemes (``ja_morphemes``), with a regex fallback without it.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from rageval_core.core.names import entities
from rageval_core.core.text import (
    EN_STOP_WORDS,
    Language,
    content_tokens,
    ja_morphemes,
    normalize,
    numbers,
)

POLARITY = "negation"
NAME = "entity"
NUMBER = "number"
DATE = "date"
UNIT = "unit"

_EN_NEGATORS = frozenset("not no never nor without none nobody nothing neither cannot nowhere".split())
_EN_WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")
_JA_NEG_AUX = frozenset({"ない", "ず", "ぬ", "ん"})  # lemmas of negative auxiliaries (ません = ませ + ん(ず))
_JA_NEG_FALLBACK = re.compile(r"ない|なかっ|ません|ず[にのと、。]|ぬ")


@lru_cache(maxsize=8192)
def negation_count(text: str, language: Language) -> int:
    """How many negators the text holds: not / n't / never / no / without ... in English; the
    auxiliaries ない / ず / ぬ / ん (ません, なかった, 〜ずに) and the adjective 無い in Japanese."""
    t = unicodedata.normalize("NFKC", text or "")
    if language != "ja":
        words = _EN_WORDS.findall(t.lower().replace("\u2019", "'"))
        return sum(1 for w in words if w in _EN_NEGATORS or w.endswith("n't"))
    morphemes = ja_morphemes(t)
    if morphemes is None:
        return len(_JA_NEG_FALLBACK.findall(t))
    count = 0
    for m in morphemes:
        lemma = (m.lemma or m.surface).split("-", 1)[0]
        if m.pos1 == "助動詞" and lemma in _JA_NEG_AUX:
            count += 1
        elif m.pos1 == "形容詞" and lemma in ("無い", "ない"):
            count += 1
    return count


def polarity_flipped(claim: str, sentence: str, language: Language) -> bool:
    """True when one of the two is negated and the other is not (parity of negators differs)."""
    return negation_count(claim, language) % 2 != negation_count(sentence, language) % 2


@lru_cache(maxsize=8192)
def _keys(text: str, language: Language) -> frozenset[str]:
    out: set[str] = set()
    for tok in content_tokens(text, language):
        out.add(tok.key)
        out.add(tok.surface)
    return frozenset(out)


def frame_overlap(claim: str, sentence: str, language: Language, skip: frozenset[str] = frozenset()) -> float:
    """Share of the claim's content words (minus ``skip``: the slot that differs) found in the sentence:
    how surely the two speak of the same thing. 0.0 for a claim with no content words left."""
    tokens = [t for t in content_tokens(claim, language) if t.surface not in skip and t.key not in skip]
    if not tokens:
        return 0.0
    keys = _keys(sentence, language)
    norm = normalize(sentence)
    hit = sum(1 for t in tokens if t.key in keys or t.surface in keys or t.surface in norm)
    return hit / len(tokens)


@lru_cache(maxsize=8192)
def names(text: str, language: Language) -> frozenset[str]:
    """Lower-cased proper names: ``entities`` plus, in Japanese, fugashi's proper nouns (固有名詞: kanji
    names such as 東京 or 田中), and in English a capitalised sentence-initial word that is not a stop word."""
    found = set(entities(text, language))
    t = unicodedata.normalize("NFKC", text or "")
    if language == "ja":
        for m in ja_morphemes(t) or ():
            if m.pos2 == "固有名詞" and len(m.surface) >= 2:
                found.add(m.surface.lower())
        return frozenset(found)
    first = re.match(r"\s*[\"“(]?([A-Z][a-z][A-Za-z\-]+)", t)
    if first and first.group(1).lower() not in EN_STOP_WORDS:
        found.add(first.group(1).lower())
    return frozenset(found)


def name_swap(claim: str, sentence: str, language: Language, evidence_norm: str, question: str = "") -> tuple[str, str] | None:
    """(claim's name, sentence's name) when the claim names something the whole evidence never mentions
    (nor the question) where the sentence names something the claim does not: 大阪 for 東京."""
    q = normalize(question)
    claim_norm = normalize(claim)
    absent = sorted(n for n in names(claim, language) if n not in evidence_norm and n not in q)
    if not absent:
        return None
    other = sorted(n for n in names(sentence, language) if n not in claim_norm)
    return (absent[0], other[0]) if other else None


def number_swap(claim: str, sentence: str, evidence_numbers: set[str], exempt: set[str]) -> tuple[str, str] | None:
    """(claim's number, sentence's number) when a claim number is nowhere in the evidence (nor explained
    by a correct unit conversion, ``exempt``) and the sentence holds a number the claim lacks."""
    mine = numbers(claim)
    absent = sorted(mine - evidence_numbers - exempt)
    if not absent:
        return None
    other = sorted(numbers(sentence) - mine)
    return (absent[0], other[0]) if other else None


_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}
_MONTH_ALT = "|".join(sorted(_MONTHS, key=len, reverse=True)) + r"|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
_EN_DAY_MONTH = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_ALT})\b\.?")
_EN_MONTH_DAY = re.compile(rf"\b({_MONTH_ALT})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b")
_EN_MONTH = re.compile(rf"\b({_MONTH_ALT})\b")
_JA_MONTH_DAY = re.compile(r"(\d{1,2})月(\d{1,2})日")
_JA_MONTH = re.compile(r"(\d{1,2})月")


def _month(word: str) -> int:
    word = word.lower().rstrip(".")
    if word in _MONTHS:
        return _MONTHS[word]
    return next(i for m, i in _MONTHS.items() if m.startswith(word[:3]))


@lru_cache(maxsize=8192)
def dates(text: str, language: Language) -> tuple[frozenset[tuple[int, int]], frozenset[int]]:
    """(month-day pairs, months) named in the text: 3月5日 -> (3, 5); "5 March" / "March 5" -> (3, 5).
    Years are numbers, checked by the number check; these catch what numbers cannot (day and month swapped,
    a month name changed). English "may" counts only capitalised (May), not the modal verb."""
    t = unicodedata.normalize("NFKC", text or "")
    if language == "ja":
        pairs = {(int(m), int(d)) for m, d in _JA_MONTH_DAY.findall(t) if 1 <= int(m) <= 12}
        months = {int(m) for m in _JA_MONTH.findall(t) if 1 <= int(m) <= 12}
        return frozenset(pairs), frozenset(months)
    masked = re.sub(r"\bmay\b", " ", t)  # the modal verb; "May" stays
    low = masked.lower()
    pairs = {(_month(m), int(d)) for d, m in _EN_DAY_MONTH.findall(low) if 1 <= int(d) <= 31}
    pairs |= {(_month(m), int(d)) for m, d in _EN_MONTH_DAY.findall(low) if 1 <= int(d) <= 31}
    months = {_month(m) for m in _EN_MONTH.findall(low)}
    return frozenset(pairs), frozenset(months)


def date_swap(claim: str, sentence: str, language: Language, evidence_text: str) -> tuple[str, str] | None:
    """(claim's date, sentence's date) when the claim names a month-day or month the whole evidence never
    names while the sentence names another one: 5月3日 for 3月5日, "May" for "March"."""
    c_pairs, c_months = dates(claim, language)
    e_pairs, e_months = dates(evidence_text, language)
    s_pairs, s_months = dates(sentence, language)
    for pair in sorted(c_pairs - e_pairs):
        other = sorted(s_pairs - c_pairs)
        if other:
            return f"{pair[0]}/{pair[1]}", f"{other[0][0]}/{other[0][1]}"
    for month in sorted(c_months - e_months):
        other = sorted(s_months - c_months)
        if other:
            return str(month), str(other[0])
    return None


@dataclass(frozen=True)
class Finding:
    """One contradiction: its kind, what the claim says against what the evidence says, and how much of
    the claim's wording the contradicting sentence shares (``overlap``; the veto needs the fitted gate)."""

    kind: str
    claim_says: str
    evidence_says: str
    overlap: float
    sentence: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "claim_says": self.claim_says, "evidence_says": self.evidence_says,
                "overlap": round(self.overlap, 4), "sentence": self.sentence}


def sentence_findings(claim: str, sentences: list[str], language: Language, *, evidence_norm: str,
                      evidence_text: str, evidence_numbers: set[str], exempt_numbers: set[str],
                      question: str = "") -> list[Finding]:
    """Per kind, the contradicting sentence sharing most of the claim's wording. A polarity flip counts
    only where no sentence of the same polarity overlaps the claim as much (context that says both is
    not a contradiction of the claim)."""
    best: dict[str, Finding] = {}
    agree = 0.0
    claim_names = names(claim, language)
    skip = frozenset(claim_names - {n for n in claim_names if n in evidence_norm}) | frozenset(numbers(claim))
    for s in sentences:
        overlap = frame_overlap(claim, s, language, skip)
        if overlap <= 0.0:
            continue
        found: list[tuple[str, str, str, float]] = []
        # polarity per clause, words shared both ways: "X does not carry A; it measures B" negates A only;
        # a sentence that holds the claim word for word agrees with it, whatever its clauses say
        verbatim = normalize(claim) in normalize(s)
        agree = 1.0 if verbatim else agree
        for clause in () if verbatim else clauses(s):
            both = min(frame_overlap(claim, clause, language, skip), frame_overlap(clause, claim, language))
            if both <= 0.0:
                continue
            if polarity_flipped(claim, clause, language):
                found.append((POLARITY, _polarity_word(claim, language), _polarity_word(clause, language), both))
            else:
                agree = max(agree, both)
        swap = name_swap(claim, s, language, evidence_norm, question)
        if swap:
            found.append((NAME, *swap, overlap))
        num = number_swap(claim, s, evidence_numbers, exempt_numbers)
        if num:
            found.append((NUMBER, *num, overlap))
        day = date_swap(claim, s, language, evidence_text)
        if day:
            found.append((DATE, *day, overlap))
        for kind, mine, theirs, level in found:
            if kind not in best or level > best[kind].overlap:
                best[kind] = Finding(kind, mine, theirs, level, s)
    if POLARITY in best and best[POLARITY].overlap <= agree:
        del best[POLARITY]
    return sorted(best.values(), key=lambda f: -f.overlap)


_CLAUSE_CUT = re.compile(r"[;；:：,，、]\s*|\s+(?:but|whereas|while|although)\s+|しかし|(?<=[がけど])、")


def clauses(sentence: str) -> list[str]:
    """The sentence cut at clause boundaries (; , 、 but / しかし), pieces of two characters or more."""
    return [c for c in _CLAUSE_CUT.split(sentence) if c and len(c.strip()) >= 2] or [sentence]


def _polarity_word(text: str, language: Language) -> str:
    if language == "ja":
        return "否定" if negation_count(text, language) % 2 else "肯定"
    return "negated" if negation_count(text, language) % 2 else "affirmed"
