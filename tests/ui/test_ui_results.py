"""AppTest: Compare, Inspect and History over offline runs stored in a tmp RAGEVAL_HOME."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.core.types import SEED_METRICS
from tests.support.apptest import ROOT, assert_ok, compare_tab, plain, start_app
from tests.support.html_tables import page_tables
from rageval_ui import inspector


ROWS = ["1", "4", "7", "10"]  # one row of each seed-000 category


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Two offline runs on the seed rows: A with rubric5, B with the binary judge added."""
    root = tmp_path_factory.mktemp("ui-results")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
        rows = [s for s in ds.samples if s.id in ROWS]
        a = run_rows(rows, [*build_scorers(SEED_METRICS), JudgeScorer("rubric5")], config=ProviderConfig(),
                dataset_name=ds.name, dataset_digest=ds.content_hash)
        b = run_rows(rows, [*build_scorers(SEED_METRICS, {"economy": True}), JudgeScorer("rubric5"), JudgeScorer("binary")],
                config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash)
        yield {"home": str(root), "a": a.run_id, "b": b.run_id, "hash": ds.content_hash}


@pytest.fixture
def app(home: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False)
    at.session_state["selected_run"] = home["a"]
    return at


def test_compare_shows_the_seed_layout_charts_agreement_and_deltas(app: AppTest, home: dict[str, str]) -> None:
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert_ok(app)
    headers = [h.value for h in app.subheader]
    for expected in ("Per category (the source article's RAGAS vs judge layout)", "Category × criterion × method"):
        assert expected in headers
    assert [tab.label for tab in app.tabs] == ["Per category", "Row by row", "Run A vs run B", "Report"]
    assert not app.dataframe and "compare.run_b" not in app.session_state  # the other tabs run when opened
    decomposed, judged = page_tables(app)  # one HTML block of a table per method
    assert decomposed.index.name == "category" and not app.table  # plain text cells, not Markdown ones
    assert list(decomposed.index) == ["✅ 正確な回答", "❌ ハルシネーション", "📄 不適切な参照", "🔀 部分正解"]
    assert list(decomposed.columns) == ["Faithfulness", "Answer Relevancy", "Context Precision", "Answer Correctness"]
    assert decomposed.loc["✅ 正確な回答", "Faithfulness"] > decomposed.loc["❌ ハルシネーション", "Faithfulness"]
    assert judged.loc["✅ 正確な回答", "Faithfulness"] >= 0 and list(judged.columns) == list(decomposed.columns)
    bars = [h.value for h in app.get("html") if "<img" in h.value]
    assert len(bars) == 1 and not app.get("vega_lite_chart")  # grouped bars as SVG images: no chart library to load
    assert bars[0].count("<img") == 4 and 'alt="Faithfulness"' in bars[0]  # a panel per criterion
    panel = base64.b64decode(re.search(r'base64,([^"]+)"', bars[0]).group(1)).decode()
    assert panel.startswith("<svg") and "<title>✅ 正確な回答 · Decomposed (RAGAS-style):" in panel  # its bars
    assert "Decomposed (RAGAS-style)" in bars[0] and "judge:rubric5" in bars[0]  # the legend
    compare_tab(app, "Row by row")
    assert_ok(app)
    assert len(app.get("vega_lite_chart")) == 1 and not page_tables(app)  # the scatter, without the first tab's tables
    agreement = next(d.value for d in app.dataframe if "pearson" in d.value.columns)
    assert set(agreement["criterion"]) == {"Faithfulness", "Answer Relevancy", "Context Precision", "Answer Correctness"}
    assert (agreement["n"] == 4).all()
    picker = app.pills(key="compare.inspect_pick")  # the most disagreeing rows, one pick away from Inspect
    assert picker.options and all(o.startswith("Inspect #") for o in picker.options)
    # Run B adds the binary judge: the deltas list it as changed.
    compare_tab(app, "Run A vs run B")
    assert "Run A vs run B" in [h.value for h in app.subheader]
    app.selectbox(key="compare.run_b").set_value(home["b"]).run()
    summary = next(d.value for d in app.dataframe if "changed_rows" in d.value.columns)
    assert "judge:binary" in set(summary["method"])
    # What set B apart is named: economy mode was on in B only.
    differences = next(d.value for d in app.dataframe if "setting" in d.value.columns)
    assert any("economy" in setting for setting in differences["setting"])
    assert any(e.label.startswith("What differs between the runs' set-ups") for e in app.expander)
    assert "Compared on the 4 rows both runs scored." in " ".join(plain(c.value) for c in app.caption)


