"""The provider path under faults (issue 11), through the real SDKs and the local fake server.

Every HTTP request takes its own rate-limit slot and has the per-call deadline; the structured-output
level drops only on a format rejection, per model, and recovers; a dead host is given up after N
connection failures; abandoned calls never hold more connections than allowed; cancel sends nothing new.
Waits are asserted through the FakeClock (the slots it booked), never as wall time.
"""

from __future__ import annotations

import socket
import threading

import pytest

from rageval_core.embeddings.openai_embed import OpenAIEmbedder
from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.core.clock import FakeClock
from rageval_core.llm.gemini_provider import RESPONSE_JSON_SCHEMA, GeminiLLM
from rageval_core.llm.transport.guard import RequestGuard
from rageval_core.llm.openai_provider import JSON_OBJECT_WITH_SCHEMA, JSON_SCHEMA, JSON_SCHEMA_LOOSE, OpenAILLM
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.llm.structured import FormatLadder, is_format_rejection
from rageval_core.scoring.metrics.faithfulness import Faithfulness
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.core.types import Sample
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.scripted_llm import HashEmbedder

KEY = "sk-test-faults-0123456789abcdef"


@pytest.fixture()
def server():
    with FakeLLMServer() as s:
        yield s


def claims(text: str = "The Eiffel Tower is in Paris.") -> LLMRequest:
    return LLMRequest(task=EXTRACT_CLAIMS, messages=(Message("user", text),), schema=schema_for(EXTRACT_CLAIMS))


def config(server: FakeLLMServer, **overrides) -> ProviderConfig:
    fields = dict(provider="openai-compatible", model="m", base_url=server.openai_base_url, embedding_model="e",
                  cache=False, api_key=KEY)
    fields.update(overrides)
    return ProviderConfig(**fields)


def max_in_window(starts: list[float], window: float = 60.0) -> int:
    """The most request starts in any window of ``window`` seconds."""
    starts = sorted(starts)
    best, lo = 0, 0
    for hi, t in enumerate(starts):
        while t - starts[lo] >= window:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


# ---- deadlines (on the guard's clock: the test moves it, nothing waits for wall time) -------------------
def _past_deadline_once_bytes_arrive(server: FakeLLMServer, clock: FakeClock, seconds: float) -> threading.Thread:
    """Move ``clock`` ``seconds`` ahead once the trickled body has started arriving."""

    def watch() -> None:
        for _ in range(3000):
            log = server.requests
            if log and log[-1].bytes_sent >= 3:
                clock.sleep(seconds)
                return
            threading.Event().wait(0.01)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _hung_up(entry, guard: RequestGuard) -> None:
    """The client closed the connection mid-body and its HTTP thread ended (bounded waits, no timing asserted)."""
    assert entry.finished.wait(30)  # the server's writes failed: the client hung up
    assert 3 <= entry.bytes_sent < entry.body_size
    for _ in range(500):
        if guard.in_flight == 0:
            break
        threading.Event().wait(0.01)
    assert guard.in_flight == 0


def test_a_trickling_embedding_reply_ends_at_its_deadline(server):
    server.fault("trickle", seconds=0.02, path="/embeddings")  # ~1,000 bytes at 50 a second
    clock = FakeClock()
    guard = RequestGuard(timeout_s=5, clock=clock)
    embedder = OpenAIEmbedder(api_key=KEY, model="e", base_url=server.openai_base_url, timeout_s=5,
                              provider="openai-compatible", guard=guard)
    _past_deadline_once_bytes_arrive(server, clock, 6)
    with pytest.raises(ProviderError) as info:
        embedder.embed_batch(["a text to embed"] * 3)
    assert info.value.kind == "timeout" and info.value.retryable
    _hung_up(server.requests[-1], guard)


