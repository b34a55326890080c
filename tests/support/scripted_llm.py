"""A scripted LLM for pipeline tests: answers each task from a queue or a function, and records requests."""

from __future__ import annotations

import json
import threading
import zlib
from collections import defaultdict, deque
from typing import Callable

import numpy as np

from rageval_core.llm.base import Completion, LLMRequest, ProviderError
from rageval_core.core.types import Usage

Answer = str | dict | ProviderError | Callable[[LLMRequest], "str | dict"]


class ScriptedLLM:
    """``script(task, answer, ...)`` queues answers per task; a dict is sent as JSON, an error is raised.

    When a task's queue is empty the ``default`` callable (if any) answers; otherwise the test fails
    loudly with the unexpected request, so a pipeline never silently gets an empty answer. A re-ask
    (``request.reask > 0``) with nothing queued gets the task's previous answer again: a model that repeats
    its mistake, so a script of one bad answer still means "this step ends unscored" with re-ask on.
    """

    provider = "scripted"
    model = "scripted-1"

    def __init__(self, default: Callable[[LLMRequest], "str | dict"] | None = None) -> None:
        self._queues: dict[str, deque[Answer]] = defaultdict(deque)
        self._default = default
        self._lock = threading.Lock()
        self._last: dict[str, Answer] = {}
        self.requests: list[LLMRequest] = []

    def script(self, task: str, *answers: Answer) -> "ScriptedLLM":
        self._queues[task].extend(answers)
        return self

    def calls(self, task: str | None = None) -> list[LLMRequest]:
        return [r for r in self.requests if task is None or r.task == task]

    def complete(self, request: LLMRequest) -> Completion:
        with self._lock:
            self.requests.append(request)
            queue = self._queues.get(request.task)
            answer: Answer | None = queue.popleft() if queue else None
            if answer is None and request.reask > 0:
                answer = self._last.get(request.task)
            if answer is not None:
                self._last[request.task] = answer
        if answer is None:
            if self._default is None:
                raise AssertionError(f"ScriptedLLM: no answer scripted for task {request.task!r}")
            answer = self._default
        if callable(answer) and not isinstance(answer, (str, dict)):
            answer = answer(request)
        if isinstance(answer, ProviderError):
            raise answer
        text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        texts = [text] * max(1, request.n)
        return Completion(texts=texts, provider=self.provider, model=self.model, usage=Usage(len(request.prompt_text) // 4, len(text) // 4))


class HashEmbedder:
    """A deterministic bag-of-character-bigrams embedder: similar texts get similar vectors, no model needed."""

    provider = "hash"
    model = "char-bigram-256"

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.calls = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            t = text.lower()
            for a, b in zip(t, t[1:]):
                out[row, zlib.crc32((a + b).encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms
