"""Which structured-output level to send, per provider + endpoint + model, and when to try a better one again.

Levels are ordered best first (openai: json_schema strict → strict off → json_object; openai-compatible:
json_schema → json_object+schema → json_object; gemini: response_json_schema → response_schema → JSON
mode). A level is dropped only when the server rejects the format itself: a 400-class answer that names
it. A 500, a timeout or a 429 says nothing about the format (issue 11: transient 500s pushed a whole run
down to schema-less json_object, and the answers came back in the wrong shape). llama.cpp's server is the
one known exception, answering HTTP 500 "Unsupported response_format type: json_schema": a 5xx whose
message names the format and says it is unsupported counts too; a bare 500 never does.

A drop is remembered for the process (every client of that provider, endpoint and model), and the level
above is tried again after ``probe_calls`` calls or ``probe_s`` seconds on the injectable clock, so a
server that was fixed, or a rejection that was a fluke, does not cost the schema for good.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass

from rageval_core.llm.base import ProviderError
from rageval_core.core.clock import SYSTEM_CLOCK, Clock

_NAMES_FORMAT = re.compile(r"response_?format|json_?schema|response_?schema|responseJsonSchema|schema|grammar", re.IGNORECASE)
# "input should be": llama-cpp-python's server (0.3.36) validates the body and answers HTTP 500 "1 validation error:
# {'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}".
_UNSUPPORTED = re.compile(r"unsupported|not supported|unknown|invalid|not permitted|cannot|unexpected|not allowed"
                          r"|input should be", re.IGNORECASE)


def is_format_rejection(err: ProviderError) -> bool:
    """Is ``err`` the server refusing the structured-output format (and not a transient failure)?"""
    if err.kind in ("rate_limit", "timeout", "connection", "unreachable", "cancelled"):
        return False
    text = str(err)
    if err.status in (400, 422):
        return bool(_NAMES_FORMAT.search(text))
    if err.status in (500, 501):  # llama.cpp names the format it does not support; a bare 500 says nothing
        return bool(re.search(r"response_?format|json_?schema", text, re.IGNORECASE) and _UNSUPPORTED.search(text))
    return False


@dataclass
class _State:
    level: int = 0
    lowered_at: float = 0.0
    calls_since: int = 0


class FormatLadder:
    """Thread-safe memory of the level per key; ``current`` also decides when to probe upward."""

    def __init__(self, *, clock: Clock | None = None, probe_calls: int = 200, probe_s: float = 600.0) -> None:
        self.clock = clock or SYSTEM_CLOCK
        self.probe_calls = probe_calls
        self.probe_s = probe_s
        self._lock = threading.Lock()
        self._states: dict[tuple[str, ...], _State] = {}

    def current(self, key: tuple[str, ...]) -> int:
        """The level to send now; after ``probe_calls`` calls or ``probe_s`` seconds at a lowered level the
        one above is tried again (a rejection lowers it back at the cost of that one request)."""
        with self._lock:
            state = self._states.setdefault(key, _State())
            if state.level > 0:
                state.calls_since += 1
                if state.calls_since > self.probe_calls or self.clock.now() - state.lowered_at >= self.probe_s:
                    state.level -= 1
                    state.calls_since = 0
                    state.lowered_at = self.clock.now()
            return state.level

    def level(self, key: tuple[str, ...]) -> int:
        """The remembered level, without counting a call."""
        with self._lock:
            return self._states.get(key, _State()).level

    def reject(self, key: tuple[str, ...], sent: int, levels: int) -> int:
        """The server rejected level ``sent``: remember the one below (never below the last of ``levels``)."""
        with self._lock:
            state = self._states.setdefault(key, _State())
            if sent >= state.level:
                state.level = min(levels - 1, sent + 1)
                state.lowered_at = self.clock.now()
                state.calls_since = 0
            return state.level

    def forget(self) -> None:
        """Drop every remembered level: a test's local server may reuse a port another test's server taught a lower
        level on, and a remembered drop would change what the next run sends."""
        with self._lock:
            self._states.clear()


LADDER = FormatLadder()  # the process-wide memory (providers take another one in tests)
