"""Proper names in ja/en text: what the offline judge's missing-name feature and name-swap check compare.

English: capitalised or all-caps words that are not sentence-initial or stop words. Japanese: katakana runs
(foreign names) and Latin words, except katakana loanwords the dictionary knows as common nouns (チーム,
カメラ), which read as names to a regex and made faithful paraphrases "miss a name".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from rageval_core.core.text import EN_STOP_WORDS, Language, detect_language, ja_morphemes


_KATAKANA_RUN = re.compile(r"[ァ-ヺー]{3,}")
_KATAKANA_ONLY = re.compile(r"[ァ-ヺー・]+")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]{2,}")
_EN_ENTITY = re.compile(r"\b(?:[A-Z][A-Za-z0-9&\-]+|[A-Z]{2,})\b")



def entities(text: str, language: Language | None = None) -> set[str]:
    """Lower-cased names: katakana runs and Latin words for Japanese; capitalised or all-caps words
    (except the sentence-initial word and stop words) for English."""
    t = unicodedata.normalize("NFKC", text or "")
    lang = language or detect_language(t)
    if lang == "ja":
        common = _katakana_common_words(t)
        found = {m.group(0) for m in _KATAKANA_RUN.finditer(t) if not _made_of(m.group(0), common)}
        found |= {m.group(0).lower() for m in _LATIN_WORD.finditer(t)}
        return found
    found = set()
    for m in _EN_ENTITY.finditer(t):
        word = m.group(0)
        before = t[: m.start()].rstrip()
        sentence_initial = (
            not before or before[-1] in '.!?:\n"“(' or before.endswith("- ")
        )
        if sentence_initial and not word.isupper():
            continue
        if word.lower() in EN_STOP_WORDS:
            continue
        found.add(word.lower())
    return found


def _katakana_common_words(text: str) -> tuple[str, ...]:
    """Katakana loanwords the dictionary knows as common nouns (チーム, カメラ, フェリー: lemma in katakana),
    longest first; empty without fugashi. A katakana run made only of them is a word, not a name: a name the
    dictionary does not know is unknown (オカフォー) or splits into pieces with kanji lemmas (オカ → 丘)."""
    words = {m.surface for m in ja_morphemes(text) or ()
             if m.pos2 == "普通名詞" and m.lemma and _KATAKANA_ONLY.fullmatch(m.lemma.split("-")[0])
             and _KATAKANA_ONLY.fullmatch(m.surface)}
    return tuple(sorted(words, key=len, reverse=True))


def _made_of(run: str, words: Sequence[str]) -> bool:
    """True when ``run`` is nothing but ``words`` (and the middle dot / long-vowel marks between them)."""
    rest = run
    for w in words:
        rest = rest.replace(w, "")
    return bool(words) and not rest.strip("・ー")
