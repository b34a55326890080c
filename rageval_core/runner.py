"""The evaluation runner: rows × scorers on a thread pool, the project's one concurrency boundary.

Each (row, scorer) pair is one task. Tasks run on a pool with more threads than the LLM concurrency limit
so a task blocked on a dependency (a shared claim extraction, the next step of its own chain) never
leaves a model slot idle; the slots themselves are handed out oldest-task-first, so started chains
finish before new ones begin and the tail of a run stays short. Finished tasks are written to the
store at once; a resumed run skips them, and calls that finished but were never stored come back as
cache hits from the provider cache. Providers stay synchronous; there is no event loop anywhere.
"""

from __future__ import annotations

import contextvars
import heapq
import inspect
import itertools
import json
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from rageval_core.compare import MethodCost, cost_by_method, summarize
from rageval_core.llm.base import LLM, Completion, Embedder, LLMRequest, ProviderError
from rageval_core.metrics.base import EvalContext, Memo, Scorer
from rageval_core.repeats import RepeatLLM
from rageval_core.store import CANCELLED, DONE, FAILED, CallEntry, RowInfo, Store
from rageval_core.types import MetricResult, Sample, Unscored, Usage

# Unscored reasons that mean "the provider failed", redone when a run is resumed.
RETRYABLE_REASONS = frozenset({Unscored.PROVIDER_ERROR, Unscored.TIMEOUT})


class RunError(Exception):
    """A run that cannot start (unknown run id to resume, dataset changed under a resumed run, ...)."""


# ---- task context: which run / row / scorer the current thread works for ---------------------------------
@dataclass
class TaskTag:
    """Set in a contextvar for the duration of one task; the call hook reads it to label the call log."""

    run_id: str
    sample_id: str
    scorer: str
    method: str
    priority: int = 0
    cancelled: bool = False
    # Call records of the call in progress. The providers' hook fires inside the stack, before the
    # response cache stores the answer; holding the records until the stack returns means a logged
    # call is always a cached call, so a process killed in between can never repeat a logged call.
    pending: list[tuple[Store, CallEntry]] | None = None


_CURRENT: contextvars.ContextVar[TaskTag | None] = contextvars.ContextVar("rageval_task", default=None)


def make_call_hook(store: Store) -> Callable[[Any], None]:
    """A ``call_hook`` for ``build_llm``: writes each provider call or cache hit to the store's call log.

    The record's run / row / scorer come from the task contextvar the runner sets, so one LLM object
    built once can serve many runs. Calls made outside a run are not logged.
    """

    def hook(record: Any) -> None:
        tag = _CURRENT.get() or _INFLIGHT.find(_record_key(record))
        if tag is None:
            return
        entry = _entry_from_record(tag, record)
        if tag.pending is not None:
            tag.pending.append((store, entry))  # written once the whole stack (cache included) returned
        else:
            store.log_call(entry)

    return hook


