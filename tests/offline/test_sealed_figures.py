"""The sealed suite's frozen figures (bench/data/sealed_edits_figures.json, written once by ``bench/sealed_edits.py
--write``) belong to the suite as sealed, and what the product shows is those figures: the disclosure text of the
offline banner, the Trust page, the ``trust`` command and the HTML report, and the README's table. This test never
scores the suite (re-scoring is the deliberate bench command, said in its commit message)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from rageval_core.offline.limits import (
    FORMS,
    SEALED_FIGURES_PATH,
    TYPE_NAMES,
    blind_forms,
    heuristic_note,
    limits_text,
    sealed_figures,
)

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"
FROZEN = DATA / "sealed_edits_figures.json"


def _frozen() -> dict:
    return json.loads(FROZEN.read_text(encoding="utf-8"))


def test_the_frozen_figures_name_the_suite_as_sealed():
    recorded, name = (DATA / "sealed_edits.sha256").read_text(encoding="utf-8").split()
    actual = hashlib.sha256((DATA / "sealed_edits.jsonl").read_bytes().replace(b"\r\n", b"\n")).hexdigest()
    frozen = _frozen()
    assert name == "sealed_edits.jsonl" and frozen["suite_sha256"] == recorded == actual
    assert frozen["scored_by"] == "bench/sealed_edits.py --write" and frozen["cases"] == 148
    # the package ships the same figures (the product reads its copy; bench/ is not installed)
    assert SEALED_FIGURES_PATH.read_text(encoding="utf-8") == FROZEN.read_text(encoding="utf-8")
    rows = sum(f[form]["rows"] for f in frozen["types"].values() for form in FORMS)
    assert rows == frozen["cases"] and frozen["faithful"] == sum(
        f[form]["rows"] for f in frozen["types"].values() if f["label"] == "faithful" for form in FORMS)
    for f in frozen["types"].values():
        assert len(f["missed"]) == sum(f[form]["rows"] - f[form]["right"] for form in FORMS)


@pytest.mark.parametrize("language", ["en", "ja"])
def test_the_disclosure_says_the_frozen_figures_per_type_and_form(language):
    frozen = _frozen()
    assert sealed_figures() == frozen
    text = limits_text(language)
    for typ, f in frozen["types"].items():
        assert TYPE_NAMES[language][typ] in text
        p, r = f["plain"], f["realistic"]
        if language == "en":
            assert f"{p['right']}/{p['rows']} plain, {r['right']}/{r['rows']} realistic" in text, typ
        else:
            assert f"素朴な形 {p['rows']}件中{p['right']}件・現実的な形 {r['rows']}件中{r['right']}件" in text, typ
    assert f"{frozen['auroc']:.2f}" in text and str(frozen["cases"]) in text
    for typ, form in blind_forms(frozen):  # the forms it is blind to are named with their counts
        f = frozen["types"][typ][form]
        assert (f"({f['right']}/{f['rows']})" if language == "en" else f"（{f['rows']}件中{f['right']}件）") in text


def test_blind_forms_are_those_right_on_fewer_than_half():
    figures = {"cases": 8, "auroc": 0.7, "auroc_ci": [0.5, 0.9], "types": {
        "number": {"label": "unfaithful", "plain": {"right": 2, "rows": 2}, "realistic": {"right": 1, "rows": 3}, "missed": []},
        "control": {"label": "faithful", "plain": {"right": 1, "rows": 2}, "realistic": {"right": 0, "rows": 1}, "missed": []}}}
    assert blind_forms(figures) == [("number", "realistic"), ("control", "realistic")]
    en = limits_text("en", figures)
    assert "Blind to (caught on fewer than half): changed numbers: number words" in en
    assert "Fails faithful answers (passed on fewer than half): faithful answers: number words or kanji numerals" in en


def test_the_trust_command_and_the_report_of_an_offline_run_show_them(home, capsys):
    from rageval_core import cli
    from rageval_core.views.report import report_html
    from rageval_core.store.runs import Store
    from tests.support.trust_cli import MINI, run_id_of

    assert cli.main(["trust", str(MINI), "--metrics", "faithfulness", "--iterations", "20", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert limits_text("en") in out
    html = report_html(Store(), [run_id_of(out)], iterations=20)
    from html import escape

    assert escape(heuristic_note("en")) in html and escape(limits_text("en")) in html
    assert "measures nothing about an LLM judge" in html  # beside decomposed vs judge


def test_the_trust_page_and_the_banner_use_the_same_text(monkeypatch):
    from rageval_ui import trust as trust_ui
    from rageval_ui import widgets

    monkeypatch.setattr(trust_ui, "lang", lambda: "ja")
    assert trust_ui.offline_limits() == limits_text("ja")
    assert widgets.limits_text is limits_text


def test_the_readme_table_is_the_frozen_figures():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    frozen = _frozen()
    for typ, f in frozen["types"].items():
        p, r = f["plain"], f["realistic"]
        row = f"| {TYPE_NAMES['en'][typ]} | {p['right']}/{p['rows']} | {r['right']}/{r['rows']} |"
        assert row in readme, row
    ci = frozen["auroc_ci"]
    assert f"AUROC {frozen['auroc']:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]" in readme
    assert "12/12 caught" not in readme
