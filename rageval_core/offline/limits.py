"""What the offline judge catches and misses, in words, from the sealed suite's frozen figures.

The sealed suite (``bench/data/sealed_edits.jsonl``: 148 hand-written ja / en cases written before issue 37's rule
changes and never read while rules were developed) was scored once by ``bench/sealed_edits.py --write``; its
figures are frozen beside it and copied here (``sealed_figures.json``; a test checks both against the suite's hash and
never re-scores). ``limits_text`` says, per error type, how many of the suite's plain and realistic forms the
decomposed faithfulness verdict caught (or, for faithful answers, passed), which forms those are, and the forms it
is blind to (right on fewer than half). The offline banner, the Trust page, the ``trust`` command and the HTML report
of an offline run show it. ``heuristic_note`` is what an offline run's report says about where its scores come from.

The project's own minimal-edit suite (``bench/minimal_edits.py``) stays a development figure (``suite_figures``).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

FIGURES_PATH = Path(__file__).with_name("minimal_edits_figures.json")
SEALED_FIGURES_PATH = Path(__file__).with_name("sealed_figures.json")  # written by bench/sealed_edits.py --write
BLIND_BELOW = 0.5  # a form right on fewer than half its rows: the judge is blind to it

TYPE_NAMES = {
    "en": {"control": "faithful answers", "paraphrase": "faithful paraphrases", "copied": "copied context text",
           "number": "changed numbers", "date": "changed dates", "negation": "flipped negations",
           "entity": "swapped names", "unit": "changed units or currencies", "invention": "appended inventions"},
    "ja": {"control": "忠実な回答", "paraphrase": "忠実な言い換え", "copied": "コンテキストの引き写し",
           "number": "数値の変更", "date": "日付の変更", "negation": "否定の反転", "entity": "固有名の入れ替え",
           "unit": "単位・通貨の変更", "invention": "付け足された作り話"},
}
# What each type's forms are in the sealed suite (its README), shortly: plain, then realistic.
FORM_NAMES = {
    "en": {
        "control": ("the context's words", "number words or kanji numerals, times in words, era dates, equal units, restated negations"),
        "paraphrase": ("few shared words", "few shared words with number words"),
        "number": ("a digit changed", "number words, a value found elsewhere in the context, two values swapped"),
        "date": ("a digit or month changed", "a date or weekday found elsewhere in the context, dates in words, 前日 / 当日"),
        "negation": ("an inserted not / ない", "an antonym or a rephrased clause stating the opposite"),
        "entity": ("a different name", "the roles of two names swapped"),
        "unit": ("a unit of another system", "a unit of the same family, mg / μg, days / weeks"),
        "invention": ("a sentence with a new figure", "a plausible sentence in the context's register"),
    },
    "ja": {
        "control": ("文脈どおりの言い回し", "漢数字・数詞、言葉で書いた時刻、和暦、等しい別単位、言い換えた否定"),
        "paraphrase": ("共有語の少ない言い換え", "共有語の少ない言い換え、漢数字・数詞"),
        "number": ("数字を一つ変更", "漢数字・数詞、文脈の別の箇所にある値、二つの値の入れ替え"),
        "date": ("数字や月を変更", "文脈の別の箇所にある日付や曜日、言葉で書いた日付、前日 / 当日"),
        "negation": ("「ない」/ not の挿入", "対義語、または反対を述べる言い換え"),
        "entity": ("別の名前", "二つの名前の役割の入れ替え"),
        "unit": ("別の体系の単位", "同じ系統の単位: mg / μg、日 / 週"),
        "invention": ("新しい数値を含む一文", "文脈の文体に合ったもっともらしい一文"),
    },
}
FORMS = ("plain", "realistic")


@lru_cache(maxsize=2)
def suite_figures(path: str = str(FIGURES_PATH)) -> dict[str, Any]:
    """The minimal-edit suite's recorded per-type figures (a development figure: ``bench/minimal_edits.py``)."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


