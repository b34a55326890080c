"""Plain data types shared by every part of the core.

Everything here is a dataclass that round-trips through JSON (``to_dict`` / ``from_dict``) so that
results can be stored in SQLite, exported and shown in the UI without magic result objects.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Literal, Mapping

Language = Literal["ja", "en"]

# Metric and criterion ids (DESIGN.md "Contracts").
FAITHFULNESS = "faithfulness"
ANSWER_RELEVANCY = "answer_relevancy"
CONTEXT_PRECISION = "context_precision"
CONTEXT_RECALL = "context_recall"
CONTEXT_RELEVANCE = "context_relevance"
ANSWER_CORRECTNESS = "answer_correctness"
METRIC_IDS: tuple[str, ...] = (
    FAITHFULNESS,
    ANSWER_RELEVANCY,
    CONTEXT_PRECISION,
    CONTEXT_RECALL,
    CONTEXT_RELEVANCE,
    ANSWER_CORRECTNESS,
)
# The four metrics the RAGAS-vs-judge article compares.
SEED_METRICS: tuple[str, ...] = (FAITHFULNESS, ANSWER_RELEVANCY, CONTEXT_PRECISION, ANSWER_CORRECTNESS)

DECOMPOSED = "decomposed"


def judge_method(rubric_id: str) -> str:
    """Method string of a one-call judge, e.g. ``judge:rubric5``."""
    return f"judge:{rubric_id}"


class Unscored:
    """Reasons a result carries instead of a value. Plain strings so they serialise as themselves."""

    NO_CLAIMS = "no_claims"
    EMPTY_ANSWER = "empty_answer"
    MISSING_FIELD = "missing_field"
    PARSE_ERROR = "parse_error"
    VERDICT_MISMATCH = "verdict_mismatch"
    PROVIDER_ERROR = "provider_error"
    PROVIDER_UNREACHABLE = "provider_unreachable"  # fail fast: the host breaker stopped sending
    TIMEOUT = "timeout"
    REPLAY_MISS = "replay_miss"
    UNCHECKABLE = "uncheckable"
    OFFLINE_UNSUPPORTED = "offline_unsupported"
    CANCELLED = "cancelled"
    NO_MAJORITY = "no_majority"  # repeats aggregated by majority and no score held more than half of them


@dataclass(frozen=True)
class Sample:
    """One RAG output to evaluate. ``metadata`` keeps everything else (category, human labels, ...).

    ``external_scores`` are scores another tool gave this row before it came here, keyed ``<source>:<metric>``
    (``{"ragas:faithfulness": 0.8}``; None where that tool left the row unscored): the user's earlier results, shown
    beside ours, never one of our methods and not part of the dataset's content hash."""

    id: str
    question: str
    contexts: tuple[str, ...]
    answer: str
    ground_truth: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    external_scores: Mapping[str, float | None] = field(default_factory=dict)

    @property
    def category(self) -> str | None:
        value = self.metadata.get("category")
        return None if value is None else str(value)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "contexts": list(self.contexts),
            "answer": self.answer,
            "ground_truth": self.ground_truth,
            **dict(self.metadata),
            **dict(self.external_scores),  # "ragas:faithfulness" keys: the loader reads them back as external scores
        }


