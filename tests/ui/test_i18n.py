"""The UI's two catalogues (rageval_ui/locales/ja.json, en.json): same keys, same placeholders, every key the code asks
for exists, no key is left unused; and the sidebar switch changes the language of every page (AppTest)."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from types import SimpleNamespace

import pytest

from rageval_core.core import messages
from rageval_core.store.runs import STATUSES
from rageval_core.core.types import Unscored
from tests.support.apptest import assert_ok, start_app
from tests.support.ui_text import CJK, english
from rageval_ui import i18n, nav

ROOT = Path(__file__).resolve().parents[2]
CODE = [ROOT / "app.py", *sorted((ROOT / "rageval_ui" / "app_pages").glob("*.py")), *sorted((ROOT / "rageval_ui").glob("*.py"))]
# t("key", ...) and t('key'): the literal keys the code asks for.
CALL = re.compile(r"""\bt\(\s*(?:\n\s*)?["']([a-z0-9_.\-]+)["']""")
# Keys built at run time go through t_opt(f"<prefix>{id}", default): these prefixes may stay unused.
# unscored.*, status.* and severity.* are checked against the core below.
DYNAMIC_PREFIXES = ("provider.", "metric.", "method.", "th.", "unscored.", "status.", "severity.", "runs.side.",
                    "language.", "lost.")


def load(language: str) -> dict[str, str]:
    return json.loads((ROOT / "rageval_ui" / "locales" / f"{language}.json").read_text(encoding="utf-8"))


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def used_keys() -> set[str]:
    keys: set[str] = set()
    for path in CODE:
        keys.update(CALL.findall(path.read_text(encoding="utf-8")))
    keys.update(spec.title_key for spec in nav.ALL)
    return keys


def test_both_catalogues_have_the_same_keys() -> None:
    ja, en = load("ja"), load("en")
    assert sorted(set(en) - set(ja)) == [], "keys missing in ja.json"
    assert sorted(set(ja) - set(en)) == [], "keys missing in en.json"
    assert all(isinstance(v, str) and v.strip() for v in [*ja.values(), *en.values()])


def test_placeholders_match_and_every_string_formats() -> None:
    ja, en = load("ja"), load("en")
    mismatched = {k: (placeholders(en[k]), placeholders(ja[k])) for k in en if placeholders(en[k]) != placeholders(ja[k])}
    assert mismatched == {}
    for catalogue in (ja, en):
        for text in catalogue.values():
            text.format(**{name: "x" for name in placeholders(text)})  # raises on a stray brace


def test_every_key_used_in_code_exists_and_none_is_dead() -> None:
    en = load("en")
    used = used_keys()
    assert len(used) > 30, "the key scan found almost nothing: is the t(...) pattern still right?"
    assert sorted(used - set(en)) == [], "t() asks for keys no catalogue has"
    dead = sorted(k for k in set(en) - used if not k.startswith(DYNAMIC_PREFIXES))
    assert dead == [], "catalogue keys no code uses"


def test_every_core_message_code_has_a_translation_and_every_reason_a_label() -> None:
    """The core's messages in Japanese (rageval_core/core/messages_ja.json): exactly the core's codes, each with the
    same placeholders, none left in English; the UI catalogues hold none of them (one place for each message). Every
    unscored reason and run status has a label too."""
    ja, en = load("ja"), load("en")
    core_ja = messages.templates("ja")
    assert set(core_ja) == set(messages.ENGLISH)
    assert {k: placeholders(v) for k, v in core_ja.items()} == {k: messages.placeholders(v) for k, v in messages.ENGLISH.items()}
    assert [k for k, v in core_ja.items() if v == messages.ENGLISH[k] and english(v)] == []
    assert [k for k in (*ja, *en) if k.startswith("core.")] == []
    assert {k.removeprefix("unscored.") for k in en if k.startswith("unscored.")} == {
        v for k, v in vars(Unscored).items() if k.isupper()}
    assert {k.removeprefix("status.") for k in en if k.startswith("status.")} == set(STATUSES)



def test_probes_question_types_and_review_statuses_have_names_in_both_languages() -> None:
    """The ids the core keeps (probe, question type, review status) are shown by name: every id has one in each
    catalogue, Japanese in ja.json, and the pages' label maps name exactly the core's ids."""
    from rageval_core.analysis.trust.probes import PROBES
    from rageval_core.rag.synth import QUESTION_TYPES, STATUSES as REVIEW
    from rageval_ui import names, testset

    ja, en = load("ja"), load("en")
    for prefix, ids in (("probe.", PROBES), ("qtype.", QUESTION_TYPES), ("testset.status.", REVIEW)):
        for key in (f"{prefix}{i}" for i in ids):
            assert key in en and key in ja and CJK.search(ja[key]), key
    assert list(names.probe_labels()) == list(PROBES)
    assert set(testset.type_labels()) == set(QUESTION_TYPES) and set(testset.status_labels()) == set(REVIEW)

def test_every_core_message_is_recognised_again_from_its_english_text() -> None:
    """What the UI relies on for a message read back from disk: the plain English finds its code and parameters."""
    for code, template in messages.ENGLISH.items():
        params = {name: f"<{n}>" for n, name in enumerate(sorted(messages.placeholders(template)))}
        said = messages.say(code, **params)
        assert messages.parse(said) == (code, params)
        assert messages.parse(str(said)) == (code, params), code
    assert messages.parse("the judge said no") is None


def test_core_messages_show_in_the_ui_language_nested_parameters_too(monkeypatch: pytest.MonkeyPatch) -> None:
    said = messages.say("row.not_object", kind=messages.say("kind.list"))
    assert said == "row is a list, expected an object with question, contexts, answer; row skipped"  # the CLI's text
    monkeypatch.setattr(i18n, "lang", lambda: "ja")
    expected = "行がリストです。question、contexts、answer を持つオブジェクトが必要です。この行を飛ばしました"
    assert i18n.core(said) == expected
    assert i18n.core(str(said)) == expected  # read back from disk: a plain string
    assert i18n.core("an LLM's own reason") == "an LLM's own reason"
    monkeypatch.setattr(i18n, "lang", lambda: "en")
    assert i18n.core(str(said)) == str(said)


def test_a_coded_core_error_shows_in_the_ui_language(monkeypatch: pytest.MonkeyPatch) -> None:
    """Exceptions raised with a coded message (an empty document) read in Japanese on the page (show_error)."""
    from rageval_core.data.documents import DocumentError, parse_document

    with pytest.raises(DocumentError) as caught:
        parse_document("   \n", "memo")
    assert str(caught.value) == "memo: the document is empty"
    monkeypatch.setattr(i18n, "lang", lambda: "ja")
    assert i18n.core(str(caught.value)) == "memo: 文書が空です"


def test_judge_configuration_problems_read_in_japanese(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every problem of a judges file is coded: the CLI keeps the English, the app shows each in Japanese."""
    from rageval_core.scoring.judges.config import JudgeConfigError, parse_judges

    with pytest.raises(JudgeConfigError) as caught:
        parse_judges([{"provider": "nope"}, {"id": "a", "temperature": "hot"}, {"id": "b", "api_key": "x"},
                      {"id": "c", "colour": 1}, {"id": "c"}, {"id": "c"}], source="judges.yaml")
    english = str(caught.value)
    assert "judges.yaml: judge 1: unknown provider 'nope'; known: " in english
    assert "judges.yaml: judge 2: temperature must be a number, got 'hot'" in english
    assert "judges.yaml: judge id given twice: c (set a distinct id on each)" in english
    assert len(caught.value.problems) == 5
    monkeypatch.setattr(i18n, "lang", lambda: "ja")
    shown = [i18n.core(p) for p in caught.value.problems]
    assert shown[0].startswith("judges.yaml: 審査員 1: 不明なプロバイダー 'nope'。")
    assert shown[1] == "judges.yaml: 審査員 2: temperature は数値にしてください（指定: 'hot'）"
    assert shown[2].startswith("judges.yaml: 審査員 3: api_key: キーは審査員ファイルに書きません")
    assert shown[3].startswith("judges.yaml: 審査員 4: 不明なフィールド colour。")
    assert shown[4] == "judges.yaml: 審査員の id が重複しています: c（それぞれ別の id にしてください）"
    assert all(i18n.core(str(p)) == s for p, s in zip(caught.value.problems, shown))  # plain strings too


def test_japanese_strings_are_japanese() -> None:
    """A ja entry copied from English by mistake: most ja strings must hold kana or kanji."""
    ja, en = load("ja"), load("en")
    cjk = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
    same = [k for k in ja if ja[k] == en[k] and cjk.search(ja[k]) is None and len(ja[k]) > 12]
    assert same == [], "ja strings identical to the English ones"


def test_browser_language_picks_japanese_for_a_japanese_browser(monkeypatch: pytest.MonkeyPatch) -> None:
    for locale, expected in (("ja-JP", "ja"), ("ja", "ja"), ("en-US", "en"), ("fr-FR", "en"), (None, "en")):
        monkeypatch.setattr(i18n.st, "context", SimpleNamespace(locale=locale))
        assert i18n.browser_language() == expected


def test_without_a_locale_the_accept_language_header_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    """A client that sends no navigator.language: the first request's Accept-Language header (issue 38 item 2)."""
    for header, expected in (("ja,en-US;q=0.9,en;q=0.8", "ja"), ("en-US,en;q=0.9,ja;q=0.8", "en"),
                             ("en;q=0.5, ja-JP;q=0.9", "ja"), ("*, ja;q=0", "en"), ("", "en"), (None, "en")):
        monkeypatch.setattr(i18n.st, "context", SimpleNamespace(locale=None, headers={"Accept-Language": header}))
        assert i18n.browser_language() == expected, header
    monkeypatch.setattr(i18n.st, "context", SimpleNamespace(locale="en-GB", headers={"Accept-Language": "ja"}))
    assert i18n.browser_language() == "en"  # navigator.language first: what the browser says it shows


def test_accept_language_reads_quality_and_order() -> None:
    assert i18n.accept_language("fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5") == "fr-CH"
    assert i18n.accept_language("en;q=0.8, ja;q=0.8") == "en"  # a tie keeps the header's order
    assert i18n.accept_language("en;q=bad, ja;q=0.1") == "ja"  # an unreadable quality counts as 0
    assert i18n.accept_language(";q=1, ,") is None


def test_missing_key_falls_back_to_english_then_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(i18n, "lang", lambda: "ja")
    assert i18n.t("nav.compare") == load("ja")["nav.compare"]
    assert i18n.t_opt("metric.no_such_metric", "No such") == "No such"


@pytest.mark.parametrize("spec", nav.ALL, ids=lambda s: s.url_path)
def test_every_page_follows_the_language_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec) -> None:
    at = start_app(monkeypatch, tmp_path / "home", spec.path)
    assert at.sidebar.radio(key=i18n.LANG).value == "en"  # AppTest has no browser locale: English
    en, ja = load("en"), load("ja")
    assert at.title[0].value == f"{spec.icon} {en[spec.title_key]}"
    assert en["sidebar.heading"] in [s.value for s in at.sidebar.subheader]
    at.sidebar.radio(key=i18n.LANG).set_value("ja").run()
    assert_ok(at)
    assert at.title[0].value == f"{spec.icon} {ja[spec.title_key]}"
    assert ja["sidebar.heading"] in [s.value for s in at.sidebar.subheader]
    shown = " ".join(e.value for kind in ("subheader", "caption", "markdown", "info", "button") for e in getattr(at, kind)
                     if isinstance(getattr(e, "value", None), str))
    shown += " ".join(b.label for b in at.button)
    for key in PAGE_MARKERS.get(spec.url_path, ()):
        assert ja[key].split("{")[0] in shown, f"{key} not shown in Japanese on {spec.url_path}"
    at.sidebar.radio(key=i18n.LANG).set_value("en").run()
    assert at.title[0].value == f"{spec.icon} {en[spec.title_key]}"


# Per page, strings that must show in Japanese once the switch says 日本語 (beyond the title and sidebar).
PAGE_MARKERS: dict[str, tuple[str, ...]] = {
    "evaluate": ("evaluate.estimate", "evaluate.start"),
    "compare": ("compare.no_runs",),
    "inspect": ("inspect.no_runs",),
    "prompts": ("steps.heading", "prompts.rubric"),
    "dataset": ("dataset.rows",),
    "history": ("compare.no_runs",),
    "trust": ("trust.caption",),
}
