"""Replay logs: record real calls to JSON Lines and answer later runs from them, reproducibly and offline.

One call a line (DESIGN.md contract)::

    {"key", "provider", "model", "task", "request", "response", "usage", "recorded_at"}

``key`` is ``LLMRequest.key()``: sha256 of the provider-independent request (messages, schema, sampling
parameters). ``request`` is that payload (no key, no headers), ``response`` the answer text, or a list
of texts when the request asked for n > 1. A request whose key is not in the log raises
``ProviderError(kind="replay_miss")`` — the metric marks the row unscored ``replay_miss`` — and the
message explains that any edit to a prompt changes the key.
"""

from __future__ import annotations

import json
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rageval_core.llm.base import LLM, Completion, LLMRequest, ProviderError
from rageval_core.core.redact import redact_data
from rageval_core.core.types import Usage
from rageval_core.core.private import open_private


def record_line(request: LLMRequest, completion: Completion) -> dict[str, Any]:
    """The JSONL record of one successful call."""
    usage = completion.usage
    if completion.cached and isinstance(completion.raw, dict) and "original_usage" in completion.raw:
        usage = Usage(**completion.raw["original_usage"])
    return {
        "key": request.key(),
        "provider": completion.provider,
        "model": completion.model,
        "task": request.task,
        "request": request.key_payload(),
        "response": completion.texts[0] if len(completion.texts) == 1 else list(completion.texts),
        "usage": usage.to_dict(),
        "recorded_at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


class RecordingLLM:
    """Appends every successful completion of ``inner`` to a replay log (errors are not recorded)."""

    def __init__(self, inner: LLM, path: str | Path) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def complete(self, request: LLMRequest) -> Completion:
        completion = self.inner.complete(request)
        line = json.dumps(redact_data(record_line(request, completion)), ensure_ascii=False)  # the key stays: a hash
        with self._lock, open_private(self.path, "a") as fh:
            fh.write(line + "\n")
        return completion


class ReplayLLM:
    """Answers from a replay log; several records with the same key are returned in turn (judge repeats)."""

    provider = "replay"

    def __init__(self, path: str | Path, *, model: str | None = None) -> None:
        self.path = Path(path)
        self._records: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self._next: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()
        self.bad_lines: list[int] = []
        self._load()
        first = next((recs[0] for recs in self._records.values()), None)
        self.model = model or (str(first.get("model")) if first else "replay")

    def __repr__(self) -> str:
        return f"ReplayLLM(path={str(self.path)!r}, records={self.size})"

    @property
    def size(self) -> int:
        return sum(len(v) for v in self._records.values())

    def _load(self) -> None:
        if not self.path.is_file():
            raise ProviderError(f"replay log not found: {self.path}", kind="bad_request")
        with self.path.open(encoding="utf-8-sig") as fh:
            for number, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    key = str(record["key"])
                    record["response"]
                except (json.JSONDecodeError, KeyError, TypeError):
                    self.bad_lines.append(number)
                    continue
                self._records[key].append(record)

    def complete(self, request: LLMRequest) -> Completion:
        started = time.perf_counter()
        key = request.key()
        with self._lock:
            records = self._records.get(key)
            if not records:
                raise ProviderError(miss_message(request, self.path), kind="replay_miss")
            record = records[self._next[key] % len(records)]
            self._next[key] += 1
        response = record["response"]
        texts = [str(t) for t in response] if isinstance(response, list) else [str(response)]
        if request.n > len(texts):
            texts = [texts[i % len(texts)] for i in range(request.n)]
        usage_data = record.get("usage") or {}
        usage = Usage(**{k: int(v) for k, v in usage_data.items() if k in ("input_tokens", "output_tokens", "cached_input_tokens")})
        return Completion(
            texts=texts,
            provider=self.provider,
            model=str(record.get("model") or self.model),
            usage=usage,
            latency_s=time.perf_counter() - started,
            raw={"replayed_from": record.get("provider"), "recorded_at": record.get("recorded_at")},
        )


def miss_message(request: LLMRequest, path: Path) -> str:
    """Why a replay missed, in words a user can act on (en / ja)."""
    return (
        f"replay miss: no recorded answer for task '{request.task}' (key {request.key()[:12]}…) in {path.name}. "
        "The key is a hash of the exact messages, schema and sampling parameters, so an edited prompt, "
        "template, rubric, language or temperature gives a new key; record the run again with a record log "
        "to replay it. / リプレイに該当する記録がありません: プロンプト・テンプレート・ルーブリック・言語・温度を"
        "変更するとキーが変わります。記録し直してください。"
    )
