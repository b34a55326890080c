"""Compare's "Their scores vs ours" tab in a real browser (Debian's Chromium through Playwright), in English and
Japanese: a ragas results CSV (tests/data/external, written by ragas 0.4.3) evaluated offline by the CLI, then the
tab opened as a user opens it. Skips with a reason when Chromium or playwright is missing, unless
RAGEVAL_REQUIRE_E2E=1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import TEXT_TIMEOUT_MS, new_tab

pytestmark = pytest.mark.e2e

RESULTS = Path(__file__).resolve().parents[1] / "data" / "external" / "ragas_results.csv"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store holding one offline run of the ragas results CSV (the run Compare opens on: the newest)."""
    from rageval_core import cli

    home = tmp_path_factory.mktemp("e2e-theirs")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        out = home / "out.json"
        assert cli.main(["evaluate", str(RESULTS), "--provider", "offline", "--metrics", "faithfulness,context_precision",
                         "--out", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text(encoding="utf-8"))["run_id"]
    return home


@pytest.mark.timeout(600)
@pytest.mark.parametrize(("locale", "tab_name", "texts"), [
    ("en-US", "Their scores vs ours", ["Compared", "→ Faithfulness (8 of 9 rows scored by ragas)",
                                       "this run did not compute Answer Relevancy", "come from the file",
                                       "Row by row, the largest disagreement first"]),
    ("ja-JP", "他ツールのスコアと比較", ["比較した列", "9 行中 8 行を ragas が採点", "この実行は 回答の関連性 を計算していません",
                                 "ファイルから読んだもの", "行ごとの比較（差の大きい順）"]),
])
def test_their_ragas_scores_beside_ours_in_the_browser(server: str, browser: Any, locale: str, tab_name: str,
                                                       texts: list[str]) -> None:
    """The tab names what was compared and what not, says where their scores come from, and draws the agreement
    and the rows beside ours (the grids' headings are drawn on a canvas: the AppTest reads them)."""
    from playwright.sync_api import expect

    expect.set_options(timeout=TEXT_TIMEOUT_MS)
    tab = new_tab(browser, locale=locale)
    try:
        tab.goto(f"{server}/compare")
        tab.get_by_role("tab", name=tab_name).click()
        main = tab.get_by_test_id("stMain")
        for text in texts:
            expect(main.get_by_text(text).first).to_be_visible()
        expect(main.get_by_test_id("stDataFrame")).to_have_count(2)  # the agreement, then the rows beside ours
    finally:
        tab.context.close()
