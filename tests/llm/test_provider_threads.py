"""The threads under the providers: the guard's pool of daemon threads and the SDK warm-up (issue 14).

The pool reuses threads (no thread per request), starts a new one whenever none is idle (an abandoned call
never delays the next), lets idle ones go, and never keeps the process alive: a call abandoned at its deadline
while the server still holds it does not stop the interpreter from exiting. The warm-up makes its throwaway
SDK calls in memory: nothing reaches a server. Nothing here asserts wall time; waits are bounded polls.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from rageval_core.llm.transport import warm
from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.llm.transport.callpool import DaemonPool
from rageval_core.core.clock import FakeClock
from rageval_core.llm.transport.guard import RequestGuard
from rageval_core.llm.openai_provider import OpenAILLM
from rageval_core.embeddings.openai_embed import OpenAIEmbedder
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-test-threads-0123456789abcdef"


def _until(check, tries: int = 3000) -> bool:
    for _ in range(tries):
        if check():
            return True
        threading.Event().wait(0.01)
    return check()


def _claims(text: str) -> LLMRequest:
    return LLMRequest(task=EXTRACT_CLAIMS, messages=(Message("user", text),), schema=schema_for(EXTRACT_CLAIMS))


def test_the_pool_reuses_an_idle_thread_instead_of_starting_one_per_call():
    pool = DaemonPool(idle_s=60)
    names: list[str] = []
    for _ in range(5):
        done = threading.Event()
        pool.submit(lambda done=done: (names.append(threading.current_thread().name), done.set()))
        assert done.wait(30)
        assert _until(lambda: pool.idle == 1)  # back to idle before the next call
    assert len(names) == 5 and pool.started == 1 and pool.threads == 1
    assert threading.current_thread().name not in names


def test_a_busy_pool_starts_a_thread_for_the_next_call_and_idle_threads_end():
    pool = DaemonPool(idle_s=0.05)
    release = threading.Event()
    started = threading.Semaphore(0)

    def blocked() -> None:
        started.release()
        release.wait(60)

    for _ in range(3):
        pool.submit(blocked)
    for _ in range(3):
        assert started.acquire(timeout=30)  # all three run at once: none waited for a busy thread
    assert pool.started == 3 and pool.threads == 3
    release.set()
    assert _until(lambda: pool.threads == 0)  # idle past idle_s: every thread ended
    done = threading.Event()
    pool.submit(done.set)  # and the pool still serves
    assert done.wait(30)


def test_an_error_in_a_call_leaves_the_thread_usable():
    pool = DaemonPool(idle_s=60)
    pool.submit(lambda: 1 / 0)
    done = threading.Event()
    pool.submit(done.set)
    assert done.wait(30)
    assert pool.started <= 2


def test_guarded_calls_run_on_reused_pool_threads_and_the_deadline_still_fires():
    with FakeLLMServer() as server:
        pool = DaemonPool(idle_s=60)
        clock = FakeClock()
        guard = RequestGuard(timeout_s=5, clock=clock, pool=pool)
        llm = OpenAILLM(api_key=KEY, model="m", base_url=server.openai_base_url, timeout_s=5,
                        provider="openai-compatible", guard=guard)
        for i in range(4):
            llm.complete(_claims(f"text {i}"))
            assert _until(lambda: pool.idle == pool.threads)
        assert server.total_requests == 4 and pool.started == 1
        release = threading.Event()
        server.latency = lambda _request: 0.0 if release.wait(60) else 0.0  # the next answer waits for the test

        def late() -> None:
            _until(lambda: server.total_requests >= 5)
            clock.sleep(6)  # past the 5 s deadline on the guard's clock

        mover = threading.Thread(target=late, daemon=True)
        mover.start()
        with pytest.raises(ProviderError) as info:
            llm.complete(_claims("abandoned"))
        assert info.value.kind == "timeout"
        assert guard.in_flight == 1  # the abandoned call still holds its thread and connection
        release.set()
        assert _until(lambda: guard.in_flight == 0)


def test_a_call_abandoned_at_its_deadline_does_not_keep_the_process_alive():
    """The child's only call hangs on the server for minutes; the child gives up at its 0.5 s deadline, prints, and
    must exit at once, while the server still holds the request (its pool thread is a daemon)."""
    with FakeLLMServer() as server:
        server.fault("hang", seconds=600, path="/chat/completions")
        child = textwrap.dedent(f"""
            import sys
            sys.path.insert(0, {str(ROOT)!r})
            from rageval_core.llm.base import LLMRequest, Message, ProviderError
            from rageval_core.llm.openai_provider import OpenAILLM
            llm = OpenAILLM(api_key={KEY!r}, model="m", base_url={server.openai_base_url!r}, timeout_s=0.5,
                            provider="openai-compatible")
            try:
                llm.complete(LLMRequest(task="t", messages=(Message("user", "hang"),)))
            except ProviderError as exc:
                print("gave up:", exc.kind, flush=True)
        """)
        done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "gave up: timeout" in done.stdout
        hung = server.requests[-1]
        assert hung.fault == "hang" and not hung.finished.is_set()  # the child left while its call was in flight


def test_the_warm_up_parses_in_memory_and_sends_nothing():
    chat = warm.warm("chat")
    assert chat.choices[0].message.content == '{"ok": true}' and chat.usage.total_tokens == 2
    vectors = warm.warm("embeddings")
    assert vectors.data[0].embedding == [1.0, 0.0]
    with FakeLLMServer() as server:
        OpenAILLM(api_key=KEY, model="m", base_url=server.openai_base_url, provider="openai-compatible")
        OpenAIEmbedder(api_key=KEY, model="e", base_url=server.openai_base_url, provider="openai-compatible")
        warm.request_sent()  # the embeddings warm-up waits for the process's first request (none here)
        for kind in warm.KINDS:
            thread = warm.start(kind)
            thread.join(60)
            assert not thread.is_alive() and warm.start(kind) is thread  # once per process
        assert server.total_requests == 0
    with pytest.raises(ValueError):
        warm.start("images")
