"""Planning a run: what it will cost (estimate), what identifies its configuration (versions, dataset hash),
whether a stored run may be resumed with the scorers at hand, and which (row, scorer) tasks remain.

Pure bookkeeping over samples and scorers: no provider call, no thread; the store is only read.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from rageval_core.core.tokens import TokenCounter, collector, counter_for, counting
from rageval_core.llm.base import LLM
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.store.runs import Store
from rageval_core.core.types import Sample, Unscored, Usage, UsageAlias
from rageval_core.core.errors import ConfigError

if TYPE_CHECKING:
    from rageval_core.scoring.judges.config import JudgeConfig
    from rageval_core.store.runs import RunInfo

RETRYABLE_REASONS = frozenset({Unscored.PROVIDER_ERROR, Unscored.TIMEOUT, Unscored.PROVIDER_UNREACHABLE})


class RunError(ConfigError):
    """A run that cannot start (unknown run id to resume, dataset changed under a resumed run, ...)."""


class _PlannedUsage:
    """The estimate's figures read by name from its ``usage`` (what the CLI, the page and the report print)."""

    llm_calls = UsageAlias("calls")
    embedding_calls = UsageAlias("embedding_calls")
    input_tokens = UsageAlias("input_tokens")
    output_tokens = UsageAlias("output_tokens")
    cached_input_tokens = UsageAlias("cached_input_tokens")


@dataclass
class EstimateRow(_PlannedUsage):
    """Expected work of one scorer over all rows: a ``Usage`` (expected LLM and embedding calls, tokens; of the input
    tokens, up to ``cached_input_tokens`` a provider's prompt cache could serve, where it caches a prefix that long:
    ``llm.prompt_cache``) and its price.

    ``usage.cost_usd`` is the price when the model has one; ``cost_usd`` says None (unknown, never $0) when it has
    not (``priced`` False). ``cache_saving_usd``: what the cacheable tokens would cost less (None when unpriced).
    """

    scorer: str
    method: str
    metrics: tuple[str, ...]
    usage: Usage = Usage()
    priced: bool = False
    max_llm_calls: int = 0  # with every re-ask the run allows (each parsed call asked again up to ``reask`` times)
    cache_saving_usd: float | None = 0.0

    @property
    def cost_usd(self) -> float | None:
        """The expected cost, or None when the model has no price."""
        return self.usage.cost_usd if self.priced else None

    def calls_range(self) -> str:
        """"36", or "36–72" when re-asks could add calls."""
        return str(self.usage.calls) if self.max_llm_calls <= self.usage.calls else f"{self.usage.calls}–{self.max_llm_calls}"


@dataclass
class Estimate(_PlannedUsage):
    """Expected calls, tokens and cost per scorer (metric) and method, before a run starts (``usage``: the total)."""

    rows: list[EstimateRow]
    n_samples: int
    provider: str | None = None
    model: str | None = None
    from_rows: int | None = None  # set when the figures were scaled up from this many evenly spaced rows
    # How input tokens were counted, per counter (``core.tokens``): "o200k_base", "anthropic count_tokens (…)",
    # "approximate"; each scorer's row counts with its own provider's counter (a judge on another provider).
    tokens_by: tuple[str, ...] = ()

    @property
    def tokens_exact(self) -> bool:
        """Every input token counted by a real tokenizer (no "approximate" among ``tokens_by``)."""
        return bool(self.tokens_by) and not any(n.startswith("approximate") for n in self.tokens_by)

    def tokens_note(self) -> str:
        """``tokens counted by o200k_base`` or ``tokens approximate (…)``: what the CLI prints beside the estimate."""
        guessed = [n for n in self.tokens_by if n.startswith("approximate")]
        counted = [n for n in self.tokens_by if not n.startswith("approximate")]
        if not counted:
            why = next((n[len("approximate "):] for n in guessed if n != "approximate"), "(no tokenizer for this provider)")
            return f"tokens approximate: ~4 ASCII characters or ~1 kana / kanji a token {why}"
        return f"tokens counted by {', '.join(counted)}" + ("; the rest approximate" if guessed else "")

    @property
    def usage(self) -> Usage:
        return Usage.total(r.usage for r in self.rows)

    @property
    def max_llm_calls(self) -> int:
        return sum(max(r.usage.calls, r.max_llm_calls) for r in self.rows)

    @property
    def cost_usd(self) -> float | None:
        """The expected cost of every row, or None when one of them has no price."""
        return self.usage.cost_usd if all(r.priced for r in self.rows) else None

    @property
    def cache_saving_usd(self) -> float | None:
        savings = [r.cache_saving_usd for r in self.rows]
        return None if any(c is None for c in savings) else sum(c for c in savings if c is not None)

    @property
    def cache_rule(self) -> Any:
        """The provider's prompt-cache rule for the run's model (``llm.prompt_cache.CacheRule``), or None."""
        from rageval_core.llm.prompt_cache import cache_rule

        return cache_rule(self.provider, _model_name(self.provider, self.model))

    def by_method(self) -> dict[str, EstimateRow]:
        out: dict[str, EstimateRow] = {}
        for r in self.rows:
            agg = out.setdefault(r.method, EstimateRow(r.method, r.method, (), priced=True))
            agg.metrics = agg.metrics + tuple(m for m in r.metrics if m not in agg.metrics)
            agg.usage = agg.usage + r.usage
            agg.priced = agg.priced and r.priced
            agg.cache_saving_usd = (None if agg.cache_saving_usd is None or r.cache_saving_usd is None
                                    else agg.cache_saving_usd + r.cache_saving_usd)
        return out


