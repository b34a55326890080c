"""One gate for every HTTP request a provider sends: rate-limit slot, host breaker, connection slot, deadline.

Why in one place, below the providers' own loops: a structured-output fallback, a missing-choice refill and
an embedding batch are HTTP requests like the first one, and each must take its own rate-limit slot, count
for the host's fail-fast breaker and end at the per-call deadline. A wrapper around ``complete`` only sees
one call where the server may count three (issue 11 measured 617 chat requests in a 60-s window against
a limit of 600, 802 with embeddings).

The deadline is enforced twice, both on the guard's clock (injectable, so tests move it instead of waiting):
the caller stops waiting at ``timeout_s`` (a result that comes later is dropped), and the HTTP client the
providers are built with (``http_client``) stops reading a body that is still trickling at the deadline,
which closes that connection (the SDKs' read timeout never trips on one byte a second). The thread that made the request keeps its
connection slot until the SDK call has really returned, so abandoned calls never hold more connections
than ``max_connections``.

Waits (rate limit, a full set of connections) go through the clock and end early on cancel: a
``CancellableClock`` raises ``ProviderError(kind="cancelled")``, and nothing new is sent once cancelled.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar
from urllib.parse import urlsplit

from rageval_core.llm.transport import callpool, warm
from rageval_core.llm.base import ProviderError
from rageval_core.core.clock import SYSTEM_CLOCK, Clock
from rageval_core.llm.transport.httpx_lib import httpx_module
from rageval_core.llm.transport.ratelimit import RateLimiter

T = TypeVar("T")

# (clock, time on that clock) by which the HTTP request made in this thread must have its whole body.
_DEADLINE: contextvars.ContextVar[tuple[Clock, float] | None] = contextvars.ContextVar("rageval_http_deadline", default=None)
_GRACE_S = 0.25  # the caller waits this much past the deadline so the client's own timeout normally fires first
DEFAULT_FAIL_FAST = 5


def host_of(base_url: str | None, default: str) -> str:
    """``scheme://host:port`` of a base URL (what limits and the breaker are kept per), or ``default``."""
    if not base_url:
        return default
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc}" if parts.netloc else base_url


class HostBreaker:
    """Fail fast: after ``threshold`` connection failures in a row to one host, stop sending to it.

    Only connection failures count (refused, reset, DNS); any answer from the server, even an error,
    shows the host is there and resets the count. Once open, requests fail at once as ``unreachable``
    (unscored ``provider_unreachable``) with the cause; after ``cooldown_s`` one request is let through
    as a probe, and an answer closes the breaker again.
    """

    def __init__(self, threshold: int = DEFAULT_FAIL_FAST, *, clock: Clock | None = None, cooldown_s: float = 60.0) -> None:
        if threshold < 1:
            raise ValueError("the fail-fast threshold must be at least 1")
        self.threshold = threshold
        self.cooldown_s = cooldown_s
        self.clock = clock or SYSTEM_CLOCK
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False
        self.cause: str | None = None

    @property
    def is_open(self) -> bool:
        with self._lock:
            return self._opened_at is not None

    def check(self, label: str) -> None:
        """Raise ``unreachable`` when the breaker is open (and no probe is due)."""
        with self._lock:
            if self._opened_at is None:
                return
            if not self._probing and self.clock.now() - self._opened_at >= self.cooldown_s:
                self._probing = True  # this request is the probe
                return
            cause = self.cause
        raise ProviderError(
            f"{label}: not sent, the host is unreachable ({self.threshold} connection failures in a row; last: {cause})",
            kind="unreachable",
        )

    def record(self, error: ProviderError | None) -> ProviderError | None:
        """Count one request's outcome; returns the error to raise (the one that opens the breaker becomes
        ``unreachable`` so the retry layer stops at once instead of backing off)."""
        with self._lock:
            self._probing = False
            if error is None or error.kind != "connection":
                if error is None or error.status is not None:
                    self._failures = 0
                    self._opened_at = None
                return error
            self._failures += 1
            self.cause = str(error)
            if self._failures < self.threshold:
                return error
            self._opened_at = self.clock.now()
        return ProviderError(
            f"{error} — {self.threshold} connection failures in a row: not sending to this host any more",
            kind="unreachable",
        )


