"""Issue 36, item 1, must show: hostile values in every field, in a real browser (Debian's Chromium through
Playwright), and Chromium makes no request off the app's origin.

Every text a user, a dataset, a trace export or a model can put on a page carries the same payload: a backtick
(the Inspect trace-id breakout), a Markdown image and link to 127.0.0.2 (a loopback address that is not the app's),
raw HTML with a remote image, bold HTML and a bare URL. The fields: the uploaded file's name, row ids, question,
answer, contexts, ground truth, category, metadata keys and values, trace ids (an uploaded OTLP export), the
annotator's name and label notes, the run's name and note, a saved rubric version's name and the judge's reasons
(a run's stored results). The test walks every page (every Compare tab, Inspect on a plain row and on a traced
one) with ``page.on("request")`` recording, and fails on any request whose origin is not the app's, and on any
image, link or bold text the payload made (by its ``pwn-`` markers) in the page.
"""

from __future__ import annotations

import re

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from bench.browser import streamlit_app
from tests.support.browser import chromium, new_tab, require_browser

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
TEXT_TIMEOUT_MS = 90_000
OFF = "127.0.0.2:9"  # not the app's origin (127.0.0.1:<port>); port 9 (discard) answers nothing
PAYLOAD = (f"pwn` ![pwn-img](http://{OFF}/md.png) [pwn-link](http://{OFF}/link) "
           f"<img src=http://{OFF}/html.png alt=pwn-html> <b>pwn-bold</b> http://{OFF}/bare "
           f"\"'><img src=http://{OFF}/attr.png alt=pwn-attr> `")  # the quotes leave an HTML attribute
FILE_NAME = "hostile` ![pwn-img](x.png) <b>pwn-bold `.json"  # no slash: a file name loses what precedes one
NAME = f"ann {PAYLOAD}"


def _rows() -> list[dict[str, Any]]:
    base = json.loads((ROOT / "sample_data" / "ml_qa_en.json").read_text(encoding="utf-8"))
    rows = base if isinstance(base, list) else base.get("samples") or base.get("rows") or base["data"]
    out = []
    for n, row in enumerate(rows[:3]):
        out.append({
            "id": f"r{n} {PAYLOAD}", "question": f"{row['question']} {PAYLOAD}", "answer": f"{row['answer']} {PAYLOAD}",
            "contexts": [f"{c} {PAYLOAD}" for c in row["contexts"]], "ground_truth": f"{row.get('ground_truth')} {PAYLOAD}",
            "category": f"cat {PAYLOAD}", "metadata": {"source": PAYLOAD, f"key {PAYLOAD}": PAYLOAD},
        })
    return out


def _trace_export() -> bytes:
    """An OTLP JSON export of one RAG trace (bench/hostile_traces.py's shape) whose trace id, question, answer and
    retrieved document all carry the payload."""
    from bench.hostile_traces import T, kv, rag, text

    attributes = [kv("openinference.span.kind", "CHAIN"), kv("input.value", f"What is overfitting? {PAYLOAD}"),
                  kv("output.value", f"Overfitting is fitting noise. {PAYLOAD}")]
    doc = rag(attributes=attributes)
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["attributes"][1] = kv(
        "retrieval.documents.0.document.content", f"Overfitting is when a model fits noise. {PAYLOAD}")
    return text(doc, T, json.dumps(f"trace {PAYLOAD}")[1:-1]).encode("utf-8")