class _InflightRegistry:
    """Request key → tasks with that request in flight.

    The contextvar does not follow a call into a thread a provider wrapper starts for itself (a per-call
    timeout runs the SDK call on its own thread), so the hook falls back to the request key, which every
    call record carries.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, list[TaskTag]] = {}

    def add(self, key: str, tag: TaskTag) -> None:
        with self._lock:
            self._by_key.setdefault(key, []).append(tag)

    def remove(self, key: str, tag: TaskTag) -> None:
        with self._lock:
            tags = self._by_key.get(key, [])
            if tag in tags:
                tags.remove(tag)
            if not tags:
                self._by_key.pop(key, None)

    def find(self, key: str | None) -> TaskTag | None:
        if not key:
            return None
        with self._lock:
            tags = self._by_key.get(key)
            return tags[0] if tags else None


_INFLIGHT = _InflightRegistry()


def _record_key(record: Any) -> str | None:
    if isinstance(record, Mapping):
        return record.get("request_key") or record.get("key")
    return getattr(record, "request_key", None)


def _entry_from_record(tag: TaskTag, record: Any) -> CallEntry:
    get = record.get if isinstance(record, Mapping) else (lambda k, d=None: getattr(record, k, d))
    usage = get("usage") or Usage()
    if isinstance(usage, Mapping):
        usage = Usage(**{k: int(v) for k, v in usage.items() if k in ("input_tokens", "output_tokens", "cached_input_tokens")})
    error = get("error")
    return CallEntry(
        run_id=tag.run_id,
        sample_id=tag.sample_id,
        scorer=tag.scorer,
        method=tag.method,
        task=get("task"),
        request_key=get("request_key") or get("key"),
        provider=get("provider"),
        model=get("model"),
        prompt=get("prompt"),
        response=get("response"),
        usage=usage,
        cost_usd=float(get("cost_usd", None) or get("cost", None) or 0.0),
        latency_s=float(get("latency_s", None) or get("latency", None) or 0.0),
        cached=bool(get("cached")),
        error=None if error is None else str(error),
        ts=float(get("timestamp", None) or get("ts", None) or time.time()),
    )


# ---- slot gate: bounded model concurrency, oldest task first -------------------------------------------
class _PriorityGate:
    """At most ``limit`` calls at once; a waiting call of an older task goes first."""

    def __init__(self, limit: int, cancel: threading.Event) -> None:
        self._cond = threading.Condition()
        self._free = max(1, int(limit))
        self._heap: list[tuple[int, int]] = []
        self._seq = itertools.count()
        self._cancel = cancel

    def acquire(self, priority: int) -> None:
        with self._cond:
            ticket = (priority, next(self._seq))
            heapq.heappush(self._heap, ticket)
            while not (self._free > 0 and self._heap[0] == ticket):
                if self._cancel.is_set():
                    self._heap.remove(ticket)
                    heapq.heapify(self._heap)
                    self._cond.notify_all()
                    raise ProviderError("run cancelled", kind="cancelled")
                self._cond.wait(0.5)
            heapq.heappop(self._heap)
            self._free -= 1
            if self._free > 0 and self._heap:
                self._cond.notify_all()

    def release(self) -> None:
        with self._cond:
            self._free += 1
            self._cond.notify_all()

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()


@dataclass
class _Counters:
    """Live totals for the progress callback (this invocation only)."""

    calls: int = 0
    cached_calls: int = 0
    errors: int = 0
    embedding_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, completion: Completion | None, error: bool = False) -> None:
        with self.lock:
            if error or completion is None:
                self.errors += 1
            elif completion.cached:
                self.cached_calls += 1
            else:
                self.calls += 1
                self.input_tokens += completion.usage.input_tokens
                self.output_tokens += completion.usage.output_tokens
                self.cost_usd += completion.cost_usd


class _RunLLM:
    """The runner's outer LLM wrapper: slot gate, cancel check, live counters, optional call logging."""

    def __init__(self, inner: LLM, gate: _PriorityGate, cancel: threading.Event, counters: _Counters, store: Store | None):
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self._gate, self._cancel, self._counters, self._store = gate, cancel, counters, store

    def complete(self, request: LLMRequest) -> Completion:
        tag = _CURRENT.get()
        if self._cancel.is_set():
            if tag is not None:
                tag.cancelled = True
            raise ProviderError("run cancelled", kind="cancelled")
        try:
            self._gate.acquire(tag.priority if tag else 0)
        except ProviderError:
            if tag is not None:
                tag.cancelled = True
            raise
        started = time.perf_counter()
        key = request.key()
        if tag is not None:
            tag.pending = []
            _INFLIGHT.add(key, tag)
        try:
            completion = self.inner.complete(request)
        except ProviderError as exc:
            self._counters.add(None, error=True)
            self._log(tag, request, None, exc, time.perf_counter() - started)
            raise
        finally:
            self._gate.release()
            if tag is not None:
                _INFLIGHT.remove(key, tag)
                pending, tag.pending = tag.pending or [], None
                for store, entry in pending:
                    store.log_call(entry)
        self._counters.add(completion)
        self._log(tag, request, completion, None, time.perf_counter() - started)
        return completion

    def _log(self, tag: TaskTag | None, request: LLMRequest, completion: Completion | None, error: Exception | None, took: float) -> None:
        if self._store is None or tag is None:
            return
        texts = completion.texts if completion else []
        self._store.log_call(
            CallEntry(
                run_id=tag.run_id,
                sample_id=tag.sample_id,
                scorer=tag.scorer,
                method=tag.method,
                task=request.task,
                request_key=request.key(),
                provider=completion.provider if completion else self.provider,
                model=completion.model if completion else self.model,
                prompt=request.prompt_text,
                response=(texts[0] if len(texts) == 1 else json.dumps(texts, ensure_ascii=False)) if completion else None,
                usage=completion.usage if completion else Usage(),
                cost_usd=completion.cost_usd if completion else 0.0,
                latency_s=completion.latency_s if completion and completion.latency_s else took,
                cached=bool(completion and completion.cached),
                error=None if error is None else str(error),
            )
        )


