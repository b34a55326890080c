"""The rounds of a batched run: collect → submit → poll → store answers, until nothing is left; then the real run.

``run_batched`` takes the run's spec and store (it ends by calling ``run.run``), the provider's adapter and
the stack builder, plus the polling interval, a clock for the waits (tests pass a ``FakeClock``), a cancel
event, a line printer and job ids to attach to. A job the ledger knows as running — the process died after submitting it — is polled
again instead of being sent twice; ``attach`` adds jobs by id that this database never saw.
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from rageval_core.run.batch.answers import AnsweringLLM, CollectingLLM
from rageval_core.run.batch.backends import BatchBackend, JobStatus, backend_for
from rageval_core.run.batch.errors import BatchCancelled as BatchCancelled  # re-exported
from rageval_core.run.batch.errors import BatchError as BatchError
from rageval_core.store.batch_ledger import DONE, FAILED, BatchAnswer, Ledger
from rageval_core.llm.base import LLM, ProviderError
from rageval_core.llm.transport.cache import ResponseCache
from rageval_core.core.clock import SYSTEM_CLOCK, Clock
from rageval_core.run.spec import RunSpec
from rageval_core.store.runs import Store

if TYPE_CHECKING:
    from rageval_core.llm.base import Embedder

# Every batch API here bills half the synchronous price (OpenAI and Azure Batch API, Gemini batch mode,
# Anthropic Message Batches).
BATCH_DISCOUNT = 0.5
# A metric needs one round per dependent step (claims, verdicts, a re-ask): more than this means a loop.
MAX_ROUNDS = 12
DEFAULT_POLL_S = 30.0


@dataclasses.dataclass
class BatchReport:
    """What the rounds did, for the CLI and the run's settings."""

    rounds: int = 0
    jobs: list[str] = dataclasses.field(default_factory=list)
    requests: int = 0
    failed_requests: int = 0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def run_batched(
    spec: RunSpec,
    store: Store,
    *,
    base: LLM,
    build_llm: Callable[..., LLM],
    embedder: Embedder,
    poll_s: float = DEFAULT_POLL_S,
    clock: Clock | None = None,
    cancel: threading.Event | None = None,
    say: Callable[[str], None] = lambda _line: None,
    attach: Sequence[str] = (),
    progress: Callable[[Any], None] | None = None,
) -> Any:
    """Evaluate ``spec`` through the provider's batch API and store the run like ``run.run`` does; returns its
    ``Run``. ``base`` is the provider's adapter (``ProviderStack.base``) whose batch API answers, ``build_llm``
    the providers' stack builder (``providers.registry.build_llm``: given here, since the runner builds no
    provider) that wraps the collector and the answers in the same limits, cache and call log."""
    from rageval_core.llm.pricing import load_prices
    from rageval_core.run import make_call_hook, run

    config = spec.provider
    if config is None:
        raise BatchError("a batched run needs the provider configuration in its spec")
    clock = clock or SYSTEM_CLOCK
    cancel = cancel or threading.Event()
    backend = backend_for(base)
    ledger = Ledger(store.path)
    local = dataclasses.replace(config, rpm=None, tpm=None, record_log=None)  # nothing here reaches the network
    report = BatchReport()
    for job_id in attach:
        _finish(backend, ledger, job_id, poll_s, clock, cancel, say, report)
    for job in ledger.running_jobs(backend.provider, backend.model):
        say(f"batch: picking up job {job.job_id} (round {job.round}, {len(job.keys)} requests) submitted earlier")
        _finish(backend, ledger, job.job_id, poll_s, clock, cancel, say, report)

    cache = ResponseCache(store.path) if config.cache else None
    round_spec = RunSpec(spec.samples, spec.scorers, concurrency=spec.concurrency, options=spec.options,
                         repeats=spec.repeats, repeat_temperature=spec.repeat_temperature)
    for _attempt in range(MAX_ROUNDS):
        round_no = len(report.jobs) + 1  # jobs picked up or attached above were the earlier rounds
        collector = CollectingLLM(base, ledger, config.base_url, cache)
        stack = build_llm(dataclasses.replace(local, cache=False), base=collector)
        with tempfile.TemporaryDirectory(prefix="rageval-batch-") as scratch:
            run(round_spec, stack, embedder, Store(Path(scratch) / "round.sqlite"), logs_calls=True, cancel=cancel)
        if cancel.is_set():
            raise BatchCancelled("cancelled before the batch was sent; nothing was submitted in this round")
        if not collector.pending:
            break
        job_id = backend.submit(collector.pending, round_no)
        ledger.add_job(job_id, backend.provider, backend.model, round_no, list(collector.pending))
        say(
            f"batch round {round_no}: {len(collector.pending)} requests sent as job {job_id} ({backend.provider}); "
            f"if this process stops, rerun the same command (or add --batch-job {job_id}) to pick up its results"
        )
        _finish(backend, ledger, job_id, poll_s, clock, cancel, say, report)
    else:
        raise BatchError(f"still collecting requests after {MAX_ROUNDS} rounds: a metric keeps asking new questions")

    prices = load_prices().for_provider(config.provider).scaled(BATCH_DISCOUNT)
    final = build_llm(
        local, base=AnsweringLLM(base, ledger, config.base_url), db_path=store.path,
        call_hook=make_call_hook(store), prices=prices,
    )
    final_spec = dataclasses.replace(spec, settings={**spec.settings, "batch": report.to_dict()})
    return run(final_spec, final, embedder, store, logs_calls=True, cancel=cancel, progress=progress)


