"""The workbench's trace links and Phoenix panels without a Phoenix server: the sidebar's link template links the
trace ids of uploaded exports on Inspect, links are http(s) only and escaped, and a pull from a server that is not
there is a message naming it (the dataset stays). Against the real server: tests/e2e/test_phoenix_round_trip.py."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rageval_core import cli
from tests.support.apptest import assert_ok, button, metric, plain, start_app, set_kept
from tests.support.phoenix_server import free_port

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def test_the_sidebar_template_links_trace_ids_of_uploaded_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = start_app(monkeypatch, tmp_path / "home")
    next(u for u in app.file_uploader if u.label == "Upload a trace export (JSON or JSON Lines)").upload(
        "spans.json", (TRACES / "sdk" / "openinference_langchain.otlp.json").read_bytes(), "application/json")
    app.run()
    ws = app.session_state["dataset"]
    assert "trace_url" not in ws.samples[0].metadata  # an upload has no link of its own
    from rageval_core.data.datasets import save_dataset

    data = save_dataset(ws.samples, tmp_path / "traces.jsonl")
    assert cli.main(["evaluate", str(data), "--provider", "offline", "--metrics", "faithfulness", "--quiet",
                     "--out", str(tmp_path / "r.json")]) == 0
    set_kept(app, "w.phoenix_url", "http://phoenix.local:6006/")
    set_kept(app, "w.trace_url", "{url}/redirects/traces/{trace_id}")
    app.switch_page("rageval_ui/app_pages/inspect_sample.py").run()
    assert_ok(app)
    trace_id = ws.samples[0].metadata["trace_id"]
    captions = [c.value for c in app.caption]
    assert f"[trace `{trace_id}`](http://phoenix.local:6006/redirects/traces/{trace_id})" in " ".join(captions)


def test_trace_links_are_http_only_and_escaped() -> None:
    from rageval_ui.data import trace_caption
    from rageval_ui.phoenix import link_column

    template = "http://h/traces/{trace_id}"
    assert trace_caption({"trace_id": "ab12"}, template) == "[trace `ab12`](http://h/traces/ab12) (h)"  # the host shown
    assert trace_caption({"trace_id": "ab12"}, "javascript:alert(1)//{trace_id}") == "trace `ab12`"
    assert trace_caption({"trace_id": "ab12", "trace_url": "http://own/ab12"}, template) == "[trace `ab12`](http://own/ab12) (own)"
    hostile_id = "x`) [a](http://evil) ![](http://img)"
    hostile = trace_caption({"trace_id": hostile_id}, template)
    # the id is one code span (a fence longer than its backtick), the URL percent-encoded: neither link nor image
    assert hostile == ("[trace ``x`) [a](http://evil) ![](http://img)``]"
                       "(http://h/traces/x%60%29%20%5Ba%5D%28http%3A%2F%2Fevil%29%20%21%5B%5D%28http%3A%2F%2Fimg%29) (h)")
    frame = pd.DataFrame({"id": ["a", "b"], "trace_url": ["http://h/traces/a", "https://h/traces/b"]})
    assert list(link_column(frame)) == ["trace_url"]
    assert link_column(frame.assign(trace_url=["http://h/a", "javascript:alert(1)"])) == {}
    assert link_column(frame.drop(columns=["trace_url"])) == {}


def test_a_pull_from_a_server_that_is_not_there_is_a_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PHOENIX_API_KEY", raising=False)
    app = start_app(monkeypatch, tmp_path / "home")
    port = free_port()
    set_kept(app, "w.phoenix_url", f"http://127.0.0.1:{port}")
    set_kept(app, "w.phoenix_project", "rag-app")
    app.run()
    assert any("PHOENIX_API_KEY is not set" in c.value for c in app.sidebar.caption)
    button(app, "Pull").click().run()
    assert metric(app, "Dataset") == "ml_qa_en"  # the landing dataset stays
    said = " ".join(plain(e.value) for e in app.error)
    assert f"Could not pull from Phoenix — cannot reach Phoenix at http://127.0.0.1:{port}" in said
