"""What one run is asked to do, as one typed, frozen value: ``RunSpec``; and what it is given: ``RunProviders``.

A front end builds the spec once (the CLI from its flags in ``cli/``, the workbench from its state in ``rageval_ui/``)
and it is checked where it is built (``__post_init__``), so a bad request fails before any provider is built or
any row is read; the runner (``run.loop.run``) then only executes it. Providers are not part of the spec: the
front end builds them (``session.for_run.build_for_run``) and passes them in beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_core.core.types import Sample
from rageval_core.llm.base import LLM, Embedder
from rageval_core.providers.config import ProviderConfig
from rageval_core.run import feed as feeds
from rageval_core.run.plan import RunError
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.store.runs import RowInfo

if TYPE_CHECKING:
    from rageval_core.data.datasets.live import LiveDataset
    from rageval_core.run.spill import Reserve

__all__ = ["RunProviders", "RunSpec", "SpecError"]

class SpecError(RunError):
    """A run that cannot be asked for as given (the message names the setting); a ``RunError``, so whoever
    reports a run that cannot start reports this too."""


@dataclass(frozen=True)
class RunSpec:
    """One run: the rows, the scorers and the settings it records.

    ``samples`` is a sequence of rows, or a dataset read while the run goes (``datasets.live.LiveDataset``,
    ``streamed`` true): the run then starts on its first rows. ``provider`` is the configuration the run's
    providers were built from (recorded with the run: base URL, embeddings); None for a ready LLM.
    ``run_id`` with ``resume`` continues that run (its repeats and temperature are the stored ones).
    ``invalid_rows`` may be a callable for a streamed file (answered once the reader is at the end), and
    ``late_settings()`` is merged into the settings then. ``spill`` is the room set aside for results a full store
    cannot keep (``run.spill.reserve``; the runner sets it aside itself, trying ``spill_beside`` first, without one)."""

    samples: Sequence[Sample] | LiveDataset
    scorers: Sequence[Scorer]
    provider: ProviderConfig | None = None
    concurrency: int = 8
    workers: int | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    run_id: str | None = None
    resume: bool = False
    retry_errors: bool = True
    dataset_name: str | None = None
    dataset_digest: str | None = None
    invalid_rows: Sequence[RowInfo] | Callable[[], Sequence[RowInfo]] = ()
    settings: Mapping[str, Any] = field(default_factory=dict)
    late_settings: Callable[[], Mapping[str, Any]] | None = None
    repeats: int | None = None
    repeat_temperature: float | None = None
    gate_embeddings: bool | None = None
    store_patience_s: float = 600.0
    spill_beside: tuple[str, ...] = ()  # folders tried first for the room of results a full store cannot keep
    spill: Reserve | None = None  # that room, when the caller set it aside (and said what it could not)

    def __post_init__(self) -> None:
        if not self.streamed:
            object.__setattr__(self, "samples", list(self.samples))
        object.__setattr__(self, "scorers", list(self.scorers))
        object.__setattr__(self, "options", dict(self.options or {}))
        object.__setattr__(self, "settings", dict(self.settings or {}))
        problem = self._problem()
        if problem:
            raise SpecError(problem)

    def _problem(self) -> str | None:
        names = [s.name for s in self.scorers]
        if len(set(names)) != len(names):
            return f"scorer names must be unique: {names}"
        if not self.streamed and len({s.id for s in self.plan_rows()}) != len(self.plan_rows()):
            return "sample ids must be unique within a run"
        if self.repeats is not None and self.repeats < 1:
            return "repeats must be at least 1"
        if self.concurrency < 1:
            return "concurrency must be at least 1"
        if self.workers is not None and self.workers < 1:
            return "workers must be at least 1"
        if self.resume and not self.run_id:
            return "resume needs a run id"
        return None

    @property
    def streamed(self) -> bool:
        """Whether the rows are a file read while the run goes."""
        return bool(getattr(self.samples, "streamed", False))

    @property
    def planned_tasks(self) -> int:
        """How many (row, scorer, repeat) tasks this asks for (a file read as the run goes: its expected rows)."""
        rows = int(getattr(self.samples, "expected_rows", 0) or 0) if self.streamed else len(self.plan_rows())
        return rows * len(self.scorers) * (self.repeats or 1)

    @property
    def scorer_names(self) -> list[str]:
        return [s.name for s in self.scorers]

    def plan_rows(self) -> Sequence[Sample]:
        """The rows the plan is made on: all of them, or a streamed file's first ``feed.HEAD_ROWS``."""
        if self.streamed:
            return self.samples.head(feeds.HEAD_ROWS)  # type: ignore[union-attr]
        return self.samples  # type: ignore[return-value]


@dataclass(frozen=True)
class RunProviders:
    """What a run is given, built: the run's LLM and embedder, each judge configuration's LLM by judge id, and
    whether these stacks write the store's call log themselves (built with ``make_call_hook``) or the runner
    must. ``embedding`` is the embedding choice the run records (``providers.config.EmbeddingChoice.to_dict``);
    None records what the embedder says it is."""

    llm: LLM
    embedder: Embedder | None = None
    judges: Mapping[str, LLM] = field(default_factory=dict)
    logs_calls: bool = False
    embedding: Mapping[str, Any] | None = None
