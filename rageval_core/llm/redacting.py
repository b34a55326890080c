"""The provider boundary of the redaction step: answers and error messages leave the adapter redacted.

Why here, directly around the provider adapter (innermost): a model, proxy or RAG endpoint can echo a key, a
header token or a credentialed URL inside a *successful* answer, and from there it would flow into judge
reasons, claim details, the response cache, the call log, record logs and exports. Redacting once at the
boundary keeps every layer above clean; the sinks (store, caches, logs, exports, CLI) redact again as a last
guard.
"""

from __future__ import annotations

import dataclasses

from rageval_core.llm.base import LLM, Completion, LLMRequest, ProviderError
from rageval_core.core.redact import redact, redact_data, redactor


class RedactingLLM:
    """Wraps a provider adapter; completion texts, ``raw`` and ``ProviderError`` messages come back redacted."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model

    def __repr__(self) -> str:
        return f"RedactingLLM({redact(repr(self.inner))})"

    def complete(self, request: LLMRequest) -> Completion:
        try:
            completion = self.inner.complete(request)
        except ProviderError as err:
            clean = redact(str(err))
            if clean == str(err):
                raise
            raise with_message(err, clean) from None
        text = redactor()  # the environment read once for the texts and ``raw``
        texts = [text(str(t)) for t in completion.texts]
        raw = redact_data(completion.raw, redactor=text)
        if texts == completion.texts and raw == completion.raw:
            return completion
        return dataclasses.replace(completion, texts=texts, raw=raw)


def with_message(err: ProviderError, message: str) -> ProviderError:
    """The same error (kind, status, retry hints and any extra attributes) with another message."""
    clone = ProviderError(message, kind=err.kind, status=err.status, retry_after=err.retry_after, retryable=err.retryable)
    for name, value in vars(err).items():
        if name not in vars(clone):
            setattr(clone, name, value)
    return clone