@lru_cache(maxsize=2)
def sealed_figures(path: str = str(SEALED_FIGURES_PATH)) -> dict[str, Any]:
    """The sealed suite's frozen figures (``bench/sealed_edits.py --write``)."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def blind_forms(figures: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """(type, form) pairs right on fewer than ``BLIND_BELOW`` of their rows: what the judge is blind to."""
    data = figures if figures is not None else sealed_figures()
    return [(typ, form) for typ, f in data["types"].items() for form in FORMS
            if f[form]["rows"] and f[form]["right"] / f[form]["rows"] < BLIND_BELOW]


def limits_text(language: str, figures: dict[str, Any] | None = None) -> str:
    """What the offline judge catches and misses on the sealed suite, per error type and form, in ``language``."""
    data = figures if figures is not None else sealed_figures()
    ja = language == "ja"
    names, forms = TYPE_NAMES["ja" if ja else "en"], FORM_NAMES["ja" if ja else "en"]
    types = data["types"]
    ci = data.get("auroc_ci") or [None, None]
    errors = [t for t, f in types.items() if f["label"] == "unfaithful"]
    faithful = [t for t, f in types.items() if f["label"] == "faithful"]

    def counts(t: str) -> str:
        p, r = types[t]["plain"], types[t]["realistic"]
        if ja:
            return f"{names[t]} 素朴な形 {p['rows']}件中{p['right']}件・現実的な形 {r['rows']}件中{r['right']}件（{forms[t][1]}）"
        return f"{names[t]} {p['right']}/{p['rows']} plain, {r['right']}/{r['rows']} realistic ({forms[t][1]})"

    def blind(t: str, form: str) -> str:
        f = types[t][form]
        described = forms[t][0 if form == "plain" else 1]
        return (f"{names[t]}: {described}（{f['rows']}件中{f['right']}件）" if ja
                else f"{names[t]}: {described} ({f['right']}/{f['rows']})")

    blinds = blind_forms(data)
    missed = [blind(t, f) for t, f in blinds if types[t]["label"] == "unfaithful"]
    failed = [blind(t, f) for t, f in blinds if types[t]["label"] == "faithful"]
    sep = "、" if ja else "; "
    if ja:
        return (f"オフライン判定の実力（封印テスト {data['cases']} 件、規則の最終変更前に手書きし一度だけ採点、較正済みの判定点、"
                f"AUROC {data['auroc']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]）。誤りを見抜いた数: "
                + sep.join(counts(t) for t in errors) + "。忠実な回答を合格とした数: "
                + sep.join(counts(t) for t in faithful) + "。見抜けない誤り（半数未満）: "
                + (sep.join(missed) or "なし") + "。不合格にしてしまう忠実な回答（合格が半数未満）: "
                + (sep.join(failed) or "なし") + "。")
    return (f"What the offline judge catches, on a sealed suite of {data['cases']} hand-written cases (written before its "
            f"last rule changes, scored once, at its calibrated verdict; AUROC {data['auroc']:.2f} [{ci[0]:.2f}, {ci[1]:.2f}]). "
            "Errors caught: " + sep.join(counts(t) for t in errors) + ". Faithful answers passed: "
            + sep.join(counts(t) for t in faithful) + ". Blind to (caught on fewer than half): "
            + (sep.join(missed) or "none") + ". Fails faithful answers (passed on fewer than half): "
            + (sep.join(failed) or "none") + ".")


def heuristic_note(language: str = "en") -> str:
    """What a report of an offline run says about its scores: one prompt-blind heuristic behind every method."""
    if language == "ja":
        return ("この実行のスコアはすべて一つのオフライン・ヒューリスティック（LLM ではなく、プロンプト本文を読まない）から出ています。"
                "分解型とジャッジなど、その方法同士の一致は何も測りません（ヒューリスティックを自分自身と比べているだけです）。")
    return ("Every score of this run comes from one prompt-blind heuristic, the offline judge (no LLM; it ignores the "
            "prompt text). Agreement between its methods (decomposed vs judge) measures nothing: it compares the "
            "heuristic with itself.")
