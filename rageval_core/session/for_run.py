"""Everything a run needs built, from its spec's ``ProviderConfig``: ``build_for_run(spec, store) -> RunProviders``.

The runner never builds a provider; the front ends (CLI, workbench, bench, trust checks) call this once and
pass the result to ``run.run``. The stacks write the store's call log themselves (``make_call_hook``), use
the store's database as response cache, and every wait in them (rate limit, backoff, Retry-After) ends at
once on ``cancel``. The embedder shares the chat stack's request guard (one set of per-host limits, one
breaker); one that cannot be configured (an OpenAI-compatible server without an embedding model) only stops
the run when a scorer needs embeddings, otherwise any use of it fails that step with the same message.
A judge bound to its own configuration (``judges.BoundScorer`` with ``judge_config``) gets its own stack:
its own rate limits, key, cache and call-log hook.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from rageval_core.llm.base import LLM, Embedder, ProviderError
from rageval_core.core.clock import CancellableClock
from rageval_core.providers.config import ProviderConfig, embedding_choice
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.run.execute import UnavailableEmbedder, make_call_hook
from rageval_core.run.loop import Progress, run
from rageval_core.run.persist import Run
from rageval_core.run.plan import needs_embeddings
from rageval_core.run.spec import RunProviders, RunSpec
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.store.runs import Store

__all__ = ["build_and_run", "build_and_run_batched", "build_for_run", "build_judges"]


def build_for_run(
    spec: RunSpec, store: Store, *, cancel: threading.Event | None = None, llm: LLM | None = None,
    embedder: Embedder | None = None,
) -> RunProviders:
    """The providers of ``spec`` (its ``provider``, the offline one when None) with ``store`` as cache and call
    log. A given ``llm`` or ``embedder`` is used instead of building that one (a scripted LLM, the adapter
    under a batch collector, an embedder shared by several runs); a given ``llm`` does not write the call log,
    so the runner logs its calls (``logs_calls`` False). Raises ``ProviderError`` when the configuration
    cannot be built (the ``check_config`` messages)."""
    config = spec.provider or ProviderConfig()
    clock = CancellableClock(cancel) if cancel is not None else None
    logs_calls = llm is None
    if llm is None:
        llm = build_llm(config, db_path=store.path, call_hook=make_call_hook(store), clock=clock)
    embedding: dict[str, Any] | None = None
    if embedder is None:
        embedding = embedding_choice(config).to_dict()
        try:
            embedder = build_embedder(config, db_path=store.path, clock=clock, guard=getattr(llm, "guard", None))
        except ProviderError as exc:
            if needs_embeddings(spec.plan_rows(), spec.scorers):
                raise
            embedder = UnavailableEmbedder(exc)
    judges = build_judges(spec.scorers, store, cancel=cancel)
    return RunProviders(llm=llm, embedder=embedder, judges=judges, logs_calls=logs_calls, embedding=embedding)


def build_judges(scorers: Sequence[Scorer], store: Store, *, cancel: threading.Event | None = None) -> dict[str, LLM]:
    """One stack per judge configuration the scorers are bound to (by judge id), logging to ``store``; a judge
    given a ready ``judge_llm`` needs none (the runner uses that one as it is)."""
    clock = CancellableClock(cancel) if cancel is not None else None
    judges: dict[str, LLM] = {}
    for scorer in scorers:
        group = str(getattr(scorer, "group", "") or "")
        if not group or group in judges or getattr(scorer, "judge_llm", None) is not None:
            continue
        config = getattr(scorer, "judge_config", None)
        if config is None:
            continue
        judges[group] = build_llm(config, db_path=store.path, call_hook=make_call_hook(store), clock=clock)
    return judges



def build_and_run(
    spec: RunSpec, store: Store, *, llm: LLM | None = None, embedder: Embedder | None = None,
    progress: Callable[[Progress], None] | None = None, cancel: threading.Event | None = None,
    on_read: Callable[[int], None] | None = None,
) -> Run:
    """``build_for_run`` then ``run.run`` with what it built: the one call of a front end that has a spec and a
    store and wants the run (the pages, the bench scripts, the trust checks)."""
    built = build_for_run(spec, store, cancel=cancel, llm=llm, embedder=embedder)
    return run(spec, built.llm, built.embedder, store, judges=built.judges, logs_calls=built.logs_calls,
               embedding=built.embedding, progress=progress, cancel=cancel, on_read=on_read)


def build_and_run_batched(spec: RunSpec, store: Store, **batch: Any) -> Run:
    """``spec`` through the provider's batch API (``run.batch.run_batched``): its adapter, the stack builder
    and the embedder (sharing the adapter's guard) built here; ``batch`` is ``run_batched``'s polling, clock,
    cancel, printer, jobs to attach and progress."""
    from rageval_core.run.batch import run_batched

    config = spec.provider or ProviderConfig()
    base = build_llm(config).base
    built = build_for_run(spec, store, llm=base)
    return run_batched(spec, store, base=base, build_llm=build_llm, embedder=built.embedder, **batch)
