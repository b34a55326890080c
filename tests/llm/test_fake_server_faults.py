"""The fake server's bench features: fault rates, the body hash in the request log, schemas written into the
prompt (ragas), and the bench helpers that read the log (repeats after success, busiest 60 s window)."""

import hashlib
import importlib.util
import json
import urllib.error
import urllib.request
from pathlib import Path

from rageval_core.testing.fake_llm import FakeLLMServer, LoggedRequest, prompt_schema, schema_instance

ROOT = Path(__file__).resolve().parents[2]


def _bench():
    spec = importlib.util.spec_from_file_location("bench_fake_llm_server", ROOT / "bench" / "fake_llm_server.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _post(server, body: dict) -> tuple[int, dict, bytes]:
    data = json.dumps(body).encode()
    req = urllib.request.Request(server.openai_base_url + "/chat/completions", data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def test_fault_rates_inject_429_with_retry_after_and_the_log_hashes_each_body():
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    with FakeLLMServer(fault_rates={"rate_limit": 1.0}, retry_after=2) as server:
        status, headers, _ = _post(server, body)
        logged = server.requests[0]
    assert status == 429 and headers.get("Retry-After") == "2"
    assert logged.fault == "rate_limit" and logged.status == 429
    assert logged.body_sha256 == hashlib.sha256(json.dumps(body).encode()).hexdigest()


def test_fault_rates_are_drawn_per_request_at_the_given_shares():
    with FakeLLMServer(fault_rates={"server_error": 0.3, "malformed": 0.2}, fault_seed=3) as server:
        outcomes = [_post(server, {"model": "m", "messages": [{"role": "user", "content": str(i)}]}) for i in range(200)]
        log = server.requests
    errors = sum(1 for status, _, _ in outcomes if status == 500)
    malformed = sum(1 for e in log if e.fault == "malformed")
    assert 40 <= errors <= 80 and 20 <= malformed <= 60  # 60 and 40 expected
    assert errors + malformed + sum(1 for s, _, b in outcomes if s == 200 and b.startswith(b'{"id"')) == 200


def test_a_schema_written_into_the_prompt_gets_a_valid_instance():
    schema = {
        "$defs": {"Statement": {"properties": {"text": {"type": "string"}, "ok": {"type": "integer", "maximum": 1}}}},
        "properties": {"statements": {"type": "array", "items": {"$ref": "#/$defs/Statement"}},
                       "note": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
        "type": "object",
    }
    prompt = f"Given the answer...\nPlease return the output in a JSON format that complies with the following schema as specified in JSON Schema:\n{json.dumps(schema)}Do not use single quotes"
    assert prompt_schema(prompt) == schema
    assert schema_instance(prompt_schema(prompt)) == {"statements": [{"text": "ok", "ok": 1}], "note": "ok"}
    with FakeLLMServer() as server:
        status, _, raw = _post(server, {"model": "m", "messages": [{"role": "user", "content": prompt}]})
    assert status == 200 and json.loads(json.loads(raw)["choices"][0]["message"]["content"])["statements"][0]["ok"] == 1


def test_bench_helpers_count_repeats_after_a_clean_success_and_the_busiest_window():
    bench = _bench()

    def entry(t, digest, status=200, fault=None):
        return LoggedRequest("/v1/chat/completions", {}, {}, t, status, digest, fault)

    log = [entry(0, "a", 429, "rate_limit"), entry(1, "a"), entry(2, "b", 200, "malformed"), entry(3, "b"), entry(9, "a")]
    assert bench.repeated_after_success(log) == 1  # only the third "a": the 429 and the malformed 200 were no success
    assert bench.max_in_window([0, 10, 59.9, 60, 61, 200]) == 4
    assert bench.outcome_counts(log) == {"ok": 3, "rate_limit": 1, "malformed": 1}