# ---- estimate ------------------------------------------------------------------------------------------
def _price_lookup(provider: str | None, model: str | None) -> Callable[[int, int], float] | None:
    """Cost of (input, output) tokens from the providers' editable price table; None when unknown.

    Offline, replay and local OpenAI-compatible servers cost nothing (as the provider stack bills them).
    A model missing from the table gives None: the estimate then says "unknown", never $0.
    """
    if provider in ("offline", "replay"):
        return lambda _i, _o: 0.0
    if not provider:
        return None
    from rageval_core.llm.pricing import load_prices

    name = _model_name(provider, model)
    if not name:
        return None if provider != "openai-compatible" else (lambda _i, _o: 0.0)
    table = _provider_prices(load_prices(), provider)
    if table.lookup(name) is None:
        return (lambda _i, _o: 0.0) if provider == "openai-compatible" else None  # a local model costs nothing

    def price(i: int, o: int) -> float:
        cost = table.cost(name, Usage(i, o))
        return float("nan") if cost is None else float(cost)

    return price


def _provider_prices(table: Any, provider: str | None) -> Any:
    """The price table as ``provider`` bills (``PriceTable.for_provider``); an OpenAI-compatible server only
    what the user priced for it (a gateway's models), as the provider stack bills it."""
    return table.scoped_only(provider) if provider == "openai-compatible" else table.for_provider(provider)


def _model_name(provider: str | None, model: str | None) -> str | None:
    """The model a run of ``provider`` uses: ``model``, else the provider's default."""
    if model or not provider:
        return model
    from rageval_core.providers.config import PROVIDERS

    info = PROVIDERS.get(provider)
    return info.default_model if info else None


def _cache_saving(provider: str | None, model: str | None) -> tuple[Any, Callable[[int], float | None]]:
    """The prompt-cache rule of ``model`` on ``provider`` and what a number of cached input tokens would cost
    less (None when the model has no price; 0 where nothing is cached or billed)."""
    from rageval_core.llm.prompt_cache import cache_rule, saving_usd

    name = _model_name(provider, model)
    rule = cache_rule(provider, name)
    if rule is None or not name:
        return None, lambda _cached: 0.0
    from rageval_core.llm.pricing import load_prices

    price = _provider_prices(load_prices(), provider).lookup(name)
    if price is None:
        return rule, lambda _cached: None
    return rule, lambda cached: saving_usd(cached, price.input, price.cached_input)


# Above this many rows the estimate is measured on this many evenly spaced rows and scaled up: estimating
# every row of 100,000 renders 500,000 prompts before the first progress line (and 2,000 rows still took
# 14 s at 10,000 rows on the loaded 2-core machine, bench/stream_scale.py).
ESTIMATE_ROWS = 500


