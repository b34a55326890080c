"""Running rows in tests: a ``RunSpec`` from keyword settings, providers built by ``providers.for_run``, then
the one runner entry, ``rageval_core.run.run``.

Tests state a run in a line (rows, scorers, a scripted LLM or a provider configuration, a few settings);
this builds the same ``RunSpec`` and ``RunProviders`` the CLI and the pages build, so the tests exercise that
path. ``log_calls=False`` says the runner must not log a given ``llm``'s calls (it was built with
``make_call_hook``); with a ``config`` the stacks log their own calls, as ``build_for_run`` builds them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from rageval_core.providers.config import ProviderConfig
from rageval_core.session.for_run import build_for_run
from rageval_core.run import Run, RunSpec, run
from rageval_core.store.runs import Store


def run_rows(
    samples: Sequence[Any] | Any,
    scorers: Sequence[Any],
    llm: Any = None,
    embedder: Any = None,
    *,
    config: ProviderConfig | None = None,
    store: Store | None = None,
    progress: Callable[[Any], None] | None = None,
    cancel: threading.Event | None = None,
    on_read: Callable[[int], None] | None = None,
    clock: Callable[[], float] | None = None,
    log_calls: bool | None = None,
    **settings: Any,
) -> Run:
    """Run ``samples`` × ``scorers`` with a given ``llm`` (and ``embedder``, default the offline encoder) or the
    providers of ``config``; ``settings`` are ``RunSpec`` fields (concurrency, run_id, resume, repeats, ...)."""
    spec = RunSpec(samples, scorers, provider=config, **settings)
    store = store or Store()
    if config is None:
        built = build_for_run(spec, store, cancel=cancel, llm=llm, embedder=embedder or _offline())
        embedding = None
    else:
        built = build_for_run(spec, store, cancel=cancel, llm=llm, embedder=embedder)
        embedding = built.embedding
    logs_calls = (not log_calls) if log_calls is not None else (config is not None or built.logs_calls)
    extra: dict[str, Any] = {} if clock is None else {"clock": clock}
    return run(spec, built.llm, built.embedder, store, judges=built.judges, logs_calls=logs_calls, embedding=embedding,
               progress=progress, cancel=cancel, on_read=on_read, **extra)


def _offline() -> Any:
    from rageval_core.run.execute import default_embedder

    return default_embedder()
