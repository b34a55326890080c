"""Negation by antonym: "is optional" against "is required", 「飲食は可能です」 against 「飲食は禁止です」.

The negation check (``polarity``) sees a flip only where a negator (not / ない) is added or removed; an
answer that states the opposite with the antonym of the context's word shares every other word and passed.
Here a few concepts of permission, possibility and obligation, the commonest in rules and instructions, are
listed with their positive and negative words in both languages. A clause takes a stance on a concept
(+1 / -1) from the words it uses, a negator before an English word or after a Japanese one reversing it
("is not required" = optional, 「必要ありません」 = 不要). Two clauses are opposed when they take opposite
stances on one concept. A short list on purpose: each word here is a word whose opposite is unambiguous.

Pure functions; Japanese reads fugashi morphemes (``ja_morphemes``), with a substring fallback without it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rageval_core.core.text import Language, ja_morphemes

# concept -> (positive words, negative words); English words lower case, Japanese lemmas / surfaces
_EN: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "permit": (frozenset("allowed permitted welcome authorised authorized".split()),
               frozenset("prohibited forbidden banned disallowed".split())),
    "require": (frozenset("required require requires mandatory compulsory obligatory".split()),
                frozenset("optional voluntary".split())),
    "possible": (frozenset("possible able".split()), frozenset("impossible unable".split())),
    "eligible": (frozenset({"eligible"}), frozenset({"ineligible"})),
    "available": (frozenset({"available"}), frozenset({"unavailable"})),
}
_JA: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "permit": (frozenset("可能 可 許可 出来る できる".split()), frozenset("不可 不可能 禁止 厳禁".split())),
    "require": (frozenset("必要 必須 義務 要る".split()), frozenset("不要 不必要 任意".split())),
}
_EN_NEGATORS = frozenset("not never no cannot".split())
_EN_COPULAS = frozenset("is are be was were been being also always very most".split())  # "are welcome", not "Welcome to"
_EN_WORD = re.compile(r"[a-z]+(?:'[a-z]+)?")
_JA_NEG_AUX = frozenset({"ない", "ず", "ぬ", "ん", "無い"})
_JA_STOP = frozenset("。、，,．.！？!?")


def _en_stances(text: str) -> tuple[dict[str, set[int]], frozenset[str]]:
    words = _EN_WORD.findall(text.lower().replace("\u2019", "'"))
    stances: dict[str, set[int]] = {}
    used: set[str] = set()
    for i, w in enumerate(words):
        for concept, (pos, neg) in _EN.items():
            if w not in pos and w not in neg:
                continue
            sign = 1 if w in pos else -1
            before = words[max(0, i - 3):i]
            if w == "welcome" and not (before and (before[-1] in _EN_COPULAS or before[-1].endswith("'re"))):
                continue
            if any(b in _EN_NEGATORS or b.endswith("n't") for b in before):
                sign = -sign
            stances.setdefault(concept, set()).add(sign)
            used.add(w)
    return stances, frozenset(used)


def _ja_stances(text: str) -> tuple[dict[str, set[int]], frozenset[str]]:
    morphemes = ja_morphemes(text)
    stances: dict[str, set[int]] = {}
    used: set[str] = set()
    if morphemes is None:  # no fugashi: substrings, longest first, a negator right after reverses
        for concept, (pos, neg) in _JA.items():
            for word in sorted(pos | neg, key=len, reverse=True):
                for m in re.finditer(re.escape(word), text):
                    if any(word in longer and longer != word and longer in text[max(0, m.start() - 2):m.end() + 2]
                           for longer in pos | neg):
                        continue
                    sign = 1 if word in pos else -1
                    if re.match(r"(?:では|じゃ)?(?:ない|なかっ|ありません|ません)", text[m.end():]):
                        sign = -sign
                    stances.setdefault(concept, set()).add(sign)
                    used.add(word)
        return stances, frozenset(used)
    for k, morpheme in enumerate(morphemes):
        lemma = (morpheme.lemma or morpheme.surface).split("-", 1)[0]
        for concept, (pos, neg) in _JA.items():
            word = morpheme.surface if morpheme.surface in pos or morpheme.surface in neg else lemma
            if word not in pos and word not in neg:
                continue
            sign = 1 if word in pos else -1
            for after in morphemes[k + 1:k + 5]:
                if after.surface in _JA_STOP:
                    break
                after_lemma = (after.lemma or after.surface).split("-", 1)[0]
                if (after.pos1 == "助動詞" and after_lemma in _JA_NEG_AUX) or (
                        after.pos1 == "形容詞" and after_lemma in ("無い", "ない")):
                    sign = -sign
                    break
            stances.setdefault(concept, set()).add(sign)
            used.add(morpheme.surface)
    return stances, frozenset(used)


@lru_cache(maxsize=8192)
def stances(text: str, language: Language) -> tuple[dict[str, set[int]], frozenset[str]]:
    """Per concept the stances (+1 / -1) the text takes, and the antonym words it used (lower case)."""
    t = unicodedata.normalize("NFKC", text or "")
    return _ja_stances(t) if language == "ja" else _en_stances(t)


def opposed(a: str, b: str, language: Language) -> frozenset[str] | None:
    """The antonym words of both texts when they take opposite stances on one concept (each text one stance
    on it): "A permit is optional" / "A permit is required"; else ``None``."""
    sa, wa = stances(a, language)
    sb, wb = stances(b, language)
    for concept in sa.keys() & sb.keys():
        if len(sa[concept]) == 1 and len(sb[concept]) == 1 and sa[concept] != sb[concept]:
            return wa | wb
    return None