def estimate(
    samples: Sequence[Sample],
    scorers: Sequence[Scorer],
    *,
    provider: str | None = None,
    model: str | None = None,
    price: Callable[[int, int], float] | None = None,
    max_rows: int | None = ESTIMATE_ROWS,
    discount: float = 1.0,
    total_rows: int | None = None,
    reask: int = 0,
    counter: TokenCounter | None = None,
) -> Estimate:
    """Calls, tokens and cost each scorer expects over ``samples`` (from ``Scorer.estimate``).

    With more than ``max_rows`` rows, ``max_rows`` evenly spaced rows are estimated and the totals scaled
    by the row count (``Estimate.from_rows`` says so); ``max_rows=None`` estimates every row. ``total_rows``: the
    dataset has this many rows of which ``samples`` are the first (a file evaluated as it is read), so the
    totals are scaled to it. ``discount`` scales the price (0.5 for a batch-API run). ``reask``: how many times
    the run asks again after an answer it cannot read; the range's top (``max_llm_calls``) counts them all (the
    offline provider always answers in shape, so its range is one number). ``counter``: how the run's provider
    counts tokens (a Claude or Gemini token-counting endpoint, ``llm.token_count``); default ``core.tokens.counter_for``
    (OpenAI's encodings for openai / azure-openai, else approximate). A judge on another provider counts with its
    own provider's offline counter."""
    from rageval_core.llm.prompt_cache import cached_tokens_of

    price = price or _price_lookup(provider, model)
    cache, cache_saving = _cache_saving(provider, model)
    n = len(samples) if total_rows is None else total_rows
    measured: Sequence[Sample] = samples
    if max_rows is not None and len(samples) > max_rows:
        step = len(samples) / max_rows
        measured = [samples[int(i * step)] for i in range(max_rows)]
    scale = n / len(measured) if measured else 1.0
    run_counter = counter or counter_for(provider, _model_name(provider, model))
    counters = [_counter_of(getattr(s, "judge", None), provider, model, run_counter) for s in scorers]
    if run_counter.prepare is not None:  # an endpoint counter: every text counted at once, before the counting pass
        seen: list[str] = []
        with counting(collector(seen)):
            for scorer, used in zip(scorers, counters, strict=True):
                if used is run_counter:
                    estimate_for = _estimate_for(scorer, provider)
                    for sample in measured:
                        estimate_for(sample)
        run_counter.prepare(seen)
    rows = []
    for scorer, used in zip(scorers, counters, strict=True):
        judge = getattr(scorer, "judge", None)  # a scorer bound to its own judge configuration (judges.bound)
        scorer_price = _price_lookup(judge.provider, judge.model) if judge is not None else price
        scorer_estimate = _estimate_for(scorer, judge.provider if judge is not None else provider)
        rule, saving = _cache_saving(judge.provider, judge.model) if judge is not None else (cache, cache_saving)
        usage, cacheable = Usage(), 0
        with counting(used):
            for sample in measured:
                e = scorer_estimate(sample)
                usage = usage + e.usage + Usage(e.usage.calls * used.framing)  # the chat framing of each call
                cacheable += cached_tokens_of(getattr(e, "prompts", ()), rule)
        if scale != 1.0:
            usage = Usage(round(usage.input_tokens * scale), round(usage.output_tokens * scale),
                          calls=round(usage.calls * scale), embedding_calls=round(usage.embedding_calls * scale))
            cacheable = round(cacheable * scale)
        usage = dataclasses.replace(usage, cached_input_tokens=cacheable)
        row_saving = saving(cacheable)
        row_provider = judge.provider if judge is not None else provider
        max_calls = usage.calls * (1 + max(0, reask)) if row_provider != "offline" else usage.calls
        cost = float("nan") if scorer_price is None else scorer_price(usage.input_tokens, usage.output_tokens) * discount
        priced = cost == cost  # NaN → unknown (no price)
        rows.append(EstimateRow(
            scorer.name, scorer.method, tuple(scorer.metrics), dataclasses.replace(usage, cost_usd=cost if priced else 0.0),
            priced=priced, max_llm_calls=max_calls, cache_saving_usd=None if row_saving is None else row_saving * discount,
        ))
    names = tuple(dict.fromkeys(c.describe() for c in counters))
    return Estimate(rows, n, provider, model, from_rows=len(measured) if scale != 1.0 else None, tokens_by=names)


