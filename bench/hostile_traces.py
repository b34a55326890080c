"""Hostile trace exports (issue 36), small and made in memory: each must end in a message naming the span (the
span skipped, its trace counted as malformed_span) or in one refusal of the file. The tests
(tests/data/test_trace_hostile.py) check the messages; ``bench/traces_import.py --hostile`` runs each through the CLI
for its exit code and peak memory."""

from __future__ import annotations

import json

T = "4bf92f3577b34da6a3ce929d0e0e4736"
ROOT_ID, RET_ID = "a1b2c3d4e5f60718", "b1b2c3d4e5f60718"
DEEP = 100_000


def kv(key: str, value: object) -> dict:
    return {"key": key, "value": {"stringValue": value} if isinstance(value, str) else value}


def rag(**root: object) -> dict:
    """A complete RAG trace (a root chain with question and answer, a retriever with one document) as OTLP JSON;
    ``root`` replaces fields of the root span."""
    spans = [
        {"traceId": T, "spanId": ROOT_ID, "name": "rag", "startTimeUnixNano": "1000", "endTimeUnixNano": "2000000",
         "attributes": [kv("openinference.span.kind", "CHAIN"), kv("input.value", "What is X?"), kv("output.value", "X is Y.")]},
        {"traceId": T, "spanId": RET_ID, "parentSpanId": ROOT_ID, "name": "retrieve", "startTimeUnixNano": "2000",
         "endTimeUnixNano": "3000", "attributes": [kv("openinference.span.kind", "RETRIEVER"),
                                                   kv("retrieval.documents.0.document.content", "X is Y."),
                                                   kv("retrieval.documents.0.document.score", {"doubleValue": 0.5})]},
    ]
    spans[0].update(root)
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


def text(doc: dict, old: str | None = None, new: str | None = None) -> str:
    out = json.dumps(doc)
    return out.replace(old, new) if old is not None and new is not None else out


def attrs(input_value: object) -> list:
    return [kv("openinference.span.kind", "CHAIN"), kv("input.value", input_value), kv("output.value", "X is Y.")]


ROOT_LABEL = f"span {ROOT_ID} (rag)"
# name -> (file text, where the message is, what it says): the trace is skipped as malformed_span
SPAN_ATTACKS = {
    "input_value_100k_deep": (text(rag(attributes=attrs("[" * DEEP + "]" * DEEP))), f"trace {T}, {ROOT_LABEL}",
                              "attribute 'input.value': its JSON is nested more than 64 levels deep"),
    "arrayValue_5000_deep": (text(rag(attributes=[*attrs("q")[:2], kv("output.value", "@")]), '{"stringValue": "@"}',
                                  '{"arrayValue": {"values": [' * 5000 + '{"stringValue": "x"}' + "]}}" * 5000),
                             ROOT_LABEL, "attributes: nested more than 64 levels deep"),
    "arrayValue_70_deep": (text(rag(attributes=[*attrs("q")[:2], kv("output.value", "@")]), '{"stringValue": "@"}',
                                '{"arrayValue": {"values": [' * 70 + '{"stringValue": "x"}' + "]}}" * 70),
                           ROOT_LABEL, "attribute 'output.value': nested more than 64 levels deep"),
    "million_digit_integer": (text(rag(startTimeUnixNano="@")).replace('"@"', "1" * 1_000_000), ROOT_LABEL,
                              "start/endTimeUnixNano: the number 111111111111…1111 (1,000,000 characters) is longer than 100 characters"),
    "million_digit_intValue": (text(rag(attributes=[*attrs("q")[:2], kv("output.value", {"intValue": "1" * 1_000_000})])),
                               ROOT_LABEL, "attribute 'output.value': intValue must be a 64-bit integer, got '111111111111111111111111'…"),
    "time_Infinity": (text(rag(startTimeUnixNano="@")).replace('"@"', "Infinity"), ROOT_LABEL,
                      "start/endTimeUnixNano: Infinity is not a number JSON allows"),
    "time_1e400": (text(rag(startTimeUnixNano="@")).replace('"@"', "1e400"), ROOT_LABEL,
                   "start/endTimeUnixNano: the number 1e400 is too large for a number"),
    "score_NaN": (text(rag(), '{"doubleValue": 0.5}', '{"doubleValue": NaN}'), f"span {RET_ID} (retrieve)",
                  "attribute 'retrieval.documents.0.document.score': doubleValue: NaN is not a number JSON allows"),
    "arrayValue_as_a_list": (text(rag(attributes=[*attrs("q")[:2], kv("output.value", {"arrayValue": [1, 2]})])), ROOT_LABEL,
                             "attribute 'output.value': arrayValue must be an object {\"values\": [...]}, got a list"),
    "status_code_a_list": (text(rag(status={"code": [2]})), ROOT_LABEL,
                           "status.code must be 0, 1, 2 or a STATUS_CODE_* name, got a list"),
    "lone_surrogate": (text(rag(attributes=attrs("What \ud800 is X?"))), ROOT_LABEL,
                       "attribute 'input.value': a lone surrogate \\ud800 at character 6 (not text)"),
    "lone_surrogate_in_json_text": (text(rag(attributes=attrs('{"query": "\\ud800"}'))), f"trace {T}, {ROOT_LABEL}",
                                    "attribute 'input.value': its JSON holds a lone surrogate \\ud800 at character 1 (not text)"),
}
# name -> (file text, the one message refusing the file)
FILE_ATTACKS = {
    "json_100k_deep": ("[" * DEEP + "]" * DEEP, "t.json: not a trace export this reads (item 1: nested more than 64 levels deep)"),
    "resourceSpans_a_string": ('{"resourceSpans": "oops"}', "t.json: no span could be read as otel (first problem: "
                               "resourceSpans: must be a list, got a string)"),
    "resourceSpans_strings": ('{"resourceSpans": ["a", "b"]}', "t.json: no span could be read as otel (first problem: "
                              "resourceSpans[0]: a resource span must be an object with scopeSpans, got a string)"),
    "unclosed_100k_deep": ("[" * DEEP, "t.json: not JSON (line 1, column 100001: Unterminated value)"),
}
