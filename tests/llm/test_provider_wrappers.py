"""Wrapper units with a fake clock: retry/backoff, rate limiter windows, response cache, replay, pricing,
timeout, concurrency limit and the call hook."""

from __future__ import annotations

import json
import random
import threading
import time

import pytest

from rageval_core.llm.base import Completion, LLMRequest, Message, ProviderError
from rageval_core.llm.transport.cache import CachedLLM, ResponseCache, cache_key
from rageval_core.core.clock import CancellableClock, FakeClock
from rageval_core.llm.transport.http_errors import (
    kind_for_status,
    parse_retry_after,
    parse_retry_info,
)
from rageval_core.llm.pricing import ModelPrice, PriceTable
from rageval_core.llm.transport.ratelimit import RateLimitedLLM, RateLimiter
from rageval_core.llm.replay import RecordingLLM, ReplayLLM
from rageval_core.llm.transport.retry import RetryLLM, RetryPolicy
from rageval_core.llm.wrappers import (
    AccountingLLM,
    CallRecorder,
    ConcurrencyLimitedLLM,
    TimeoutLLM,
)
from rageval_core.core.types import Usage
from tests.support.scripted_llm import ScriptedLLM


def req(text: str = "hello", *, task: str = "rag_answer", **kw) -> LLMRequest:
    return LLMRequest(task=task, messages=(Message("user", text),), **kw)


def err(kind: str, *, retryable: bool = True, retry_after: float | None = None) -> ProviderError:
    return ProviderError(f"injected {kind}", kind=kind, retryable=retryable, retry_after=retry_after)


# retry -----------------------------------------------------------------------------------------------
def test_retry_uses_jittered_exponential_backoff_and_succeeds():
    llm = ScriptedLLM().script("rag_answer", err("server"), err("timeout"), err("connection"), "fine")
    clock = FakeClock()
    retry = RetryLLM(llm, RetryPolicy(max_retries=4, base_delay=1.0, max_delay=60.0), clock=clock, rng=random.Random(3))
    assert retry.complete(req()).text == "fine"
    expected_rng = random.Random(3)
    policy = RetryPolicy(max_retries=4, base_delay=1.0)
    assert clock.sleeps == [policy.backoff(i, expected_rng) for i in range(3)]
    for i, wait in enumerate(clock.sleeps):
        assert 2**i / 2 <= wait <= 2**i


def test_retry_honours_retry_after_exactly():
    llm = ScriptedLLM().script("rag_answer", err("rate_limit", retry_after=13.0), err("rate_limit", retry_after=0.25), "ok")
    clock = FakeClock()
    assert RetryLLM(llm, clock=clock).complete(req()).text == "ok"
    assert clock.sleeps == [13.0, 0.25]


def test_backoff_is_capped_by_max_delay():
    policy = RetryPolicy(base_delay=1.0, max_delay=5.0)
    rng = random.Random(0)
    assert all(2.5 <= policy.backoff(10, rng) <= 5.0 for _ in range(50))


@pytest.mark.parametrize("kind", ["bad_request", "auth", "malformed_response", "replay_miss"])
def test_non_retryable_errors_are_raised_at_once(kind):
    llm = ScriptedLLM().script("rag_answer", err(kind, retryable=False), "never reached")
    clock = FakeClock()
    with pytest.raises(ProviderError) as info:
        RetryLLM(llm, clock=clock).complete(req())
    assert info.value.kind == kind and clock.sleeps == [] and len(llm.requests) == 1


def test_retry_gives_up_after_max_retries_and_says_so():
    llm = ScriptedLLM(default=lambda r: (_ for _ in ()).throw(err("server")))
    clock = FakeClock()
    with pytest.raises(ProviderError, match="gave up after 3 attempts"):
        RetryLLM(llm, RetryPolicy(max_retries=2), clock=clock).complete(req())
    assert len(llm.requests) == 3 and len(clock.sleeps) == 2


def test_retry_after_beyond_max_wait_is_raised_not_slept():
    llm = ScriptedLLM().script("rag_answer", err("rate_limit", retry_after=86_400))
    clock = FakeClock()
    with pytest.raises(ProviderError, match="more than the 300 s limit"):
        RetryLLM(llm, clock=clock).complete(req())
    assert clock.sleeps == []


def test_retry_after_parsing():
    assert parse_retry_after({"Retry-After": "7"}) == 7.0
    assert parse_retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert parse_retry_after({"Retry-After": "Thu, 01 Jan 2026 00:00:30 GMT"}, now=1767225600.0) == 30.0
    assert parse_retry_after({"Retry-After": "soon"}) is None and parse_retry_after({}) is None
    body = {"error": {"code": 429, "details": [{"@type": "type.googleapis.com/google.rpc.QuotaFailure"}, {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "36.5s"}]}}
    assert parse_retry_info(body) == 36.5
    assert parse_retry_info({"error": {"code": 429}}) is None


