"""Trace exports → dataset rows, beyond what each tool writes (test_trace_formats.py): the summary, the dataset the
rows become, links back to the trace, ``--map``, and malformed exports (tools' files broken here on purpose) that
name the file and the span or line. Shapes no fixture holds (a reranker, Langfuse's public API) are built here from
a real file or from the semantic conventions, and say so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core.data.traces import TraceFormatError, build_map, import_trace_file, import_traces
from rageval_core.data.traces.attributes import any_value, flatten, indexed, iso_ns, span_id
from rageval_core.data.traces.rebuild import text_of
from tests.data.traces.make_otel import QUESTIONS

HERE = Path(__file__).resolve().parent / "traces"
LANGCHAIN = HERE / "sdk" / "openinference_langchain.otlp.json"
LANGCHAIN_SDK = HERE / "sdk" / "openinference_langchain.sdk.jsonl"
DOWNLOAD = HERE / "langfuse" / "llamaindex-2025-06-05.json"
EN, JA = list(QUESTIONS)


def _doc(path: Path = LANGCHAIN) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_summary_counts_traces_and_skips() -> None:
    got = import_trace_file(LANGCHAIN)
    assert got.summary().endswith("2 row(s) from 3 trace(s), 26 span(s) (otel); skipped 1 error_status")
    assert [s.reason for s in got.skipped] == ["error_status"]


def test_imported_rows_load_as_a_dataset_with_the_trace_id(tmp_path: Path) -> None:
    from rageval_core.cli.traces import rows_to_samples
    from rageval_core.data.datasets import load_dataset, save_dataset

    rows = import_trace_file(LANGCHAIN).rows
    out = save_dataset(rows_to_samples(rows), tmp_path / "traces.jsonl")
    ds = load_dataset(out)
    assert ds.ok and [s.id for s in ds.samples] == [r["id"] for r in rows]
    assert ds.samples[1].metadata["trace_id"] == rows[1]["id"] and ds.samples[1].metadata["session_id"] == "sess-42"
    assert ds.language in ("ja", "mixed", "en")


def test_trace_url_links_each_row_back() -> None:
    got = import_trace_file(LANGCHAIN, trace_url="http://localhost:6006/projects/default/traces/{trace_id}")
    assert got.rows[0]["trace_url"] == f"http://localhost:6006/projects/default/traces/{got.rows[0]['id']}"
    with pytest.raises(TraceFormatError, match="placeholder"):
        import_trace_file(LANGCHAIN, trace_url="http://x/traces")


def test_a_map_file_chooses_the_attributes() -> None:
    spec = {"question": "LLM:llm.input_messages", "answer": "root:output.value", "contexts": "RETRIEVER:retrieval.documents",
            "metadata": {"model": "LLM:llm.model_name", "prompt": "name=ChatPromptTemplate:input.value#context"}}
    rows = import_traces(LANGCHAIN.read_bytes(), "t.json", trace_map=build_map(spec)).rows
    assert [r["question"] for r in rows] == [EN, JA]  # the last user message of the model call
    assert {r["model"] for r in rows} == {"gpt-4o-mini"}
    assert [r["prompt"] for r in rows] == ["\n\n".join(r["contexts"]) for r in rows]


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
    path.write_text("[" * 100_000, encoding="utf-8")
    with pytest.raises(TraceFormatError, match="map.json: the map file is (nested too deep|not JSON)"):
        load_map(path)


def test_a_file_that_is_not_json_names_line_and_column() -> None:
    with pytest.raises(TraceFormatError, match=r"^x.json: not JSON \(line 2, column 1"):
        import_traces(b'{"resourceSpans": [\n}', "x.json")


def test_a_bad_json_line_is_named_and_the_other_lines_import() -> None:
    lines = LANGCHAIN_SDK.read_text(encoding="utf-8").splitlines()
    data = (lines[0] + "\n{broken\n" + "\n".join(lines[1:]) + "\n").encode()
    got = import_traces(data, "spans.jsonl")
    assert [str(i) for i in got.issues] == ["spans.jsonl, line 2: not JSON (column 2: Expecting property name enclosed in double quotes)"]
    assert [r["question"] for r in got.rows] == [EN, JA]


def test_a_span_without_its_id_names_the_span_and_skips_its_trace() -> None:
    doc = _doc()
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    retrievers = [n for n, s in enumerate(spans) if s["name"] == "VectorStoreRetriever"]
    del spans[retrievers[0]]["spanId"]  # the English question's retriever
    spans[retrievers[1]]["startTimeUnixNano"] = "yesterday"  # the Japanese question's
    got = import_traces(json.dumps(doc).encode(), "export.json")
    second = span_id(spans[retrievers[1]]["spanId"], "spanId", 8)
    assert [str(i) for i in got.issues] == [
        f"export.json, resourceSpans[0].scopeSpans[0].spans[{retrievers[0]}]: spanId missing",
        f"export.json, span {spans[retrievers[1]]['spanId']} (VectorStoreRetriever): start/endTimeUnixNano: not a time: 'yesterday'",
    ]
    assert got.rows == [] and got.skip_counts() == {"error_status": 1, "malformed_span": 2} and len(second) == 16


def test_bad_attribute_values_are_named() -> None:
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [
        {"traceId": "ab" * 16, "spanId": "aa", "name": "retrieve", "attributes": [{"key": "input.value", "value": {"mystery": 1}}]}]}]}]}
    got = import_traces(json.dumps(doc).encode(), "e.json")
    assert str(got.issues[0]) == "e.json, span aa (retrieve): attribute 'input.value': unknown attribute value type mystery"


def test_phoenix_and_langfuse_problems_name_the_span_or_observation() -> None:
    page = _doc(HERE / "phoenix" / "rest_spans.json")
    broken = page["data"][1]
    del broken["context"]["trace_id"]
    got = import_traces(json.dumps(page).encode(), "phoenix.json")
    assert str(got.issues[0]) == f"phoenix.json, data[1], span {broken['context']['span_id']} ({broken['name']}): context.trace_id missing"
    download = _doc(DOWNLOAD)
    download["observations"][1]["startTime"] = "soon"
    got = import_traces(json.dumps(download).encode(), "lf.json")
    assert [str(i) for i in got.issues] == ["lf.json, observations[1], observation 7ca8b22f6628d0c7 (OpenAI.complete): "
                                            "startTime / endTime: not a time: 'soon'"]
    assert got.skip_counts() == {"malformed_span": 1}


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
    assert any_value({"string_value": None, "int_value": 3}) == 3  # Phoenix's otlpv1: every *_value, unused ones null
    flat = flatten({"retrieval": {"documents": [{"document": {"id": "d", "content": "c"}}]}, "tag": {"tags": ["x", "y"]}})
    assert flat == {"retrieval.documents.0.document.id": "d", "retrieval.documents.0.document.content": "c", "tag.tags": ["x", "y"]}
    assert indexed({"m.1.role": "user", "m.0.role": "system", "m.x": 1}, "m") == [{"role": "system"}, {"role": "user"}]
    assert iso_ns("1970-01-01T00:00:01.5Z") == 1_500_000_000 and iso_ns("1970-01-01T00:00:01") == 1_000_000_000
    assert text_of('{"query": " q "}', ("query",), "user") == "q"
    assert text_of([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], (), "user") == "a"
    assert span_id("S/kvNXezTaajzpKdDg5HNg==", "traceId", 16) == "4bf92f3577b34da6a3ce929d0e0e4736"  # protobuf JSON
    assert span_id("0x4BF92F3577B34DA6A3CE929D0E0E4736", "traceId", 16) == "4bf92f3577b34da6a3ce929d0e0e4736"  # to_json()
    assert span_id("obs-ret-1", "id", 8) == "obs-ret-1"


def test_a_reranker_reorders_the_contexts() -> None:
    """No fixture has a reranker (make_otel.py's apps have none): its span is added here to a real trace as the
    OpenInference semantic conventions define it (``reranker.output_documents.{i}.document.*``)."""
    doc = _doc()
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    retriever = next(s for s in spans if s["name"] == "VectorStoreRetriever")
    docs = {a["key"]: a["value"]["stringValue"] for a in retriever["attributes"] if a["key"].startswith("retrieval.documents.")}
    contents = [docs[f"retrieval.documents.{i}.document.content"] for i in (1, 0)]
    attributes = [{"key": "openinference.span.kind", "value": {"stringValue": "RERANKER"}}]
    for i, content in enumerate(contents):
        attributes += [{"key": f"reranker.output_documents.{i}.document.content", "value": {"stringValue": content}},
                       {"key": f"reranker.output_documents.{i}.document.score", "value": {"doubleValue": 0.9 - i / 10}}]
    spans.append({**retriever, "spanId": "AAAAAAAAAAE=", "name": "rerank", "attributes": attributes})
    row = import_traces(json.dumps(doc).encode(), "t.json").rows[0]
    assert row["contexts"] == contents and row["context_scores"] == [0.9, 0.8]


def test_langfuse_public_api_shapes_built_from_a_ui_download() -> None:
    """Langfuse's API answers hold the same objects as the UI download (no API response is in the langfuse
    repositories): ``GET /api/public/traces/{id}`` nests the observations in the trace, the list endpoints page them."""
    download = _doc(DOWNLOAD)
    trace, observations = download["trace"], download["observations"]
    spec = build_map({"question": "root:input.value", "answer": "root:output.value", "contexts": "LLM:output.value"})
    by_id = import_traces(json.dumps({**trace, "observations": observations}).encode(), "t.json", trace_map=spec)
    pages = import_traces((json.dumps({"data": [trace], "meta": {"page": 1}}) + "\n" +
                           json.dumps({"data": observations, "meta": {"page": 1}}) + "\n").encode(), "p.jsonl", trace_map=spec)
    ui = import_traces(json.dumps(download).encode(), "d.json", trace_map=spec)
    assert by_id.rows == pages.rows == ui.rows and ui.rows[0]["question"] == "What is Langfuse?"


def test_a_langfuse_trace_listing_its_observations_by_id_says_what_to_export() -> None:
    trace = {**_doc(DOWNLOAD)["trace"], "observations": ["3344aabdd4e66110", "7ca8b22f6628d0c7"]}  # TraceWithDetails
    got = import_traces(json.dumps({"data": [trace], "meta": {"page": 1}}).encode(), "traces.json")
    tid = trace["id"]
    assert [str(i) for i in got.issues] == [
        f"traces.json, data[0], trace {tid} (llama-index-trace): 2 observation(s) listed by id only and not in the file; "
        f"export GET /api/public/traces/{tid} or the observations (GET /api/public/observations)"]
    assert got.skip_counts() == {"no_retrieval": 1}