class RequestGuard:
    """Everything one HTTP request must pass; shared by the chat and embedding clients of one host."""

    def __init__(
        self,
        *,
        timeout_s: float,
        limiter: RateLimiter | None = None,
        breaker: HostBreaker | None = None,
        max_connections: int = 8,
        clock: Clock | None = None,
        cancel: threading.Event | None = None,
        pool: callpool.DaemonPool | None = None,
    ) -> None:
        if timeout_s <= 0:
            raise ValueError("timeout_s must be positive")
        self.timeout_s = timeout_s
        self.clock = clock or SYSTEM_CLOCK
        self.limiter = limiter
        self.breaker = breaker
        self.cancel = cancel if cancel is not None else getattr(self.clock, "cancel", None)
        self.max_connections = max(1, int(max_connections))
        self.pool = pool or callpool.CALLS
        self._connections = threading.Semaphore(self.max_connections)
        self._lock = threading.Lock()
        self._counts = {"in_flight": 0, "peak_in_flight": 0, "sent": 0}  # shared with ``with_limiter`` copies

    @property
    def in_flight(self) -> int:
        """HTTP requests whose thread has not returned yet (abandoned ones included)."""
        with self._lock:
            return self._counts["in_flight"]

    @property
    def peak_in_flight(self) -> int:
        with self._lock:
            return self._counts["peak_in_flight"]

    @property
    def sent(self) -> int:
        """HTTP requests sent through this host's guard."""
        with self._lock:
            return self._counts["sent"]

    @property
    def wants_tokens(self) -> bool:
        """Whether a token estimate is needed (only a tokens-per-minute limit reads it)."""
        return self.limiter is not None and self.limiter.tpm is not None

    def with_limiter(self, limiter: RateLimiter | None) -> RequestGuard:
        """The same host's guard (breaker, connections, counts) with another rate limiter (``--embedding-rpm``)."""
        other = RequestGuard(timeout_s=self.timeout_s, limiter=limiter, breaker=self.breaker,
                             max_connections=self.max_connections, clock=self.clock, cancel=self.cancel, pool=self.pool)
        other._connections, other._lock, other._counts = self._connections, self._lock, self._counts
        return other

    def _check_cancel(self, label: str) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise ProviderError(f"{label}: not sent, the run was cancelled", kind="cancelled")

    def _take_connection(self, label: str) -> None:
        while not self._connections.acquire(timeout=0.05):
            self._check_cancel(label)

    def send(
        self, label: str, fn: Callable[[], T], *, tokens: Callable[[], int] | None = None, used: Callable[[T], int] | None = None
    ) -> T:
        """Run ``fn`` (one SDK call that raises ``ProviderError``) under the limits and the deadline.

        ``tokens`` estimates the request's tokens (called only under a tokens-per-minute limit); ``used``
        reads what the answer really used, which replaces the estimate in the limiter's window."""
        self._check_cancel(label)
        if self.breaker is not None:
            self.breaker.check(label)
        limiter = self.limiter
        slot = None
        if limiter is not None:
            slot = limiter.acquire(tokens() if tokens is not None and limiter.tpm is not None else 0)
        try:
            self._check_cancel(label)  # a Ctrl-C during the wait: the reserved slot is not used
            self._take_connection(label)
        except ProviderError:
            if slot is not None and limiter is not None:
                limiter.release(slot)
            raise
        result = self._run(label, fn)
        error = result.get("error")
        if self.breaker is not None and (error is None or isinstance(error, ProviderError)):
            error = self.breaker.record(error)
        if error is not None:
            raise error
        value = result["value"]
        if slot is not None and limiter is not None and limiter.tpm is not None and used is not None:
            limiter.settle(slot, used(value))
        return value

    def _run(self, label: str, fn: Callable[[], Any]) -> dict[str, Any]:
        """``fn`` on a pool thread (``callpool``: reused daemon threads, so an abandoned call never keeps the
        process alive), waited for until the deadline; that thread keeps its connection slot until ``fn``
        really returns (the transport cuts a trickling body at the same deadline)."""
        box: dict[str, Any] = {}
        done = threading.Event()
        clock = self.clock
        deadline = clock.now() + self.timeout_s

        def work() -> None:
            _DEADLINE.set((clock, deadline))
            try:
                box["value"] = fn()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller
                box["error"] = exc
            finally:
                done.set()
                with self._lock:
                    self._counts["in_flight"] -= 1
                self._connections.release()  # only now: an abandoned call still holds its connection

        with self._lock:
            counts = self._counts
            counts["in_flight"] += 1
            counts["peak_in_flight"] = max(counts["peak_in_flight"], counts["in_flight"])
            counts["sent"] += 1
        context = contextvars.copy_context()
        self.pool.submit(lambda: context.run(work))
        # On wall time, one wait for the time left; on another clock (a FakeClock in tests), short wall-time
        # steps that look at it. (Polling every 20 ms woke each of 16 waiting threads 50 times a second, a
        # fight for the interpreter that cost more CPU than the requests.)
        wall = getattr(clock, "wall", False)
        while True:
            left = deadline + _GRACE_S - clock.now()
            if left < 0:
                return {"error": ProviderError(f"{label}: no answer within {self.timeout_s:g} s (per-call timeout)",
                                               kind="timeout", retryable=True)}
            if done.wait(left + 0.001 if wall else 0.02):
                return box