def test_a_trickling_chat_reply_is_closed_at_the_deadline_too(server):
    server.fault("trickle", seconds=0.02, path="/chat/completions")
    clock = FakeClock()
    guard = RequestGuard(timeout_s=5, clock=clock)
    llm = OpenAILLM(api_key=KEY, model="m", base_url=server.openai_base_url, timeout_s=5, provider="openai-compatible",
                    guard=guard)
    _past_deadline_once_bytes_arrive(server, clock, 6)
    with pytest.raises(ProviderError) as info:
        llm.complete(claims())
    assert info.value.kind == "timeout"
    _hung_up(server.requests[-1], guard)


def test_hung_calls_never_hold_more_connections_than_allowed(server):
    release = threading.Event()
    server.latency = lambda _request: 0.0 if release.wait(60) else 0.0  # every answer waits for the test
    clock = FakeClock()
    guard = RequestGuard(timeout_s=5, max_connections=2, clock=clock)
    llm = OpenAILLM(api_key=KEY, model="m", base_url=server.openai_base_url, timeout_s=5, provider="openai-compatible",
                    guard=guard)
    outcomes: list[str] = []

    def call(i: int) -> None:
        try:
            llm.complete(claims(f"text {i}"))
            outcomes.append("ok")
        except ProviderError as exc:
            outcomes.append(exc.kind)

    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for _ in range(3000):
        if server.total_requests >= 2:
            break
        threading.Event().wait(0.01)
    clock.sleep(6)  # the two calls on the wire pass their deadline: their callers give up
    for _ in range(3000):
        if len(outcomes) >= 2:
            break
        threading.Event().wait(0.01)
    assert outcomes == ["timeout", "timeout"]
    # their threads still hold both connections, so none of the four others has been sent
    assert guard.in_flight == 2 and server.total_requests == 2
    release.set()
    for t in threads:
        t.join(60)
    assert sorted(outcomes) == ["ok"] * 4 + ["timeout"] * 2
    assert guard.sent == 6 and guard.peak_in_flight == 2


# ---- every request takes a rate-limit slot -------------------------------------------------------------
def test_fallback_re_sends_refills_and_embeddings_each_take_a_limiter_slot(server):
    server.reject_json_schema = True  # llama.cpp: HTTP 500 "Unsupported response_format type: json_schema"
    server.ignore_n = True  # one choice whatever n asks: the missing ones are asked for again
    clock = FakeClock()
    stack = build_llm(config(server, rpm=60), clock=clock, ladder=FormatLadder(clock=clock))
    stack.complete(claims())  # json_schema rejected → json_object+schema
    assert server.count("/chat/completions") == 2
    assert stack.limiter.starts() == [0.0, 1.0]  # the re-send waited for its own slot (60 rpm: 1 s apart)
    stack.complete(LLMRequest(task="plain", messages=(Message("user", "hi"),), n=3))  # 1 + 2 refills
    assert server.count("/chat/completions") == 5 and len(stack.limiter.starts()) == 5
    embedder = build_embedder(config(server, rpm=60), clock=clock, guard=stack.guard)
    embedder.embed(["one", "two"])
    assert server.count("/embeddings") == 1
    assert stack.limiter.starts() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]  # embeddings count against the same limit


def test_a_separate_embedding_limit_keeps_embeddings_out_of_the_chat_limit(server):
    clock = FakeClock()
    stack = build_llm(config(server, rpm=60), clock=clock)
    embedder = build_embedder(config(server, rpm=60, embedding_rpm=6), clock=clock, guard=stack.guard)
    stack.complete(claims())
    for i in range(3):
        embedder.embed([f"text {i}"])
    assert stack.limiter.starts() == [0.0]
    assert clock.sleeps == [10.0, 10.0]  # 6 a minute: 10 s apart, on their own limiter


