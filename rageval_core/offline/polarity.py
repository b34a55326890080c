"""Negation and its scope: is a claim clause the opposite of an evidence clause, or only worded differently?

Counting negators is not enough on real answers: 「命に別状はなかった」 beside 「女性は腕に深い裂傷を受けた」
shares the subject but negates something the context never mentions, and a claim that copies a sentence with
two clauses ("they often had no idea what to call them, so they asked the locals") must not be compared, whole,
with one of the sentence's clauses. So both sides are cut into clauses, and a pair of clauses is a flip only
when a **negated word** (the head the negator attaches to: 「通行できない」 →
通行, "does not carry" → carry) is in both clauses and negated in only one of them: the two say opposite
things about the same predicate. Contrasts and advice (「AではなくB」 "not A but B", 「〜ないように」), "were it not
for X" (because of X) and the superlative "no other X is as" are not denials.

Pure functions; Japanese reads fugashi morphemes (``ja_morphemes``), with a regex fallback without it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rageval_core.core.text import EN_STOP_WORDS, Language, content_tokens, ja_morphemes, stem

_EN_NEGATORS = frozenset("not no never nor without none nobody nothing neither cannot nowhere".split())
_EN_WORDS = re.compile(r"[a-z]+(?:'[a-z]+)?")
_JA_NEG_AUX = frozenset({"ない", "ず", "ぬ", "ん"})  # lemmas of negative auxiliaries (ません = ませ + ん(ず))
_JA_NEG_FALLBACK = re.compile(r"ない|なかっ|ません|ず[にのと、。]|ぬ")
# a negated head is the nearest content morpheme before the negator, skipping light verbs (する, いる, ある),
# auxiliaries, particles, suffixes and adverbs (ほぼない: the head is what ほぼ modifies)
_JA_HEAD_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞"})
_JA_LIGHT = frozenset("為る 居る 有る 成る 出来る 来る 行く 置く 仕舞う 見る 貰う 呉れる 頂く".split())
_CLAUSE_CUT = re.compile(
    r"[;；:：,，、]\s*|\s+[–—-]+\s+|\s+(?:but|whereas|while|although|because|since)\s+|しかし|(?<=[がけど])、")


_JA_PRO_FORMS = frozenset({"そう", "こう", "ああ", "どう"})  # 「そうでない」: "not so", a pro-form, no head


def _ja_head(morphemes: tuple, k: int) -> str | None:
    """The lemma of the nearest content morpheme before morpheme ``k`` (None for a pro-form: そうでない)."""
    for back in reversed(morphemes[:k]):
        lemma = (back.lemma or back.surface).split("-", 1)[0]
        if back.pos1 == "副詞" and lemma in _JA_PRO_FORMS:
            return None
        if back.pos1 in _JA_HEAD_POS and back.pos2 not in ("非自立可能", "助動詞語幹") and lemma not in _JA_LIGHT:
            return lemma.lower()
    return None


def _ja_exempt(morphemes: tuple, k: int) -> bool:
    """Not a denial: the contrasting 「AではなくB」, or the advice 「〜ないように（注意する）」 (not 〜ないようになる)."""
    m = morphemes[k]
    after = [x.lemma or x.surface for x in morphemes[k + 1:k + 4]]
    if (m.surface == "なく" and k >= 2 and morphemes[k - 1].surface == "は" and morphemes[k - 2].surface == "で"
            and k + 1 < len(morphemes) and morphemes[k + 1].pos1 in ("名詞", "接頭辞", "形状詞")):
        return True
    return len(after) >= 2 and after[0].startswith("様") and after[1] == "だ" and not (len(after) > 2 and after[2] == "成る")


@lru_cache(maxsize=8192)
def _ja_negators(text: str) -> tuple[str | None, ...]:
    """The head lemma of each Japanese negator that denies (None when the head is unknown)."""
    morphemes = ja_morphemes(text)
    if morphemes is None:
        return tuple(None for _ in _JA_NEG_FALLBACK.findall(text))
    out: list[str | None] = []
    for k, m in enumerate(morphemes):
        lemma = (m.lemma or m.surface).split("-", 1)[0]
        if not ((m.pos1 == "助動詞" and lemma in _JA_NEG_AUX) or (m.pos1 == "形容詞" and lemma in ("無い", "ない"))):
            continue
        if not _ja_exempt(morphemes, k):
            out.append(_ja_head(morphemes, k))
    return tuple(out)


def _en_exempt(words: list[str], i: int) -> bool:
    """Not a denial: "were it not for X" / "if not for X" / "if it weren't for X" (because of X), and the
    superlative "no other X is as ..."."""
    w, before, after = words[i], words[max(0, i - 2):i], words[i + 1:i + 2]
    if w == "not" and (before in (["were", "it"], ["had", "it"]) or before[-1:] == ["if"]):
        return True
    if w in ("weren't", "wasn't") and before[-2:] == ["if", "it"] and after == ["for"]:
        return True
    return w == "no" and after == ["other"]


@lru_cache(maxsize=8192)
def _en_negators(text: str) -> tuple[str | None, ...]:
    """Per English negator, its head: the next word that is not a stop word ("does not carry" → carr)."""
    words = _EN_WORDS.findall(text.lower().replace("\u2019", "'"))
    out: list[str | None] = []
    for i, w in enumerate(words):
        if (w in _EN_NEGATORS or w.endswith("n't")) and not _en_exempt(words, i):
            head = next((x for x in words[i + 1:] if x not in EN_STOP_WORDS and len(x) > 1
                         and x not in _EN_NEGATORS and not x.endswith("n't")), None)
            out.append(head_key(head) if head else None)
    return tuple(out)


def head_key(word: str) -> str:
    """A word's crude stem without a final e / i / y, so carry, carries and carried meet (carr)."""
    return stem(word).rstrip("eiy") or word