class _RunEmbedder:
    """Counts embedding requests and shares the model slots (a remote embedder is a call like any other)."""

    def __init__(self, inner: Embedder, gate: _PriorityGate, counters: _Counters, gated: bool) -> None:
        self.inner = inner
        self.provider = inner.provider
        self.model = inner.model
        self._gate, self._counters, self._gated = gate, counters, gated

    def embed(self, texts: Sequence[str]):
        tag = _CURRENT.get()
        if self._gated:
            self._gate.acquire(tag.priority if tag else 0)
        try:
            return self.inner.embed(texts)
        finally:
            if self._gated:
                self._gate.release()
            with self._counters.lock:
                self._counters.embedding_calls += 1


# ---- public data ---------------------------------------------------------------------------------------
@dataclass
class Progress:
    """What the progress callback receives after each finished task (and about twice a second)."""

    done: int
    total: int
    calls: int
    cached_calls: int
    errors: int
    input_tokens: int
    output_tokens: int
    cost_usd: float
    elapsed_s: float
    eta_s: float | None
    last_sample_id: str | None = None
    skipped: int = 0

    @property
    def fraction(self) -> float:
        return 1.0 if self.total == 0 else self.done / self.total


@dataclass
class EstimateRow:
    """Expected work of one scorer over all rows."""

    scorer: str
    method: str
    metrics: tuple[str, ...]
    llm_calls: int = 0
    embedding_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


@dataclass
class Estimate:
    """Expected calls, tokens and cost per scorer (metric) and method, before a run starts."""

    rows: list[EstimateRow]
    n_samples: int
    provider: str | None = None
    model: str | None = None

    @property
    def llm_calls(self) -> int:
        return sum(r.llm_calls for r in self.rows)

    @property
    def embedding_calls(self) -> int:
        return sum(r.embedding_calls for r in self.rows)

    @property
    def input_tokens(self) -> int:
        return sum(r.input_tokens for r in self.rows)

    @property
    def output_tokens(self) -> int:
        return sum(r.output_tokens for r in self.rows)

    @property
    def cost_usd(self) -> float | None:
        costs = [r.cost_usd for r in self.rows]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def by_method(self) -> dict[str, EstimateRow]:
        out: dict[str, EstimateRow] = {}
        for r in self.rows:
            agg = out.setdefault(r.method, EstimateRow(r.method, r.method, (), cost_usd=0.0))
            agg.metrics = agg.metrics + tuple(m for m in r.metrics if m not in agg.metrics)
            agg.llm_calls += r.llm_calls
            agg.embedding_calls += r.embedding_calls
            agg.input_tokens += r.input_tokens
            agg.output_tokens += r.output_tokens
            agg.cost_usd = None if agg.cost_usd is None or r.cost_usd is None else agg.cost_usd + r.cost_usd
        return out


@dataclass
class Run:
    """A finished (or cancelled) run: its results, summary and actual figures."""

    run_id: str
    status: str
    provider: str | None
    model: str | None
    results: list[MetricResult]
    summary: dict[str, dict[str, dict[str, Any]]]
    cost: dict[str, MethodCost]
    invalid_rows: list[RowInfo] = field(default_factory=list)
    total_tasks: int = 0
    done_tasks: int = 0
    skipped_tasks: int = 0
    provider_calls: int = 0
    cache_hits: int = 0
    call_errors: int = 0
    embedding_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    wall_s: float = 0.0
    resumed: bool = False
    repeats: int = 1

    @property
    def all_cached(self) -> bool:
        """True when this invocation needed the provider for nothing: every call was a cache hit."""
        return self.provider_calls == 0 and self.call_errors == 0


