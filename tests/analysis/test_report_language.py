"""The HTML report in the reader's language (issue 38 item 4): a Japanese report of a run with every section filled
(two methods, human labels from two annotators, a dealt split with thresholds calibrated on dev, the corrected
share, bias tests, chosen rows with claims) holds no English UI text by the Japanese-UI tests' shape rule; the
English report keeps its English headings; ``report --lang`` picks the language, the data's by default."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from rageval_core.views.report import report_html
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
from tests.support.apptest import ROOT
from tests.support.html_tables import text as html_text
from tests.support.runs import run_rows
from tests.support.ui_text import english, english_word

LABELLED = ROOT / "sample_data" / "trust_labelled.jsonl"
TWO = ROOT / "sample_data" / "trust_two_annotators.jsonl"
pytestmark = pytest.mark.timeout(600)
ANNOTATORS = re.compile(r"\b(?:aiko|ben)\b")  # the names in trust_two_annotators.jsonl


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, str]]:
    root = tmp_path_factory.mktemp("report-language")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(LABELLED)
        rows = [s for s in ds.samples if not s.id.endswith("-en")][:16]
        store = Store()
        run = run_rows(rows, [*build_scorers(["faithfulness"]), JudgeScorer("binary"), JudgeScorer("rubric5")],
                       config=ProviderConfig(), store=store, dataset_name=ds.name, dataset_digest=ds.content_hash)
        named = [(lab.row_id, lab.criterion, lab.annotator, lab.value)
                 for lab in dataset_labels(read_label_rows(TWO), source=FILE) if lab.row_id in {s.id for s in rows}]
        annotations.import_labels(store, ds.content_hash, named)
        trust_report.deal_split(store, run.run_id, DEFAULT_FRACTIONS, 0, samples=rows)
        trust_report.run_report(store, run.run_id, samples=rows, show_test=True, look=None, save=True)
        yield store, run.run_id


def _cells(html: str) -> list[str]:
    """Every heading and cell of the report's tables, as a reader sees them."""
    return [html_text(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", html, flags=re.S)]


def _paragraphs(html: str) -> list[str]:
    """The report's headings, paragraphs, notes and chart texts, each as a reader sees it (tables aside)."""
    html = re.sub(r"<table.*?</table>", " ", html, flags=re.S)
    html = re.sub(r"<style\b.*?</style>", " ", html, flags=re.S)
    parts = re.findall(r"<(h[1-3]|p|b|text|title|div)[^>]*>(.*?)</\1>", html, flags=re.S)
    return [html_text(p) for _, p in parts]


@pytest.mark.parametrize("made_by", ["api", "cli"])
def test_a_japanese_report_has_no_english_ui_text(stored: tuple[Store, str], made_by: str, tmp_path) -> None:
    """From the page's call and from `report --lang ja` alike: the core's trust notes come in Japanese from the core
    itself (before, only the UI could translate them, and the CLI's Japanese report kept them English)."""
    from rageval_core import cli

    store, run_id = stored
    if made_by == "api":
        html = report_html(store, [run_id], iterations=50, language="ja")
    else:
        out = tmp_path / "ja.html"
        assert cli.main(["--db", str(store.path), "report", run_id, "--out", str(out), "--lang", "ja"]) == 0
        html = out.read_text(encoding="utf-8")
    for section in ("人のラベルとの一致（信頼性）", "dev で校正した合格しきい値", "合格する割合", "人どうしの一致", "選んだ行"):
        assert section in html, f"{section} missing: the run should fill every section"
    assert '<html lang="ja">' in html and "<title>RAG 評価レポート</title>" in html
    # Table cells hold data too: method ids and row ids pass the rule; the annotators' names and the rows'
    # categories (faithful, partial, ...) are set aside here.
    categories = {str(s.category) for s in load_dataset(LABELLED).samples if s.category}
    data_free = [c for c in _cells(html) if c.strip() not in categories and english_word(ANNOTATORS.sub("", c))]
    prose = [p for p in _paragraphs(html) if english(p)]
    assert prose == [], f"English headings or explanations in the Japanese report: {prose}"
    assert data_free == [], f"English table headings or cells in the Japanese report: {data_free}"


def test_an_english_report_stays_english(stored: tuple[Store, str]) -> None:
    store, run_id = stored
    html = report_html(store, [run_id], iterations=50)
    assert '<html lang="en">' in html and "Agreement with human labels (trust)" in html and "忠実性" not in html


def test_the_cli_report_takes_a_language(stored: tuple[Store, str], tmp_path) -> None:
    from rageval_core import cli

    store, run_id = stored
    assert cli.main(["--db", store.path, "report", run_id, "--out", str(tmp_path / "auto.html")]) == 0
    assert '<html lang="ja">' in (tmp_path / "auto.html").read_text(encoding="utf-8")  # the data's language
    assert cli.main(["--db", store.path, "report", run_id, "--out", str(tmp_path / "en.html"), "--lang", "en"]) == 0
    assert "Chosen rows" in (tmp_path / "en.html").read_text(encoding="utf-8")
