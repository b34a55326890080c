"""Nothing cut off at 1,400 × 1,000 in either language (issue 38 item 4): every page, opened in Chromium with a
stored run to show (two methods, labels from two annotators, a second run), in ja-JP and in en-US; no select box
value, button, tab, metric or HTML table heading is wider than its box (``scrollWidth > clientWidth``: the text
is cut or ellipsised). Streamlit's data grids draw on a canvas (glide-data-grid) and size their columns to the
heading, so they are not measured here.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.browser import streamlit_app
from tests.support.browser import chromium, new_tab

pytestmark = pytest.mark.e2e

PAGES = ("dataset", "testset", "prompts", "evaluate", "compare", "trust", "inspect", "history")
SHOWN = ("prompts", "compare", "trust")  # screenshotted per locale (docs/img with RAGEVAL_SCREENSHOTS=docs/img)
SHOTS = Path(os.environ.get("RAGEVAL_SCREENSHOTS") or Path(tempfile.gettempdir()) / "rageval-e2e-screenshots")

# Leaf elements holding text that a reader must see whole. Select values, button and tab labels, metric values.
CUT = """() => {
  const boxes = [
    ['select', '[data-testid="stSelectbox"] input, [data-testid="stMultiSelect"] input'],
    ['chip', '[data-testid="stMultiSelect"] [role="row"] span, [data-testid="stMultiSelect"] [data-baseweb="tag"] span'],
    ['button', 'button p, button div[data-testid="stMarkdownContainer"]'],
    ['tab', '[role="tab"] p'],
    ['metric', '[data-testid="stMetricValue"] div, [data-testid="stMetricLabel"] p'],
    ['table heading', 'table th'],
  ];
  const out = [];
  const seen = {};
  for (const [kind, selector] of boxes) {
    for (const el of document.querySelectorAll(selector)) {
      const text = el.tagName === 'INPUT' ? el.value : el.innerText;
      if (!el.offsetParent || !text || !text.trim()) continue;
      seen[kind] = (seen[kind] || 0) + 1;
      if (el.tagName !== 'INPUT' && [...el.children].some(c => c.innerText && c.innerText.trim())) continue;  // leaves
      if (el.scrollWidth > el.clientWidth + 1) out.push([kind, text.trim().slice(0, 80), el.scrollWidth, el.clientWidth]);
    }
  }
  return {cut: out, seen: seen};
}"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A run of 12 Japanese labelled rows (decomposed faithfulness, the binary judge) with two annotators' labels,
    and a second run for run A vs run B."""
    from rageval_core.analysis.trust.labels import FILE, dataset_labels
    from rageval_core.analysis.trust.run_report import read_label_rows
    from rageval_core.data.datasets import load_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.store import annotations
    from rageval_core.store.runs import Store
    from tests.support.apptest import ROOT
    from tests.support.runs import run_rows

    root = tmp_path_factory.mktemp("e2e-fit")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
        rows = [s for s in ds.samples if not s.id.endswith("-en")][:12]
        run_rows(rows, [*build_scorers(["faithfulness"]), JudgeScorer("rubric5")], config=ProviderConfig(),
                 dataset_name=ds.name, dataset_digest=ds.content_hash)
        run_rows(rows, [*build_scorers(["faithfulness"]), JudgeScorer("binary")], config=ProviderConfig(),
                 dataset_name=ds.name, dataset_digest=ds.content_hash)
        named = [(lab.row_id, lab.criterion, lab.annotator, lab.value)
                 for lab in dataset_labels(read_label_rows(ROOT / "sample_data" / "trust_two_annotators.jsonl"), source=FILE)
                 if lab.row_id in {s.id for s in rows}]
        annotations.import_labels(Store(), ds.content_hash, named)
    return root


@pytest.fixture(scope="module")
def browser(home: Any) -> Iterator[tuple[str, Any]]:
    with chromium() as launched, streamlit_app(home) as url:
        yield url, launched


@pytest.mark.timeout(900)
@pytest.mark.parametrize("locale", ["ja-JP", "en-US"])
def test_nothing_is_cut_off_at_1400_px(browser: tuple[str, Any], locale: str) -> None:
    url, launched = browser
    page = new_tab(launched, width=1400, height=1000, locale=locale)
    try:
        cut: dict[str, list[Any]] = {}
        seen: dict[str, int] = {}
        for path in PAGES:
            page.goto(f"{url}/{path}")
            page.get_by_test_id("stSidebar").wait_for()
            page.wait_for_timeout(1500)
            page.get_by_test_id("stStatusWidget").wait_for(state="hidden")
            page.get_by_test_id("stMainBlockContainer").locator("h1").first.wait_for()
            found = page.evaluate(CUT)
            for kind, n in found["seen"].items():
                seen[kind] = seen.get(kind, 0) + n
            if found["cut"]:
                cut[path] = found["cut"]
            if path in SHOWN:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"{path}-{locale}.png"))
        assert {"select", "button", "tab"} <= set(seen), f"the measure found no {seen}: has the DOM changed?"
        assert cut == {}, f"text cut off at 1,400 px in {locale}: {cut}"
    finally:
        page.context.close()
