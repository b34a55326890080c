"""Numbers written as words or kanji numerals, rewritten as digits: "twenty-five minutes" -> "25 minutes",
「三十分」 -> 「30分」, 「二十万円」 -> 「20万円」.

The number, unit, date and slot checks read arabic digits only, so "forty-five minutes" against "30 minutes"
was no swap and 「六時間」 against 「4時間」 no change. ``with_digits`` gives the checks a view of the text in
which those numbers are digits (the text users see is never changed). It is conservative where a number word
is also an ordinary word: English "one" becomes 1 only before a unit or counter ("one day", not "one of the"),
"a" / "an" never; 「一」 only before a counter and not inside a word (一般, 統一), 「十分」 (enough) only as a
duration (十分間, 十分後, 十分以内).

Pure functions.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from rageval_core.core.text import Language, kanji_to_int

_ONES = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
         "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15,
         "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19}
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
         "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1000}
_LARGE = ("million", "billion")  # kept as words: the unit check reads "5 million" as a scale
_TIMES = {"twice": "2 times", "thrice": "3 times"}
# "one" is a number only before one of these (a unit, a duration or a counted thing)
_ONE_BEFORE = frozenset("""second minute hour day week month year night dose tablet capsule drop pill time
    person adult child ticket book item page vehicle car bag kilometre kilometer km metre meter mile gram kilogram
    kg litre liter millilitre milliliter ml euro dollar pound yen percent per""".split())
_WORD = "|".join(sorted([*_ONES, *_TENS, *_SCALES], key=len, reverse=True))
_EN_RUN = re.compile(rf"\b(?:{_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_WORD}))*\b", re.IGNORECASE)
_EN_TIMES = re.compile(r"\b(twice|thrice)\b", re.IGNORECASE)
_NEXT_WORD = re.compile(r"[\s-]+([a-z]+)")


def en_value(words: str) -> int | None:
    """The value of a run of English number words: "twenty-five" 25, "three hundred and six" 306,
    "two thousand" 2000; ``None`` for a run that is not one number ("five six")."""
    total, current, last = 0, 0, None
    for w in re.split(r"[\s-]+", words.lower()):
        if w == "and" or not w:
            continue
        if w in _ONES:
            if last in ("ones", "tens") and not (last == "tens" and _ONES[w] < 10 and current % 10 == 0):
                return None
            current += _ONES[w]
            last = "ones"
        elif w in _TENS:
            if last in ("ones", "tens"):
                return None
            current += _TENS[w]
            last = "tens"
        elif w == "hundred":
            current = (current or 1) * 100
            last = "hundred"
        elif w == "thousand":
            total += (current or 1) * 1000
            current, last = 0, "thousand"
        else:
            return None
    return total + current


def _en_digits(text: str) -> str:
    def run(m: re.Match[str]) -> str:
        words = m.group(0)
        value = en_value(words)
        if value is None:
            return words
        if words.lower() == "one":
            nxt = _NEXT_WORD.match(text, m.end())
            if not nxt or nxt.group(1).lower().rstrip("s") not in _ONE_BEFORE:
                return words
        return str(value)

    out = _EN_RUN.sub(run, text)
    return _EN_TIMES.sub(lambda m: _TIMES[m.group(1).lower()], out)


# counters and units after a kanji numeral (longest first where one is a prefix of another)
_JA_COUNTERS = ("か月", "ヵ月", "ヶ月", "カ月", "ケ月", "箇月", "年", "月", "週", "日", "時", "分", "秒", "人", "名",
                "件", "回", "歳", "才", "個", "本", "台", "円", "割", "倍", "度", "社", "校", "点", "冊", "枚", "匹",
                "頭", "羽", "錠", "包", "粒", "杯", "泊", "階", "番", "区", "条", "種", "等", "位", "通", "着", "足",
                "ドル", "ユーロ", "キロ", "グラム", "ミリ", "メートル", "リットル", "パーセント", "%")
_KANJI = "〇零一二三四五六七八九十百千"
_JA_RUN = re.compile(rf"([{_KANJI}]+)([万億兆])?(?=({'|'.join(map(re.escape, _JA_COUNTERS))}))")
_IN_WORD = frozenset("唯統同均単画随逐")  # 唯一, 統一, 同一, 均一, 単一, 画一: 一 inside a word
_HOUR = re.compile(r"間|半|\d|[〇一二三四五六七八九十]+分")
_JUUBUN_DURATION = re.compile(r"間|後|前|以内|以上|おき|ごと|程度|ほど")


def _ja_digits(text: str) -> str:
    def run(m: re.Match[str]) -> str:
        kanji, scale, counter = m.group(1), m.group(2) or "", m.group(3)
        before = text[m.start() - 1] if m.start() else ""
        if before in _IN_WORD or (before.isdigit() and not scale):
            return m.group(0)
        if kanji == "十" and counter == "分" and not scale:  # 十分: "enough" unless a duration follows
            if not _JUUBUN_DURATION.match(text, m.end() + 1):
                return m.group(0)
        if kanji == "一" and not scale and (counter in ("度", "番", "等", "通", "着", "分", "点", "本")
                                            or counter == "時" and not _HOUR.match(text, m.end() + 1)):
            return m.group(0)  # 一度 once, 一番 most, 一分 a bit, 一時 for a while (一時間 is an hour)
        value = kanji_to_int(kanji)
        return m.group(0) if value is None else f"{value}{scale}"

    return _JA_RUN.sub(run, text)


def number_words(text: str) -> frozenset[str]:
    """The lower-cased number words and kanji numerals of the text that ``with_digits`` turns into digits
    (what a wording comparison should skip, as it skips the digits)."""
    t = unicodedata.normalize("NFKC", text or "")
    out = {w.lower() for m in _EN_RUN.finditer(t) for w in re.split(r"[\s-]+", m.group(0)) if w.lower() != "and"}
    out |= {m.group(1) for m in _JA_RUN.finditer(t)} | {m.group(1).lower() for m in _EN_TIMES.finditer(t)}
    return frozenset(out)


@lru_cache(maxsize=8192)
def with_digits(text: str, language: Language | None = None) -> str:
    """The NFKC text with number words (English) and kanji numerals (Japanese) written as digits; any
    language's rules apply when ``language`` is None (a claim may quote the other language)."""
    t = unicodedata.normalize("NFKC", text or "")
    if language != "en":
        t = _ja_digits(t)
    if language != "ja" or re.search(r"[A-Za-z]", t):
        t = _en_digits(t)
    return t
