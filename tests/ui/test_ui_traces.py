"""AppTest: a trace export uploaded on the Dataset page becomes a dataset (one row per RAG answer), the skipped
traces are counted in the validation report, and Inspect's caption names the trace a row came from."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.apptest import assert_ok, metric, plain, start_app

TRACES = Path(__file__).resolve().parents[1] / "data" / "traces"


def _uploader(app, label: str):
    return next(u for u in app.file_uploader if u.label == label)


def test_a_trace_export_uploaded_on_the_dataset_page_becomes_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = start_app(monkeypatch, tmp_path / "home")
    export = TRACES / "sdk" / "openinference_langchain.otlp.json"
    _uploader(app, "Upload a trace export (JSON or JSON Lines)").upload("spans.json", export.read_bytes(), "application/json")
    app.run()
    assert_ok(app)
    assert metric(app, "Dataset") == "spans"
    assert metric(app, "Valid rows") == "2"
    ws = app.session_state["dataset"]
    from rageval_core.data.traces import import_trace_file

    assert [s.metadata["trace_id"] for s in ws.samples] == [r["id"] for r in import_trace_file(export).rows]
    report = app.dataframe[0].value
    assert "1 trace(s) skipped: the trace ended in an error (a span with status ERROR and no answer after it)" in list(report["message"])


def test_an_export_with_no_rag_answer_is_a_message_and_the_dataset_stays(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    app = start_app(monkeypatch, tmp_path / "home")
    _uploader(app, "Upload a trace export (JSON or JSON Lines)").upload("bad.json", b'{"resourceSpans": []}', "application/json")
    app.run()
    assert metric(app, "Dataset") == "ml_qa_en"  # the landing dataset stays
    assert any("bad.json" in plain(e.value) for e in app.error)
    assert not any("Error:" in plain(e.value) for e in app.error)  # no Python exception name (TraceFormatError)


def test_trace_caption_links_back() -> None:
    from rageval_ui.data import trace_caption

    assert trace_caption({}) is None
    meta = {"trace_id": "4bf9", "latency_ms": 1250.0, "trace_url": "http://localhost:6006/projects/default/traces/4bf9"}
    assert trace_caption(meta) == ("[trace `4bf9`](http://localhost:6006/projects/default/traces/4bf9)"
                                   " (localhost\\:6006) · 1250 ms")
    assert trace_caption({"trace_id": "4bf9", "trace_url": "javascript:alert(1)"}) == "trace `4bf9`"


def test_a_hostile_trace_id_stays_one_code_span() -> None:
    """Issue 36: an id with backticks, an image and a link, from an uploaded trace export, broke out of the
    backticks the caption put around it; now the id is one code span whatever it holds, and the URL built from it
    is percent-encoded."""
    from rageval_ui.data import trace_caption

    hostile = "x` ![x](http://127.0.0.2:9/x.png) [link](http://127.0.0.2:9/) <img src=http://127.0.0.2:9/i.png> `"
    caption = trace_caption({"trace_id": hostile, "trace_url": f"http://phoenix.local/traces/{hostile}"})
    head = f"[trace `` {hostile} ``](http://phoenix.local/traces/"
    assert caption.startswith(head)
    url = caption[len(head):].split(")", 1)[0]
    assert " " not in url and "(" not in url and "[" not in url and "`" not in url and "<" not in url
