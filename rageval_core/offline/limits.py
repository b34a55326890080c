"""What the offline judge is known to miss, in words, from the project's minimal-edit suite's per-type figures.

``bench/minimal_edits.py --write`` records, per error type, how many of the suite's hand-written rows the
decomposed faithfulness verdict got right (``minimal_edits_figures.json`` beside this module; a test checks
the file against a fresh run, so the sentence cannot go stale). The Trust page, the ``trust`` command and
the offline banner show ``limits_text``: the types it misses (below the suite's pass share) and those it
sometimes misses (any row wrong).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

FIGURES_PATH = Path(__file__).with_name("minimal_edits_figures.json")
SEALED_FIGURES_PATH = Path(__file__).with_name("sealed_figures.json")  # written by bench/sealed_edits.py --write

TYPE_NAMES = {
    "en": {"control": "faithful answers", "paraphrase": "faithful paraphrases", "copied": "copied context text",
           "number": "changed numbers", "date": "changed dates", "negation": "flipped negations",
           "entity": "swapped names", "unit": "changed units or currencies", "invention": "appended inventions"},
    "ja": {"control": "忠実な回答", "paraphrase": "忠実な言い換え", "copied": "コンテキストの引き写し",
           "number": "数値の変更", "date": "日付の変更", "negation": "否定の反転", "entity": "固有名の入れ替え",
           "unit": "単位・通貨の変更", "invention": "付け足された作り話"},
}


@lru_cache(maxsize=2)
def suite_figures(path: str = str(FIGURES_PATH)) -> dict[str, Any]:
    """The recorded per-type figures (``{"types": {type: {"right", "rows", "need"}}, "cases", "auroc", ...}``)."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def blind_spots(figures: dict[str, Any] | None = None) -> tuple[list[str], list[str]]:
    """(types mostly wrong: right share below the pass share; types sometimes wrong: any row wrong)."""
    data = figures if figures is not None else suite_figures()
    missed, weak = [], []
    for typ, f in data["types"].items():
        if f["rows"] and f["right"] / f["rows"] < f["need"]:
            missed.append(typ)
        elif f["right"] < f["rows"]:
            weak.append(typ)
    return missed, weak


def limits_text(language: str, figures: dict[str, Any] | None = None) -> str:
    """One sentence, in ``language`` (ja / en), of what the offline judge misses, with the suite's counts."""
    data = figures if figures is not None else suite_figures()
    ja = language == "ja"
    names = TYPE_NAMES["ja" if ja else "en"]
    missed, weak = blind_spots(data)

    def cells(types: list[str]) -> str:
        sep = "、" if ja else ", "
        if ja:
            return sep.join(f"{names[t]}（{data['types'][t]['rows']}件中{data['types'][t]['right']}件正解）" for t in types)
        return sep.join(f"{names[t]} ({data['types'][t]['right']}/{data['types'][t]['rows']} right)" for t in types)

    none = "なし" if ja else "none"
    if ja:
        return (f"オフライン判定の既知の弱点（このプロジェクトの最小編集テスト {data['cases']} 件、較正済みの判定点）: "
                f"多くを誤る: {cells(missed) or none}。ときどき誤る: {cells(weak) or none}。")
    return (f"The offline judge's known blind spots (the project's minimal-edit suite, {data['cases']} hand-written "
            f"cases, at its calibrated verdict): often wrong on {cells(missed) or none}; sometimes wrong on "
            f"{cells(weak) or none}.")