def _negators(text: str, language: Language) -> tuple[str | None, ...]:
    t = unicodedata.normalize("NFKC", text or "")
    return _en_negators(t) if language != "ja" else _ja_negators(t)


def negation_count(text: str, language: Language) -> int:
    """How many negators deny something in the text: not / n't / never / no / without ... in English; the
    auxiliaries ない / ず / ぬ / ん (ません, なかった, 〜ずに) and the adjective 無い in Japanese, except
    contrasts and advice (「AではなくB」, 「〜ないように」) and "were it not for" / "no other"."""
    return len(_negators(text, language))


def negated_heads(text: str, language: Language) -> frozenset[str]:
    """The words the text's negators attach to (lemmas in Japanese, crude stems in English)."""
    return frozenset(h for h in _negators(text, language) if h)


def polarity_flipped(claim: str, sentence: str, language: Language) -> bool:
    """True when one of the two is negated and the other is not (parity of negators differs)."""
    return negation_count(claim, language) % 2 != negation_count(sentence, language) % 2


@lru_cache(maxsize=8192)
def content_keys(text: str, language: Language, heads: bool = False) -> frozenset[str]:
    """The text's content words as matching keys (lemma or stem, and surface); with ``heads``, English words'
    head keys too (what the negated-word test matches on)."""
    out: set[str] = set()
    for tok in content_tokens(text, language):
        out.add(tok.key)
        out.add(tok.surface)
        if heads and language != "ja":
            out.add(head_key(tok.surface))
    return frozenset(out)


def flipped(claim: str, clause: str, language: Language) -> bool:
    """The two say opposite things about the same word: their parity of negators differs and a word of both
    is negated on one side only ("carries a camera" / "does not carry a camera"). Both need two
    content words or more (a one-word clause matches anything). Without fugashi, Japanese heads are unknown
    and the parity of negators decides."""
    a, b = content_keys(claim, language, heads=True), content_keys(clause, language, heads=True)
    if min(len(content_tokens(claim, language)), len(content_tokens(clause, language))) < 2:
        return False
    if language == "ja" and ja_morphemes("") is None:
        return polarity_flipped(claim, clause, language)
    if not polarity_flipped(claim, clause, language):
        return False
    differ = negated_heads(claim, language) ^ negated_heads(clause, language)
    return any(h in a and h in b for h in differ)


def clauses(sentence: str) -> list[str]:
    """The sentence cut at clause boundaries (; , 、 – but because / しかし), pieces of two characters or more."""
    return [c for c in _CLAUSE_CUT.split(sentence) if c and len(c.strip()) >= 2] or [sentence]