def test_no_60_second_window_exceeds_the_limit_with_retries_fallbacks_and_embeddings(server):
    server.reject_json_schema = True
    clock = FakeClock()
    cfg = config(server, rpm=30, max_retries=4)
    stack = build_llm(cfg, clock=clock, ladder=FormatLadder(clock=clock))
    embedder = build_embedder(cfg, clock=clock, guard=stack.guard)
    server.fault("server_error", times=2)
    server.fault("rate_limit", times=2, retry_after=0)
    for i in range(40):
        stack.complete(claims(f"row {i}"))
        embedder.embed([f"row {i}"])
    starts = stack.limiter.starts()
    assert server.total_requests == 85  # 40 chat + 40 embeddings + 4 retries + 1 fallback
    assert len(starts) == 85 and starts[-1] >= 84 * 2.0  # every request booked a slot, 2 s apart at 30 rpm
    assert max_in_window(starts) == 30  # no 60-s window holds more than the limit (chat and embeddings together)


# ---- the structured-output level -----------------------------------------------------------------------
def test_a_500_never_lowers_the_level_and_the_retry_stays_on_it(server):
    clock = FakeClock()
    ladder = FormatLadder(clock=clock)
    stack = build_llm(config(server), clock=clock, ladder=ladder)
    server.fault("server_error", times=3)
    assert stack.complete(claims()).raw["structured_output"] == JSON_SCHEMA
    assert [r.body["response_format"]["type"] for r in server.requests] == ["json_schema"] * 4
    assert stack.base.structured_output == JSON_SCHEMA
    for err in (ProviderError("x: HTTP 500: Internal Server Error", kind="server", status=500),
                ProviderError("x: HTTP 429: slow down (json_schema)", kind="rate_limit", status=429),
                ProviderError("x: no answer within 5 s", kind="timeout")):
        assert not is_format_rejection(err)


def test_llama_cpp_python_servers_validation_500_names_the_format():
    """llama-cpp-python 0.3.36's server answers json_schema with a body-validation 500, not "Unsupported ..." (seen
    when recording sample_data/replay/trust_labelled_ja_*): it still counts as refusing the format."""
    text = ("x: HTTP 500: 1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
            "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")
    assert is_format_rejection(ProviderError(text, kind="server", status=500))


def test_gemini_500_keeps_response_json_schema(server):
    clock = FakeClock()
    llm = GeminiLLM(api_key=KEY, model="g", base_url=server.gemini_base_url, timeout_s=5, ladder=FormatLadder(clock=clock))
    server.fault("server_error")
    with pytest.raises(ProviderError):
        llm.complete(claims())
    assert server.count() == 1 and llm.structured_output == RESPONSE_JSON_SCHEMA


def test_a_400_format_rejection_lowers_that_model_only_is_remembered_and_recovers(server):
    clock = FakeClock()
    ladder = FormatLadder(clock=clock, probe_s=600, probe_calls=1000)
    records: list = []
    stack_a = build_llm(config(server, provider="openai", model="model-a", base_url=server.openai_base_url),
                        clock=clock, ladder=ladder, call_hook=records.append)
    make_b = lambda: OpenAILLM(api_key=KEY, model="model-b", base_url=server.openai_base_url, ladder=ladder)  # noqa: E731
    server.fault("status", status=400, message="Invalid schema for response_format 'extract_claims': 'minLength' is not permitted.")
    assert stack_a.complete(claims()).raw["structured_output"] == JSON_SCHEMA_LOOSE
    assert records[-1].structured_output == JSON_SCHEMA_LOOSE  # the level used is in the call log
    again = OpenAILLM(api_key=KEY, model="model-a", base_url=server.openai_base_url, ladder=ladder)
    assert again.structured_output == JSON_SCHEMA_LOOSE  # remembered per provider + model, not per client
    assert make_b().structured_output == JSON_SCHEMA  # another model is untouched
    server.reset_log()
    stack_a.complete(claims("second"))
    assert server.requests[0].body["response_format"]["json_schema"]["strict"] is False
    clock.sleep(600)  # after a while the better level is tried again, and it works now
    server.reset_log()
    assert stack_a.complete(claims("later")).raw["structured_output"] == JSON_SCHEMA
    assert server.requests[0].body["response_format"]["json_schema"]["strict"] is True
    assert again.structured_output == JSON_SCHEMA


