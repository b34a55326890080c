"""Units and currencies: 300 km² is not 300 sq mi, €5 is not $5, 3億円 is not 3億ドル.

The number check sees only the numbers, which agree in each of those. Here every quantity (a number,
an optional scale word such as 万 / million, and a unit) is read with a table of units and their families
(length, area, mass, volume, time, speed, temperature, percent, currency). A claim quantity whose value the
evidence holds in another unit of the family is a mismatch; one the evidence holds converted correctly
(1.2 km as 0.75 mi, within 3 %) is not, and its number is then exempt from the missing-number check.
Currencies never convert (no rate is known offline): another currency is always a mismatch.

Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from rageval_core.offline.numerals import with_digits

# unit spelling (NFKC, lower case) -> (family, factor to the family's base unit; None: no conversion)
_TABLE: dict[str, tuple[str, float | None]] = {}


def _add(family: str, factor: float | None, *spellings: str) -> None:
    for s in spellings:
        _TABLE[s] = (family, factor)


_add("length", 1000.0, "km", "kilometre", "kilometres", "kilometer", "kilometers", "キロメートル", "キロ")
_add("length", 1.0, "m", "metre", "metres", "meter", "meters", "メートル")
_add("length", 0.01, "cm", "centimetre", "centimetres", "centimeter", "centimeters", "センチメートル", "センチ")
_add("length", 0.001, "mm", "millimetre", "millimetres", "millimeter", "millimeters", "ミリメートル", "ミリ")
_add("length", 1609.344, "mi", "mile", "miles", "マイル")
_add("length", 0.3048, "ft", "foot", "feet", "フィート")
_add("length", 0.9144, "yd", "yard", "yards", "ヤード")
_add("area", 1e6, "km2", "sq km", "square kilometre", "square kilometres", "square kilometer", "square kilometers",
     "平方キロメートル", "平方キロ")
_add("area", 1.0, "m2", "sq m", "square metre", "square metres", "square meter", "square meters", "平方メートル", "㎡")
_add("area", 2.589988e6, "sq mi", "square mile", "square miles", "平方マイル")
_add("area", 1e4, "ha", "hectare", "hectares", "ヘクタール")
_add("area", 4046.856, "acre", "acres", "エーカー")
_add("mass", 1.0, "kg", "kilogram", "kilograms", "kilo", "kilos", "キログラム")
_add("mass", 0.001, "g", "gram", "grams", "グラム")
_add("mass", 1e-6, "mg", "milligram", "milligrams", "ミリグラム")
_add("mass", 1e-9, "μg", "mcg", "microgram", "micrograms", "マイクログラム")
_add("mass", 1000.0, "t", "tonne", "tonnes", "ton", "tons", "トン")
_add("mass", 0.45359237, "lb", "lbs", "pound", "pounds")
_add("volume", 1.0, "l", "litre", "litres", "liter", "liters", "リットル")
_add("volume", 0.001, "ml", "millilitre", "millilitres", "milliliter", "milliliters", "ミリリットル", "cc")
_add("volume", 0.1, "dl", "decilitre", "decilitres", "deciliter", "deciliters", "デシリットル")
_add("volume", 0.015, "tbsp", "tablespoon", "tablespoons", "大さじ")
_add("volume", 0.005, "tsp", "teaspoon", "teaspoons", "小さじ")
_add("volume", 3.785411784, "gallon", "gallons", "ガロン")
_add("time", 1.0, "second", "seconds", "sec", "secs", "秒", "秒間")
_add("time", 60.0, "minute", "minutes", "min", "mins", "分間", "分")
_add("time", 3600.0, "hour", "hours", "hr", "hrs", "h", "時間")
_add("time", 86400.0, "day", "days", "日間", "日")
_add("time", None, "working days", "working day", "business days", "business day", "営業日")  # not calendar days
_add("time", 604800.0, "week", "weeks", "wk", "wks", "週間", "週")
_add("time", 2629800.0, "month", "months", "か月", "ヵ月", "ヶ月", "カ月", "ケ月", "箇月", "か月間", "ヶ月間", "カ月間")
_add("time", 31557600.0, "year", "years", "yr", "yrs", "年間", "年")
_add("speed", 1.0, "km/h", "kph", "キロ毎時")
_add("speed", 1.609344, "mph", "マイル毎時")
_add("temperature", None, "°c", "℃", "度c", "degrees celsius", "celsius")
_add("temperature", None, "°f", "℉", "degrees fahrenheit", "fahrenheit")
_add("percent", 1.0, "%", "percent", "per cent", "パーセント")
_add("percent", 10.0, "割")
_add("currency", None, "円", "yen", "jpy", "¥")
_add("currency", None, "ドル", "dollar", "dollars", "usd", "$", "米ドル")
_add("currency", None, "ユーロ", "euro", "euros", "eur", "€")
_add("currency", None, "ポンド", "sterling", "gbp", "£")
_add("currency", None, "元", "yuan", "cny", "人民元")
_add("currency", None, "ウォン", "won", "krw")

# Canonical unit per spelling: spellings of one unit (km, kilometres, キロメートル) compare equal.
_CANON: dict[str, str] = {}
for _spelling, (_fam, _f) in _TABLE.items():
    _CANON[_spelling] = f"{_fam}:{_f}" if _f is not None else f"{_fam}:{_spelling}"
for _group in (("円", "yen", "jpy", "¥"), ("ドル", "dollar", "dollars", "usd", "$", "米ドル"),
               ("ユーロ", "euro", "euros", "eur", "€"), ("ポンド", "sterling", "gbp", "£"),
               ("元", "yuan", "cny", "人民元"), ("ウォン", "won", "krw"),
               ("°c", "℃", "度c", "degrees celsius", "celsius"), ("°f", "℉", "degrees fahrenheit", "fahrenheit"),
               ("working days", "working day", "business days", "business day", "営業日")):
    for _s in _group:
        _CANON[_s] = f"{_TABLE[_s][0]}:{_group[0]}"

_SCALE_WORDS = {"万": 1e4, "億": 1e8, "兆": 1e12, "thousand": 1e3, "million": 1e6, "billion": 1e9,
                "trillion": 1e12, "bn": 1e9}
_NUM = r"(\d+(?:\.\d+)?)"
_SCALE = r"(?:\s*(万|億|兆|thousand|million|billion|trillion|bn))?"
_LATIN_UNITS = sorted((u for u in _TABLE if re.match(r"[a-z°]", u)), key=len, reverse=True)
_OTHER_UNITS = sorted((u for u in _TABLE if not re.match(r"[a-z°$€£¥]", u)), key=len, reverse=True)
_SUFFIX = re.compile(
    _NUM + _SCALE + r"\s*-?\s*(?:(" + "|".join(re.escape(u) for u in _LATIN_UNITS) + r")(?![a-z])|("
    + "|".join(re.escape(u) for u in _OTHER_UNITS) + r"))"
)
_PREFIX = re.compile(r"([$€£¥])\s*" + _NUM + _SCALE)
_SPOON = re.compile(r"(大さじ|小さじ)\s*" + _NUM)  # 大さじ2: the unit before the number
# 日 / 週 / 年 / 分 with no 間 are durations only where a duration follows (3日以内, 2年後, 10日分);
# 3月5日, 2025年4月, 9時30分 and 3分の1 are dates, clock times and fractions
_BARE = frozenset({"日", "週", "年", "分"})
_DURATION_AFTER = re.compile(r"以内|以上|未満|後|前|ほど|程度|おき|ごと|経過|分|超|弱|近く|ぶり|連続|間")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")


@dataclass(frozen=True)
class Quantity:
    """A number with its unit: ``value`` is number x scale (3億 -> 3e8), ``number`` the digits as written."""

    value: float
    number: str
    unit: str
    family: str
    factor: float | None

    @property
    def canon(self) -> str:
        return _CANON[self.unit]


def _canon_number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def _bare_duration(t: str, m: re.Match[str], unit: str) -> bool:
    """Is a bare 日 / 週 / 年 / 分 after the number a duration (not a date, a clock time or a fraction)?"""
    before = t[:m.start()].rstrip()
    if unit == "分":
        return not before.endswith("時") and not t.startswith("の", m.end())
    if unit == "年" and float(m.group(1)) >= 1000:
        return False
    return not before.endswith("月") and bool(_DURATION_AFTER.match(t, m.end()))


@lru_cache(maxsize=8192)
def quantities(text: str) -> tuple[Quantity, ...]:
    """Every number-with-unit in the text: '1.2 km', '300万円', '$5 million', '€40', '3割', '20 °C', '4 mg',
    'twenty minutes' (number words and kanji numerals read as digits: ``numerals``), '大さじ2', '3日以内'."""
    t = _THOUSANDS.sub("", with_digits(text or "").lower())
    out: list[Quantity] = []
    for m in _SUFFIX.finditer(t):
        unit = m.group(3) or m.group(4)
        if unit == "ミリ" and t[m.end():m.end() + 3] == "リット":
            continue
        if unit in _BARE and not _bare_duration(t, m, unit):
            continue
        scale = _SCALE_WORDS.get(m.group(2) or "", 1.0)
        family, factor = _TABLE[unit]
        out.append(Quantity(float(m.group(1)) * scale, _canon_number(float(m.group(1))), unit, family, factor))
    for m in _PREFIX.finditer(t):
        scale = _SCALE_WORDS.get(m.group(3) or "", 1.0)
        out.append(Quantity(float(m.group(2)) * scale, _canon_number(float(m.group(2))), m.group(1), "currency", None))
    for m in _SPOON.finditer(t):
        family, factor = _TABLE[m.group(1)]
        out.append(Quantity(float(m.group(2)), _canon_number(float(m.group(2))), m.group(1), family, factor))
    return tuple(out)


def _close(a: float, b: float, tolerance: float = 0.03) -> bool:
    return abs(a - b) <= tolerance * max(abs(a), abs(b), 1e-12)


def _convert(q: Quantity, to: Quantity) -> float | None:
    """``q``'s value in ``to``'s unit, or ``None`` when the two do not convert (currencies, families)."""
    if q.family != to.family:
        return None
    if q.family == "temperature":
        if q.canon == to.canon:
            return q.value
        return q.value * 9 / 5 + 32 if to.canon.endswith("°f") else (q.value - 32) * 5 / 9
    if q.factor is None or to.factor is None:
        return q.value if q.canon == to.canon else None
    return q.value * q.factor / to.factor


@dataclass(frozen=True)
class UnitCheck:
    """``mismatches``: (claim quantity, evidence quantity) texts; ``converted``: claim numbers the evidence
    holds correctly converted (exempt from the missing-number check); ``same_value``: per mismatch, whether
    the evidence holds the claim's very number in the other unit (4 g against 4 mg: a changed unit for sure;
    otherwise the evidence quantity may be about something else, and the caller gates it by wording)."""

    mismatches: tuple[tuple[str, str], ...]
    converted: frozenset[str]
    same_value: tuple[bool, ...] = ()
    unmatched: frozenset[str] = frozenset()  # claim numbers whose unit the evidence uses, never at that value


def show(q: Quantity) -> str:
    """A quantity as the findings name it: '4 mg', '2 か月'."""
    return f"{q.number} {q.unit}"


def check_units(claim: str, evidence: str) -> UnitCheck:
    """Compare each claim quantity with the evidence's quantities of its family (see the module doc)."""
    ev = quantities(evidence)
    mismatches: list[tuple[str, str]] = []
    same: list[bool] = []
    converted: set[str] = set()
    unmatched: set[str] = set()
    matched: set[str] = set()
    for q in quantities(claim):
        if any(e.canon == q.canon for e in ev) and not any(e.canon == q.canon and _close(e.value, q.value) for e in ev):
            unmatched.add(q.number)  # "6 mg" where the evidence has 4 mg and only "6 weeks": 6 is not there as mg
        else:
            matched.add(q.number)  # the claim's number with this unit is there (or the unit is nowhere else)
        same_family = [e for e in ev if e.family == q.family]
        if not same_family or any(e.canon == q.canon and _close(e.value, q.value) for e in same_family):
            continue
        if any((v := _convert(e, q)) is not None and _close(v, q.value) for e in same_family):
            converted.update({q.number, _canon_number(q.value)})
            continue
        clash = next((e for e in same_family if _close(e.value, q.value) and e.canon != q.canon), None)
        same.append(clash is not None)
        if clash is None:  # a converted value that does not convert back: the wrong number for that unit
            clash = next((e for e in same_family if _convert(e, q) is not None and e.canon != q.canon), None)
        if clash is not None:
            mismatches.append((show(q), show(clash)))
        else:
            same.pop()
    return UnitCheck(tuple(mismatches), frozenset(converted), tuple(same), frozenset(unmatched - converted - matched))
