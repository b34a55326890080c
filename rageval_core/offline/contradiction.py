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
from rageval_core.offline.antonyms import opposed, stances
from rageval_core.offline.numerals import number_words, with_digits
from rageval_core.offline.polarity import clauses, content_keys, flipped, negation_count, polarity_flipped

__all__ = ["DATE", "NAME", "NUMBER", "POLARITY", "UNIT", "Finding", "clauses", "date_swap", "fold", "name_swap",
           "negation_count", "number_swap", "polarity_flipped", "sentence_findings"]

POLARITY = "negation"
NAME = "entity"
NUMBER = "number"
DATE = "date"
UNIT = "unit"

def frame_overlap(claim: str, sentence: str, language: Language, skip: frozenset[str] = frozenset()) -> float:
    """Share of the claim's content words (minus ``skip``: the slot that differs) found in the sentence:
    how surely the two speak of the same thing. 0.0 for a claim with no content words left."""
    tokens = [t for t in content_tokens(claim, language) if t.surface not in skip and t.key not in skip]
    if not tokens:
        return 0.0
    keys = content_keys(sentence, language)
    norm = normalize(sentence)
    hit = sum(1 for t in tokens if t.key in keys or t.surface in keys or t.surface in norm)
    return hit / len(tokens)


# Sentence-initial English words that are capitalised only for being first: discourse markers and
# ordinals ("Additionally, ...", "Third, ..."); any other -ly adverb is caught by its ending.
_EN_OPENERS = frozenset("""another furthermore moreover nevertheless nonetheless however meanwhile therefore
    thus hence instead overall first second third fourth fifth last next lastly finally also besides still yet
    otherwise likewise similarly consequently accordingly indeed rather although though while whereas because
    since unless despite even perhaps sometimes often many most several some different artificial""".split())
_JA_VOICED = str.maketrans({"ヴ": "ブ", "ヂ": "ジ", "ヅ": "ズ", "・": "", "･": "", "－": "", "‐": "", "=": "", "＝": ""})
_JA_VU = (("ブァ", "バ"), ("ブィ", "ビ"), ("ブェ", "ベ"), ("ブォ", "ボ"))


def fold(text: str) -> str:
    """A spelling-insensitive form for looking a name up: accents dropped (Alemanía = Alemania), hyphens
    read as spaces (P-waves = P waves), ヴェ read as ベ, katakana middle dots removed."""
    t = "".join(_latin_base(c) for c in unicodedata.normalize("NFKC", text.lower())).translate(_JA_VOICED)
    for a, b in _JA_VU:
        t = t.replace(a, b)
    return " ".join(re.sub(r"[\-–]+", " ", t).split())


@lru_cache(maxsize=4096)
def _latin_base(c: str) -> str:
    """A Latin letter without its accent (í -> i); any other character as it is (ベ keeps its mark)."""
    if c.isascii() or "LATIN" not in unicodedata.name(c, ""):
        return c
    return "".join(x for x in unicodedata.normalize("NFKD", c) if not unicodedata.combining(x))


@lru_cache(maxsize=256)
def _folded(text: str) -> str:
    return fold(text)


@lru_cache(maxsize=8192)
def names(text: str, language: Language) -> frozenset[str]:
    """Lower-cased proper names: ``entities`` (``core.names``: no katakana loanwords) plus, in Japanese,
    fugashi's proper nouns (固有名詞: kanji names such as 東京 or 田中), and in English
    a capitalised sentence-initial word that is not a stop word, a discourse marker or an -ly adverb."""
    found = set(entities(text, language))
    t = unicodedata.normalize("NFKC", text or "")
    if language == "ja":
        for m in ja_morphemes(t) or ():
            if m.pos2 == "固有名詞" and len(m.surface) >= 2:
                found.add(m.surface.lower())
        return frozenset(found)
    first = re.match(r"\s*[\"“(]?([A-Z][a-z][A-Za-z\-]+)", t)
    if first:
        word = first.group(1).lower()
        if word not in EN_STOP_WORDS and word not in _EN_OPENERS and not word.endswith("ly"):
            found.add(word)
    return frozenset(found)


def _mentioned(name: str, folded: str) -> bool:
    """The name is in the folded text, also as a country's short form (米国 as 米, 英国 as 英)."""
    key = fold(name)
    return key in folded or (len(key) == 2 and key.endswith("国") and key[0] in folded)


def name_swap(claim: str, sentence: str, language: Language, evidence_norm: str, question: str = "") -> tuple[str, str] | None:
    """(claim's name, sentence's name) when the claim names something the whole evidence never mentions
    (nor the question; spellings folded) where the sentence names something the claim does not: 大阪 for 東京."""
    q = _folded(normalize(question))
    ev = _folded(evidence_norm)
    claim_folded = fold(normalize(claim))
    absent = sorted(n for n in names(claim, language) if not _mentioned(n, ev) and not _mentioned(n, q))
    if not absent:
        return None
    other = sorted(n for n in names(sentence, language) if fold(n) not in claim_folded)
    return (absent[0], other[0]) if other else None