def _finish(
    backend: BatchBackend, ledger: Ledger, job_id: str, poll_s: float, clock: Clock,
    cancel: threading.Event, say: Callable[[str], None], report: BatchReport,
) -> None:
    """Poll ``job_id`` until it ends, then store its answers (per-request errors included)."""
    last = None
    while True:
        if cancel.is_set():
            raise BatchCancelled(f"stopped while job {job_id} runs at the provider; rerun the same command to pick up its results")
        status = _poll(backend, job_id, poll_s, clock, cancel)
        if status.describe() != last:
            say(f"batch {status.describe()}")
            last = status.describe()
        if status.state == "running":
            _wait(clock, poll_s, cancel)
            continue
        if status.state == FAILED:
            if ledger.job(job_id) is not None:
                ledger.set_state(job_id, FAILED)
            raise BatchError(f"batch job {job_id} {status.provider_state}" + (f": {status.message}" if status.message else ""))
        answers = backend.collect(job_id)
        ledger.save_answers(answers)
        _mark_missing(ledger, job_id, answers)
        if ledger.job(job_id) is not None:
            ledger.set_state(job_id, DONE)
        report.jobs.append(job_id)
        report.rounds = len(report.jobs)
        report.requests += len(answers)
        report.failed_requests += sum(1 for a in answers if not a.ok)
        return


def _mark_missing(ledger: Ledger, job_id: str, answers: Sequence[BatchAnswer]) -> None:
    """Requests a finished job did not answer (expired, cancelled) become per-request errors."""
    job = ledger.job(job_id)
    if job is None:
        return
    answered = {a.key for a in answers}
    missing = [
        BatchAnswer(key, job_id, error_kind="server", error_message=f"batch job {job_id} ended without an answer for this request")
        for key in job.keys if key not in answered
    ]
    if missing:
        ledger.save_answers(missing)


def _poll(backend: BatchBackend, job_id: str, poll_s: float, clock: Clock, cancel: threading.Event) -> JobStatus:
    """One status call; a transient failure (rate limit, 5xx, connection) is tried again after a wait."""
    for _attempt in range(5):
        try:
            return backend.poll(job_id)
        except ProviderError as err:
            if not err.retryable:
                raise BatchError(f"batch job {job_id}: {err}") from None
            _wait(clock, err.retry_after or poll_s, cancel)
    raise BatchError(f"batch job {job_id}: the provider did not answer the status request 5 times in a row")


def _wait(clock: Clock, seconds: float, cancel: threading.Event) -> None:
    """Sleep on the injectable clock in short steps so Ctrl-C is seen within a second."""
    left = seconds
    while left > 0 and not cancel.is_set():
        step = min(1.0, left)
        clock.sleep(step)
        left -= step