# ---- an HTTP client whose body reads stop at the request's deadline ------------------------------------
def http_client(timeout_s: float, base_url: str | None = None) -> Any:
    """An ``httpx.Client`` for the SDKs whose transport ends a response body that is still arriving at the
    request's deadline (a server trickling one byte a second never trips a read timeout); the connection
    is closed, not returned to the pool. Outside a guarded request it behaves like the default client.

    A plain ``http://`` base URL gets no TLS context: building one (loading the CA bundle) costs 0.2-0.5 s
    a client here, paid before the first request for nothing."""
    httpx = httpx_module()
    plain = bool(base_url) and str(base_url).startswith("http://")

    byte_stream: Any = httpx.SyncByteStream  # Any: httpx or its httpx2 fork, whichever the SDKs use here
    base_transport: Any = httpx.BaseTransport

    class DeadlineStream(byte_stream):
        def __init__(self, inner: Any, deadline: tuple[Clock, float], request: Any) -> None:
            self._inner, self._deadline, self._request = inner, deadline, request

        def __iter__(self) -> Iterator[bytes]:
            clock, at = self._deadline
            for chunk in self._inner:
                if clock.now() > at:
                    raise httpx.ReadTimeout("the response was still arriving at the per-call deadline", request=self._request)
                yield chunk

        def close(self) -> None:
            self._inner.close()

    class DeadlineTransport(base_transport):
        """Plain-http requests on a transport without TLS; an https one (a redirect, say) on a verified
        transport built the first time it is needed."""

        def __init__(self) -> None:
            self._plain = httpx.HTTPTransport(limits=_limits(), verify=False) if plain else None
            self._tls: Any = None if plain else httpx.HTTPTransport(limits=_limits())
            self._tls_lock = threading.Lock()

        def _for(self, request: Any) -> Any:
            if self._plain is not None and request.url.scheme == "http":
                return self._plain
            with self._tls_lock:
                if self._tls is None:
                    self._tls = httpx.HTTPTransport(limits=_limits())
                return self._tls

        def handle_request(self, request: Any) -> Any:
            deadline = _DEADLINE.get()
            try:
                response = self._for(request).handle_request(request)
            finally:  # once a request has been on the wire (answered or not): the deferred warm-ups may start
                warm.request_sent()
            if deadline is not None:
                response.stream = DeadlineStream(response.stream, deadline, request)
            return response

        def close(self) -> None:
            for inner in (self._plain, self._tls):
                if inner is not None:
                    inner.close()

    def _limits() -> Any:
        return httpx.Limits(max_connections=1000, max_keepalive_connections=100)

    return httpx.Client(transport=DeadlineTransport(), timeout=timeout_s, follow_redirects=True)
