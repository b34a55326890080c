"""The base of the HTTP API providers (Gemini, OpenAI and OpenAI-compatible): what they hold, and the
structured-output fallback every one of them walks.

Both adapters kept the same constructor body (model, endpoint, deadline, the key kept only to redact it,
the request guard, the format ladder and its per-endpoint key) and the same loop that sends a call one
structured-output level down when the endpoint rejects the format (``structured.is_format_rejection``),
remembering the drop per provider + endpoint + model (``structured.LADDER``). Only the SDK call and the
reading of its answer differ, and stay in each adapter.
"""

from __future__ import annotations

from typing import Any, Callable

from rageval_core.llm.base import LLMRequest, ProviderError
from rageval_core.llm.structured import LADDER, FormatLadder, is_format_rejection
from rageval_core.llm.transport.guard import RequestGuard


class APIProvider:
    """Shared state and the format fallback of one API provider for one model at one endpoint."""

    provider: str = ""

    def __init__(
        self,
        *,
        provider: str,
        api_key: str,
        model: str,
        base_url: str | None,
        timeout_s: float,
        levels: tuple[str, ...],
        guard: RequestGuard | None = None,
        ladder: FormatLadder | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.timeout_s = timeout_s
        self._secrets = (api_key,)  # only ever used to redact the key out of errors
        self.guard = guard or RequestGuard(timeout_s=timeout_s)
        self._levels = levels
        self._ladder = ladder or LADDER
        self._key = (provider, base_url or "", model)

    @property
    def structured_output(self) -> str:
        """The structured-output level this provider + endpoint + model currently uses (after any fallback)."""
        return self._levels[self._ladder.level(self._key)]

    def _send_with_fallback(self, request: LLMRequest, send: Callable[[LLMRequest, int], Any]) -> tuple[Any, int, list[str]]:
        """``send(request, level)`` from the remembered level down while the endpoint rejects the format;
        returns the answer, the level it was sent at and the rejections met. Any other error (a 500, a
        timeout, a 429) is raised as it is, labelled with the level, and never lowers it."""
        level = self._ladder.current(self._key) if request.schema is not None else 0
        fallbacks: list[str] = []
        while True:
            try:
                return send(request, level), level, fallbacks
            except ProviderError as err:
                err.structured_output = self._levels[level] if request.schema is not None else None
                if request.schema is None or level + 1 >= len(self._levels) or not is_format_rejection(err):
                    raise
                fallbacks.append(f"{self._levels[level]}: {err}")
                level = self._ladder.reject(self._key, level, len(self._levels))
