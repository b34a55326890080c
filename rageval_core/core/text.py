"""Text utilities for Japanese and English: language detection, sentence splitting, normalisation,
character n-grams, numbers and content tokens (names: ``names``).

Pure functions (the Japanese tokenizer is loaded lazily, once per process, behind a lock). Sentence
splits and content tokens are memoised per text (8,192 texts each): the offline judge reads the
same answer, contexts and reference once per criterion, and tokenising them again cost a fifth of its
time. The sentence splitter decides what a "claim" is for the offline judge and how context relevance counts
sentences, so every metric uses this one splitter.
"""

from __future__ import annotations

import re
import threading
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

Language = Literal["ja", "en"]

# --------------------------------------------------------------------------------------------------
# Language detection

_JA_CHAR = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
_LATIN = re.compile(r"[A-Za-z\uff21-\uff3a\uff41-\uff5a]")


def detect_language(text: str) -> Language:
    """``"ja"`` when kana/kanji are at least 10% (and at least 3) of the first 2000 non-space chars.

    A share, not "any Japanese char", so an English answer quoting one kanji name stays English and
    a Japanese answer full of English terms stays Japanese.
    """
    sample = "".join((text or "")[:2000].split())
    if not sample:
        return "en"
    hits = len(_JA_CHAR.findall(sample))
    if hits and not _LATIN.search(sample):  # a short answer such as 「はい」 or 「東京」 is Japanese too
        return "ja"
    return "ja" if hits >= 3 and hits >= 0.1 * len(sample) else "en"


# --------------------------------------------------------------------------------------------------
# Normalisation and n-grams


_QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def normalize(text: str) -> str:
    """NFKC, lower case, curly quotes straight (Moore’s = Moore's), single spaces: what comparisons use."""
    return " ".join(unicodedata.normalize("NFKC", text or "").lower().translate(_QUOTES).split())


_NGRAM_DROP = re.compile(r"[、。，．,.!?！？「」『』（）()\"'“”:：;；・\-]")


def char_ngrams(text: str, n: int = 3) -> set[str]:
    """Set of character n-grams of the normalised text with punctuation removed.

    A non-empty text shorter than ``n`` yields itself, so short claims are not vacuously covered.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    t = _NGRAM_DROP.sub("", normalize(text))
    if not t:
        return set()
    if len(t) < n:
        return {t}
    return {t[i : i + n] for i in range(len(t) - n + 1)}


# --------------------------------------------------------------------------------------------------
# Sentence splitting

_OPENERS = "「『（(【〔［[“"
_CLOSERS = "」』）)】〕］]”"
_PAIRS = dict(zip(_OPENERS, _CLOSERS))
_JA_TERMINALS = "。！？"
_EN_TERMINALS = ".!?"
_TRAILING = "。！？」』）)”\"'"
_MD_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|[•・●■◆▪]\s*|\d{1,3}[.)．]\s+|>\s*)")
_MD_NOISE = re.compile(r"\*\*|__|`|\[(?:\d+|[a-z])\]")
_ABBREVIATIONS = frozenset(
    "e.g i.e etc vs mr mrs ms dr prof st jr sr no fig figs approx inc ltd co corp dept est u.s u.k u.n "  # noqa: SIM905
    "a.m p.m cf al eq ph.d ca vol pp jan feb mar apr jun jul aug sep sept oct nov dec mt gen gov sen rep "
    "rev lt col sgt capt univ".split()
)
# Abbreviations that also end sentences ("... in the U.S. The next ..."): a cut when a usual sentence
# opener follows, no cut otherwise ("the U.S. Army", "5 p.m. Eastern").
_CAN_END = frozenset("etc u.s u.k u.n inc ltd co corp a.m p.m al".split())
_OPENERS_AFTER = frozenset(
    "The This That These Those They It Its He She His Her We Our You Your I A An In On At But However "
    "And So There Then When If As For After Before Since Because While Although Many Most Some One "
    "Their What Why How Each All No Yes".split()
)
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def _matched_openers(line: str) -> set[int]:
    """Positions of openers that are closed later on the same line (an unclosed one never blocks splits)."""
    matched: set[int] = set()
    stack: list[tuple[str, int]] = []
    quote_open: int | None = None
    for i, ch in enumerate(line):
        if ch == '"':
            if quote_open is None:
                quote_open = i
            else:
                matched.add(quote_open)
                matched.add(i)  # the closing quote is marked too
                quote_open = None
        elif ch in _PAIRS:
            stack.append((ch, i))
        elif ch in _CLOSERS:
            for k in range(len(stack) - 1, -1, -1):
                if _PAIRS[stack[k][0]] == ch:
                    matched.add(stack[k][1])
                    del stack[k:]
                    break
    return matched


def _is_abbreviation(before: str, after: str = "") -> bool:
    """Is the period ending ``before`` an abbreviation's (no cut)? ``after`` is the text after the space."""
    m = _WORD_BEFORE.search(before)
    if not m:
        return False
    word = m.group(1)
    if len(word) == 1 and word.isupper():  # an initial: "J. Smith"
        return True
    key = word.lower().strip(".")
    if key in _CAN_END:
        next_word = re.match(r"[A-Za-z]+", after)
        if next_word and next_word.group(0) in _OPENERS_AFTER:
            return False
    return key in _ABBREVIATIONS