class Judged:
    """The offline judge with the payload added to every reason it gives (a prompt-injected model)."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.provider, self.model = inner, inner.provider, inner.model

    def complete(self, request: Any) -> Any:
        from rageval_core.llm.base import Completion

        done = self.inner.complete(request)
        return Completion(texts=[_inject(t) for t in done.texts], provider=done.provider, model=done.model,
                          usage=done.usage, latency_s=done.latency_s, cached=done.cached, cost_usd=done.cost_usd)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _inject(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    if isinstance(value, dict):
        value = {k: f"{v} {PAYLOAD}" if isinstance(v, str) and "reason" in k else v for k, v in value.items()}
    return json.dumps(value, ensure_ascii=False)


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """RAGEVAL_HOME with two runs on the hostile dataset (named, labelled by a hostile annotator), one on the
    hostile trace export, and a rubric version with a hostile name."""
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.providers.registry import build_llm
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers
    from rageval_core.scoring.rubric import load_rubric
    from rageval_core.store.rubric_versions import RubricStore
    from rageval_core.store.runs import Store
    from rageval_ui import data
    from tests.support.runs import run_rows

    home = tmp_path_factory.mktemp("e2e-hostile")
    raw = json.dumps(_rows(), ensure_ascii=False).encode("utf-8")
    trace = _trace_export()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(home))
        ws = data.load_upload(FILE_NAME, raw)
        traced = data.load_trace_upload("spans.json", trace, "auto")
        cfg = ProviderConfig()
        judge = Judged(build_llm(cfg))
        scorers = [*build_scorers(["faithfulness", "answer_relevancy", "context_precision"]), JudgeScorer("rubric5")]
        first = run_rows(ws.samples, scorers, judge, config=None, dataset_name=ws.name, dataset_digest=ws.content_hash)
        second = run_rows(ws.samples, [*build_scorers(["faithfulness"]), JudgeScorer("binary")], judge,
                          dataset_name=ws.name, dataset_digest=ws.content_hash)
        on_trace = run_rows(traced.samples, scorers[:1], judge, dataset_name=traced.name, dataset_digest=traced.content_hash)
        store = Store()
        store.label_run(second.run_id, name=f"run {PAYLOAD}", note=f"note {PAYLOAD}")
        for n, sample in enumerate(ws.samples):
            store.set_label(ws.content_hash, sample.id, "faithfulness", float(n % 2), note=f"note {PAYLOAD}")
            store.set_label(ws.content_hash, sample.id, "faithfulness", float(n % 2), annotator=NAME)
        RubricStore().save_rubric(load_rubric("rubric5", "en"), f"version {PAYLOAD}")
    assert first.status == second.status == on_trace.status == "done"
    return {"home": home, "raw": raw, "trace": trace, "runs": (first.run_id, second.run_id, on_trace.run_id),
            "trace_hash": traced.content_hash}


@pytest.fixture(scope="module")
def browser_page(stored: dict[str, Any]) -> Iterator[tuple[str, Any, list[str]]]:
    require_browser()
    with streamlit_app(stored["home"]) as url, chromium() as browser:
        tab = new_tab(browser, width=1440, height=1400)
        requests: list[str] = []
        tab.on("request", lambda request: requests.append(request.url))
        yield url, tab, requests


def _off_origin(url: str, requests: list[str]) -> list[str]:
    app = urlsplit(url)
    return sorted({r for r in requests if urlsplit(r).scheme not in ("data", "blob", "about")
                   and (urlsplit(r).scheme, urlsplit(r).netloc) != (app.scheme, app.netloc)})


# What the payload would have made had it been rendered: an image, a link, bold text, a live bare URL.
_MADE = """() => {
  const found = [];
  document.querySelectorAll('img, a, b, strong, iframe, video, audio, source, object, embed').forEach(e => {
    const src = (e.getAttribute('src') || '') + ' ' + (e.getAttribute('href') || '');
    const text = (e.textContent || '').trim();
    if (src.includes('127.0.0.2') || (e.getAttribute('alt') || '').startsWith('pwn')
        || text === 'pwn-bold' || text === 'pwn-link' || text === 'pwn-img')
      found.push(`${e.tagName} ${src.trim()} ${text.slice(0, 60)}`);
  });
  return found;
}"""


def _nav(tab: Any, title: str) -> None:
    tab.get_by_test_id("stSidebarNav").get_by_text(title, exact=True).click()


def _pick_run(tab: Any, run_id: str) -> None:
    tab.get_by_test_id("stSelectbox").filter(has_text="Run").first.click()
    tab.get_by_role("option").filter(has_text=run_id).first.click()


def _settle(tab: Any) -> None:
    """Until the app has finished its rerun (Streamlit shows its running widget while a script runs)."""
    tab.wait_for_timeout(500)
    tab.get_by_test_id("stStatusWidget").wait_for(state="hidden", timeout=TEXT_TIMEOUT_MS)


@pytest.mark.timeout(1200)
def test_hostile_values_in_every_field_make_no_request_off_the_apps_origin(
        browser_page: tuple[str, Any, list[str]], stored: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    url, tab, requests = browser_page
    expect.set_options(timeout=TEXT_TIMEOUT_MS)
    first, second, on_trace = stored["runs"]
    made: dict[str, list[str]] = {}

    def look(where: str) -> None:
        _settle(tab)
        found = tab.evaluate(_MADE)
        if found:
            made[where] = found

    tab.goto(url)
    uploader = tab.get_by_test_id("stFileUploader").first
    uploader.locator("input[type=file]").set_input_files(
        {"name": FILE_NAME, "mimeType": "application/json", "buffer": stored["raw"]})
    expect(tab.get_by_test_id("stMetricValue").filter(has_text="hostile").first).to_be_visible()
    look("dataset")

    _nav(tab, "Compare")
    _pick_run(tab, first)
    expect(tab.get_by_role("tab", name="Row by row")).to_be_visible()
    look("compare / per category")
    for name in ("Row by row", "Judges", "Run A vs run B", "Report"):
        found = tab.get_by_role("tab", name=name)
        if found.count():
            found.first.click()
            look(f"compare / {name}")

    _nav(tab, "Inspect a sample")
    expect(tab.get_by_role("heading", name="Inspect a sample")).to_be_visible()
    name_box = tab.get_by_role("textbox", name=re.compile("Your name"))
    if name_box.count():
        name_box.first.fill(NAME)
        name_box.first.press("Enter")
    look("inspect")

    for title in ("Trust", "History", "Prompts & rubric", "Test set", "Evaluate"):
        _nav(tab, title)
        if title == "History":
            _pick_run(tab, second)
        look(title)

    _nav(tab, "Dataset")
    tab.get_by_text("Import traces", exact=False).first.click()
    tab.get_by_test_id("stFileUploader").last.locator("input[type=file]").set_input_files(
        {"name": "spans.json", "mimeType": "application/json", "buffer": stored["trace"]})
    expect(tab.get_by_test_id("stMetricValue").filter(has_text="spans").first).to_be_visible()
    look("dataset / traces")
    _nav(tab, "Inspect a sample")
    _pick_run(tab, on_trace)
    expect(tab.get_by_text("trace pwn", exact=False).first).to_be_visible()  # the caption, its id as code
    look("inspect / traced row")

    off = _off_origin(url, requests)
    print(f"hostile walk: {len(requests)} requests, {len(off)} off the app's origin")  # shown with -s
    assert requests, "no request recorded: the listener saw nothing"
    assert not off, f"Chromium requested {len(off)} URL(s) off the app's origin: {off}"
    assert not made, f"the payload was rendered: {made}"
