"""Question kinds and the answer types they call for (offline answer relevancy, no LLM).

A question word asks for a type of answer: when → a date or time, who → a name, where → a place, how many /
いくつ → a number, why → a cause, how → a means, a yes/no question → a committed yes or no. ``question_kinds``
reads the kinds a question (or one of its asks) calls for; ``has_answer_type`` checks whether an answer holds
something of that type beyond what the question already says. ``relevancy`` combines this with topic-word
coverage and a cosine. Pure functions, Japanese and English.
"""

from __future__ import annotations

import re
import unicodedata

from rageval_core.core.names import entities
from rageval_core.core.text import Language, normalize, numbers

__all__ = ["HOW", "KIND_WORDS", "NUMBER", "WHEN", "WHERE", "WHO", "WHY", "YES_NO", "has_answer_type", "question_kinds"]


WHEN, WHO, WHERE, NUMBER, WHY, HOW, YES_NO = "when", "who", "where", "number", "why", "how", "yes_no"

_KIND_PATTERNS: dict[str, re.Pattern[str]] = {
    WHEN: re.compile(
        r"^\s*when\b|\bsince when\b|\bwhat (?:year|date|time|day|month|century)\b|\bhow long ago\b|"
        r"いつ|何年|何月|何日|何時|何世紀|期限|日時|日付"
    ),
    WHO: re.compile(r"^\s*(?:and\s+)?(?:by\s+)?who(?:m|se)?\b|\bby whom\b|誰|だれ|どなた|何者"),
    WHERE: re.compile(
        r"^\s*where\b|\bwhat (?:country|city|place|region|state)\b|\blocat(?:ion|ed)\b|\bheadquarter|"
        r"どこ|何処|場所|所在地|拠点"
    ),
    NUMBER: re.compile(
        r"\bhow (?:many|much|long|far|big|tall|high|old|large|fast|often)\b|"
        r"\b(?:size|elevation|height|length|population|price|cost|percentage|number of|age|weight|area|depth|speed)\b|"
        r"いくつ|いくら|何人|何個|何件|何回|何歳|何倍|何割|何パーセント|何%|どのくらい|どれくらい|どれだけ|"
        r"何キロ|何メートル|何日間|何時間|標高|人口|価格|料金|日数|件数|人数|金額"
    ),
    WHY: re.compile(
        r"\bwhy\b|\bwhat (?:is|was|are|were) the (?:purpose|reason|cause)s?\b|なぜ|どうして|何故|理由|目的|原因"
    ),
    HOW: re.compile(
        r"\bhow (?:does|do|did|is|are|was|were|has|have|can|could|to|should)\b|どのように|どうやって|どのような仕組み|どう(?:すれば|したら)"
    ),
}

_MONTHS = r"january|february|march|april|may|june|july|august|september|october|november|december"
_ANSWER_TYPES: dict[str, re.Pattern[str]] = {
    WHEN: re.compile(
        rf"\b(?:1\d{{3}}|20\d{{2}})\b|\b(?:{_MONTHS})\b|\b\d{{1,2}}:\d{{2}}\b|\bcentur(?:y|ies)\b|\b\d{{2,4}}s\b|"
        r"\b(?:ago|today|yesterday|tomorrow|daily|weekly|monthly|annually|days?|weeks?|months?|years?)\b|"
        r"[\d〇一二三四五六七八九十百千]+\s*(?:年|月|日|時|世紀)|年代|時代|頃|翌|昨年|今年|来年|毎|まで|以内|以降|前に|後に"
    ),
    WHY: re.compile(
        r"\b(?:because|due to|since|so that|in order to|as a result|caused by|reasons?|leads? to|results? in|"
        r"thereby|prevents?|reduces?|helps?|allows?|enables?|avoids?|aim(?:s|ed)?|goals?|intend(?:s|ed)?)\b|"
        r"\bby \w+ing\b|\bto (?:prove|show|demonstrate|explore|showcase|make|create|reduce|improve|provide|allow)\b|"
        r"ため|ので|から|ことで|ことによ|により|によって|結果|理由|原因|防|抑制|軽減|させ"
    ),
    HOW: re.compile(
        r"\b(?:by|through|using|uses?|via|with|steps?|first|then|works?|process)\b|"
        r"ことで|により|によって|使|用い|通じ|手順|まず|次に|ように|して"
    ),
}
_EN_NUMBER_WORDS = re.compile(
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundreds?|"
    r"thousands?|millions?|billions?|trillions?|dozens?|half|several)\b"
)
_JA_NUMBER_WORDS = re.compile(r"[兆億万]|[〇一二三四五六七八九十百千]+[つ人個件回年月日時%]|半分|数[十百千万]")
_EN_PERSONISH = re.compile(
    r"\b(?:team|company|researchers?|scientists?|engineers?|group|university|government|inventor|"
    r"manager|department|committee|he|she|they)\b"
)
_JA_PERSONISH = re.compile(
    r"氏|さん|博士|教授|社長|部長|課長|部門長|上司|担当|チーム|研究者|研究所|大学|政府|会社|[^\s、。]{1,6}部(?:が|の|で|に|へ|は|長)|者"
)
_EN_PLACE = re.compile(r"\b(?:in|at|from|near|on|based in|located in)\s+(?:the\s+)?[A-Z]")
_JA_PLACE = re.compile(
    r"[都道府県市区町村国州島駅港]|センター|本社|支社|ビル|大学|会場|階|室|窓口|システム|サイト|ページ"
)