@dataclass(frozen=True, slots=True)
class Usage:
    """What calls used: the one tally of tokens, calls and cost, whatever counts them.

    One completion's usage holds its tokens (a provider reports those; the call itself is counted where it is
    tallied). A tally adds them up with ``+`` (``sum(usages)`` and ``Usage.total(usages)`` work too): a run's live
    counters and its progress snapshots, a run's totals and its cost per method or scorer (``dict[str, Usage]``:
    the export's ``cost`` and the report's cost table), and the estimate before a run (``calls`` there are expected
    calls; ``cached_input_tokens`` what a provider's prompt cache could serve).

    - ``input_tokens`` / ``output_tokens``: billed tokens of the calls the provider answered;
    - ``cached_input_tokens``: of ``input_tokens``, read from the provider's prompt-prefix cache;
    - ``cache_write_tokens``: of ``input_tokens``, written into that cache where a provider bills the write;
    - ``calls``: LLM calls the provider answered; ``cached_calls``: answered by the local response cache (free, no
      tokens); ``errors``: calls that failed; ``embedding_calls``: embedding requests. Cache hits and errors are
      counted here, not beside it, because they are outcomes of calls and every tally of calls reports them;
    - ``cost_usd``: what the calls cost; ``latency_s``: their summed call time (not the run's wall time).

    Frozen: a tally is a value; ``+`` gives a new one.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    errors: int = 0
    embedding_calls: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def __add__(self, other: "Usage") -> "Usage":
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cached_input_tokens + other.cached_input_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.calls + other.calls,
            self.cached_calls + other.cached_calls,
            self.errors + other.errors,
            self.embedding_calls + other.embedding_calls,
            self.cost_usd + other.cost_usd,
            self.latency_s + other.latency_s,
        )

    def __radd__(self, other: object) -> "Usage":
        if other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    @classmethod
    def total(cls, usages: Iterable["Usage"]) -> "Usage":
        """The sum of ``usages`` (an empty tally for none)."""
        out = cls()
        for u in usages:
            out = out + u
        return out

    @property
    def tokens(self) -> int:
        """Input and output tokens together."""
        return self.input_tokens + self.output_tokens

    @property
    def cached_share(self) -> float | None:
        """Share of the input tokens the provider served from its prompt cache (None: no input tokens)."""
        return self.cached_input_tokens / self.input_tokens if self.input_tokens else None

    def to_dict(self) -> dict[str, int | float]:
        """The three token counts always, every other field only when it is not zero: one completion's usage
        serialises as it always has (call log, replay log, response cache, exported results)."""
        # by hand: dataclasses.asdict deep-copies recursively and was 7 % of a large export
        out: dict[str, int | float] = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                                       "cached_input_tokens": self.cached_input_tokens}
        for name in _USAGE_EXTRA:
            value = getattr(self, name)
            if value:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Usage":
        """A usage from ``to_dict``'s keys (others ignored: a record written by a newer version still reads)."""
        return cls(**{k: data[k] for k in _USAGE_FIELDS if data.get(k) is not None})


_USAGE_FIELDS = tuple(f for f in Usage.__dataclass_fields__)
_USAGE_EXTRA = _USAGE_FIELDS[3:]


class UsageAlias:
    """``obj.<name>`` reads ``obj.usage.<field>``: the names a run's, a progress snapshot's and an estimate's
    figures had before each held one ``Usage``, kept (read-only) for callers of the Python API."""

    __slots__ = ("field",)

    def __init__(self, field: str) -> None:
        self.field = field

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        return self if obj is None else getattr(obj.usage, self.field)


@dataclass
class ClaimVerdict:
    """One claim of an answer and what the judge said about it."""

    claim: str
    verdict: int | None  # 1 supported, 0 not supported, None when the judge gave nothing usable
    reason: str | None = None
    context_index: int | None = None  # 0-based index into Sample.contexts
    supporting_sentence: str | None = None
    # Graded support in [0, 1] when the judge gives one (the offline heuristic does; >= 0.5 exactly when
    # verdict is 1). Faithfulness then uses it instead of the 0/1 verdict (``scoring.graded_faithfulness``).
    support: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class MetricResult:
    """One score of one sample by one method.

    ``value`` is in [0, 1] or ``None``; when ``None``, ``unscored_reason`` says why. ``details`` holds
    everything the sample inspector shows (claims, verdicts, generated questions, raw prompts and
    responses) and must stay JSON-serialisable.
    """

    sample_id: str
    metric: str
    method: str
    value: float | None
    unscored_reason: str | None = None
    reason: str | None = None
    raw_score: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    provider: str | None = None
    model: str | None = None
    calls: int = 0
    cached_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float = 0.0
    latency_s: float = 0.0

    def __post_init__(self) -> None:
        if self.value is None and not self.unscored_reason:
            raise ValueError(f"{self.metric}/{self.method}: a result without a value needs an unscored_reason")
        if self.value is not None and not (0.0 <= self.value <= 1.0):
            raise ValueError(f"{self.metric}/{self.method}: value {self.value} is outside [0, 1]")

    @property
    def scored(self) -> bool:
        return self.value is not None

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["usage"] = self.usage.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "MetricResult":
        data = dict(data)
        data["usage"] = Usage.from_dict(data.get("usage") or {})
        return cls(**data)