def _counter_of(judge: JudgeConfig | None, provider: str | None, model: str | None, run_counter: TokenCounter) -> TokenCounter:
    """The run's counter for a scorer on the run's provider and model; a judge configuration on another one counts
    with that provider's offline counter (OpenAI's encodings, else approximate)."""
    if judge is None or (judge.provider == provider and (judge.model or model) == model):
        return run_counter
    return counter_for(judge.provider, _model_name(judge.provider, judge.model))


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
    from rageval_core.data.datasets import dataset_hash as _hash

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
    firsts = _one_per_language(samples)  # one pass over the rows for every scorer (it is 100,000 rows long)
    languages = sorted({lang for lang, _ in firsts}) or ["ja", "en"]
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
            for sample_lang, sample in firsts:
                try:
                    rubric = rubric_for(sample)
                    entry = {"rubric_id": rubric.id, "rubric_hash": rubric.content_hash}
                    if callable(template_for):
                        template = template_for(rubric)
                        entry["template_hash"] = template.sha256
                    by_lang[rubric.language] = entry
                except Exception as exc:
                    by_lang[sample_lang] = {"error": str(exc)}
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


def _one_per_language(samples: Sequence[Sample]) -> list[tuple[str, Sample]]:
    """The first row of each language (ja, en) with its language, in the order found; stops once both are."""
    from rageval_core.scoring.metrics.steps import sample_language

    seen: dict[str, Sample] = {}
    for s in samples:
        seen.setdefault(sample_language(s), s)
        if len(seen) == 2:
            break
    return list(seen.items())


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
    from rageval_core.scoring.prompts import resolve_template

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
    from rageval_core.scoring.prompts import PromptTemplate

    def plain(value: Any) -> Any:
        if isinstance(value, PromptTemplate):
            return value.text
        if isinstance(value, Mapping):
            return {str(k): plain(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    out: dict[str, Any] = plain(dict(options))
    return out


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def scorer_chain_length(scorer: Scorer) -> int:
    """Longest dependent call chain of a scorer, from its ``chain_length`` if it declares one."""
    value = getattr(scorer, "chain_length", None)
    if callable(value):
        value = value()
    return int(value) if isinstance(value, int) else 1


def _check_resumable(info: RunInfo, names: Sequence[str], llm: LLM, versions: Mapping[str, Any]) -> None:
    """Refuse to resume a run with other scorers, another provider / model, or edited prompts or rubrics:
    the finished rows would silently mix two configurations in one run."""
    from rageval_core.core.versions import version_changes

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
    from rageval_core.store.runs import _dumps, stored_settings

    stored_form = json.loads(_dumps(stored_settings(versions)))  # as the store keeps it: tuples → lists, no secrets
    changed = version_changes(info.versions or {}, stored_form)
    if changed:
        what = "; ".join(f"{path}: {a} → {b}" for path, a, b in changed[:3])
        raise RunError(
            f"run {info.id} was made with other prompt or rubric versions ({what}); start a new run and compare the two"
        )



def finished_pairs(store: Store, run_id: str, *, retry_errors: bool = True) -> set[tuple[str, str, int]]:
    """(sample_id, scorer, repeat) tasks of a stored run that a resume skips: all but those whose every result
    is a provider failure (redone when ``retry_errors``). Read with one grouped query, not by loading results."""
    from rageval_core.store.run_tallies import kept_tasks

    return {(sid, scorer, rep) for sid, scorer, rep, kept in kept_tasks(store, run_id, RETRYABLE_REASONS)
            if kept or not retry_errors}


def task_order(scorers: Sequence[Scorer]) -> list[int]:
    """Scorer indexes, longest call chain first, so within a row the slowest task starts first."""
    return sorted(range(len(scorers)), key=lambda i: -scorer_chain_length(scorers[i]))


def needs_embeddings(samples: Sequence[Sample], scorers: Sequence[Scorer], max_rows: int = 200) -> bool:
    """Whether any scorer expects an embedding request (from the scorers' own estimates), on up to ``max_rows``
    evenly spaced rows: at 100,000 rows asking every row's estimate delays the first request by seconds. A row
    beyond them that embeds with an embedder that cannot be built fails that step with the reason."""
    step = max(1, len(samples) // max_rows)
    return any(scorer.estimate(sample).usage.embedding_calls > 0 for scorer in scorers for sample in samples[::step])
