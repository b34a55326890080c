"""Issue 27, must show: dataset text and model output are shown as text on every page. A dataset whose every
field holds Markdown links, images, bare URLs, raw HTML, headings, math and Streamlit colour directives, and
a judge whose reasons carry the same (a prompt-injected model), go through every page (every Compare tab);
no element that Streamlit renders as Markdown (text, captions, alerts, headers, labels, help, table cells)
holds any of them unescaped, and no HTML block holds the raw HTML."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.core.types import SEED_METRICS
from rageval_core.data.datasets import load_dataset
from rageval_core.llm.base import Completion, LLMRequest
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_llm
from tests.support.runs import run_rows
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store.runs import Store
from tests.support.apptest import ROOT, compare_tab, start_app
from rageval_ui import data, nav, state

PAYLOAD = ("[click-x](http://evil.example/a) ![pix-x](http://evil.example/p.png) http://evil.example/b "
           "<img src=x onerror=alert(1)> <b>bold-x</b> $E=mc^2$ :red[red-x] **strong-x**\n# HEAD-X\nsetext-x\n===\n")
# What each would look like if it reached a Markdown renderer unescaped.
MARKDOWN_TELLS = {
    "link": re.compile(r"(?<!\\)\[click-x(?<!\\)\]\("),
    "image": re.compile(r"(?<!\\)!(?<!\\)\[pix-x"),
    "bare url": re.compile(r"http://evil"),
    "html": re.compile(r"<img src=x|<b>bold-x"),
    "heading": re.compile(r"(^|\n) {0,3}#{1,6} HEAD-X|setext-x\n {0,3}=+"),
    "math": re.compile(r"(?<!\\)\$E=mc"),
    "directive": re.compile(r"(?<!\\):red(?<!\\)\["),
    "bold": re.compile(r"(?<!\\)\*(?<!\\)\*strong-x"),
}
HTML_TELLS = re.compile(r"<img src=x|<b>bold-x")
LITERAL = {"code", "text", "arrow_data_frame", "dataframe", "json", "exception"}  # shown verbatim by Streamlit
PLAIN_OPTIONS = {"selectbox", "multiselect", "select_slider"}  # options drawn as plain text (radio, pills: Markdown)


def _hostile_rows() -> bytes:
    seed = json.loads((ROOT / "sample_data" / "ml_qa_en.json").read_text(encoding="utf-8"))
    rows = seed if isinstance(seed, list) else seed.get("samples") or seed.get("rows") or seed["data"]
    out = []
    for row in rows[:3]:
        row = dict(row)
        row["question"] = f"{row['question']} {PAYLOAD}"
        row["answer"] = f"{row['answer']} {PAYLOAD}"
        row["ground_truth"] = f"{row.get('ground_truth') or ''} {PAYLOAD}"
        row["contexts"] = [f"{c} {PAYLOAD}" for c in row["contexts"]]
        row["category"] = f"cat {PAYLOAD}"
        out.append(row)
    return json.dumps(out, ensure_ascii=False).encode("utf-8")


class InjectedJudge:
    """The offline judge with every reason it gives extended by the payload: a prompt-injected model."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.provider, self.model = inner, inner.provider, inner.model

    def complete(self, request: LLMRequest) -> Completion:
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

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: (f"{x} {PAYLOAD}" if isinstance(x, str) and "reason" in k else walk(x)) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v
    return json.dumps(walk(value), ensure_ascii=False)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    root = tmp_path_factory.mktemp("ui-hostile")
    raw = _hostile_rows()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("RAGEVAL_HOME", str(root))
        ds = load_dataset(raw, "hostile.json")
        assert not [i for i in ds.issues if i.severity == "error"], ds.issues
        cfg = ProviderConfig()
        done = run_rows(ds.samples, [*build_scorers(SEED_METRICS), JudgeScorer("rubric5")], InjectedJudge(build_llm(cfg)),
                   config=cfg, dataset_name=ds.name, dataset_digest=ds.content_hash)
        store = Store()
        for n, sample in enumerate(ds.samples):
            store.set_label(ds.content_hash, sample.id, "faithfulness", float(n % 2), note=f"note {PAYLOAD}")
        yield {"home": str(root), "raw": raw, "run": done.run_id, "first": ds.samples[0].id}


def _walk(node: Any) -> Iterator[Any]:
    yield node
    children = getattr(node, "children", None) or {}
    for child in (children.values() if isinstance(children, dict) else children):
        yield from _walk(child)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, pd.DataFrame):
        yield from (str(v) for v in value.index)
        yield from (str(v) for v in value.columns)
        yield from (str(v) for v in value.to_numpy().ravel())
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _strings(v)


def _rendered(at: AppTest, where: str) -> list[str]:
    found = []
    for node in _walk(at._tree):
        kind = getattr(node, "type", "")
        if kind in LITERAL:
            continue
        if kind == "html" or (kind == "unknown" and getattr(node.proto, "WhichOneof", None) and "html" in str(type(node.proto))):
            for text in _strings(getattr(node, "value", None)):
                if HTML_TELLS.search(text):
                    found.append(f"{where}: html block holds raw HTML: {text[:160]!r}")
            continue
        for attr in ("body", "label", "help", "placeholder", "options", "caption"):
            try:
                value = getattr(node, attr, None)
            except Exception:  # an element without that field
                continue
            if attr == "options" and kind in PLAIN_OPTIONS:
                continue
            for text in _strings(value):
                tells = [tell for tell, pattern in MARKDOWN_TELLS.items() if pattern.search(text)]
                if tells:
                    found.append(f"{where}: {kind}.{attr} renders {', '.join(tells)}: {text[:100]!r}")
    return found


def _app(monkeypatch: pytest.MonkeyPatch, hostile: dict[str, Any]) -> AppTest:
    at = start_app(monkeypatch, hostile["home"], check=False)
    at.session_state[state.DATASET] = data.load_upload("hostile.json", hostile["raw"])
    at.session_state[state.SELECTED_RUN] = hostile["run"]
    at.session_state[state.INSPECT_SAMPLE] = hostile["first"]
    return at.run()


@pytest.mark.parametrize("spec", nav.ALL, ids=lambda s: Path(s.path).stem)
def test_no_page_renders_markdown_or_html_from_data_or_model_output(spec, hostile, monkeypatch) -> None:
    at = _app(monkeypatch, hostile)
    at.switch_page(spec.path).run()
    assert not at.exception, [e.value for e in at.exception]
    found = _rendered(at, spec.path)
    if spec is nav.COMPARE:
        for tab in [t.label for t in at.tabs][1:]:
            compare_tab(at, tab)
            assert not at.exception, [e.value for e in at.exception]
            found += _rendered(at, f"{spec.path} / {tab}")
    assert not found, "\n".join(found)
    if spec is nav.INSPECT:  # the texts are there, shown as text
        shown = [m.value for m in [*at.markdown, *at.caption]]
        assert any("\\[click\\-x\\]\\(http\u2060\\://evil" in v for v in shown), shown