def test_compare_lists_rows_in_dataset_order_and_unscored_cells_as_dashes(app: AppTest) -> None:
    from rageval_ui import widgets

    app.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(app, "Row by row")
    assert_ok(app)
    per_row = next(d.value for d in app.dataframe if "Faithfulness · judge − decomposed" in d.value.columns)
    assert list(per_row["sample_id"]) == ROWS  # dataset order, not the order rows finished in
    # st.table cells are Markdown: an unscored cell must not turn into a list bullet.
    assert widgets.fmt_score_md(float("nan")) == "\\-" and widgets.fmt_score_md(0.5) == "0.500"


def test_disagreeing_row_opens_the_inspector(app: AppTest) -> None:
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(app, "Row by row")
    picker = app.pills(key="compare.inspect_pick")
    row_id = picker.options[0].split("#", 1)[1]
    picker.set_value(row_id).run()
    assert_ok(app)
    assert app.title[0].value.endswith("Inspect a sample")
    assert app.session_state["inspect_sample"] == row_id
    assert any(row_id == s.value for s in app.selectbox if s.label == "Row")
    app.switch_page("rageval_ui/app_pages/compare.py").run()  # back on Compare: the pick is spent, the page stays
    assert_ok(app)
    assert not app.title[0].value.endswith("Inspect a sample")
    compare_tab(app, "Row by row")
    assert app.pills(key="compare.inspect_pick").value is None


def test_inspector_shows_claims_evidence_judge_and_raw_calls(app: AppTest) -> None:
    app.session_state["inspect_sample"] = "4"
    app.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    assert_ok(app)
    markdown = " ".join(plain(m.value) for m in app.markdown)
    assert "バックプロパゲーションアルゴリズムはいつ誰が発明しましたか" in markdown
    html = " ".join(h.proto.body for h in app.get("html"))
    assert "not supported" in html and "アラン・チューリング" in html  # the hallucinated claim, marked
    assert f'id="{inspector.anchor_prefix("4")}-ctx-0"' in html  # a digest of the id: an id may hold quotes
    labels = [plain(e.label) for e in app.expander]
    assert "Faithfulness: claims and verdicts" in labels
    assert any(label.startswith("Answer relevancy") for label in labels)
    assert any(label.startswith("Context precision") for label in labels)
    assert any(label.startswith("judge:rubric5") for label in labels)
    assert any("judge · " in label and "offline/heuristic-v4" in label for label in labels)  # raw judge call
    scores = app.dataframe[0].value
    assert set(scores["method"]) == {"decomposed", "judge:rubric5"}


def test_human_label_is_saved_by_dataset_hash_row_and_criterion(app: AppTest, home: dict[str, str]) -> None:
    app.session_state["inspect_sample"] = "7"
    app.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    thumbs = app.feedback
    assert thumbs, "no 👍/👎 widgets"
    criterion = thumbs[0].key.split(".")[3]  # label.<hash>.<row>.<criterion>.<version>.<annotator>
    thumbs[0].set_value(0).run()
    assert_ok(app)
    assert Store().labels(home["hash"])["7"][criterion] == 0.0
    app.feedback[0].set_value(1).run()
    assert Store().labels(home["hash"])["7"][criterion] == 1.0


def test_history_lists_exports_and_deletes(app: AppTest, home: dict[str, str]) -> None:
    extra = Store().create_run(scorers=["faithfulness"], dataset_name="scratch")
    app.switch_page("rageval_ui/app_pages/history.py").run()
    assert_ok(app)
    table = app.dataframe[0].value
    assert {home["a"], home["b"], extra} <= set(table["run"])
    assert {d.label for d in app.get("download_button")} >= {"Results JSON", "Wide CSV", "Call log JSONL"}
    app.selectbox(key="history.run").set_value(extra).run()
    app.checkbox(key="history.confirm").check().run()
    next(b for b in app.button if b.label == "Delete run").click().run()
    assert_ok(app)
    assert Store().get_run(extra) is None
    assert Store().get_run(home["a"]) is not None