def test_a_level_rejected_again_on_the_probe_drops_back_after_probe_calls(server):
    server.reject_json_schema = True
    clock = FakeClock()
    ladder = FormatLadder(clock=clock, probe_calls=3, probe_s=10_000)
    llm = OpenAILLM(api_key=KEY, model="m", base_url=server.openai_base_url, provider="openai-compatible", ladder=ladder)
    for i in range(6):
        assert llm.complete(claims(f"t{i}")).raw["structured_output"] == JSON_OBJECT_WITH_SCHEMA
    kinds = [r.body["response_format"]["type"] for r in server.requests]
    # first call pays the rejection; after 3 calls at the lower level the probe pays it once more
    assert kinds.count("json_schema") == 2 and len(kinds) == 8



def test_forget_drops_every_remembered_level_so_a_reused_endpoint_starts_at_the_best():
    ladder = FormatLadder(clock=FakeClock())
    key = ("gemini", "http://127.0.0.1:8123", "gemini-2.5-flash")
    assert ladder.reject(key, 0, 3) == 1 and ladder.level(key) == 1
    ladder.forget()
    assert ladder.level(key) == 0 and ladder.current(key) == 0


# ---- fail fast -----------------------------------------------------------------------------------------
def _dead_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there now: connections are refused
    return f"http://127.0.0.1:{port}/v1"


def test_a_dead_host_is_given_up_after_n_connection_failures(tmp_path):
    clock = FakeClock()
    cfg = ProviderConfig("openai-compatible", model="m", base_url=_dead_url(), cache=False, api_key=KEY,
                         max_retries=4, fail_fast=5, concurrency=1)
    stack = build_llm(cfg, clock=clock)
    rows = [Sample(f"r{i}", "q?", ("c.",), "An answer.") for i in range(40)]
    result = run_rows(rows, [Faithfulness()], llm=stack, embedder=HashEmbedder(), store=Store(tmp_path / "db.sqlite"), concurrency=1)
    assert stack.guard.sent == 5  # then nothing more was sent to that host
    reasons = {r.unscored_reason for r in result.results}
    assert reasons == {"provider_unreachable"} and len(result.results) == 40
    assert all("connection failures in a row" in (r.reason or "") for r in result.results)
    assert "cannot reach" in result.results[-1].reason  # with the cause
    assert len(clock.sleeps) == 4  # the backoff waits of the first call only


def test_any_answer_resets_the_breaker(server):
    clock = FakeClock()
    stack = build_llm(config(server, fail_fast=2, max_retries=0), clock=clock)
    for _ in range(3):
        server.fault("disconnect")
        with pytest.raises(ProviderError) as info:
            stack.complete(claims())
        assert info.value.kind == "connection"
        stack.complete(claims("fine"))  # an answer in between: never two failures in a row
    assert not stack.guard.breaker.is_open


# ---- cancel --------------------------------------------------------------------------------------------
def test_the_first_cancel_sends_no_new_request_even_from_a_rate_limit_wait(server, tmp_path):
    cancel = threading.Event()
    seen: list[int] = []

    def latency(_request) -> float:
        seen.append(server.total_requests)
        cancel.set()  # Ctrl-C while the first request is in flight; the others wait in the limiter (6 rpm)
        return 0.2

    server.latency = latency
    rows = [Sample(f"r{i}", "q?", ("c.",), "An answer.") for i in range(6)]
    result = run_rows(rows, [Faithfulness()], config=config(server, rpm=6, concurrency=4), store=Store(tmp_path / "db.sqlite"),
                 cancel=cancel, concurrency=4)
    assert result.status == "cancelled"
    assert server.total_requests == 1 and seen == [1]