@pytest.mark.parametrize(("status", "kind", "retryable"), [(429, "rate_limit", True), (408, "timeout", True), (500, "server", True), (503, "server", True), (400, "bad_request", False), (401, "auth", False), (404, "bad_request", False)])
def test_status_kinds(status, kind, retryable):
    assert kind_for_status(status) == (kind, retryable)


def test_cancellable_clock_ends_a_retry_wait():
    cancel = threading.Event()
    llm = ScriptedLLM().script("rag_answer", err("rate_limit", retry_after=30.0), "never reached")
    retry = RetryLLM(llm, clock=CancellableClock(cancel))
    threading.Timer(0.05, cancel.set).start()
    with pytest.raises(ProviderError) as info:
        retry.complete(req())
    assert info.value.kind == "cancelled" and len(llm.requests) == 1


# rate limiter ----------------------------------------------------------------------------------------
def test_rpm_spaces_requests_evenly():
    clock = FakeClock()
    limiter = RateLimiter(rpm=120, clock=clock)
    starts = []
    for _ in range(5):
        starts.append(limiter.acquire().at)
    assert starts == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert clock.sleeps == [0.5, 0.5, 0.5, 0.5]


def test_rpm_never_exceeds_the_limit_in_any_window_and_meets_it_on_average():
    clock = FakeClock()
    limiter = RateLimiter(rpm=120, clock=clock)
    starts = [limiter.acquire().at for _ in range(400)]
    for i, t in enumerate(starts):
        in_window = sum(1 for s in starts[i:] if s < t + 60.0)
        assert in_window <= 120
    rate = (len(starts) - 1) / (starts[-1] - starts[0]) * 60
    assert 114 <= rate <= 120


def test_rpm_limit_can_change_while_running():
    clock = FakeClock()
    limiter = RateLimiter(rpm=60, clock=clock)
    limiter.acquire()
    limiter.acquire()
    limiter.set_limits(rpm=30, tpm=None)
    limiter.acquire()
    assert clock.sleeps == [1.0, 2.0]
    with pytest.raises(ValueError):
        limiter.set_limits(rpm=0, tpm=None)


def test_tpm_waits_for_old_tokens_to_leave_the_window():
    clock = FakeClock()
    limiter = RateLimiter(tpm=1000, clock=clock, margin_s=0.0)
    limiter.acquire(400)
    limiter.acquire(400)
    assert clock.sleeps == []
    limiter.acquire(400)  # 1200 > 1000: waits until the first call's tokens are 60 s old
    assert clock.sleeps == [60.0]


def test_settle_replaces_the_estimate_with_actual_usage():
    clock = FakeClock()
    limiter = RateLimiter(tpm=1000, clock=clock, margin_s=0.0)
    slot = limiter.acquire(900)
    limiter.settle(slot, 100)
    limiter.acquire(800)
    assert clock.sleeps == []


def test_rate_limited_llm_settles_with_completion_usage():
    clock = FakeClock()
    limiter = RateLimiter(tpm=10_000, clock=clock)
    llm = RateLimitedLLM(ScriptedLLM(default=lambda r: "x" * 40), limiter)
    llm.complete(req("y" * 400))
    assert limiter._slots[-1].tokens == len(req("y" * 400).prompt_text) // 4 + 10  # ScriptedLLM's usage


# cache -----------------------------------------------------------------------------------------------
class CountingLLM:
    provider = "counting"

    def __init__(self, model: str = "m1") -> None:
        self.model = model
        self.calls = 0
        self.fail_next = False

    def complete(self, request: LLMRequest) -> Completion:
        self.calls += 1
        if self.fail_next:
            self.fail_next = False
            raise ProviderError("boom", kind="server", retryable=True)
        return Completion([f"{self.model}:{request.messages[-1].content}:{self.calls}"], self.provider, self.model, usage=Usage(10, 5))


def test_cache_hit_is_marked_free_and_reported(tmp_path):
    records = []
    inner = CountingLLM()
    llm = CachedLLM(inner, ResponseCache(tmp_path / "db.sqlite"), recorder=CallRecorder(records.append))
    first = llm.complete(req("q"))
    second = llm.complete(req("q"))
    assert inner.calls == 1
    assert second.texts == first.texts and second.cached and not first.cached
    assert second.cost_usd == 0.0 and second.usage == Usage() and second.raw["original_usage"]["input_tokens"] == 10
    assert [r.cached for r in records] == [True]


