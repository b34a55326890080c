"""What every decomposed metric does around its math: render a task's template, call the LLM, parse
and check the JSON, embed, and turn any failure into an unscored result with a reason.

A metric module only says which tasks it sends and how it scores the parsed answers; the common
base class ``DecomposedScorer`` keeps the traces (raw prompts and responses) and the details.
"""

from __future__ import annotations

import functools

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from rageval_core.core.jsonparse import ParseError, parse_json_object
from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.scoring.metrics.base import (
    CallEstimate,
    CallTrace,
    EvalContext,
    summarize_traces,
)
from rageval_core.scoring.prompts import PromptTemplate, TemplateError, load_template, resolve_template
from rageval_core.core.tasks import schema_for
from rageval_core.core.text import detect_language, split_sentences
from rageval_core.core.tokens import TokenCounter, count_tokens, current_counter
from rageval_core.core.types import DECOMPOSED, MetricResult, Sample, Unscored
from rageval_core.core.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np


# Control flow, outside the RagevalError tree on purpose: it never leaves a metric (the metric turns it into an
# unscored result), so no front end may catch it as a user's error. tests/core/test_error_tree.py lists it.
class Unscorable(Exception):
    """Ends a metric's row with an unscored reason; ``raw`` keeps the model text that could not be used."""

    def __init__(self, reason: str, message: str, *, raw: str | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.raw = raw


def sample_language(sample: Sample) -> str:
    """The data's language (ja / en): it picks the templates and the language of generated questions.

    ``metadata["language"]`` when the dataset says so (as the one-call judge reads it); else the language
    the user asks and is answered in (question, answer, ground truth), since Japanese questions over
    English documents are common and must not get English questions back; the contexts only when the
    row has none of those.
    """
    given = str(sample.metadata.get("language") or "").lower()
    if given in ("ja", "en"):
        return given
    spoken = " ".join(t for t in (sample.question, sample.answer, sample.ground_truth) if t and t.strip())
    return detect_language(spoken if spoken else " ".join(sample.contexts[:2]))


def msg(language: str, en: str, ja: str) -> str:
    """A human-readable reason in the data's language."""
    return ja if language == "ja" else en


def require_answer(sample: Sample, language: str) -> None:
    """A blank answer ends the row as ``empty_answer`` (nothing to check, no call sent)."""
    if not (sample.answer or "").strip():
        raise Unscorable(Unscored.EMPTY_ANSWER, msg(language, "the answer is empty", "回答が空です"))


def require_question(sample: Sample, language: str) -> None:
    """A row without a question ends as ``missing_field``."""
    if not (sample.question or "").strip():
        raise Unscorable(Unscored.MISSING_FIELD, msg(language, "the row has no question", "質問がありません"))


def require_contexts(sample: Sample, language: str) -> None:
    """A row without any non-blank context ends as ``missing_field``."""
    if not any(c.strip() for c in sample.contexts):
        raise Unscorable(Unscored.MISSING_FIELD, msg(language, "the row has no contexts", "コンテキストがありません"))


def require_ground_truth(sample: Sample, language: str, metric_name: str) -> None:
    """A metric that compares with the reference ends as ``missing_field`` on a row without one."""
    if not (sample.ground_truth or "").strip():
        raise Unscorable(Unscored.MISSING_FIELD, msg(language, f"{metric_name} needs a ground truth",
                                                     f"{metric_name} には模範解答が必要です"))


def no_answer_claims(language: str) -> Unscorable:
    """The ``no_claims`` failure of a metric whose answer yielded no claims."""
    return Unscorable(
        Unscored.NO_CLAIMS, msg(language, "no claims could be extracted from the answer", "回答から主張を抽出できませんでした")
    )


def quote(text: str, limit: int = 60) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def context_sentences(contexts: Sequence[str], language: str) -> list[str]:
    """All sentences of the contexts with the project's splitter (the denominator of context relevance)."""
    out: list[str] = []
    for context in contexts:
        out.extend(split_sentences(context, language))  # type: ignore[arg-type]
    return out


def get_template(ctx: EvalContext, task: str, language: str) -> PromptTemplate:
    """The task's template: an edited one from ``ctx.options["templates"]`` ("ja/extract_claims" or
    "extract_claims" → PromptTemplate or raw text) when given, else the shipped file."""
    overrides: Mapping[str, Any] = ctx.options.get("templates") or {}
    custom = overrides.get(f"{language}/{task}", overrides.get(task))
    return resolve_template(task, language, custom if isinstance(custom, (PromptTemplate, str)) else None)


def build_request(
    ctx: EvalContext,
    task: str,
    language: str,
    inputs: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    n: int = 1,
    temperature: float = 0.0,
    seed: int | None = None,
) -> LLMRequest:
    """Render the task's template with ``values`` and wrap it with the task's schema and raw inputs."""
    try:
        template = get_template(ctx, task, language)
        messages = template.to_messages(**values)
    except TemplateError as exc:
        raise Unscorable(Unscored.PARSE_ERROR, f"template error: {exc}") from None
    return LLMRequest(
        task=task,
        messages=messages,
        schema=schema_for(task),
        inputs=dict(inputs),
        language=language,
        temperature=temperature,
        n=n,
        seed=seed,
    )


def ask(ctx: EvalContext, trace: list[CallTrace], request: LLMRequest) -> dict[str, Any]:
    """Send one request and return its JSON object; provider and parse failures become ``Unscorable``."""
    try:
        completion = ctx.call(request, trace)
    except ProviderError as exc:
        raise Unscorable(exc.unscored_reason, f"{request.task}: {exc}") from None
    try:
        return parse_json_object(completion.text)
    except ParseError as exc:
        raise Unscorable(Unscored.PARSE_ERROR, f"{request.task}: {exc}", raw=exc.raw) from None


# ------------------------------------------------------------------------------------- re-ask

REASK = "reask"
REASKABLE = frozenset({Unscored.PARSE_ERROR, Unscored.VERDICT_MISMATCH})
DEFAULT_REASK = 1  # a judge's users expect one visible second try; --reask 0 turns it off
_PREVIOUS_LIMIT = 2000  # characters of the unusable answer sent back (a looping small model can write 10k)
T = TypeVar("T")


def reask_limit(ctx: EvalContext) -> int:
    """How many follow-ups a step may send after an unusable answer (``ctx.options["reask"]``)."""
    try:
        return max(0, int(ctx.options.get("reask", DEFAULT_REASK)))
    except (TypeError, ValueError):
        return DEFAULT_REASK


def reask_request(ctx: EvalContext, request: LLMRequest, previous: str | None, problem: str) -> LLMRequest:
    """``request`` continued by the unusable answer and a follow-up that states what was wrong with it."""
    keys = list(dict(request.schema or {}).get("properties") or {})
    expected = msg(request.language, f" (keys: {', '.join(keys)})", f"（キー: {', '.join(keys)}）") if keys else ""
    try:
        follow = get_template(ctx, REASK, request.language).to_messages(problem=problem, expected=expected)
    except TemplateError as exc:
        raise Unscorable(Unscored.PARSE_ERROR, f"{problem} (re-ask template error: {exc})") from None
    answer = (previous or "").strip() or "(empty reply)"
    if len(answer) > _PREVIOUS_LIMIT:
        answer = answer[:_PREVIOUS_LIMIT] + " …"
    return dataclasses.replace(
        request, messages=request.messages + (Message("assistant", answer),) + follow, reask=request.reask + 1
    )


def ask_checked(ctx: EvalContext, trace: list[CallTrace], request: LLMRequest, check: Callable[[dict[str, Any], str | None], T]) -> T:
    """Send ``request`` and read its answer with ``check`` (which raises ``Unscorable``). A ``parse_error``
    or ``verdict_mismatch`` is re-asked up to ``reask_limit`` times with the problem stated; the calls are
    traced and marked (``CallTrace.reask``), the one that recovers flagged. When every try fails, the first
    problem is the result's reason (a re-ask that fails at the provider keeps it and says so)."""
    limit = reask_limit(ctx)
    current = request
    first: Unscorable | None = None
    while True:
        try:
            data = ask(ctx, trace, current)
            value = check(data, trace[-1].response if trace else None)
        except Unscorable as exc:
            if first is not None and exc.reason not in REASKABLE:
                raise Unscorable(first.reason, f"{first.message} (re-ask failed: {exc.message})", raw=first.raw) from None
            if exc.reason not in REASKABLE or current.reask >= limit:
                if first is not None:
                    raise Unscorable(exc.reason, f"{exc.message} (after {current.reask} re-ask(s); first: {first.message})", raw=exc.raw) from None
                raise
            first = first or exc
            previous = exc.raw if exc.raw is not None else (trace[-1].response if trace else None)
            current = reask_request(ctx, current, previous, exc.message)
            continue
        if current.reask > 0 and trace:
            trace[-1].recovered = True
        return value


def ask_items(
    ctx: EvalContext,
    trace: list[CallTrace],
    request: LLMRequest,
    details: dict[str, Any],
    *,
    key: str,
    index_key: str,
    expected: int,
    what: str,
    convert: Callable[[list[Mapping[str, Any]]], Any] | None = None,
) -> Any:
    """Send one request whose answer lists one item per input under ``key``; return the items ordered
    so item i talks about input i (see ``align``; an index note goes to ``details["index_note"]``), or
    ``convert(items)`` when given: a ``convert`` that raises ``Unscorable`` (a verdict that is not 0/1) is
    re-asked like a malformed answer."""

    def read(data: dict[str, Any], raw: str | None) -> Any:
        items, note = align(field_list(data, key, request.task, raw), index_key, expected, request.task, what)
        if note:
            details["index_note"] = note
        return convert(items) if convert is not None else items

    return ask_checked(ctx, trace, request, read)


def embed(ctx: EvalContext, texts: Sequence[str], details: dict[str, Any]) -> np.ndarray:
    """One embedding request for ``texts`` (counted in details); a provider failure ends the row."""
    import numpy as np  # here, not at the top: not before a command's first request (``metrics.scoring``)

    try:
        vectors = np.asarray(ctx.embedder.embed(list(texts)), dtype=np.float64)
    except ProviderError as exc:
        raise Unscorable(exc.unscored_reason, f"embedding: {exc}") from None
    details["embedding_calls"] = details.get("embedding_calls", 0) + 1
    if vectors.shape[0] != len(texts):
        raise Unscorable(Unscored.PROVIDER_ERROR, f"embedder returned {vectors.shape[0]} vectors for {len(texts)} texts")
    return vectors


# ------------------------------------------------------------------------------------- parsing


def field_list(data: Mapping[str, Any], key: str, task: str, raw: str | None = None) -> list[Any]:
    """``data[key]`` as a list, or a parse error naming what was missing."""
    value = data.get(key)
    if not isinstance(value, list):
        raise Unscorable(Unscored.PARSE_ERROR, f"{task}: expected a list under {key!r}", raw=raw)
    return value


def bit(value: Any) -> int | None:
    """0/1 from the forms models use (1, "1", true, "yes"); ``None`` when unusable."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and value in (0, 1):
        return int(value)
    if isinstance(value, str):
        v = value.strip().lower()
        if v in {"1", "yes", "true", "はい"}:
            return 1
        if v in {"0", "no", "false", "いいえ"}:
            return 0
    return None


def as_index(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def align(items: list[Mapping[str, Any]], key: str, expected: int, task: str, what: str) -> tuple[list[Mapping[str, Any]], str | None]:
    """Order judge items by their index field so item i talks about input i.

    The count must equal ``expected`` (else ``verdict_mismatch``: never a silently smaller
    denominator). Indices must be a permutation of 0..n-1; 1..n is accepted as 1-based and noted, and
    items without any index field (small models ignoring the schema) are read in order, noted too.
    Returns the ordered items and a note (or None).
    """
    if len(items) != expected:
        raise Unscorable(
            Unscored.VERDICT_MISMATCH,
            f"{task}: the judge returned {len(items)} verdicts for {expected} {what}",
        )
    indices = [as_index(item.get(key)) if isinstance(item, Mapping) else None for item in items]
    if any(not isinstance(item, Mapping) for item in items):
        raise Unscorable(Unscored.PARSE_ERROR, f"{task}: each verdict must be an object")
    if sorted(i for i in indices if i is not None) == list(range(expected)) and None not in indices:
        ordered = sorted(zip(indices, items, strict=True), key=lambda p: p[0] or 0)  # every index is an int here
        return [item for _, item in ordered], None
    if all(isinstance(item, Mapping) and key not in item for item in items):
        return list(items), f"no {key} given; verdicts read in order"
    if None not in indices and sorted(i or 0 for i in indices) == list(range(1, expected + 1)):
        ordered = sorted(zip(indices, items, strict=True), key=lambda p: p[0] or 0)
        return [item for _, item in ordered], f"{key} values were 1-based; read as 0-based"
    raise Unscorable(
        Unscored.VERDICT_MISMATCH,
        f"{task}: {key} values {indices} do not cover the {expected} {what} exactly once",
    )


def required_bit(item: Mapping[str, Any], key: str, task: str) -> int:
    value = bit(item.get(key))
    if value is None:
        raise Unscorable(Unscored.PARSE_ERROR, f"{task}: {key}={item.get(key)!r} is not 0 or 1")
    return value


def text_field(item: Mapping[str, Any], key: str) -> str | None:
    value = item.get(key)
    if value is None:
        return None
    text = str(value).strip()
    return text or None


# ------------------------------------------------------------------------------------- estimates


def approx_tokens(text: str) -> int:
    """Tokens of ``text`` as estimates count them: by the counter in force (``core.tokens.counting``: the model's
    tokenizer where the estimate has one), else ~4 ASCII chars or ~1 Japanese char per token."""
    return count_tokens(text)


def prompt_tokens(task: str, language: str, *texts: str | None, contexts: Sequence[str] = ()) -> int:
    """A request's input tokens as the estimates guess them: the template's fixed text, the row's texts put
    into it, and its contexts (the one sum every metric's ``estimate`` made by hand)."""
    return (template_tokens(task, language) + sum(approx_tokens(t or "") for t in texts)
            + sum(approx_tokens(c) for c in contexts))


def mode_checker(what: str, modes: tuple[str, ...]) -> Callable[[Any], str]:
    """A check for a metric's ``calls`` option: the value when it is one of ``modes``, else a ValueError
    naming the option (``what``)."""

    def check(value: Any) -> str:
        if value not in modes:
            raise ConfigError(f"{what} must be one of {modes}, got {value!r}")
        return str(value)

    return check


def template_tokens(task: str, language: str) -> int:
    """Tokens of a shipped template's fixed text (its instructions and examples), counted once per process and
    counter: estimates call this for every row and step (issue 14: re-counting it was most of estimate()'s time)."""
    return _template_tokens(task, language, current_counter())


@functools.lru_cache(maxsize=256)
def _template_tokens(task: str, language: str, counter: TokenCounter) -> int:
    try:
        return counter.count(load_template(task, language).text)
    except TemplateError:
        return 0


# ------------------------------------------------------------------------------------- base class


@dataclass
class Outcome:
    """What a metric's ``compute`` returns: the value, a readable summary and the details."""

    value: float
    reason: str
    raw_score: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)


class DecomposedScorer(ABC):
    """Base of the six decomposed metrics: one metric id, method ``decomposed``, one result per row.

    Subclasses implement ``compute(sample, ctx, language, trace, details) -> Outcome`` and
    ``estimate``. Failures raise ``Unscorable``; the base turns them into unscored results that still
    carry the traces and whatever details were gathered (e.g. the claims before a verdict mismatch).
    """

    metric: str = ""
    method: str = DECOMPOSED

    @property
    def name(self) -> str:
        return self.metric

    @property
    def metrics(self) -> tuple[str, ...]:
        return (self.metric,)

    @abstractmethod
    def compute(
        self, sample: Sample, ctx: EvalContext, language: str, trace: list[CallTrace], details: dict[str, Any]
    ) -> Outcome:
        """The metric's value for one row; raise ``Unscorable`` when it cannot be scored."""

    @abstractmethod
    def estimate(self, sample: Sample) -> CallEstimate:
        """The calls and tokens one row will take (before anything is sent)."""

    @property
    def chain_length(self) -> int:
        """Longest chain of dependent LLM calls in one row: the runner starts long chains first."""
        return 1

    def settings(self) -> dict[str, Any]:
        """The scorer's own options (overridable per run through ``ctx.options``)."""
        return {}

    def describe(self) -> dict[str, Any]:
        """What the runner records with a run so results stay comparable (tasks' template hashes are added there)."""
        return {"settings": self.settings()}

    def score(self, sample: Sample, ctx: EvalContext) -> list[MetricResult]:
        language = sample_language(sample)
        trace: list[CallTrace] = []
        details: dict[str, Any] = {"language": language}
        try:
            outcome = self.compute(sample, ctx, language, trace, details)
            details.update(outcome.extra)
            result = MetricResult(
                sample_id=sample.id,
                metric=self.metric,
                method=self.method,
                value=outcome.value,
                reason=outcome.reason,
                raw_score=outcome.raw_score,
                details=details,
            )
        except Unscorable as exc:
            if exc.raw is not None:
                details["raw_response"] = exc.raw
            result = MetricResult(
                sample_id=sample.id,
                metric=self.metric,
                method=self.method,
                value=None,
                unscored_reason=exc.reason,
                reason=exc.message,
                details=details,
            )
        result.provider = getattr(ctx.llm, "provider", None)
        result.model = getattr(ctx.llm, "model", None)
        return [summarize_traces(result, trace)]


def option(ctx: EvalContext, key: str, default: Any, check: Callable[[Any], Any] | None = None) -> Any:
    """A metric setting: ``ctx.options[key]`` when present (a run-wide override), else the scorer's own."""
    value = ctx.options.get(key, default)
    return check(value) if check else value
