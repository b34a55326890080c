"""The HTML report opens with the Trust page's one-screen answer, in the report's language: the same verdicts and
figures as the trust report of the run, computed when none was saved; a run without labels says how to get one."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from rageval_core.analysis.trust.run_report import run_report
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from rageval_core.views.report import report_html
from rageval_core.views.trust_answer import trust_answer
from rageval_core.views.trust_answer_text import texts
from tests.support.apptest import ROOT
from tests.support.runs import run_rows

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def labelled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str, str]:
    """An offline run of the shipped labelled set (decomposed faithfulness, the binary judge) and one of two
    unlabelled sample rows, in one store."""
    store = Store(tmp_path_factory.mktemp("report-answer") / "db.sqlite")
    ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
    run = run_rows(ds.samples, [*build_scorers(["faithfulness"]), JudgeScorer("binary")], config=ProviderConfig(),
                   store=store, dataset_name=ds.name, dataset_digest=ds.content_hash)
    plain = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
    bare = run_rows(plain.samples[:2], build_scorers(["faithfulness"]), config=ProviderConfig(), store=store,
                    dataset_name=plain.name, dataset_digest=plain.content_hash)
    return store, run.run_id, bare.run_id


def _answer_section(html: str) -> str:
    found = re.search(r'<section class="answer">.*?</section>', html, re.S)
    assert found is not None
    return found.group(0)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_report_opens_with_the_answer_in_its_language(labelled: tuple[Store, str, str], lang: str) -> None:
    store, run_id, _ = labelled
    html = report_html(store, [run_id], language=lang, top=1)
    section = _answer_section(html)
    run_heading, trust_heading = ("<h2>実行 ", "人のラベルとの一致（信頼性）") if lang == "ja" else ("<h2>Run ", "Agreement with human labels (trust)")
    assert html.index(section) < html.index(run_heading)  # first, above the run's own sections
    assert f'<html lang="{lang}">' in html
    expected = trust_answer(run_report(store, run_id, look=None).to_dict())  # the Trust page's figures, same seed
    assert len(expected.lines) == 3 and section.count("<tr class=\"verdict-") == 3
    for line in expected.lines:
        words = texts(line, lang)
        for sentence in (words.verdict, words.ranks, words.pass_fail, words.share, words.settle):
            assert sentence.replace("'", "&#x27;") in section, sentence
    faith = next(x for x in expected.lines if (x.metric, x.method) == ("faithfulness", "decomposed"))
    heading, verdict = ("このスコアは信頼できるか", "そのまま使える") if lang == "ja" else ("Can I trust this score?", "usable as is")
    assert heading in section and texts(faith, lang).verdict == verdict and "AUROC 0.914 [0.829, 0.975]" in section
    # Computed here (the trust CLI never saved one), it fills the report's trust section with the same figures.
    assert f"<h3>{trust_heading}</h3><table" in html and "0.914 [0.829, 0.975]" in html.split(f"{trust_heading}</h3>")[1]


def test_a_run_without_labels_and_the_cli_flag(labelled: tuple[Store, str, str], tmp_path: Path) -> None:
    from rageval_core import cli

    store, run_id, bare = labelled
    assert "no scored row has a human label" in _answer_section(report_html(store, [bare], top=1))
    assert cli.main(["--db", str(store.path), "report", run_id, "--out", str(tmp_path / "r.html"), "--top", "1",
                     "--lang", "ja"]) == 0
    assert "そのまま使える" in _answer_section((tmp_path / "r.html").read_text(encoding="utf-8"))
