"""Japanese covers every page: with 日本語 chosen, no page (with a stored run to show, and the Test set page
after generating and answering) renders English UI text, and no table keeps an English heading; and a lint:
streamlit calls in rageval_ui/app_pages/ and ui/ take catalogue strings, not English literals.

English UI text is told apart from data by shape: an element with no kana or kanji that holds two or more
English words (or one capitalised word) is UI text left in English. Ids, model names, numbers, code and
Japanese data pass.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.core import messages as core_messages
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from tests.support.runs import run_rows
from rageval_core.core.types import SEED_METRICS
from tests.support.apptest import ROOT, assert_ok, button, compare_tab, plain, start_app
from tests.support.html_tables import page_tables
from tests.support.html_tables import text as html_text
from tests.support.ui_text import ALLOWED, CJK, WORD, english
from rageval_ui import i18n, nav

pytestmark = pytest.mark.timeout(600)  # a deadline for the module's page runs on a loaded machine, not a timing assertion

def shown_texts(at: AppTest) -> list[tuple[str, str]]:
    """(kind, text) of everything a page shows as UI text: headings, messages, captions, labels and help."""
    out: list[tuple[str, str]] = []
    for kind in ("title", "header", "subheader", "caption", "markdown", "info", "warning", "success", "error", "toast"):
        out += [(kind, plain(e.value)) for e in getattr(at, kind) if isinstance(e.value, str)]
    out += [("html", html_text(e.value)) for e in at.get("html")]
    for kind in ("button", "selectbox", "multiselect", "radio", "text_input", "text_area", "number_input", "toggle",
                 "checkbox", "slider", "metric", "expander", "tabs"):
        for e in at.get(kind):
            proto = getattr(e, "proto", None)  # the proto's fields: a widget's value is not computed
            out += [(f"{kind}.{field}", plain(getattr(proto, field, "") or getattr(e, field, "") or "")) for field in ("label", "help")]
    return out


def english_headings(at: AppTest) -> list[str]:
    """Table headings (column_config labels, else the column names) that are English words."""
    found = [str(c) for frame in page_tables(at) for c in [frame.index.name, *frame.columns]
             if not CJK.search(str(c)) and WORD.search(ALLOWED.sub(" ", str(c))) and str(c) not in HEADINGS_KEPT]
    for frame in at.dataframe:
        if str(frame.key or "").startswith("dataset.editor"):
            continue  # the Dataset editor's columns are the dataset file's own field names (what a user uploads)
        config = json.loads(frame.proto.columns or "{}")
        for column in frame.value.columns:
            label = (config.get(str(column)) or {}).get("label") or str(column)
            if not CJK.search(label) and WORD.search(ALLOWED.sub(" ", label)) and label not in HEADINGS_KEPT:
                found.append(label)
    return found


# Headings that stay as they are in Japanese: row ids and names of measures.
HEADINGS_KEPT = {"id", "AUROC", "precision@k"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """An offline run of four sample rows (the four decomposed metrics, rubric5 and the binary judge) and a second,
    smaller one in economy mode for Compare's run A vs run B."""
    root = tmp_path_factory.mktemp("i18n-pages")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
        rows = [s for s in ds.samples if s.id in ("1", "4", "7", "10")]
        result = run_rows(rows, [*build_scorers(SEED_METRICS), JudgeScorer("rubric5"), JudgeScorer("binary")],
                     config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash)
        other = run_rows(rows[:2], [*build_scorers(SEED_METRICS, {"economy": True}), JudgeScorer("rubric5")],
                    config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash)
        yield {"home": str(root), "run": result.run_id, "other": other.run_id}


def japanese_page(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], path: str) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False, timeout=240)
    at.session_state["selected_run"] = home["run"]
    at.sidebar.radio(key=i18n.LANG).set_value("ja").run()
    at.switch_page(path).run()
    assert_ok(at)
    return at


@pytest.mark.parametrize("spec", nav.ALL, ids=lambda s: s.url_path)
def test_no_page_shows_english_ui_text_in_japanese(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], spec) -> None:
    at = japanese_page(monkeypatch, home, spec.path)
    if spec.url_path == "testset":
        button(at, i18n.catalogue("ja")["testset.generate"]).click().run()
        button(at, i18n.catalogue("ja")["testset.run_rag"]).click().run()
        assert_ok(at)
        assert at.dataframe, "the Test set page showed no table after generating and answering"
    tabs = [tab.label for tab in at.tabs] if spec.url_path == "compare" else [None]  # Compare's tabs run when open
    for tab in tabs:
        if tab is not None:
            compare_tab(at, tab)
            assert_ok(at)
        if tab == i18n.catalogue("ja")["compare.tab.runs"]:  # the deltas, the set-up differences, the changed rows
            at.selectbox(key="compare.run_b").set_value(home["other"]).run()
            assert_ok(at)
            assert any("changed_rows" in d.value.columns for d in at.dataframe), "run A vs run B showed no deltas"
        leaks = [(kind, text) for kind, text in shown_texts(at) if english(text)]
        assert leaks == [], f"English UI text on {spec.url_path} {tab or ''} in Japanese: {leaks}"
        headings = english_headings(at)
        assert headings == [], f"English table headings on {spec.url_path} {tab or ''} in Japanese: {headings}"


