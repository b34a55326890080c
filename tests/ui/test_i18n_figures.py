"""Japanese complete where the figures are (issue 38 item 4): with 日本語 chosen and data loaded everywhere a page can
show numbers — a stored run with two methods and two repeats, two annotators' labels and the dataset's own labels,
a dealt label split with test opened, probes, a second run for run A vs run B, saved prompt versions — no page,
tab, expander, popover, table heading, table cell that is UI, option, placeholder, button, caption, help tooltip,
metric or chart title shows English UI text.

Told apart from data by shape (``tests.support.ui_text.english``): an element with no kana or kanji that holds
two or more English words (or one capitalised word) once ids, file, model and statistic names are set aside.
The run's rows are the Japanese half of the labelled set, so the data (questions, answers, contexts, reasons)
is Japanese; columns that hold the data's text are still left out of the cell check.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from dataclasses import replace

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.analysis.trust import run_report as trust_report
from rageval_core.analysis.trust.labels import FILE, dataset_labels
from rageval_core.analysis.trust.run_report import read_label_rows
from rageval_core.analysis.trust.splits import DEFAULT_FRACTIONS
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store import annotations
from rageval_core.store.runs import Store
from rageval_ui import i18n, nav
from tests.support.apptest import ROOT, assert_ok, button, compare_tab, start_app
from tests.support.runs import run_rows
from tests.support.ui_text import english_texts

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"
TWO = ROOT / "sample_data" / "trust_two_annotators.jsonl"
pytestmark = pytest.mark.timeout(900)  # offline runs, probes and bootstrap intervals on a loaded machine: a deadline

# Table columns whose cells are the data's or a model's text (Japanese here, but never UI).
DATA_COLUMNS = frozenset({
    "question", "answer", "contexts", "context", "ground_truth", "reason", "reason_a", "reason_b", "claim",
    "statement", "text", "snippet", "sample_id", "row", "id", "dataset", "name", "note", "run", "run_a", "run_b",
    "model", "provider", "provider/model", "file", "method", "method_b", "judge", "judge_a", "judge_b", "who",
    "version", "annotator", "trace", "moved most", "rows flipping", "category", "labels", "with each / pairs",
    "mean error by group", "feature", "source",
    "requires",  # the dataset fields a metric reads (question, contexts): field names
    "probe",  # probe ids (verbosity, order, ...), as the CLI's --probes takes them
    "status", "type",  # the editable test-set items: values written back to the file (accepted / edited / rejected)
})


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Every figure a page can show, stored: an offline run of 16 Japanese labelled rows (decomposed faithfulness
    and the binary judge, two repeats) with two annotators' labels and a dealt split; a second run (rubric5)
    of the same rows for run A vs run B; a saved rubric version."""
    root = tmp_path_factory.mktemp("i18n-figures")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(LABELLED)
        rows = [s for s in ds.samples if not s.id.endswith("-en")][:16]
        first = run_rows(rows, [*build_scorers(["faithfulness"]), JudgeScorer("binary")], config=ProviderConfig(),
                         dataset_name=ds.name, dataset_digest=ds.content_hash, repeats=2)
        second = run_rows(rows, [*build_scorers(["faithfulness"], {"economy": True}), JudgeScorer("rubric5")],
                          config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash)
        store = Store()
        named = [(lab.row_id, lab.criterion, lab.annotator, lab.value)
                 for lab in dataset_labels(read_label_rows(TWO), source=FILE) if lab.row_id in {s.id for s in rows}]
        annotations.import_labels(store, ds.content_hash, named)
        trust_report.deal_split(store, first.run_id, DEFAULT_FRACTIONS, 0, samples=rows)
        from rageval_core.scoring.rubric import load_rubric
        from rageval_core.store.rubric_versions import RubricStore

        versions = RubricStore()
        base = load_rubric("rubric5", "ja")
        versions.save_rubric(base, "基準")
        versions.save_rubric(replace(base, instructions=base.instructions + "\n厳しく判定してください。"), "厳しめ")
        yield {"home": str(root), "run": first.run_id, "other": second.run_id}


def japanese(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], path: str) -> AppTest:
    at = start_app(monkeypatch, home["home"], check=False, timeout=300, locale="ja-JP")
    at.session_state["dataset"] = japanese_rows()  # the labelled set's Japanese half: its text is Japanese data
    at.session_state["pinned"] = {"t01", "t02", "t03"}
    at.session_state["selected_run"] = home["run"]
    at.sidebar.radio(key=i18n.LANG).set_value("ja").run()
    at.switch_page(path).run()
    assert_ok(at)
    return at


