"""Trace exports → dataset rows: the project's own samples of each format (tests/data/traces, written from the
OTLP/JSON encoding, the OpenInference semantic conventions, Phoenix's span schemas and Langfuse's public API)
give the expected rows and skip counts; malformed exports name the file and the span or line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core.data.traces import TraceFormatError, build_map, import_trace_file, import_traces
from rageval_core.data.traces.attributes import any_value, flatten, indexed, iso_ns
from rageval_core.data.traces.rebuild import text_of

HERE = Path(__file__).resolve().parent / "traces"
T1, T2 = "4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c"
Q1 = "What is overfitting?"
C1 = ["Overfitting is when a model fits the training data too closely and generalises poorly to new data.",
      "Regularisation, dropout and early stopping reduce overfitting."]
A1 = "Overfitting is when a model fits its training data too closely and does worse on new data; regularisation and dropout help."
Q2 = "ドロップアウト率は通常どの範囲に設定されますか？"
C2 = ["ドロップアウト率は一般に0.2から0.5の間で設定される。", "ドロップアウトは学習中に一部のニューロンの出力を0にする正則化手法である。"]
A2 = "通常は0.2から0.5の間に設定されます。"


def row1(fmt: str, trace_id: str = T1, **extra: object) -> dict:
    return {"id": trace_id, "question": Q1, "contexts": C1, "answer": A1, "trace_id": trace_id, "trace_format": fmt,
            "latency_ms": 1250.0, "context_ids": ["kb-ml-001", "kb-ml-002"], "context_scores": [0.91, 0.78], **extra}


def row2(fmt: str, trace_id: str = T2, **extra: object) -> dict:
    return {"id": trace_id, "question": Q2, "contexts": C2, "answer": A2, "trace_id": trace_id, "trace_format": fmt,
            "latency_ms": 980.0, "context_ids": ["kb-ja-017", "kb-ja-018"], "context_scores": [0.88, 0.64], **extra}


SESSION2 = {"session_id": "sess-42", "user_id": "u-7"}
CASES = {
    "otel.json": ("otel", [row1("otel"), row2("otel", **SESSION2)], {"no_retrieval": 1}, 8),
    "otel.jsonl": ("otel", [row1("otel")], {"error_status": 1}, 5),
    "openinference.jsonl": ("openinference", [row1("openinference")], {"no_retrieval": 1}, 5),
    # the reranker's output order wins over the retriever's, and its documents carry the ids and scores
    "phoenix.json": ("phoenix", [
        row1("phoenix", contexts=C1[::-1], context_ids=["kb-ml-002", "kb-ml-001"], context_scores=[0.78, 0.91]),
        row2("phoenix", **SESSION2)], {}, 7),
    "phoenix_records.json": ("phoenix", [row2("phoenix", **SESSION2)], {}, 3),
    "langfuse.json": ("langfuse", [row1("langfuse", "7c9e6679-7425-40de-944b-e07fc1f90ae7", session_id="sess-9", user_id="u-3")],
                      {"no_retrieval": 1}, 5),
    "langfuse_observations.json": ("langfuse", [row2("langfuse", "f47ac10b-58cc-4372-a567-0e02b2c3d479")], {}, 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_sample_gives_the_expected_rows_and_skips(name: str) -> None:
    fmt, rows, skips, spans = CASES[name]
    got = import_trace_file(HERE / name)
    assert got.format == fmt
    assert got.rows == rows
    assert got.skip_counts() == skips
    assert got.n_spans == spans
    assert got.issues == []
    assert import_trace_file(HERE / name, fmt).rows == rows  # the detected format is the one named


def test_summary_counts_traces_and_skips() -> None:
    got = import_trace_file(HERE / "otel.json")
    assert got.summary().endswith("2 row(s) from 3 trace(s), 8 span(s) (otel); skipped 1 no_retrieval")
    assert [s.trace_id for s in got.skipped] == ["5b8aa5a2d2c872e8321cf37308d69df2"]


def test_imported_rows_load_as_a_dataset_with_the_trace_id(tmp_path: Path) -> None:
    from rageval_core.cli.traces import rows_to_samples
    from rageval_core.data.datasets import load_dataset, save_dataset

    rows = import_trace_file(HERE / "otel.json").rows
    out = save_dataset(rows_to_samples(rows), tmp_path / "traces.jsonl")
    ds = load_dataset(out)
    assert ds.ok and [s.id for s in ds.samples] == [T1, T2]
    assert ds.samples[1].metadata["trace_id"] == T2 and ds.samples[1].metadata["context_scores"] == [0.88, 0.64]
    assert ds.language in ("ja", "mixed", "en")


def test_trace_url_links_each_row_back() -> None:
    got = import_trace_file(HERE / "otel.jsonl", trace_url="http://localhost:6006/projects/default/traces/{trace_id}")
    assert got.rows[0]["trace_url"] == f"http://localhost:6006/projects/default/traces/{T1}"
    with pytest.raises(TraceFormatError, match="placeholder"):
        import_trace_file(HERE / "otel.jsonl", trace_url="http://x/traces")


def test_a_map_file_chooses_the_attributes(tmp_path: Path) -> None:
    spec = {"question": "LLM:llm.input_messages", "answer": "root:output.value#sources.0",
            "contexts": "RETRIEVER:retrieval.documents", "metadata": {"model": "LLM:llm.model_name"}}
    rows = import_traces((HERE / "otel.json").read_bytes(), "otel.json", trace_map=build_map(spec)).rows
    # trace 1's root output is plain text (no sources), so only trace 2 has an answer at that path
    assert [r["id"] for r in rows] == [T2]
    assert rows[0]["answer"] == "kb-ja-017" and rows[0]["model"] == "gpt-4o-mini"
    assert rows[0]["question"].startswith("Context:\n") and rows[0]["question"].endswith("Question: " + Q2)


@pytest.mark.parametrize("spec, message", [
    ({"questions": "root:input.value"}, "unknown key(s) questions"),
    ({"question": "input.value"}, "is not '<spans>:<attribute key>'"),
    ({"answer": 3}, "give a source string or a list"),
    ({"metadata": ["x"]}, "metadata: give an object"),
])
def test_bad_map_files_name_the_file_and_key(tmp_path: Path, spec: object, message: str) -> None:
    from rageval_core.data.traces import load_map

    path = tmp_path / "map.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    with pytest.raises(TraceFormatError, match="map.json") as exc:
        load_map(path)
    assert message in str(exc.value)


def test_a_file_that_is_not_json_names_line_and_column() -> None:
    with pytest.raises(TraceFormatError, match=r"^x.json: not JSON \(line 2, column 1"):
        import_traces(b'{"resourceSpans": [\n}', "x.json")


def test_a_bad_json_line_is_named_and_the_other_lines_import() -> None:
    lines = (HERE / "otel.jsonl").read_text(encoding="utf-8").splitlines()
    data = (lines[0] + "\n{broken\n" + lines[1] + "\n").encode()
    got = import_traces(data, "spans.jsonl")
    assert [str(i) for i in got.issues] == ["spans.jsonl, line 2: not JSON (column 2: Expecting property name enclosed in double quotes)"]
    assert [r["id"] for r in got.rows] == [T1]


def test_a_span_without_its_id_names_the_span_and_skips_its_trace() -> None:
    doc = json.loads((HERE / "otel.json").read_text(encoding="utf-8"))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    del spans[1]["spanId"]  # trace 1's retriever
    spans[4]["startTimeUnixNano"] = "yesterday"  # trace 2's retriever
    got = import_traces(json.dumps(doc).encode(), "export.json")
    assert [str(i) for i in got.issues] == [
        "export.json, resourceSpans[0].scopeSpans[0].spans[1]: spanId missing",
        "export.json, span c4b1e5f2a7d9e301 (retrieve): start/endTimeUnixNano: not a time: 'yesterday'",
    ]
    assert got.rows == [] and got.skip_counts() == {"malformed_span": 2, "no_retrieval": 1}


def test_bad_attribute_values_are_named() -> None:
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": T1, "spanId": "aa", "name": "retrieve", "attributes": [{"key": "input.value", "value": {"mystery": 1}}]}]}]}]}
    got = import_traces(json.dumps(doc).encode(), "e.json")
    assert str(got.issues[0]) == "e.json, span aa (retrieve): attribute 'input.value': unknown attribute value type mystery"


def test_phoenix_and_langfuse_problems_name_the_span_or_observation() -> None:
    page = json.loads((HERE / "phoenix.json").read_text(encoding="utf-8"))
    del page["data"][1]["context"]["trace_id"]
    got = import_traces(json.dumps(page).encode(), "phoenix.json")
    assert str(got.issues[0]) == "phoenix.json, data[1], span b7ad6b7169203331 (retrieve): context.trace_id missing"
    traces = json.loads((HERE / "langfuse.json").read_text(encoding="utf-8"))
    traces[0]["observations"][0]["startTime"] = "soon"
    got = import_traces(json.dumps(traces).encode(), "lf.json")
    assert str(got.issues[0]).startswith("lf.json, item 1, trace 7c9e6679-7425-40de-944b-e07fc1f90ae7 (rag_pipeline), observation obs-ret-1: startTime")
    assert got.skip_counts() == {"malformed_span": 1, "no_retrieval": 1}


@pytest.mark.parametrize("data, message", [
    (b"", "the file is empty"),
    (b'{"hello": "world"}', "not a trace export this reads"),
    (b"\xff\xfe\x00", "not UTF-8"),
])
def test_unreadable_exports(data: bytes, message: str) -> None:
    with pytest.raises(TraceFormatError, match=message):
        import_traces(data, "t.json")
    with pytest.raises(TraceFormatError, match="unknown trace format 'zipkin'"):
        import_traces(b"{}", "t.json", "zipkin")


def test_attribute_helpers() -> None:
    assert any_value({"intValue": "182"}) == 182 and any_value({"arrayValue": {"values": [{"stringValue": "a"}]}}) == ["a"]
    assert any_value({"kvlistValue": {"values": [{"key": "k", "value": {"boolValue": True}}]}}) == {"k": True}
    flat = flatten({"retrieval": {"documents": [{"document": {"id": "d", "content": "c"}}]}, "tag": {"tags": ["x", "y"]}})
    assert flat == {"retrieval.documents.0.document.id": "d", "retrieval.documents.0.document.content": "c", "tag.tags": ["x", "y"]}
    assert indexed({"m.1.role": "user", "m.0.role": "system", "m.x": 1}, "m") == [{"role": "system"}, {"role": "user"}]
    assert iso_ns("1970-01-01T00:00:01.5Z") == 1_500_000_000 and iso_ns("1970-01-01T00:00:01") == 1_000_000_000
    assert text_of('{"query": " q "}', ("query",), "user") == "q"
    assert text_of([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], (), "user") == "a"


def test_a_langfuse_trace_listing_its_observations_by_id_says_what_to_export() -> None:
    trace = json.loads((HERE / "langfuse.json").read_text(encoding="utf-8"))[0]
    trace["observations"] = ["obs-ret-1", "obs-gen-1"]  # the list endpoint's TraceWithDetails
    got = import_traces(json.dumps({"data": [trace], "meta": {"page": 1}}).encode(), "traces.json")
    assert [str(i) for i in got.issues] == [
        "traces.json, data[0], trace 7c9e6679-7425-40de-944b-e07fc1f90ae7 (rag_pipeline): 2 observation(s) listed by id only "
        "and not in the file; export GET /api/public/traces/7c9e6679-7425-40de-944b-e07fc1f90ae7 or the observations "
        "(GET /api/public/observations)"]
    assert got.skip_counts() == {"no_retrieval": 1}