# ---- estimate ------------------------------------------------------------------------------------------
def _price_lookup(provider: str | None, model: str | None) -> Callable[[int, int], float] | None:
    """Cost of (input, output) tokens from the providers' editable price table; None when unknown.

    Offline, replay and local OpenAI-compatible servers cost nothing (as the provider stack bills them).
    A model missing from the table gives None: the estimate then says "unknown", never $0.
    """
    if provider in ("offline", "replay", "openai-compatible"):
        return lambda _i, _o: 0.0
    if not provider:
        return None
    try:
        from rageval_core.llm.pricing import load_prices
        from rageval_core.llm.registry import PROVIDERS
    except ImportError:
        return None
    info = PROVIDERS.get(provider)
    name = model or (info.default_model if info else None)
    if not name:
        return None
    table = load_prices()
    if table.lookup(name) is None:
        return None

    def price(i: int, o: int) -> float:
        cost = table.cost(name, Usage(i, o))
        return float("nan") if cost is None else float(cost)

    return price


def estimate(
    samples: Sequence[Sample],
    scorers: Sequence[Scorer],
    *,
    provider: str | None = None,
    model: str | None = None,
    price: Callable[[int, int], float] | None = None,
) -> Estimate:
    """Calls, tokens and cost each scorer expects over ``samples`` (from ``Scorer.estimate``)."""
    price = price or _price_lookup(provider, model)
    rows = []
    for scorer in scorers:
        row = EstimateRow(scorer.name, scorer.method, tuple(scorer.metrics))
        scorer_estimate = _estimate_for(scorer, provider)
        for sample in samples:
            e = scorer_estimate(sample)
            row.llm_calls += e.llm_calls
            row.embedding_calls += e.embedding_calls
            row.input_tokens += e.input_tokens
            row.output_tokens += e.output_tokens
        if price is not None:
            cost = price(row.input_tokens, row.output_tokens)
            row.cost_usd = None if cost != cost else cost  # NaN → unknown
        rows.append(row)
    return Estimate(rows, len(samples), provider, model)


def _estimate_for(scorer: Scorer, provider: str | None) -> Callable[[Sample], Any]:
    """``scorer.estimate``, told the provider when its work depends on it (``estimate(sample, provider=...)``:
    offline answer relevancy sends no request), so the estimate matches what the run will send."""
    try:
        takes_provider = "provider" in inspect.signature(scorer.estimate).parameters
    except (TypeError, ValueError):
        takes_provider = False
    if provider is not None and takes_provider:
        return lambda sample: scorer.estimate(sample, provider=provider)  # type: ignore[call-arg]
    return scorer.estimate


# ---- helpers -------------------------------------------------------------------------------------------
def dataset_hash(samples: Sequence[Sample]) -> str:
    """Content hash of the rows as evaluated, the same identity ``datasets.load_dataset`` reports."""
    from rageval_core.datasets import dataset_hash as _hash

    return _hash(samples)


