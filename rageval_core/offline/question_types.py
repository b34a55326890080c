"""Offline question shapes for the non-fact question types (heuristic, no model; labelled offline by the caller).

- reasoning: a sentence with a numeric rule ("5,000円未満", "up to 3 days") becomes a case to classify: the
  threshold is replaced by a value the rule covers ("1件あたり3,000円の支出はどのように扱われますか？"), and the
  ground truth says why the rule applies, then quotes it. Sections with no numeric rule give no pair.
- multi-chunk: one informative sentence from each of two passages, asked together; the ground truth is both.
- out-of-scope: a question about the section's topic from a fixed list of aspects (help-line phone number,
  fines, year introduced, ...) whose words the document never uses; the ground truth is "not in the
  documents". The list is small: a long document may mention every aspect and then gets fewer pairs.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass

from rageval_core.offline.generate import QAPair, informative_sentences, key_phrase
from rageval_core.core.text import Language, normalize

_JA_RULE = re.compile(
    r"(?P<num>\d[\d,]*(?:\.\d+)?)(?P<unit>円|営業日|日|時間|km|か月|ヶ月|年|泊|%|名|人|件|分|時)?"
    r"(?P<cmp>未満|以上|以下|以内|まで|を上限)"
)
_EN_RULE = re.compile(
    r"(?P<cmp>under|less than|below|at least|more than|over|up to|within|no more than|at most)\s+"
    r"(?P<num>\d[\d,]*(?:\.\d+)?)\s*(?P<unit>%|(?:working |business |calendar )?[A-Za-z]+)?",
    re.IGNORECASE,
)
_UPPER = {"未満", "以下", "以内", "まで", "を上限", "under", "less than", "below", "up to", "within", "no more than", "at most"}


@dataclass(frozen=True)
class Rule:
    """A numeric threshold found in a sentence: the matched span, its number, unit and comparison."""

    span: str
    number: float
    unit: str
    comparison: str
    grouped: bool  # written with thousands separators

    @property
    def upper(self) -> bool:
        return self.comparison.lower() in _UPPER


def find_rule(sentence: str, language: Language) -> Rule | None:
    """The first numeric threshold of ``sentence`` (``None`` when it states none)."""
    m = (_JA_RULE if language == "ja" else _EN_RULE).search(sentence)
    if not m:
        return None
    raw = m.group("num")
    return Rule(m.group(0), float(raw.replace(",", "")), (m.group("unit") or ""), m.group("cmp"), "," in raw)


def _nice(value: float) -> float:
    step = 1000 if value >= 1000 else (100 if value >= 100 else (10 if value >= 20 else 1))
    return max(step, round(value / step) * step) if value >= 1 else value


def case_value(rule: Rule, inside: bool = True) -> float:
    """A value the rule covers (``inside``) or does not: for an upper bound 60 % of it (one less for small
    counts) inside and 150 % (one more) outside; the other way round for a lower bound."""
    n = rule.number
    below = rule.upper == inside
    if n <= 10 or rule.unit == "時":  # small counts and clock hours: one step
        value = (n - 1 if n > 1 else n / 2) if below else n + 1
    else:
        value = n * (0.6 if below else 1.5)
    return _nice(value) if value >= 1 else value


def format_number(value: float, grouped: bool) -> str:
    if value == int(value):
        return f"{int(value):,}" if grouped or value >= 10000 else str(int(value))
    return f"{value:g}"


def _range_span(key: str, language: Language) -> tuple[str, float] | None:
    """A two-sided range in a key phrase ("5,000円以上50,000円未満") and a value inside it."""
    rules = list((_JA_RULE if language == "ja" else _EN_RULE).finditer(key))
    if len(rules) < 2:
        return None
    lo, hi = (float(m.group("num").replace(",", "")) for m in rules[:2])
    if lo >= hi:
        return None
    return key[rules[0].start(): rules[1].end()], _nice((lo + hi) / 2)


def reasoning_pairs(heading: str, text: str, n: int, language: Language) -> list[QAPair]:
    """Up to ``n`` "apply the rule to a case" pairs from the section's sentences with a numeric rule.

    When the rule sits in the sentence's subject ("1件あたり5,000円未満の支出は…"), the case replaces it
    ("1件あたり3,000円の支出はどのように扱われますか？"); otherwise the question asks whether a value meets the
    condition, alternating values that do and do not, and the ground truth says which and quotes the rule.
    Rules in the subject come first: they make the more natural case.
    """
    pairs: list[QAPair] = []
    place = heading.strip()
    candidates = []
    for i, sentence in informative_sentences(text, language):
        rule = find_rule(sentence, language)
        if rule is not None:
            key = key_phrase(sentence, language)
            ranged = _range_span(key, language)
            in_subject = ranged is not None or rule.span.lower() in key.lower()
            candidates.append((not in_subject, i, sentence, rule, key, ranged, in_subject))
    for _, i, sentence, rule, key, ranged, in_subject in sorted(candidates, key=lambda c: (c[0], c[1])):
        inside = in_subject or len(pairs) % 2 == 0
        if ranged is not None:
            span, number = ranged
        else:
            span, number = rule.span, case_value(rule, inside)
        value = f"{format_number(number, rule.grouped)}{rule.unit}" if language == "ja" else \
            f"{format_number(number, rule.grouped)} {rule.unit}".strip()
        if language == "ja":
            if in_subject:
                question = f"「{place}」の定めに照らすと、{key.replace(span, value)}はどのように扱われますか？"
                answer = f"{value}は「{span}」にあたるため、次の定めが当てはまります: {sentence}"
            else:
                question = f"「{place}」の定めに照らすと、{key}について「{value}」は「{span}」の条件を満たしますか？"
                verdict = "満たします" if inside else "満たしません"
                relation = f"{value}は{span}です" if inside else f"{value}は{span}ではありません"
                answer = f"{verdict}。{relation}。根拠: {sentence}"
        else:
            if in_subject:
                subject = re.sub(re.escape(span), f"of {value}", key, flags=re.IGNORECASE)
                question = f'Under "{place}", how is {subject} handled?'
                answer = f"{value} is {span.lower()}, so this rule applies: {sentence}"
            else:
                question = f'Under "{place}", does {value} meet the condition "{span.lower()}" for {key}?'
                answer = (f"Yes: {value} is {span.lower()}. {sentence}" if inside
                          else f"No: {value} is not {span.lower()}. {sentence}")
        pairs.append(QAPair(question, answer, key, i))
        if len(pairs) >= n:
            break
    return pairs


def multi_chunk_pairs(
    heading_a: str, text_a: str, heading_b: str, text_b: str, n: int, language: Language
) -> list[QAPair]:
    """Up to ``n`` pairs, each asking about one sentence of passage A and one of passage B together."""
    a = informative_sentences(text_a, language)
    b = informative_sentences(text_b, language)
    pairs: list[QAPair] = []
    used_b: set[int] = set()
    for (ia, sa), (ib, sb) in zip(a, b):
        if sa == sb or ib in used_b:
            continue
        used_b.add(ib)
        ka, kb = key_phrase(sa, language), key_phrase(sb, language)
        if language == "ja":
            question = f"「{heading_a.strip()}」の{ka}と、「{heading_b.strip()}」の{kb}は、それぞれどのように定められていますか？"
            answer = sa + sb
        else:
            question = f'What does "{heading_a.strip()}" say about {ka}, and what does "{heading_b.strip()}" say about {kb}?'
            answer = f"{sa} {sb}"
        pairs.append(QAPair(question, answer, f"{ka} / {kb}", ia))
        if len(pairs) >= n:
            break
    return pairs


# (question with {topic}, words that must not occur in the document for the question to be out of scope)
ASPECTS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "ja": (
        ("{topic}について問い合わせる専用の電話番号は何番ですか？", ("電話番号",)),
        ("{topic}の規定に違反した場合の罰金はいくらですか？", ("罰金", "罰則")),
        ("{topic}の制度は何年に導入されましたか？", ("導入",)),
        ("{topic}は海外の子会社ではどのように扱われますか？", ("子会社",)),
        ("{topic}の英語版の資料はどこで入手できますか？", ("英語", "英文")),
        ("{topic}の規定は労働組合と何回協議して決められましたか？", ("労働組合", "組合")),
        ("{topic}の昨年度の利用実績は何件でしたか？", ("実績", "昨年度")),
    ),
    "en": (
        ("What is the phone number of the help line for {topic}?", ("phone",)),
        ("What fine applies to someone who breaks the rules on {topic}?", ("fine", "penalt")),
        ("In which year were the rules on {topic} introduced?", ("introduc",)),
        ("How are the rules on {topic} applied at subsidiaries abroad?", ("subsidiar",)),
        ("Where can employees get a translated version of the rules on {topic}?", ("translat",)),
        ("How many times were the rules on {topic} negotiated with the union?", ("union",)),
        ("How many {topic} requests were made last year?", ("last year", "statistic")),
    ),
}
_NUMBERING = re.compile(r"^(?:第?\s*[0-9０-９]+(?:\.[0-9]+)*\s*[.．章条節)）]?\s*)")


def topic_of(heading: str) -> str:
    """The heading without its numbering ("2. 経費精算" → "経費精算")."""
    return _NUMBERING.sub("", heading.strip()) or heading.strip()


def out_of_scope_pairs(
    heading: str, document_text: str, n: int, language: Language, not_found: str
) -> list[QAPair]:
    """Up to ``n`` questions on the section's topic about aspects the document never mentions."""
    topic = topic_of(heading)
    words = normalize(document_text).lower()
    aspects = ASPECTS["ja" if language == "ja" else "en"]
    start = zlib.crc32(topic.encode("utf-8")) % len(aspects)
    pairs: list[QAPair] = []
    for k in range(len(aspects)):
        template, absent = aspects[(start + k) % len(aspects)]
        if any(normalize(w).lower() in words for w in absent):
            continue
        pairs.append(QAPair(template.format(topic=topic), not_found, topic, -1))
        if len(pairs) >= n:
            break
    return pairs