def test_an_unexpected_page_error_is_a_message_not_a_traceback(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    from rageval_ui import runs

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("database is locked")

    monkeypatch.setattr(runs, "load", broken)
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert not app.exception
    message = " ".join(plain(e.value) for e in app.error)
    assert "unexpected error" in message and "database is locked" in message
    assert "RuntimeError" not in message  # the error's text, never a Python class name
    assert app.sidebar.info  # the router and sidebar still render


def test_a_run_without_a_judge_lists_rows_in_dataset_order(app: AppTest, home: dict[str, str]) -> None:
    ds = load_dataset(ROOT / "sample_data" / "ml_qa_ja.json")
    rows = [s for s in ds.samples if s.id in ROWS]
    only = run_rows(rows, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name,
               dataset_digest=ds.content_hash)
    app.session_state["selected_run"] = only.run_id
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(app, "Row by row")
    assert_ok(app)
    per_row = next(d.value for d in app.dataframe if "Faithfulness" in d.value.columns and "sample_id" in d.value.columns)
    assert list(per_row["sample_id"]) == ROWS  # not "1", "10", "4", "7" (string sort)
    Store().delete_run(only.run_id)


def test_previous_and_next_walk_the_rows(app: AppTest) -> None:
    app.session_state["inspect_sample"] = "4"
    app.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    app.button(key="inspect.next").click().run()
    assert_ok(app)
    assert app.session_state["inspect_sample"] == "7"
    assert any(s.value == "7" for s in app.selectbox if s.label == "Row")
    app.button(key="inspect.prev").click().run()
    app.button(key="inspect.prev").click().run()
    assert app.session_state["inspect_sample"] == "1"
    assert app.button(key="inspect.prev").disabled


@pytest.mark.parametrize(("page", "hint"), [
    ("rageval_ui/app_pages/compare.py", "Start one on the Evaluate page"),
    ("rageval_ui/app_pages/inspect_sample.py", "Evaluate some rows first"),
    ("rageval_ui/app_pages/history.py", "Start one on the Evaluate page"),
])
def test_with_no_stored_run_each_results_page_says_where_to_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, page: str, hint: str
) -> None:
    at = start_app(monkeypatch, tmp_path / "empty-home", page)
    assert any(hint in plain(i.value) for i in at.info)
    assert not [s for s in at.selectbox if s.label == "Run"]  # the page stopped before the run picker
    assert any(b.label == "Go to Evaluate" for b in at.button) == page.endswith("compare.py")


def test_result_tables_lead_with_the_row_or_the_method() -> None:
    """Prompts lists several rows (row first); Inspect lists one row's results (method after criterion)."""
    from rageval_core.core.types import MetricResult
    from rageval_ui import widgets

    results = [MetricResult("4", "faithfulness", "judge:rubric5", 0.75, raw_score=4.0, reason="ok", provider="offline"),
               MetricResult("4", "answer_relevancy", "decomposed", None, "no_claims", provider="gemini",
                            model="gemini-2.5-flash")]
    by_row = widgets.results_frame(results, by="row")
    assert list(by_row.columns) == ["row", "criterion", "score", "raw", "by", "unscored", "reason"]
    assert by_row.iloc[0].tolist() == ["4", "Faithfulness", "0.750", "4", "🧮 offline", "", "ok"]  # a short tag, once
    by_method = widgets.results_frame(results, by="method")
    assert list(by_method.columns) == ["criterion", "method", "score", "raw", "by", "unscored", "reason"]
    assert by_method.iloc[1].tolist() == ["Answer Relevancy", "decomposed", "-", "", "gemini-2.5-flash", "no_claims", ""]


def test_the_run_diff_note_names_left_out_rows_paired_judges_and_one_sided_results() -> None:
    import pandas as pd

    from rageval_ui import runs

    def diff(**fields: object) -> runs.RunDiff:
        base = dict(methods={}, summary=pd.DataFrame(), changed=pd.DataFrame(), only_a=[], only_b=[],
                    rows_only_a=[], rows_only_b=[], shared_rows=0, differences=[])
        return runs.RunDiff(**{**base, **fields})

    note = runs.diff_note(diff(shared_rows=3, rows_only_a=["9"], methods={"judge:mine": "judge:rubric5"},
                               only_b=["context_recall (decomposed)"]))
    assert note == ("Compared on the 3 rows both runs scored. Left out: 1 row only in A, 0 rows only in B. "
                    "Judge judge:mine of B is compared with judge:rubric5 of A. "
                    "Only B computed context_recall (decomposed).")
    assert runs.diff_note(diff()).startswith("The runs share no row")