_NUMBER_AT = re.compile(r"\d+(?:\.\d+)?")
_JA_COUNTER = re.compile(r"[\u4e00-\u9fffァ-ヺa-z%°$€£¥]")  # 3月, 20冊, 5キロ, 2000m, 80%
_BARE = "(bare)"  # the slot every Japanese number without a counter shares (必ず0.9です vs 通常0.2〜0.5の間)
_EN_SLOT = re.compile(r"[a-z%°$€£¥]+|[^\sa-z0-9]")


def _slots(text: str, language: Language) -> dict[str, set[tuple[str, str]]]:
    """Per arabic number in the text, the (word before, word after) it sits between: its frame. A word is
    an English word or sign, or one Japanese character (a counter: 3月, 20冊); Japanese numbers with no
    counter after them share one slot (a bare value: 必ず0.9です against 通常0.2〜0.5の間)."""
    t = re.sub(r"(?<=\d),(?=\d{3})", "", unicodedata.normalize("NFKC", text or "").lower())
    out: dict[str, set[tuple[str, str]]] = {}
    for m in _NUMBER_AT.finditer(t):
        before, after = t[: m.start()].rstrip(), t[m.end():].lstrip()
        if language == "ja":
            prev, nxt = before[-1:], after[:1]
            if not _JA_COUNTER.match(nxt):  # no counter or unit after it (0.9です, 0.5の間): a bare number's slot
                prev, nxt = "", _BARE
        else:
            prev = (_EN_SLOT.findall(before[-24:]) or [""])[-1]
            nxt = (_EN_SLOT.findall(after[:24]) or [""])[0]
        whole, _, frac = m.group(0).partition(".")
        canon = (whole.lstrip("0") or "0") + ("." + frac.rstrip("0") if frac.rstrip("0") else "")
        out.setdefault(canon, set()).add((prev, nxt))
    return out


def _same_slot(mine: set[tuple[str, str]] | None, theirs: set[tuple[str, str]] | None) -> bool:
    """Two numbers fill the same slot when they share the word before or the word after (a number read
    from kanji or a scale word has no frame here: any slot)."""
    if not mine or not theirs:
        return True
    return slot_score(mine, theirs) >= 1


def slot_score(mine: set[tuple[str, str]], theirs: set[tuple[str, str]] | None) -> int:
    """How closely two numbers' frames match: 2 when the word before and the word after are both the same
    (「延長は2回」 / 「延長は1回」, "takes 30 minutes" / "takes 55 minutes"), 1 when one is, else 0."""
    return max((bool(a[0] and a[0] == b[0]) + bool(a[1] and a[1] == b[1]) for a in mine for b in theirs or ()),
               default=0)


_JA_DATE_COUNTERS = frozenset("年月日時分秒")
_JA_GENERIC_BEFORE = frozenset("第万億兆")


def _ja_generic(slot: tuple[str, str]) -> bool:
    """A Japanese slot too common to tell two facts apart: a date or clock time (6月12日 and 4月27日 share
    「月…日」), an ordinal (第1セット / 第2セット), the tail of a scaled number (17万100人). On the dev halves
    those made a value that occurs elsewhere read as swapped in faithful news summaries."""
    return slot[1] in _JA_DATE_COUNTERS or slot[0] in _JA_GENERIC_BEFORE


def number_swap(claim: str, sentence: str, evidence_numbers: set[str], exempt: set[str],
                language: Language = "en") -> tuple[str, str] | None:
    """(claim's number, sentence's number) when the sentence holds a number the claim lacks in the claim
    number's slot, and either the claim number is nowhere in the evidence (nor explained by a correct unit
    conversion, ``exempt``) and the slot shares a word (1.8 km for 1.2 km, not 3月 for 2000m), or the claim
    number does occur elsewhere in the evidence but, where the claim writes it, this sentence has another value
    in exactly its slot (both words) and not the claim's: a value moved from another fact ("up to 5 days" where
    5 is the pack size). One shared word is not enough there: on dev, Japanese particles and counters (は, 年)
    made it veto faithful summaries.
    Pass digit views (``numerals.with_digits``) to compare numbers written as words."""
    mine = numbers(claim)
    other = sorted(numbers(sentence) - mine)
    if not other:
        return None
    claim_slots, sentence_slots = _slots(claim, language), _slots(sentence, language)
    for a in sorted(mine - evidence_numbers - exempt):
        for b in other:
            if _same_slot(claim_slots.get(a), sentence_slots.get(b)):
                return a, b
    for a in sorted((mine & evidence_numbers) - exempt):
        for slot in sorted(claim_slots.get(a) or ()):  # each place the claim writes the number
            if slot_score({slot}, sentence_slots.get(a)) == 2 or (language == "ja" and _ja_generic(slot)):
                continue
            for b in other:
                if slot_score({slot}, sentence_slots.get(b)) == 2:
                    return a, b
    return None


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
        months = sorted(s_months - c_months)
        if months:
            return str(month), str(months[0])
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


