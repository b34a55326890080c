"""Ask the user's RAG system every test-set question, in parallel, through the provider stack.

Each question is one ``your_rag`` request through ``build_llm(cfg, base=system)``: the same per-call
timeout, retries, rate limit, concurrency, response cache and record log as judge calls. A question that
fails leaves its row with an empty answer and ``rag_error`` (evaluation then marks it ``empty_answer``);
the others go on. Latency per question is kept in the row's metadata and summarised (median, p95).
"""

from __future__ import annotations

import dataclasses

import json
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rageval_core.llm.base import LLM, ProviderError
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_llm
from rageval_core.rag.synth import TestItem
from rageval_core.core.types import Sample
from rageval_core.rag.your_rag.systems import system_request

Progress = Callable[[int, int], None]


def latency_summary(latencies: Sequence[float]) -> dict[str, float | int | None]:
    """Median and 95th percentile (linear interpolation) of the latencies, in seconds, with their count."""
    values = np.asarray([x for x in latencies if x is not None], dtype=np.float64)
    if values.size == 0:
        return {"n": 0, "median_s": None, "p95_s": None, "max_s": None}
    return {
        "n": int(values.size),
        "median_s": round(float(np.median(values)), 4),
        "p95_s": round(float(np.percentile(values, 95)), 4),
        "max_s": round(float(values.max()), 4),
    }


@dataclass
class SystemRun:
    """The evaluation rows the user's system produced and how its calls went."""

    samples: list[Sample]
    system: str
    name: str
    errors: int
    cached: int
    latency: dict[str, Any]
    stats: dict[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"questions": len(self.samples), "system": self.system, "name": self.name, "answer_errors": self.errors,
                "cached": self.cached, "latency": self.latency}


def system_stack(system: LLM, cfg: ProviderConfig, *, db_path: Any = None) -> LLM:
    """``system`` under the provider stack configured by ``cfg`` (timeout, retries, limits, cache, record log)."""
    cfg = dataclasses.replace(cfg, provider=system.provider, model=system.model, base_url=getattr(system, "url", None))
    return build_llm(cfg, db_path=db_path, base=system)


def _row(item: TestItem, answer: dict[str, Any] | None, error: str | None, cached: bool, system: LLM) -> Sample:
    metadata: dict[str, Any] = {**item.metadata, "rag_system": system.provider, "rag_model": system.model}
    contexts: tuple[str, ...] = ()
    text = ""
    if answer is not None:
        text = answer["answer"]
        contexts = tuple(answer["contexts"])
        metadata["rag_latency_s"] = answer.get("latency_s")
        if answer.get("context_ids") is not None:
            metadata["retrieved_chunk_ids"] = answer["context_ids"]
        if cached:
            metadata["rag_cached"] = True
    if error:
        metadata["rag_error"] = error
    return Sample(item.id, item.question, contexts, text, item.ground_truth, metadata)


def ask_one(llm: LLM, item: TestItem, descriptor: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None, bool]:
    """(answer fields, error or None, cache hit) for one question; never raises for a failing question."""
    try:
        completion = llm.complete(system_request(descriptor, item.question, item.metadata))
    except ProviderError as exc:
        return None, f"{exc.kind}: {exc}", False
    return json.loads(completion.text), None, completion.cached


def answer_with_system(
    items: Sequence[TestItem],
    llm: LLM,
    descriptor: dict[str, Any],
    *,
    concurrency: int = 4,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
) -> SystemRun:
    """Ask every question (``concurrency`` in flight); rows keep the test set's order. A cancelled run
    returns the rows answered so far."""
    cancel = cancel or threading.Event()
    results: dict[int, Sample] = {}
    latencies: dict[int, float] = {}
    cached = 0
    pending: dict[Future, int] = {}
    queue = iter(enumerate(items))
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="your-rag") as pool:
        def submit() -> None:
            for n, item in queue:
                if cancel.is_set():
                    return
                pending[pool.submit(ask_one, llm, item, descriptor)] = n
                return

        for _ in range(max(1, concurrency)):
            submit()
        while pending:
            done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
            for future in done:
                n = pending.pop(future)
                answer, error, hit = future.result()
                results[n] = _row(items[n], answer, error, hit, llm)
                if answer is not None and answer.get("latency_s") is not None:
                    latencies[n] = float(answer["latency_s"])
                cached += int(hit)
                if progress is not None:
                    progress(len(results), len(items))
                submit()
    samples = [results[n] for n in sorted(results)]
    stats = llm.stats() if hasattr(llm, "stats") else {}
    return SystemRun(
        samples=samples,
        system=llm.provider,
        name=llm.model,
        errors=sum(1 for s in samples if s.metadata.get("rag_error")),
        cached=cached,
        latency=latency_summary(list(latencies.values())),
        stats=stats,
    )


def try_one(system: LLM, question: str, descriptor: dict[str, Any], metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    """One question straight to the system (no cache): the raw reply and what the mapping read from it, or
    the error — what the Test set page's "try one question" shows."""
    try:
        completion = system.complete(system_request(descriptor, question, metadata))
    except ProviderError as exc:
        return {"ok": False, "error": f"{exc.kind}: {exc}"}
    data = json.loads(completion.text)
    return {"ok": True, "reply": data.pop("reply"), "read": data}