def _split_line(line: str) -> list[str]:
    matched = _matched_openers(line)
    pieces: list[str] = []
    depth = 0
    start = 0
    i = 0
    n = len(line)
    quote_depth_open = False
    while i < n:
        ch = line[i]
        if ch == '"' and i in matched:
            if not quote_depth_open:
                depth += 1
                quote_depth_open = True
            else:
                depth = max(0, depth - 1)
                quote_depth_open = False
        elif ch in _PAIRS and i in matched:
            depth += 1
        elif ch in _CLOSERS and depth > 0:
            depth -= 1
        cut_at: int | None = None
        if depth == 0:
            if ch in _JA_TERMINALS or (
                ch == "．" and not (i + 1 < n and line[i + 1].isdigit())
            ):
                cut_at = i + 1
            elif ch in _EN_TERMINALS:
                nxt = line[i + 1] if i + 1 < n else ""
                j = i + 1
                while (
                    j < n and line[j] in "\"'”)"
                ):  # 'He left." Then' : closers after the stop
                    j += 1
                after = line[j] if j < n else ""
                if after == "" or after in " \t":
                    if not (ch == "." and _is_abbreviation(line[start:i], line[j:].lstrip())):
                        cut_at = j
                elif ch in "!?" and _JA_CHAR.match(nxt or " "):
                    cut_at = i + 1
            elif ch in _CLOSERS or ch == '"':
                # a closing bracket right after a terminal, then space or end: cut after the bracket
                prev = line[i - 1] if i > 0 else ""
                at_space = i + 1 >= n or line[i + 1] in " \t"
                if (
                    prev in _JA_TERMINALS or prev in _EN_TERMINALS
                ) and at_space:  # 「…。」と言った stays whole
                    cut_at = i + 1
        if cut_at is not None:
            while cut_at < n and line[cut_at] in _TRAILING:
                cut_at += 1
            piece = line[start:cut_at].strip()
            if piece:
                pieces.append(piece)
            start = cut_at
            i = cut_at
            depth = 0
            quote_depth_open = False
            continue
        i += 1
    rest = line[start:].strip()
    if rest:
        pieces.append(rest)
    return pieces


def _merge_short(pieces: list[str], min_chars: int, language: Language) -> list[str]:
    joiner = "" if language == "ja" else " "
    out: list[str] = []
    carry = ""
    for piece in pieces:
        piece = (carry + joiner + piece) if carry else piece
        carry = ""
        if len(piece) < min_chars:
            carry = piece
        else:
            out.append(piece)
    if carry:
        if out:
            out[-1] = out[-1] + joiner + carry
        else:
            out.append(carry)
    return out


def split_sentences(
    text: str, language: Language | None = None, *, min_chars: int = 8
) -> list[str]:
    """Split Japanese or English text into sentences.

    Cuts after 。！？ (and ．) and after . ! ? followed by a space, never inside 「」『』（）() brackets,
    never in decimals (0.2) or after abbreviations (e.g., Dr., U.S.) or initials; each line and
    markdown bullet / heading is its own piece, with the markers stripped. Pieces shorter than
    ``min_chars`` join the next one (a short last piece joins the previous one), so "はい。" or
    "1." do not become claims of their own.
    """
    if not text or not text.strip():
        return []
    return list(_split_memo(text, language or detect_language(text), min_chars))