def test_the_english_detector_tells_ui_text_from_data() -> None:
    assert english("Download test set (JSON)") and english("Sections") and english("Run RAG now please")
    assert not english("テストセットをダウンロード（JSON）") and not english("rubric5") and not english("0.750")
    assert not english("`python -m rageval_core trust 20261201-1`") and not english("judge:rubric5 · offline")


# ------------------------------------------------------------------------------------------------ lint
CODE = [ROOT / "app.py", *sorted((ROOT / "rageval_ui" / "app_pages").glob("*.py")), *sorted((ROOT / "rageval_ui").glob("*.py"))]
# Streamlit calls whose first argument (or these keywords) is text a user reads.
TEXT_CALLS = {
    "title", "header", "subheader", "caption", "markdown", "write", "info", "warning", "error", "success", "toast",
    "button", "download_button", "form_submit_button", "link_button", "page_link", "text_input", "text_area",
    "number_input", "selectbox", "multiselect", "radio", "toggle", "checkbox", "slider", "select_slider",
    "file_uploader", "date_input", "expander", "popover", "metric", "spinner", "progress", "tabs", "show_error",
    "TextColumn", "NumberColumn", "SelectboxColumn", "CheckboxColumn", "Column", "LinkColumn", "ProgressColumn",
}
TEXT_KEYWORDS = {"label", "help", "text", "body", "title"}


def literal_texts(node: ast.AST) -> list[str]:
    """The literal text an argument carries: a string, an f-string's fixed parts, a list / tuple of either."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return ["".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))]
    if isinstance(node, ast.BinOp):
        return literal_texts(node.left) + literal_texts(node.right)
    if isinstance(node, ast.List | ast.Tuple):
        return [text for item in node.elts for text in literal_texts(item)]
    return []


def english_literals(source: str) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
        if name not in TEXT_CALLS:
            continue
        args = node.args[:1] + [k.value for k in node.keywords if k.arg in TEXT_KEYWORDS]
        found += [(node.lineno, text) for arg in args for text in literal_texts(arg) if english(text)]
    return found


def test_streamlit_calls_take_catalogue_strings_not_english_literals() -> None:
    found = {f"{path.relative_to(ROOT)}:{line}": text for path in CODE
             for line, text in english_literals(path.read_text(encoding="utf-8"))}
    assert found == {}, f"{found}: English literals in streamlit calls: put them in rageval_ui/locales/{{ja,en}}.json and use t()"


def test_the_lint_sees_literals_f_strings_and_tab_lists() -> None:
    source = 'st.button("Run RAG")\nst.caption(f"Answered {n} rows")\nst.tabs(["Simple RAG", "Yours"])\nst.button(t("x"))\n'
    assert [line for line, _ in english_literals(source)] == [1, 2, 3, 3]


def test_validation_messages_from_the_core_show_in_japanese(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """A file with bad rows on the Dataset page in Japanese: the report names file, row and field, and its messages
    (written by rageval_core in English, with a code) are the catalogue's Japanese."""
    from rageval_ui import data, state

    bad = (b'{"id": "a", "question": "q?", "contexts": ["c"], "answer": "x"}\n[1, 2]\n'
           b'{"id": "b", "question": "q2?", "contexts": "one", "answer": "y"}\n'
           b'{"id": "c", "question": "", "contexts": ["c"], "answer": "z"}\n')
    at = start_app(monkeypatch, tmp_path / "home")
    at.session_state[state.DATASET] = data.load_upload("bad.jsonl", bad)
    at.sidebar.radio(key=i18n.LANG).set_value("ja").run()
    assert_ok(at)
    report = next(d for d in at.dataframe if "message" in d.value.columns).value
    ja = i18n.catalogue("ja")
    assert set(report["severity"]) <= {ja["severity.error"], ja["severity.warning"]}
    assert sorted(report["row"].dropna().astype(int)) == [2, 3, 4]
    messages = list(report["message"])
    core_ja = core_messages.templates("ja")
    assert core_ja["row.not_object"].format(kind=core_ja["kind.list"]) in messages
    assert core_ja["row.missing_question"] in messages and core_ja["row.contexts_string"] in messages
    assert all(CJK.search(m) for m in messages), messages


def test_provider_setting_problems_from_the_core_show_in_japanese(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """An OpenAI-compatible provider with no base URL and no model: the sidebar's warnings (rageval_core's
    check_config, coded) read in Japanese and name the sidebar's own fields."""
    from rageval_ui import state

    at = start_app(monkeypatch, tmp_path / "home")
    at.sidebar.radio(key=i18n.LANG).set_value("ja").run()
    at.sidebar.selectbox(key=state.PROVIDER).set_value("openai-compatible").run()
    assert_ok(at)
    ja = i18n.catalogue("ja")
    warnings = [plain(w.value) for w in at.sidebar.warning]  # escaped: a problem may quote a typed URL or model
    core_ja = core_messages.templates("ja")
    assert core_ja["config.need_base_url"].format(field=ja["sidebar.name.base_url"]) in warnings
    assert core_ja["config.need_model"].format(field=ja["sidebar.name.model"]) in warnings
    assert not [w for w in warnings if english(w)]