def test_inspect_evidence_tables_and_reading_order() -> None:
    from rageval_core.core.types import MetricResult
    from rageval_ui import evidence

    results = [MetricResult("1", "faithfulness", "judge:rubric5", 1.0), MetricResult("1", "answer_correctness", "decomposed", 0.5),
               MetricResult("1", "faithfulness", "decomposed", 0.8)]
    assert [(r.method, r.metric) for r in evidence.reading_order(results)] == [
        ("decomposed", "faithfulness"), ("decomposed", "answer_correctness"), ("judge:rubric5", "faithfulness")]
    chunks = evidence.chunks_frame({"verdicts": [{"context_index": 0, "useful": True}, {"context_index": 1, "useful": False}],
                                    "precision_at_k": [1.0, None]})
    assert list(chunks.columns) == ["context", "useful", "precision@k"]
    assert chunks["context"].tolist() == ["[1]", "[2]"] and chunks["precision@k"].tolist() == ["1.000", "-"]
    classes = evidence.correctness_frame({"FN": [{"statement": "missed"}], "TP": [{"statement": "kept", "reason": "same"}]})
    assert classes[["class", "statement"]].values.tolist() == [["TP", "kept"], ["FN", "missed"]]
    assert classes["reason"].iloc[0] == "same"
    assert evidence.correctness_frame({}).empty


def test_compare_says_offline_agreement_measures_nothing_and_a_judge_only_b_has_is_no_change(
        app: AppTest, home: dict[str, str]) -> None:
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert_ok(app)
    assert any("Offline heuristic results" in plain(i.value) for i in app.info)  # the banner, once
    compare_tab(app, "Row by row")
    assert any("Both methods come from the offline heuristic" in w.value and "measures nothing" in w.value
               for w in app.warning)
    compare_tab(app, "Run A vs run B")
    app.selectbox(key="compare.run_b").set_value(home["b"]).run()
    changed_caption = next(plain(c.value) for c in app.caption if "results changed between A" in plain(c.value))
    changed = [d.value for d in app.dataframe if "method_b" in d.value.columns]
    # B's extra binary judge is named once in the note ("Only B computed ..."), never as a change on every row.
    assert "Only B computed" in " ".join(plain(c.value) for c in app.caption)
    assert not changed or "judge:binary" not in set(changed[0]["method_b"])
    assert int(changed_caption.split(" ", 1)[0]) == (len(changed[0]) if changed else 0)


def test_filters_narrow_compare_and_carry_over_to_inspect(app: AppTest, home: dict[str, str]) -> None:
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    app.multiselect(key="filter.categories").set_value(["❌ ハルシネーション", "🔀 部分正解"]).run()
    assert_ok(app)
    assert list(page_tables(app)[0].index) == ["❌ ハルシネーション", "🔀 部分正解"]
    assert any("Filtered: 2 of 4 rows." in plain(i.value) for i in app.info)
    compare_tab(app, "Row by row")
    per_row = next(d.value for d in app.dataframe if "Faithfulness · judge − decomposed" in d.value.columns)
    assert list(per_row["sample_id"]) == ["4", "10"]
    app.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    assert_ok(app)
    assert app.multiselect(key="filter.categories").value == ["❌ ハルシネーション", "🔀 部分正解"]
    row_box = next(s for s in app.selectbox if s.label == "Row")
    assert [o.split()[0] for o in row_box.options] == ["#4", "#10"]
    # A disagreement threshold no row reaches leaves nothing; clearing the filters brings every row back.
    app.slider(key="filter.disagree").set_value(1.0).run()
    assert any("No row matches the filters." in plain(w.value) for w in app.warning)
    next(b for b in app.button if b.label == "Clear filters").click().run()
    assert_ok(app)
    assert len(next(s for s in app.selectbox if s.label == "Row").options) == 4
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert app.multiselect(key="filter.categories").value == []