def test_cache_has_no_stale_hits(tmp_path):
    cache = ResponseCache(tmp_path / "db.sqlite")
    inner = CountingLLM()
    llm = CachedLLM(inner, cache, base_url="http://a/v1")
    llm.complete(req("q"))
    llm.complete(req("q edited"))
    llm.complete(req("q", max_output_tokens=50))
    llm.complete(LLMRequest(task="rag_answer", messages=(Message("user", "q"),), schema={"type": "object"}))
    CachedLLM(inner, cache, base_url="http://b/v1").complete(req("q"))
    other_model = CountingLLM(model="m2")
    assert CachedLLM(other_model, cache, base_url="http://a/v1").complete(req("q")).text.startswith("m2:")
    assert inner.calls == 5 and other_model.calls == 1
    assert cache_key("p", "m1", None, req("q")) != cache_key("p", "m2", None, req("q"))


def test_errors_and_sampled_requests_are_never_cached(tmp_path):
    cache = ResponseCache(tmp_path / "db.sqlite")
    inner = CountingLLM()
    llm = CachedLLM(inner, cache)
    inner.fail_next = True
    with pytest.raises(ProviderError):
        llm.complete(req("q"))
    assert cache.count() == 0
    assert not llm.complete(req("q")).cached and inner.calls == 2
    sampled = req("creative", temperature=0.8)
    llm.complete(sampled)
    llm.complete(sampled)
    assert inner.calls == 4
    assert llm.complete(req("creative", temperature=0.8, seed=1)).cached is False
    assert llm.complete(req("creative", temperature=0.8, seed=1)).cached is True


# replay ----------------------------------------------------------------------------------------------
def test_record_then_replay_hits_and_edited_prompt_misses(tmp_path):
    log = tmp_path / "calls.jsonl"
    scripted = ScriptedLLM(default=lambda r: {"claims": [r.messages[-1].content]})
    recorder = RecordingLLM(scripted, log)
    recorder.complete(req("東京は首都です。", task="extract_claims"))
    recorder.complete(req("three", task="generate_questions", n=3))
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert set(lines[0]) >= {"key", "provider", "model", "request", "response", "usage", "recorded_at"}
    assert lines[0]["key"] == req("東京は首都です。", task="extract_claims").key()
    assert isinstance(lines[1]["response"], list) and len(lines[1]["response"]) == 3

    replay = ReplayLLM(log)
    hit = replay.complete(req("東京は首都です。", task="extract_claims"))
    assert json.loads(hit.text) == {"claims": ["東京は首都です。"]}
    assert hit.provider == "replay" and hit.model == "scripted-1" and hit.usage.input_tokens > 0
    assert len(replay.complete(req("three", task="generate_questions", n=3)).texts) == 3
    with pytest.raises(ProviderError) as info:
        replay.complete(req("東京は首都です!", task="extract_claims"))
    assert info.value.kind == "replay_miss" and info.value.unscored_reason == "replay_miss"
    assert "edited prompt" in str(info.value) and "extract_claims" in str(info.value)


def test_replay_returns_repeated_keys_in_turn_and_skips_bad_lines(tmp_path):
    log = tmp_path / "calls.jsonl"
    key = req("q").key()
    log.write_text(
        "\n".join(
            [
                json.dumps({"key": key, "provider": "openai", "model": "gpt-4o-mini", "request": {}, "response": "first", "usage": {}, "recorded_at": "x"}),
                "{not json",
                json.dumps({"key": key, "provider": "openai", "model": "gpt-4o-mini", "request": {}, "response": "second", "usage": {}, "recorded_at": "x"}),
            ]
        ),
        encoding="utf-8",
    )
    replay = ReplayLLM(log)
    assert [replay.complete(req("q")).text for _ in range(3)] == ["first", "second", "first"]
    assert replay.bad_lines == [2] and replay.model == "gpt-4o-mini"


# pricing ---------------------------------------------------------------------------------------------
def test_default_price_table_has_checked_date_and_defaults():
    table = PriceTable.load(overrides=False)
    assert table.checked and table.lookup("gpt-4o-mini") and table.lookup("gemini-2.5-flash")
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini")
    assert table.lookup("models/gemini-2.5-flash") == table.lookup("gemini-2.5-flash")
    assert table.cost("my-local-llama", Usage(1000, 1000)) is None


def test_cost_uses_cached_input_rate_and_overrides(tmp_path):
    price = ModelPrice(input=1.0, output=4.0, cached_input=0.25)
    assert price.cost(Usage(1_000_000, 500_000, 400_000)) == pytest.approx(0.6 + 0.1 + 2.0)
    override = tmp_path / "prices.json"
    override.write_text(json.dumps({"models": {"gpt-4o-mini": {"input": 10, "output": 20}, "my-model": {"input": 1, "output": 1}}}))
    table = PriceTable.load(overrides=override)
    assert table.cost("gpt-4o-mini", Usage(1_000_000, 0)) == pytest.approx(10.0)
    assert table.overridden == {"gpt-4o-mini", "my-model"}
    saved = table.save_overrides(tmp_path / "saved.json")
    assert set(json.loads(saved.read_text())["models"]) == {"gpt-4o-mini", "my-model"}