def _polarity(claim_parts: list[str], sentence: str, language: Language, skip: frozenset[str],
              flips: dict[int, tuple[float, str]], agree: dict[int, float]) -> None:
    """Clause against clause, words shared both ways: a flip where the polarity differs about the same
    negated word (``polarity.flipped``) or the two take opposite stances by antonyms (``antonyms.opposed``:
    optional / required, 可能 / 禁止; the antonyms themselves are not counted as shared or missing words, and the
    level is the share of the claim's words in the clause: a stance word names what it is about);
    otherwise the pair agrees. Updates, per claim clause, the best flip (level, evidence clause) and the best
    agreement."""
    for clause in clauses(sentence):
        for k, part in enumerate(claim_parts):
            words = opposed(part, clause, language)
            if words is not None:  # the claim's words in the clause; the clause need only share one of them
                level = (frame_overlap(part, clause, language, skip | words)
                         if frame_overlap(clause, part, language, words) > 0.0 else 0.0)
                if level > flips.get(k, (0.0, ""))[0]:
                    flips[k] = (level, clause)
                continue
            both = min(frame_overlap(part, clause, language, skip), frame_overlap(clause, part, language))
            if both <= 0.0:
                continue
            if flipped(part, clause, language):
                if both > flips.get(k, (0.0, ""))[0]:
                    flips[k] = (both, clause)
            else:
                agree[k] = max(agree.get(k, 0.0), both)


def sentence_findings(claim: str, sentences: list[str], language: Language, *, evidence_norm: str,
                      evidence_text: str, evidence_numbers: set[str], exempt_numbers: set[str],
                      question: str = "") -> list[Finding]:
    """Per kind, the contradicting sentence sharing most of the claim's wording. A polarity flip is
    between a clause of the claim and a clause of a sentence, and counts only where no clause of the same
    polarity overlaps that claim clause as much (context that says both is not a contradiction)."""
    best: dict[str, Finding] = {}
    claim_names = names(claim, language)
    claim_digits = with_digits(claim, language)
    skip = (frozenset(claim_names - {n for n in claim_names if n in evidence_norm}) | frozenset(numbers(claim_digits))
            | number_words(claim))
    parts = clauses(claim)
    flips: dict[int, tuple[float, str]] = {}
    agree: dict[int, float] = {}
    where: dict[str, str] = {}
    for s in sentences:
        overlap = frame_overlap(claim, s, language, skip)
        if overlap <= 0.0:
            continue
        if normalize(claim) in normalize(s):  # a sentence holding the claim word for word agrees with it
            agree.update({k: 1.0 for k in range(len(parts))})
        else:
            _polarity(parts, s, language, skip, flips, agree)
        for clause in clauses(s):
            where.setdefault(clause, s)
        found: list[tuple[str, str, str, float]] = []
        swap = name_swap(claim, s, language, evidence_norm, question)
        if swap:
            found.append((NAME, *swap, overlap))
        num = number_swap(claim_digits, with_digits(s, language), evidence_numbers, exempt_numbers, language)
        if num:
            found.append((NUMBER, *num, overlap))
        day = date_swap(claim_digits, with_digits(s, language), language, with_digits(evidence_text, language))
        if day:
            found.append((DATE, *day, overlap))
        for kind, mine, theirs, level in found:
            if kind not in best or level > best[kind].overlap:
                best[kind] = Finding(kind, mine, theirs, level, s)
    for k, (level, clause) in flips.items():
        if level > agree.get(k, 0.0) and (POLARITY not in best or level > best[POLARITY].overlap):
            best[POLARITY] = Finding(POLARITY, _polarity_word(parts[k], clause, language),
                                     _polarity_word(clause, parts[k], language), level, where.get(clause, clause))
    return sorted(best.values(), key=lambda f: -f.overlap)


def _polarity_word(text: str, other: str, language: Language) -> str:
    """What the text says: its antonym words where the two take opposite stances by antonyms (required /
    optional), else 否定 / 肯定 (negated / affirmed) by its negators."""
    if opposed(text, other, language) is not None:
        return ", ".join(sorted(stances(text, language)[1]))
    if language == "ja":
        return "否定" if negation_count(text, language) % 2 else "肯定"
    return "negated" if negation_count(text, language) % 2 else "affirmed"