def scorer_versions(
    scorers: Sequence[Scorer], samples: Sequence[Sample] = (), options: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What identifies each scorer's prompts and rubric, recorded with the run so runs stay comparable.

    Judges: rubric id + content hash and template hash (per language of the rows). Decomposed metrics:
    the hash of every task template in the rows' languages, the edited one when ``options["templates"]``
    overrides it (listed under ``_edited_templates``). Anything a scorer reports through ``describe()``
    is added as is.
    """
    from rageval_core.metrics.steps import sample_language

    languages = sorted({sample_language(s) for s in samples}) or ["ja", "en"]
    out: dict[str, Any] = {}
    for s in scorers:
        info: dict[str, Any] = {"method": s.method, "metrics": list(s.metrics)}
        describe = getattr(s, "describe", None)
        if callable(describe):
            try:
                extra = describe()
                if isinstance(extra, Mapping):
                    info.update({k: v for k, v in extra.items() if _jsonable(v)})
            except Exception as exc:  # a broken describe() must not stop a run
                info["describe_error"] = str(exc)
        rubric_for = getattr(s, "rubric_for", None)
        template_for = getattr(s, "template_for", None)
        if callable(rubric_for):
            by_lang: dict[str, Any] = {}
            for sample in _one_per_language(samples):
                try:
                    rubric = rubric_for(sample)
                    entry = {"rubric_id": rubric.id, "rubric_hash": rubric.content_hash}
                    if callable(template_for):
                        template = template_for(rubric)
                        entry["template_hash"] = template.sha256
                    by_lang[rubric.language] = entry
                except Exception as exc:
                    by_lang[sample_language(sample)] = {"error": str(exc)}
            info["rubrics"] = by_lang
        out[s.name] = info
    decomposed = [s for s in scorers if s.method == "decomposed"]
    if decomposed:
        overrides = (options or {}).get("templates") or {}
        out["_templates"] = _template_hashes(languages, overrides)
        edited = sorted(k for k in out["_templates"] if _override(overrides, k) is not None)
        if edited:
            out["_edited_templates"] = edited
    return out


def _one_per_language(samples: Sequence[Sample]) -> list[Sample]:
    from rageval_core.metrics.steps import sample_language

    seen: dict[str, Sample] = {}
    for s in samples:
        seen.setdefault(sample_language(s), s)
    return list(seen.values())


# The tasks decomposed metrics send (synthetic QA and the RAG answer are not metric steps).
_METRIC_TASKS = (
    "extract_claims", "verify_claims", "verify_claims_with_reference", "generate_questions", "context_verdicts",
    "attribute_reference", "extract_relevant_sentences", "classify_correctness",
)


def _override(overrides: Mapping[str, Any], key: str) -> Any:
    """The edited template for ``"<lang>/<task>"`` as ``metrics.steps.get_template`` finds it, or None."""
    return overrides.get(key, overrides.get(key.split("/", 1)[1]))


def _template_hashes(languages: Sequence[str], overrides: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Short hashes of the decomposed-task templates, e.g. ``{"ja/extract_claims": "3f2a…"}``; an edited
    template from the run's options is hashed instead of the shipped file."""
    from rageval_core.prompts import resolve_template

    out: dict[str, str] = {}
    for lang in languages:
        for task in _METRIC_TASKS:
            key = f"{lang}/{task}"
            custom = _override(overrides or {}, key)
            try:
                out[key] = resolve_template(task, lang, custom).short_hash
            except Exception as exc:  # a broken edited template still gets recorded, as broken
                out[key] = f"error: {exc}"
    return out


def _jsonable_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Run options as stored with the run: edited templates by their text (their hashes are in versions)."""
    from rageval_core.prompts import PromptTemplate

    def plain(value: Any) -> Any:
        if isinstance(value, PromptTemplate):
            return value.text
        if isinstance(value, Mapping):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    return plain(dict(options))


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def _chain_length(scorer: Scorer) -> int:
    """Longest dependent call chain of a scorer, from its ``chain_length`` if it declares one."""
    value = getattr(scorer, "chain_length", None)
    if callable(value):
        value = value()
    return int(value) if isinstance(value, int) else 1


def _failed_results(sample: Sample, scorer: Scorer, exc: BaseException, llm: LLM) -> list[MetricResult]:
    reason = exc.unscored_reason if isinstance(exc, ProviderError) else Unscored.PROVIDER_ERROR
    message = f"{type(exc).__name__}: {exc}"
    return [
        MetricResult(
            sample.id, metric, scorer.method, None, unscored_reason=reason, reason=message,
            provider=llm.provider, model=llm.model, details={"error": message},
        )
        for metric in scorer.metrics
    ]


# ---- run -----------------------------------------------------------------------------------------------
def run(
    samples: Sequence[Sample],
    scorers: Sequence[Scorer],
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    *,
    config: Any = None,
    store: Store | None = None,
    concurrency: int = 8,
    workers: int | None = None,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[Progress], None] | None = None,
    cancel: threading.Event | None = None,
    run_id: str | None = None,
    resume: bool = False,
    retry_errors: bool = True,
    dataset_name: str | None = None,
    dataset_digest: str | None = None,
    invalid_rows: Sequence[RowInfo] = (),
    settings: Mapping[str, Any] | None = None,
    log_calls: bool | None = None,
    gate_embeddings: bool | None = None,
    clock: Callable[[], float] = time.monotonic,
    repeats: int | None = None,
    repeat_temperature: float | None = None,
) -> Run:
    """Score every (row, scorer) pair and store each finished task at once.

    Pass either ``llm`` (+ ``embedder``) or a providers ``config`` (``ProviderConfig``): with a config
    the runner builds the full provider stack itself with the store's call log as ``call_hook`` and the
    response cache in the store's database. With a bare ``llm`` the runner logs calls itself unless
    ``log_calls=False`` (use that when the llm was built with ``make_call_hook``).

    ``run_id`` with ``resume=True`` continues an existing run: finished pairs are skipped, pairs that
    ended in provider errors are redone (``retry_errors``). ``cancel`` stops scheduling, abandons calls
    in flight at their next step, and marks the run cancelled; nothing half-done is stored.

    ``repeats=K`` scores every pair K times (repeat 0 is the ordinary run; the others vary the seed and
    bypass the response cache, see ``rageval_core.repeats``), each repeat stored under its index;
    ``repeat_temperature`` sets the temperature of every repeat. A resumed run keeps its own repeats.
    """
    store = store or Store()
    cancel = cancel or threading.Event()
    options = dict(options or {})
    samples = list(samples)
    scorers = list(scorers)
    names = [s.name for s in scorers]
    if len(set(names)) != len(names):
        raise RunError(f"scorer names must be unique: {names}")
    if len({s.id for s in samples}) != len(samples):
        raise RunError("sample ids must be unique within a run")

    base_url = None
    if config is not None:
        llm, embedder = _build_from_config(config, store, llm, embedder, needs_embeddings=_needs_embeddings(samples, scorers))
        base_url = getattr(config, "base_url", None)
        if log_calls is None:
            log_calls = False
    if llm is None:
        raise RunError("run() needs an llm or a provider config")
    if embedder is None:
        embedder = _default_embedder()
    if log_calls is None:
        log_calls = True
    if gate_embeddings is None:
        gate_embeddings = getattr(embedder, "provider", "") not in ("offline", "hash")

    if repeats is not None and repeats < 1:
        raise RunError("repeats must be at least 1")
    digest = dataset_digest or dataset_hash(samples)
    resumed = False
    if resume:
        if not run_id:
            raise RunError("resume needs a run id")
        info = store.find_run(run_id)
        if info is None:
            raise RunError(f"no run {run_id!r} to resume")
        if info.dataset_hash and info.dataset_hash != digest:
            raise RunError(f"run {info.id} was made on a different dataset (hash {info.dataset_hash[:12]}…)")
        _check_resumable(info, names, llm, scorer_versions(scorers, samples, options))
        stored_repeats = int(info.settings.get("repeats", 1))
        if repeats is not None and repeats != stored_repeats:
            raise RunError(f"run {info.id} was made with {stored_repeats} repeat(s), not {repeats}; resume it as it was")
        repeats = stored_repeats
        repeat_temperature = info.settings.get("repeat_temperature")
        run_id = info.id
        resumed = True
        store.set_status(run_id, "running")
    else:
        repeats = repeats or 1
        rows = [RowInfo(s.id, i, s.category, True, None) for i, s in enumerate(samples)]
        start = len(rows)
        rows += [RowInfo(r.sample_id, start + i, r.category, False, r.error) for i, r in enumerate(invalid_rows)]
        run_id = store.create_run(
            scorers=names,
            run_id=run_id,
            dataset_name=dataset_name,
            dataset_hash=digest,
            versions=scorer_versions(scorers, samples, options),
            provider=llm.provider,
            model=llm.model,
            base_url=base_url,
            settings={
                "concurrency": concurrency, "options": _jsonable_options(options), **dict(settings or {}),
                **({"repeats": repeats, "repeat_temperature": repeat_temperature} if repeats > 1 or repeat_temperature is not None else {}),
            },
            rows=rows,
        )

    # Which pairs are still to do.
    finished: set[tuple[str, str, int]] = set()
    if resumed:
        stored: dict[tuple[str, str, int], list[MetricResult]] = {}
        for rep in range(repeats):
            for scorer_name, r in store.results_with_scorer(run_id, rep):
                stored.setdefault((r.sample_id, scorer_name, rep), []).append(r)
        for key, results in stored.items():
            failed = all(r.value is None and r.unscored_reason in RETRYABLE_REASONS for r in results)
            if not (retry_errors and failed):
                finished.add(key)
    order = sorted(range(len(scorers)), key=lambda i: -_chain_length(scorers[i]))
    todo = [
        (s, scorers[i], rep)
        for rep in range(repeats)
        for s in samples
        for i in order
        if (s.id, scorers[i].name, rep) not in finished
    ]
    total = len(samples) * len(scorers) * repeats
    skipped = total - len(todo)

    counters = _Counters()
    gate = _PriorityGate(concurrency, cancel)
    run_llm = _RunLLM(llm, gate, cancel, counters, store if log_calls else None)
    run_embedder = _RunEmbedder(embedder, gate, counters, gated=bool(gate_embeddings))
    # One context per repeat: its own memo (a repeat never reuses another's claim extraction) and, for
    # repeats, requests with the repeat's seed that bypass the response cache.
    contexts = [
        EvalContext(
            llm=run_llm if rep == 0 and repeat_temperature is None else RepeatLLM(run_llm, rep, repeat_temperature),
            embedder=run_embedder, options=options, memo=Memo(),
        )
        for rep in range(repeats)
    ]
    started = clock()

    def work(priority: int, sample: Sample, scorer: Scorer, rep: int) -> list[MetricResult] | None:
        tag = TaskTag(run_id, sample.id, scorer.name, scorer.method, priority)
        token = _CURRENT.set(tag)
        try:
            if cancel.is_set():
                return None
            try:
                results = list(scorer.score(sample, contexts[rep]))
                if not results:
                    raise RuntimeError(f"scorer {scorer.name} returned no results")
            except Exception as exc:  # a scorer bug or provider failure is an unscored result, never a crash
                results = _failed_results(sample, scorer, exc, llm)
            if tag.cancelled or (cancel.is_set() and any(r.unscored_reason == "cancelled" for r in results)):
                return None  # abandoned mid-way: store nothing, resume redoes it
            for r in results:
                r.provider = r.provider or llm.provider
                r.model = r.model or llm.model
            store.save_task(run_id, sample.id, scorer.name, results, repeat=rep)
            return results
        finally:
            _CURRENT.reset(token)

    done = 0
    status = DONE
    workers = workers or max(4, concurrency * 3)

    def report(last: str | None) -> None:
        if progress is None:
            return
        elapsed = clock() - started
        remaining = len(todo) - done
        eta = (elapsed / done * remaining) if done else None
        with counters.lock:
            snap = Progress(
                done=done + skipped, total=total, calls=counters.calls, cached_calls=counters.cached_calls,
                errors=counters.errors, input_tokens=counters.input_tokens, output_tokens=counters.output_tokens,
                cost_usd=counters.cost_usd, elapsed_s=elapsed, eta_s=eta, last_sample_id=last, skipped=skipped,
            )
        progress(snap)

    report(None)
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rageval-run")
    try:
        futures: dict[Future, tuple[Sample, Scorer]] = {}
        for priority, (sample, scorer, rep) in enumerate(todo):
            futures[pool.submit(contextvars.copy_context().run, work, priority, sample, scorer, rep)] = (sample, scorer)
        pending = set(futures)
        cancelled_seen = False
        while pending:
            finished_now, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            last = None
            for fut in finished_now:
                if fut.cancelled():
                    continue
                if fut.result() is not None:
                    done += 1
                    last = futures[fut][0].id
            if cancel.is_set() and not cancelled_seen:
                cancelled_seen = True
                for fut in pending:
                    fut.cancel()
                gate.wake()
            report(last)
        if cancel.is_set() and done < len(todo):
            status = CANCELLED
    except BaseException:
        cancel.set()
        gate.wake()
        status = FAILED
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        store.set_status(run_id, status)
    return load_run(
        store, run_id, status=status, counters=counters, wall_s=clock() - started, total=total,
        done=done + skipped, skipped=skipped, resumed=resumed,
    )


def load_run(
    store: Store,
    run_id: str,
    *,
    status: str | None = None,
    counters: _Counters | None = None,
    wall_s: float = 0.0,
    total: int | None = None,
    done: int | None = None,
    skipped: int = 0,
    resumed: bool = False,
) -> Run:
    """A ``Run`` from the store (all sessions of a resumed run). Live counters, when given, describe this invocation."""
    info = store.find_run(run_id)
    if info is None:
        raise RunError(f"no run {run_id!r}")
    results = store.results(info.id)
    rows = store.rows(info.id)
    calls = store.calls(info.id)
    cost = cost_by_method(calls)
    if counters is None:
        provider_calls = sum(c.calls for c in cost.values())
        cache_hits = sum(c.cached_calls for c in cost.values())
        errors = sum(c.errors for c in cost.values())
        embedding_calls = 0
        tokens_in = sum(c.input_tokens for c in cost.values())
        tokens_out = sum(c.output_tokens for c in cost.values())
        cost_usd = sum(c.cost_usd for c in cost.values())
    else:
        provider_calls, cache_hits, errors = counters.calls, counters.cached_calls, counters.errors
        embedding_calls = counters.embedding_calls
        tokens_in, tokens_out, cost_usd = counters.input_tokens, counters.output_tokens, counters.cost_usd
    repeats = int(info.settings.get("repeats", 1))
    finished_pairs = sum(len(store.finished_tasks(info.id, rep)) for rep in range(repeats))
    n_valid = sum(1 for r in rows if r.valid)
    return Run(
        run_id=info.id,
        status=status or info.status,
        provider=info.provider,
        model=info.model,
        results=results,
        summary=summarize(results),
        cost=cost,
        invalid_rows=[r for r in rows if not r.valid],
        total_tasks=total if total is not None else n_valid * len(info.scorers) * repeats,
        done_tasks=done if done is not None else finished_pairs,
        skipped_tasks=skipped,
        provider_calls=provider_calls,
        cache_hits=cache_hits,
        call_errors=errors,
        embedding_calls=embedding_calls,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=cost_usd,
        wall_s=wall_s,
        resumed=resumed,
        repeats=repeats,
    )


def _check_resumable(info: Any, names: Sequence[str], llm: LLM, versions: Mapping[str, Any]) -> None:
    """Refuse to resume a run with other scorers, another provider / model, or edited prompts or rubrics:
    the finished rows would silently mix two configurations in one run."""
    from rageval_core.compare import version_changes

    if sorted(info.scorers) != sorted(names):
        raise RunError(
            f"run {info.id} was made with scorers {', '.join(info.scorers)}; resume it with the same metrics and "
            f"judges (got {', '.join(names)}) or start a new run"
        )
    if (info.provider, info.model) != (llm.provider, llm.model):
        raise RunError(
            f"run {info.id} was made with {info.provider}/{info.model}, not {llm.provider}/{llm.model}; "
            "resume it with the same provider and model or start a new run"
        )
    from rageval_core.store import _dumps, _scrub

    stored_form = json.loads(_dumps(_scrub(dict(versions))))  # as the store keeps it: tuples → lists, no secrets
    changed = version_changes(info.versions or {}, stored_form)
    if changed:
        what = "; ".join(f"{path}: {a} → {b}" for path, a, b in changed[:3])
        raise RunError(
            f"run {info.id} was made with other prompt or rubric versions ({what}); start a new run and compare the two"
        )


def _build_from_config(
    config: Any, store: Store, llm: LLM | None, embedder: Embedder | None, *, needs_embeddings: bool = True
) -> tuple[LLM, Embedder | None]:
    """The providers' full stack, with this store as cache database and call log. An embedder that cannot
    be configured (e.g. an OpenAI-compatible server without an embedding model) only stops the run when
    a scorer needs embeddings; otherwise any use of it fails that step with the same message."""
    from rageval_core.llm import registry

    hook = make_call_hook(store)
    if llm is None:
        llm = registry.build_llm(config, db_path=store.path, call_hook=hook)
    if embedder is None:
        try:
            embedder = registry.build_embedder(config, db_path=store.path)
        except ProviderError as exc:
            if needs_embeddings:
                raise
            embedder = _UnavailableEmbedder(exc)
    return llm, embedder


def _needs_embeddings(samples: Sequence[Sample], scorers: Sequence[Scorer]) -> bool:
    """Whether any scorer expects an embedding request on any row (from the scorers' own estimates)."""
    return any(scorer.estimate(sample).embedding_calls > 0 for scorer in scorers for sample in samples)


class _UnavailableEmbedder:
    """Stands in for an embedder the configuration cannot build, in a run whose scorers need none."""

    provider = "unavailable"

    def __init__(self, error: ProviderError) -> None:
        self.model = "none"
        self._error = error

    def embed(self, texts: Sequence[str]) -> Any:
        raise ProviderError(str(self._error), kind=self._error.kind)


def _default_embedder() -> Embedder:
    from rageval_core.embeddings.offline import OfflineEmbedder  # type: ignore[import-not-found]

    return OfflineEmbedder()