def test_load_prices_reads_overrides_from_the_state_folder(tmp_path, monkeypatch):
    from rageval_core.llm.pricing import load_prices

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    (tmp_path / "prices.json").write_text(json.dumps({"models": {"qwen2.5:7b": {"input": 0.0, "output": 0.0}, "gpt-4o-mini": {"input": 1, "output": 2}}}))
    table = load_prices()
    assert table.lookup("qwen2.5:7b") == ModelPrice(0.0, 0.0) and table.cost("gpt-4o-mini", Usage(1_000_000, 1_000_000)) == pytest.approx(3.0)
    assert {row["model"] for row in table.rows() if row["overridden"]} == {"qwen2.5:7b", "gpt-4o-mini"}


def test_accounting_prices_usage_and_reports_errors():
    records = []
    table = PriceTable({"scripted-1": ModelPrice(1.0, 2.0)})
    scripted = ScriptedLLM(default=lambda r: "y" * 400).script("judge", err("server"))
    llm = AccountingLLM(scripted, prices=table, recorder=CallRecorder(records.append))
    with pytest.raises(ProviderError):
        llm.complete(req("x" * 4000, task="judge"))
    done = llm.complete(req("x" * 4000))
    input_tokens = len(req("x" * 4000).prompt_text) // 4  # ScriptedLLM's usage
    assert done.cost_usd == pytest.approx((input_tokens * 1.0 + 100 * 2.0) / 1e6)
    assert [(r.task, r.error_kind, r.cached) for r in records] == [("judge", "server", False), ("rag_answer", None, False)]
    assert records[1].cost_usd == done.cost_usd and records[1].request_key == req("x" * 4000).key()
    assert llm.recorder.meter.snapshot()["errors"] == 1


def test_a_failing_call_hook_does_not_fail_the_call():
    def hook(record):
        raise RuntimeError("disk full")

    llm = AccountingLLM(ScriptedLLM(default=lambda r: "ok"), recorder=CallRecorder(hook))
    assert llm.complete(req()).text == "ok"


# timeout and concurrency -----------------------------------------------------------------------------
class SlowLLM:
    provider = "slow"
    model = "slow-1"

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = 0
        self.peak = 0
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> Completion:
        with self._lock:
            self.active += 1
            self.peak = max(self.peak, self.active)
        time.sleep(self.seconds)
        with self._lock:
            self.active -= 1
        return Completion(["done"], self.provider, self.model)


def test_timeout_wrapper_bounds_the_whole_call():
    with pytest.raises(ProviderError) as info:
        TimeoutLLM(SlowLLM(3.0), timeout_s=0.2).complete(req())
    assert info.value.kind == "timeout" and info.value.retryable
    assert TimeoutLLM(SlowLLM(0.0), timeout_s=1.0).complete(req()).text == "done"


def test_timeout_worker_keeps_the_callers_context_variables():
    import contextvars

    tag: contextvars.ContextVar[str] = contextvars.ContextVar("tag", default="none")
    seen = []
    llm = TimeoutLLM(AccountingLLM(ScriptedLLM(default=lambda r: "ok"), recorder=CallRecorder(lambda rec: seen.append(tag.get()))), timeout_s=5)
    tag.set("row-7")
    llm.complete(req())
    assert seen == ["row-7"]


def test_concurrency_limit_caps_calls_in_flight():
    slow = SlowLLM(0.05)
    llm = ConcurrencyLimitedLLM(slow, 2)
    threads = [threading.Thread(target=llm.complete, args=(req(),)) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert slow.peak <= 2


def test_cached_answers_live_in_the_texts_table_and_a_missing_text_is_a_reported_miss(tmp_path):
    from rageval_core.store import db as store_db

    cache = ResponseCache(tmp_path / "db.sqlite")
    inner = CountingLLM()
    llm = CachedLLM(inner, cache)
    first = llm.complete(req("q"))
    conn = store_db.connect(tmp_path / "db.sqlite")
    key, text_ids = conn.execute("SELECT key, text_ids FROM llm_response_cache").fetchone()
    assert len(key) == 16 and [conn.execute("SELECT body FROM texts WHERE id = ?", (i,)).fetchone()[0]
                                for i in json.loads(text_ids)] == first.texts  # the answer is by reference
    assert llm.complete(req("q")).texts == first.texts and inner.calls == 1
    # an answer whose text is gone: a miss, reported, and the provider answers
    conn.execute("UPDATE llm_response_cache SET text_ids = '[987654]'")
    warnings = []
    stop = store_db.add_listener(warnings.append)
    try:
        assert not llm.complete(req("q")).cached and inner.calls == 2
    finally:
        stop()
    assert [w.kind for w in warnings] == ["cache"]
