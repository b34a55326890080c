"""Trace exports written by the tools themselves (tests/data/traces/README.md): the OpenTelemetry SDK's protobuf
JSON, ``ReadableSpan.to_json()`` and ``ConsoleSpanExporter`` output of OpenInference (LangChain, LlamaIndex, the
OpenAI Responses API) and OpenLLMetry traces (make_otel.py), a real Phoenix server's REST pages, otlpv1 search,
client list and dataframes (make_phoenix.py), and Langfuse UI downloads copied from the langfuse repository.
Each gives the app's questions, answers and retrieved documents, the errored trace skipped as ``error_status``,
and the same trace ids whatever the format."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from rageval_core.data.traces import build_map, import_trace_file, import_traces
from tests.data.traces.make_otel import DOCS, QUESTIONS

HERE = Path(__file__).resolve().parent / "traces"
SDK, PHOENIX, LANGFUSE = HERE / "sdk", HERE / "phoenix", HERE / "langfuse"
TEXT = dict(DOCS)
EN, JA = list(QUESTIONS)

# file -> (format detected, skips by reason)
SOURCES = {
    **{f"sdk/{case}.{ext}": (fmt, {"error_status": 1})
       for case in ("openinference_langchain", "openinference_langchain_responses", "openllmetry_langchain")
       for ext, fmt in (("otlp.json", "otel"), ("sdk.jsonl", "openinference"))},
    "sdk/openinference_langchain.console.txt": ("openinference", {"error_status": 1}),
    # the index build's embedding calls are traces of their own, with no question
    "sdk/openinference_llamaindex.otlp.json": ("otel", {"no_question": 2, "error_status": 1}),
    "sdk/openinference_llamaindex.sdk.jsonl": ("openinference", {"no_question": 2, "error_status": 1}),
    # the OpenAI instrumentor's spans are traces of their own: 4 embedding calls, 2 answers with no retriever, 1 error
    "sdk/openinference_openai_responses.otlp.json": ("otel", {"no_question": 4, "no_retrieval": 2, "error_status": 2}),
    "sdk/openinference_openai_responses.sdk.jsonl": ("openinference", {"no_question": 4, "no_retrieval": 2, "error_status": 2}),
    **{f"phoenix/{name}": (fmt, {"no_question": 2, "error_status": 2}) for name, fmt in (
        ("rest_spans.json", "phoenix"), ("rest_otlpv1.json", "phoenix"), ("client_spans.json", "openinference"),
        ("dataframe_records.json", "phoenix"), ("dataframe_iso.json", "phoenix"))},
}


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_each_tools_export_gives_the_apps_rows(name: str) -> None:
    fmt, skips = SOURCES[name]
    got = import_trace_file(HERE / name)
    assert (got.format, got.skip_counts(), got.issues) == (fmt, skips, [])
    rows = {r["question"]: r for r in got.rows}
    assert sorted(rows) == sorted(QUESTIONS) and len(got.rows) == len(QUESTIONS) * (2 if name.startswith("phoenix") else 1)
    for row in got.rows:
        assert row["answer"] == QUESTIONS[row["question"]]
        assert len(row["contexts"]) == 2 and all(c in TEXT.values() for c in row["contexts"])
        assert row["latency_ms"] > 0 and row["trace_id"] == row["id"] and len(row["id"]) == 32
        int(row["id"], 16)  # hex, as Phoenix and Jaeger show it
        if all(i in TEXT for i in row["context_ids"]):  # LangChain keeps the store's ids; LlamaIndex names its nodes
            assert [TEXT[i] for i in row["context_ids"]] == row["contexts"]
        else:
            assert all(len(i) == 36 for i in row["context_ids"]) and all(0 < s < 1 for s in row["context_scores"])
    if "openllmetry" not in name:  # OpenInference's using_attributes on the second question
        assert [(r.get("session_id"), r.get("user_id")) for r in got.rows if r["question"] == JA][0] == ("sess-42", "u-7")
    assert import_trace_file(HERE / name, fmt).rows == got.rows  # the detected format is the one named


def _hex(b64: str) -> str:
    return base64.b64decode(b64).hex()


def test_protobuf_json_ids_become_the_hex_the_sdk_and_phoenix_show() -> None:
    raw = json.loads((SDK / "openinference_langchain.otlp.json").read_text(encoding="utf-8"))
    spans = raw["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert all(s["traceId"].endswith("==") for s in spans)  # protobuf's JSON mapping: base64
    from_pb = import_trace_file(SDK / "openinference_langchain.otlp.json")
    from_sdk = import_trace_file(SDK / "openinference_langchain.sdk.jsonl")  # to_json(): 0x-prefixed hex
    assert [r["id"] for r in from_pb.rows] == [r["id"] for r in from_sdk.rows]
    assert {r["id"] for r in from_pb.rows} <= {_hex(s["traceId"]) for s in spans}
    assert from_pb.skipped[0].trace_id == from_sdk.skipped[0].trace_id
    sdk_ids = {json.loads(line)["context"]["trace_id"] for line in (SDK / "openinference_langchain.sdk.jsonl").open()}
    assert {f"0x{r['id']}" for r in from_sdk.rows} <= sdk_ids


def test_the_sdks_nested_status_skips_the_errored_trace_as_error_status() -> None:
    lines = [json.loads(line) for line in (SDK / "openinference_langchain.sdk.jsonl").open()]
    errored = {s["context"]["trace_id"][2:] for s in lines if s["status"]["status_code"] == "ERROR"}
    got = import_trace_file(SDK / "openinference_langchain.sdk.jsonl")
    assert [(s.trace_id, s.reason) for s in got.skipped] == [(t, "error_status") for t in errored]


def test_the_console_exporters_objects_one_after_another_are_read() -> None:
    console = import_trace_file(SDK / "openinference_langchain.console.txt")
    assert console.rows == import_trace_file(SDK / "openinference_langchain.sdk.jsonl").rows
    assert console.n_spans == 26


def test_openllmetry_attributes_and_langchain_documents_are_read() -> None:
    got = import_trace_file(SDK / "openllmetry_langchain.otlp.json")
    oi = import_trace_file(SDK / "openinference_langchain.otlp.json")
    assert [(r["question"], r["answer"], r["context_ids"]) for r in got.rows] == \
        [(r["question"], r["answer"], r["context_ids"]) for r in oi.rows]
    # the answer from the LLM span's gen_ai.output.messages when the map asks for it
    llm = import_trace_file(SDK / "openllmetry_langchain.otlp.json", trace_map=build_map({"answer": "LLM:llm.output_messages"}))
    assert [r["answer"] for r in llm.rows] == [QUESTIONS[q] for q in QUESTIONS]


def test_answers_in_the_responses_format_are_found() -> None:
    # the chain returns the Response object itself: its output[0].content[0].text is the answer
    got = import_trace_file(SDK / "openinference_openai_responses.otlp.json")
    assert [r["answer"] for r in got.rows] == list(QUESTIONS.values())
    # LangChain's use_responses_api: the LLM span's message.contents.0.message_content.text
    llm = import_trace_file(SDK / "openinference_langchain_responses.otlp.json",
                            trace_map=build_map({"answer": "LLM:llm.output_messages"}))
    assert [r["answer"] for r in llm.rows] == list(QUESTIONS.values())


def test_phoenix_gives_the_same_traces_every_way() -> None:
    ways = {name: import_trace_file(PHOENIX / name) for name in
            ("rest_spans.json", "rest_otlpv1.json", "client_spans.json", "dataframe_records.json", "dataframe_iso.json")}
    ids = {name: sorted(r["id"] for r in got.rows) for name, got in ways.items()}
    assert len(set(map(tuple, ids.values()))) == 1
    exact = {name: sorted((r["id"], r["latency_ms"]) for r in got.rows) for name, got in ways.items()}
    assert exact["rest_spans.json"] == exact["rest_otlpv1.json"] == exact["client_spans.json"]  # nanoseconds
    assert sorted(r["context_ids"] for r in ways["rest_otlpv1.json"].rows) == sorted(r["context_ids"] for r in ways["rest_spans.json"].rows)


LANGFUSE_FILES = sorted(p.name for p in LANGFUSE.glob("*.json"))


@pytest.mark.parametrize("name", LANGFUSE_FILES)
def test_a_langfuse_ui_download_is_recognised(name: str) -> None:
    # none of the langfuse repository's downloads is a RAG trace (no retriever): each is read and skipped as such
    got = import_trace_file(LANGFUSE / name)
    assert (got.format, got.skip_counts(), got.issues) == ("langfuse", {"no_retrieval": 1}, [])
    assert got.n_spans == 1 + len(json.loads((LANGFUSE / name).read_text(encoding="utf-8"))["observations"])


def test_langfuse_json_encoded_strings_are_unquoted_once() -> None:
    data = json.loads((LANGFUSE / "llamaindex-2025-06-05.json").read_text(encoding="utf-8"))
    assert data["trace"]["input"] == '"What is Langfuse?"'  # JSON text, quotes and all
    spec = {"question": "root:input.value", "answer": "root:output.value", "contexts": "LLM:output.value"}
    got = import_traces(json.dumps(data).encode(), "lf.json", trace_map=build_map(spec))
    assert got.rows[0]["question"] == "What is Langfuse?"
    assert got.rows[0]["answer"].startswith("Langfuse is a tool") and not got.rows[0]["answer"].startswith('"')
    assert got.rows[0]["latency_ms"] == 2779.0 and (got.rows[0]["session_id"], got.rows[0]["user_id"]) == ("session_abc", "user_123")