@lru_cache(maxsize=8192)
def _split_memo(text: str, lang: Language, min_chars: int) -> tuple[str, ...]:
    pieces: list[str] = []
    for raw in text.replace("</s>", " ").splitlines():
        line = _MD_NOISE.sub("", _MD_PREFIX.sub("", raw)).strip()
        if not line:
            continue
        pieces.extend(_split_line(line))
    return tuple(_merge_short(pieces, min_chars, lang))


# --------------------------------------------------------------------------------------------------
# Numbers

_COUNTERS = "年月日時分秒人件回歳個本台万億円%％割倍度名社校国点"
_KANJI_DIGITS = {
    "〇": 0,
    "零": 0,
    "一": 1,
    "二": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_KANJI_UNITS = {"十": 10, "百": 100, "千": 1000}
_ARABIC = re.compile(r"\d+(?:\.\d+)?")
_SCALED = re.compile(r"(\d+(?:\.\d+)?)\s*(万|億)")
_KANJI_NUM = re.compile(rf"([〇零一二三四五六七八九十百千]+)(?=[{_COUNTERS}])")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")
_SCALES = {"万": 10_000, "億": 100_000_000}


def _canon_number(token: str) -> str:
    """'007' -> '7', '3.50' -> '3.5', '2.0' -> '2'."""
    if "." in token:
        whole, frac = token.split(".", 1)
        whole = whole.lstrip("0") or "0"
        frac = frac.rstrip("0")
        return f"{whole}.{frac}" if frac else whole
    return token.lstrip("0") or "0"


def kanji_to_int(kanji: str) -> int | None:
    """Kanji numeral below 10,000 to int: 二十三 -> 23, 千二百 -> 1200, 二〇二三 -> 2023."""
    if not kanji:
        return None
    if not any(c in _KANJI_UNITS for c in kanji):
        digits = [_KANJI_DIGITS.get(c) for c in kanji]
        if any(d is None for d in digits):
            return None
        return int("".join(str(d) for d in digits))
    total = 0
    current = 0
    for c in kanji:
        if c in _KANJI_DIGITS:
            current = current * 10 + _KANJI_DIGITS[c]
        elif c in _KANJI_UNITS:
            total += (current or 1) * _KANJI_UNITS[c]
            current = 0
        else:
            return None
    return total + current


def _scaled(value: str, unit: str) -> str:
    scaled = float(value) * _SCALES[unit]
    return str(int(scaled)) if scaled == int(scaled) else _canon_number(repr(scaled))


def numbers(text: str) -> set[str]:
    """Canonical number strings in the text: arabic (commas, leading/trailing zeros removed), kanji
    numerals before a counter (三人 -> '3'), and scaled values for 万 / 億 ('3万' -> '3' and '30000')."""
    t = _THOUSANDS.sub("", unicodedata.normalize("NFKC", text or ""))
    found = {_canon_number(m.group(0)) for m in _ARABIC.finditer(t)}
    for m in _SCALED.finditer(t):
        found.add(_scaled(m.group(1), m.group(2)))
    for m in _KANJI_NUM.finditer(t):
        kanji = m.group(1)
        if kanji == "一":
            continue
        value = kanji_to_int(kanji)
        if value is None:
            continue
        found.add(str(value))
        unit = t[m.end()] if m.end() < len(t) else ""
        if unit in _SCALES:
            found.add(_scaled(str(value), unit))
    return found


EN_STOP_WORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how i if in into is it its itself just me more
    most my myself no nor not now of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves may might must shall one two many much however thus
    yes""".split()  # noqa: SIM905
)


# --------------------------------------------------------------------------------------------------
# Content tokens


@dataclass(frozen=True)
class Token:
    """A content word: ``surface`` as written (normalised) and ``key`` (lemma or stem) for matching."""

    surface: str
    key: str


_EN_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_EN_SUFFIXES = ("ings", "ing", "edly", "ed", "es", "s", "ly")


def stem(word: str) -> str:
    """Crude English stem: strip the first matching suffix if at least 3 chars remain."""
    for suffix in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


_JA_KEEP_POS = frozenset({"名詞", "動詞", "形容詞", "形状詞", "副詞", "接頭辞"})
_JA_STOP = frozenset(
    "居る 為る 有る 成る 出来る 言う 事 物 為 様 此の 其の 此れ 其れ ます です 所 時 等 中 上 後 方 度 又 更に 特に また 行う 御 "  # noqa: SIM905
    "する ある いる なる できる こと もの よう ため これ それ この その "
    "つく 就く 付く 下さる くださる 致す いたす 頂く いただく おる".split()
)
_HIRAGANA_ONE = re.compile(r"^[\u3040-\u309f]$")
_tagger_lock = threading.Lock()
_tagger: Any = None
_tagger_failed = False


def _get_tagger() -> Any:
    """The fugashi tagger (unidic-lite), created once; ``None`` when fugashi is not installed."""
    global _tagger, _tagger_failed
    if _tagger is None and not _tagger_failed:
        with _tagger_lock:
            if _tagger is None and not _tagger_failed:
                try:
                    import fugashi

                    _tagger = fugashi.Tagger()
                except (ImportError, RuntimeError):  # missing package or dictionary: character runs instead
                    _tagger_failed = True
    return _tagger


_JA_FALLBACK = re.compile(r"[\u4e00-\u9fff]{1,}|[ァ-ヺー]{2,}|[A-Za-z0-9]{2,}")


@dataclass(frozen=True)
class Morpheme:
    """One fugashi (unidic-lite) morpheme: what the negation and proper-name checks read."""
    surface: str
    pos1: str
    pos2: str
    lemma: str | None


@lru_cache(maxsize=8192)
def ja_morphemes(text: str) -> tuple[Morpheme, ...] | None:
    """Every morpheme of the NFKC text, auxiliaries (ない / ず) included, which content tokens drop and the
    negation check needs; ``None`` without fugashi."""
    tagger = _get_tagger()
    if tagger is None:
        return None
    t = unicodedata.normalize("NFKC", text or "")
    with _tagger_lock:  # MeCab taggers are not documented as thread-safe
        return tuple(
            Morpheme(w.surface, w.feature.pos1, w.feature.pos2, getattr(w.feature, "lemma", None))
            for w in tagger(t)
        )


@lru_cache(maxsize=8192)
def _ja_tokens(text: str) -> tuple[Token, ...]:
    t = unicodedata.normalize("NFKC", text or "")
    morphemes = ja_morphemes(t)
    if morphemes is None:
        return tuple(Token(w.lower(), w.lower()) for w in _JA_FALLBACK.findall(t))
    out: list[Token] = []
    for surface, pos1, lemma in ((m.surface, m.pos1, m.lemma) for m in morphemes):
        if pos1 not in _JA_KEEP_POS or not surface.strip():
            continue
        key = (lemma or surface).split("-", 1)[0].lower()
        surface = surface.lower()
        if key in _JA_STOP or surface in _JA_STOP or _HIRAGANA_ONE.match(surface):
            continue
        out.append(Token(surface, key))
    return tuple(out)


@lru_cache(maxsize=8192)
def _en_tokens(text: str) -> tuple[Token, ...]:
    t = unicodedata.normalize("NFKC", text or "").lower().translate(_QUOTES)
    return tuple(
        Token(w, stem(w))
        for w in _EN_WORD.findall(t)
        if len(w) > 1 and w not in EN_STOP_WORDS
    )


def content_tokens(text: str, language: Language | None = None) -> list[Token]:
    """Content words of the text: fugashi morphemes (nouns, verbs, adjectives, adverbs) for Japanese,
    stop-listed words with crude stems for English. Order kept, duplicates kept."""
    lang = language or detect_language(text or "")
    # memoised by the NFKC form the tokenisers start from: "（1）" and "(1)" spellings share one entry
    t = unicodedata.normalize("NFKC", text or "")
    return list(_ja_tokens(t) if lang == "ja" else _en_tokens(t))


def token_keys(text: str, language: Language | None = None) -> set[str]:
    """Every key and surface of the text's content tokens (what a claim's tokens are looked up in)."""
    keys: set[str] = set()
    for tok in content_tokens(text, language):
        keys.add(tok.key)
        keys.add(tok.surface)
    return keys