# Yes/no questions: an auxiliary first (English) or 「…ますか／ですか」 with no question word (Japanese).
_EN_AUX = re.compile(
    r"^\s*(is|are|was|were|am|do|does|did|can|could|should|would|will|may|might|must|has|have|had|shall)\b",
    re.IGNORECASE,
)
_JA_WH = re.compile(r"何|なに|なん|いつ|誰|だれ|どこ|どの|どう|なぜ|どれ|いく[つら]|どんな|どちら|どなた")
_JA_YES_NO = re.compile(r"(?:ます|です|でしょう|ません|ない|いい|よい)か[？?]?\s*$")
_JA_COMMIT = re.compile(
    r"^\s*(?:はい|いいえ|ええ|いえ)|でき(?:ます|ません|る|ない)|可能|不可|構いません|かまいません|いけません|なりません|"
    r"必要(?:です|ありません|ない)|不要|認められ|禁止|許可|大丈夫|問題(?:ありません|ない)|ダメ|だめ|よいです|いいです"
)
_EN_COMMIT = re.compile(
    r"^\s*(?:yes|no|yeah|nope)\b|\b(?:not|never|allowed|permitted|prohibited|possible|impossible)\b"
)


def question_kinds(text: str) -> list[str]:
    """The answer types a question (or one of its asks) calls for, in a fixed order."""
    t = unicodedata.normalize("NFKC", text or "").lower()
    kinds = [kind for kind, pattern in _KIND_PATTERNS.items() if pattern.search(t)]
    if not kinds and (_EN_AUX.match(t) or (_JA_YES_NO.search(t) and not _JA_WH.search(t))):
        kinds.append(YES_NO)
    return kinds


def _commits(answer: str, question: str, language: Language) -> bool:
    """A yes/no question is addressed by はい／いいえ, できます／できません, or by "yes"/"no", a negation or
    the question's own auxiliary ("Can ...?" → "can" / "cannot")."""
    a = unicodedata.normalize("NFKC", answer or "").lower()
    if language == "ja":
        return bool(_JA_COMMIT.search(a))
    m = _EN_AUX.match(unicodedata.normalize("NFKC", question or "").lower())
    aux = m.group(1) if m else None
    return bool(_EN_COMMIT.search(a)) or (aux is not None and re.search(rf"\b{aux}(?:n't|not)?\b", a) is not None)


def has_answer_type(kind: str, answer: str, question: str, language: Language) -> bool:
    """Whether the answer holds something of the type ``kind`` asks for (beyond what the question says)."""
    raw = unicodedata.normalize("NFKC", answer or "")
    a = raw.lower()
    if kind == NUMBER:
        new = numbers(raw) - numbers(question)
        return bool(new) or bool((_JA_NUMBER_WORDS if language == "ja" else _EN_NUMBER_WORDS).search(a))
    if kind == WHEN:
        return bool(_ANSWER_TYPES[WHEN].search(a))
    if kind == YES_NO:
        return _commits(answer, question, language)
    if kind in (WHO, WHERE):
        q_norm = normalize(question)
        new_names = {e for e in entities(raw, language) if e not in q_norm}
        if new_names:
            return True
        if kind == WHO:
            return bool((_JA_PERSONISH if language == "ja" else _EN_PERSONISH).search(raw if language == "ja" else a))
        return bool(_JA_PLACE.search(raw) if language == "ja" else _EN_PLACE.search(raw))
    pattern = _ANSWER_TYPES.get(kind)
    return True if pattern is None else bool(pattern.search(a))


# How each kind is named in the reasons (English, Japanese).
KIND_WORDS: dict[str, tuple[str, str]] = {
    WHEN: ("a date or time", "日時"),
    WHO: ("a name", "人名・主体"),
    WHERE: ("a place", "場所"),
    NUMBER: ("a number", "数値"),
    WHY: ("a cause", "理由"),
    HOW: ("a means", "方法"),
    YES_NO: ("a yes / no", "可否"),
}