def test_score_range_and_label_filters_on_inspect(app: AppTest, home: dict[str, str]) -> None:
    Store().set_label(home["hash"], "1", "faithfulness", 1.0)
    app.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    app.radio(key="filter.labels").set_value("labelled").run()
    labelled = [r for r in ROWS if any(v is not None for v in Store().labels(home["hash"]).get(r, {}).values())]
    assert "1" in labelled and len(labelled) < len(ROWS)  # other tests of this module may have labelled a row
    assert [o.split()[0] for o in next(s for s in app.selectbox if s.label == "Row").options] == [f"#{r}" for r in labelled]
    app.radio(key="filter.labels").set_value("unlabelled").run()
    assert "#1" not in [o.split()[0] for o in next(s for s in app.selectbox if s.label == "Row").options]
    app.radio(key="filter.labels").set_value("all").run()
    app.multiselect(key="filter.methods").set_value(["judge:rubric5"]).run()
    app.slider(key="filter.score").set_value((0.0, 0.3)).run()
    assert_ok(app)
    shown = [o.split()[0][1:] for o in next(s for s in app.selectbox if s.label == "Row").options]
    view_scores = Store().results(home["a"])
    low = {r.sample_id for r in view_scores if r.method == "judge:rubric5" and r.value is not None and r.value <= 0.3}
    assert shown and set(shown) == low
    assert set(app.dataframe[0].value["method"]) == {"judge:rubric5"}  # the method filter narrows the results too
    Store().set_label(home["hash"], "1", "faithfulness", None)


def test_a_note_beside_a_label_and_bulk_labelling(app: AppTest, home: dict[str, str]) -> None:
    app.session_state["inspect_sample"] = "10"
    app.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    thumbs = app.feedback[0]
    criterion = thumbs.key.split(".")[3]  # label.<hash>.<row>.<criterion>.<version>.<annotator>
    thumbs.set_value(0).run()
    note = next(n for n in app.text_input if n.key.startswith(f"note.{home['hash'][:12]}.10.{criterion}."))
    note.set_value("数値が文脈と合わない").run()
    assert_ok(app)
    assert Store().labels(home["hash"])["10"][criterion] == 0.0
    assert Store().label_notes(home["hash"])["10"][criterion] == "数値が文脈と合わない"
    # Bulk: every row the filters leave, two criteria, 👍 with a note.
    next(b for b in app.button if b.label.startswith("Select all 4 rows")).click().run()
    app.multiselect(key="labels.bulk_criteria").set_value(["faithfulness", "answer_relevancy"]).run()
    app.text_input(key="labels.bulk_note").set_value("checked by hand").run()
    next(b for b in app.button if b.label == "👍 Label selected").click().run()
    assert_ok(app)
    stored = Store().labels(home["hash"])
    assert all(stored[row][c] == 1.0 for row in ROWS for c in ("faithfulness", "answer_relevancy"))
    assert Store().label_notes(home["hash"])["4"]["answer_relevancy"] == "checked by hand"
    # The row's own widgets show the bulk labels (they do not write back what they showed before).
    app.run()
    assert Store().labels(home["hash"])["10"]["faithfulness"] == 1.0
    next(b for b in app.button if b.label == "Clear their labels").click().run()
    assert not any(c in Store().labels(home["hash"]).get("4", {}) for c in ("faithfulness", "answer_relevancy"))
    Store().set_label(home["hash"], "10", criterion, None)


def test_section_names_stay_text_in_markdown_tables() -> None:
    import pandas as pd

    from rageval_ui import widgets

    styled = widgets.score_table(pd.DataFrame({"Faithfulness": [0.5]}, index=["1. 適用範囲"]), markdown=True)
    assert list(styled.data.index) == ["1\\. 適用範囲"]  # not a numbered list inside st.table
    assert widgets.md_escape("- 注意") == "\\- 注意"


def test_criterion_tables_are_built_only_while_their_expander_is_open(app: AppTest) -> None:
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert_ok(app)
    assert len(page_tables(app)) == 2 and not app.table  # the per-category table of each method, as HTML
    assert "compare.by_criterion" in app.session_state
    app.session_state["compare.by_criterion"] = True  # what a click on the expander does
    app.run()
    assert_ok(app)
    opened = [tb.value for tb in app.table]
    assert len(opened) == 4  # one per shared criterion: decomposed vs judge per category
    assert all(list(tb.index) == ["✅ 正確な回答", "❌ ハルシネーション", "📄 不適切な参照", "🔀 部分正解"] for tb in opened)