def japanese_rows() -> Any:
    from rageval_ui import data

    lines = [line for line in LABELLED.read_text(encoding="utf-8").splitlines() if '-en"' not in line.split(",")[0]]
    return data.load_upload("trust_labelled_ja.jsonl", "\n".join(lines).encode("utf-8"))


# The language switch names each language in itself (the way back to English must read "English").
KEPT = frozenset({"English"})


def leaks(at: AppTest) -> list[tuple[str, str]]:
    return english_texts(at, data_columns=DATA_COLUMNS, kept=KEPT, skip_tables=("dataset.editor",))


def _click(at: AppTest, key: str) -> None:
    found = [b for b in at.button if b.key == key]
    if found:
        found[0].click().run()
        assert_ok(at)


def states_of_trust(at: AppTest) -> Iterator[str]:
    """The Trust page as loaded, with test figures opened and probes run, then with only some rows labelled."""
    yield "loaded"
    _click(at, "trust.split.open")
    _click(at, "trust.run_probes")
    job = at.session_state["trust.probe_job"] if "trust.probe_job" in at.session_state else None
    if job is not None:
        assert job.wait(600), "the probes did not finish"
        assert job.error is None, job.error
        at.run()
        assert_ok(at)
    yield "test open, probes"
    next(x for x in at.toggle if x.key != "runs.show_side").set_value(True).run()
    assert_ok(at)
    yield "some rows labelled"


def states_of_compare(at: AppTest, home: dict[str, str]) -> Iterator[str]:
    for tab in [tab.label for tab in at.tabs]:
        compare_tab(at, tab)
        assert_ok(at)
        if tab == i18n.catalogue("ja")["compare.tab.runs"]:
            at.selectbox(key="compare.run_b").set_value(home["other"]).run()
            assert_ok(at)
        if tab == i18n.catalogue("ja")["compare.tab.report"]:
            _click(at, "compare.report.build")
        yield tab


def states_of_evaluate(at: AppTest) -> Iterator[str]:
    """Evaluate before a run, then with the offline run of the pinned rows finished (its summary and cost)."""
    yield "loaded"
    button(at, i18n.catalogue("ja")["evaluate.start"]).click().run()
    job = at.session_state["job"]
    assert job.wait(600), "the offline run did not finish"
    assert job.error is None, job.error
    at.run()
    assert_ok(at)
    assert at.dataframe, "Evaluate showed no summary after its run"
    yield "run finished"


def states_of_testset(at: AppTest) -> Iterator[str]:
    """The Test set page before and after generating questions and answering them with the simple RAG."""
    yield "loaded"
    button(at, i18n.catalogue("ja")["testset.generate"]).click().run()
    button(at, i18n.catalogue("ja")["testset.run_rag"]).click().run()
    assert_ok(at)
    yield "generated and answered"


@pytest.mark.parametrize("spec", nav.ALL, ids=lambda s: s.url_path)
def test_no_english_ui_text_where_the_figures_are(monkeypatch: pytest.MonkeyPatch, home: dict[str, str], spec) -> None:
    at = japanese(monkeypatch, home, spec.path)
    states: Iterator[str] = iter(["loaded"])
    if spec.url_path == "trust":
        states = states_of_trust(at)
    elif spec.url_path == "compare":
        states = states_of_compare(at, home)
    elif spec.url_path == "evaluate":
        states = states_of_evaluate(at)
    elif spec.url_path == "testset":
        states = states_of_testset(at)
    found = {}
    for name in states:
        if shown := leaks(at):
            found[name] = shown
    assert found == {}, f"English UI text on {spec.url_path} in Japanese: {found}"


def test_the_walk_reads_every_kind_of_text(monkeypatch: pytest.MonkeyPatch, home: dict[str, str]) -> None:
    """The walk misses no kind of element: on Trust in English it finds English in each place a reader looks."""
    from tests.support.ui_text import element_texts

    at = start_app(monkeypatch, home["home"], check=False, timeout=300)
    at.session_state["selected_run"] = home["run"]
    at.switch_page(nav.TRUST.path).run()
    assert_ok(at)
    kinds = {where.split(".")[0].split("[")[0] for where, _ in element_texts(at)}
    fields = {where.split(".", 1)[-1] for where, _ in element_texts(at)}
    assert {"title", "subheader", "markdown", "table", "button", "selectbox", "multiselect", "toggle", "expander",
            "popover", "number_input", "chart", "caption"} <= kinds, kinds
    assert {"label", "help", "options", "heading"} <= {f.rsplit(".", 1)[-1].split("[")[0] for f in fields}, fields
    assert "English" in [s for w, s in element_texts(at) if w.startswith("radio.options")]  # the sidebar is read too
