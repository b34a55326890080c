"""The Python API a notebook or a script calls (re-exported by ``rageval_core``): ``evaluate``, ``trust``, ``compare``.

Why a module of its own: without it a user had to know ``session.for_run.build_and_run``, ``run.spec.RunSpec``
and ``store.runs.Store`` to score a dataset. Here one call does what ``python -m rageval_core evaluate`` does
(same scorers, runner, cache and call log) and returns plain values: an ``Evaluation`` holding one ``Score`` per
row, metric and method (a value with its reason, or unscored with the reason why) and the run's usage.

No store is needed for a quick call: the run goes to a temporary store that lives as long as the ``Evaluation``
(so ``trust`` and ``compare`` can still read it); a ``store`` given (a ``Store``, or the path of its database)
keeps the run, its response cache and its call log where the workbench and the CLI see them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from rageval_core.core.errors import ConfigError, DataError
from rageval_core.core.method_labels import result_method
from rageval_core.core.types import DECOMPOSED, MetricResult, Sample, Usage, UsageAlias
from rageval_core.data.datasets import Issue, LoadedDataset, load_dataset
from rageval_core.providers.config import SETTING_NAMES, ProviderConfig, check_config
from rageval_core.run.spec import RunSpec
from rageval_core.store.runs import Store

if TYPE_CHECKING:
    import pandas as pd

    from rageval_core.analysis.trust.report import TrustReport
    from rageval_core.run.loop import Progress

__all__ = ["Evaluation", "MethodComparison", "RunComparison", "Score", "compare", "evaluate", "trust"]

Data = LoadedDataset | str | Path | Sequence[Sample | Mapping[str, Any]]


@dataclass(frozen=True)
class Score:
    """One score of one row by one method: ``value`` in [0, 1] with the judge's ``reason``, or ``value`` None
    with ``unscored_reason`` saying why (``no_claims``, ``provider_error``, ...; never a silent 0)."""

    row_id: str
    metric: str
    method: str  # "decomposed" or "judge:<rubric>"
    value: float | None
    reason: str | None = None
    unscored_reason: str | None = None
    provider: str | None = None
    model: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)  # claims, verdicts, prompts

    @property
    def scored(self) -> bool:
        return self.value is not None

    @classmethod
    def of(cls, result: MetricResult) -> Score:
        return cls(result.sample_id, result.metric, result_method(result), result.value, result.reason,
                   result.unscored_reason, result.provider, result.model, result.details)


@dataclass(frozen=True)
class Evaluation:
    """A finished run: its scores (``results``), what its calls used (``usage``: provider calls with their tokens
    and cost, cache hits, errors; ``calls``, ``cached_calls`` and ``cost_usd`` read it), and what was skipped (rows
    that could not be read, each an ``Issue`` naming file, row and field)."""

    run_id: str
    status: str
    provider: str | None
    model: str | None
    results: tuple[Score, ...]
    usage: Usage
    wall_s: float
    skipped: tuple[Issue, ...] = ()
    samples: tuple[Sample, ...] = field(default=(), repr=False, compare=False)
    metric_results: tuple[MetricResult, ...] = field(default=(), repr=False, compare=False)  # the full records
    store: Store | None = field(default=None, repr=False, compare=False)
    _home: Any = field(default=None, repr=False, compare=False)  # the temporary store's folder, removed with this

    calls = UsageAlias("calls")  # provider calls sent (cache hits not counted)
    cached_calls = UsageAlias("cached_calls")
    cost_usd = UsageAlias("cost_usd")

    def __repr__(self) -> str:
        """One line a notebook can show (every score is in ``results``; ``to_frame()`` for a table)."""
        scored = sum(s.scored for s in self.results)
        return (f"Evaluation(run_id={self.run_id!r}, status={self.status!r}, provider={self.provider!r}, "
                f"model={self.model!r}, rows={len(self.samples)}, results={len(self.results)} ({scored} scored), "
                f"calls={self.calls}, cached_calls={self.cached_calls}, usage={self.usage}, cost_usd={self.cost_usd:.4f}"
                + (f", skipped={len(self.skipped)}" if self.skipped else "") + ")")

    def value(self, row_id: str, metric: str, method: str = DECOMPOSED) -> float | None:
        """The value of one row's metric by ``method`` (None when unscored or not computed)."""
        return next((s.value for s in self.results if (s.row_id, s.metric, s.method) == (row_id, metric, method)), None)

    def mean(self, metric: str, method: str = DECOMPOSED) -> float | None:
        """The mean over scored rows (None when no row was scored); unscored rows are counted in ``unscored``."""
        values = [s.value for s in self.results if s.metric == metric and s.method == method and s.value is not None]
        return sum(values) / len(values) if values else None

    def unscored(self, metric: str, method: str = DECOMPOSED) -> dict[str, str]:
        """Row id -> why it was not scored, for one metric and method."""
        return {s.row_id: s.unscored_reason or "" for s in self.results
                if s.metric == metric and s.method == method and s.value is None}

    def to_frame(self) -> pd.DataFrame:
        """One row per score (row_id, category, metric, method, value, reason, unscored_reason, ...) as pandas."""
        from rageval_core.analysis.compare import results_frame

        return results_frame(self.metric_results, _categories(self.samples))


def _open_store(store: Store | str | Path | None) -> tuple[Store, Any]:
    """``(store, temporary folder or None)``: the store given, else a new one in a temporary folder."""
    if isinstance(store, Store):
        return store, None
    if store is not None:
        return Store(store), None
    home = tempfile.TemporaryDirectory(prefix="rageval-")
    return Store(Path(home.name) / "runs.sqlite"), home


def _dataset(data: Data) -> LoadedDataset:
    """``data`` as a loaded dataset (a path is read, rows are validated as a file's would be)."""
    if isinstance(data, LoadedDataset):
        return data
    if isinstance(data, (str, Path)):
        if not Path(data).is_file():
            raise DataError(f"{data}: no such dataset file")
        return load_dataset(data)
    import json

    rows = [s.to_dict() if isinstance(s, Sample) else dict(s) for s in data]
    return load_dataset(json.dumps(rows, ensure_ascii=False, default=str).encode("utf-8"), "rows.json")


def _scorers(metrics: Sequence[str], judges: Sequence[str]) -> list[Any]:
    from rageval_core.scoring.metrics.judge import JudgeScorer
    from rageval_core.scoring.metrics.registry import build_scorers

    if isinstance(metrics, str) or isinstance(judges, str):
        raise ConfigError("metrics and judges are lists of ids, e.g. metrics=['faithfulness'], judges=['rubric5']")
    try:
        scorers: list[Any] = [*build_scorers(list(metrics)), *(JudgeScorer(j) for j in judges)]
    except FileNotFoundError:
        raise ConfigError(f"judges {list(judges)}: no such preset or rubric file (presets: rubric5, binary, "
                          "binary-strict)") from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if not scorers:
        raise ConfigError("nothing to evaluate: give metrics (e.g. ['faithfulness']) and/or judges (e.g. ['rubric5'])")
    return scorers


# How ``check_config`` names each setting here: the ``ProviderConfig`` keyword a caller passes.
_KEYWORDS: dict[str, str | None] = {name: f"ProviderConfig({name}=...)" for name in SETTING_NAMES}
_KEYWORDS["timeout"] = "ProviderConfig(timeout_s=...)"


def _config(provider: ProviderConfig | str | None) -> ProviderConfig:
    """The configuration to run with, checked before anything is built (a missing key named as a caller sets it)."""
    from rageval_core.core.key_env import KEY_ENV_VARS
    from rageval_core.llm.keys import resolve_api_key

    config = ProviderConfig(provider) if isinstance(provider, str) else provider or ProviderConfig()
    info = config.info
    if info is not None and info.needs_key and not resolve_api_key(config.provider, config.api_key):
        env = " or ".join(KEY_ENV_VARS.get(config.provider, ())) or "the provider's key variable"
        env_ja = " または ".join(KEY_ENV_VARS.get(config.provider, ())) or "プロバイダのキーの環境変数"
        raise ConfigError(f"{info.label} needs an API key: set the environment variable {env}, or pass "
                          f"ProviderConfig({config.provider!r}, api_key=...). / {info.label} には API キーが必要です: "
                          f"環境変数 {env_ja} を設定するか、ProviderConfig({config.provider!r}, api_key=...) を渡してください。")
    problems = check_config(config, names=_KEYWORDS)
    if problems:
        raise ConfigError(" ".join(problems))
    return config


def _spec(data: Data | RunSpec, metrics: Sequence[str], judges: Sequence[str], provider: ProviderConfig | str | None,
          concurrency: int | None) -> tuple[RunSpec, LoadedDataset | None]:
    if isinstance(data, RunSpec):
        if metrics or judges or provider is not None:
            raise ConfigError("a RunSpec carries its scorers and provider: pass metrics, judges and provider in it")
        return data, None
    dataset = _dataset(data)
    if not dataset.samples:
        raise DataError("nothing to evaluate: " + "; ".join(str(i) for i in dataset.errors[:5]) if dataset.errors
                        else f"{dataset.name}: the dataset has no rows")
    config = _config(provider)
    scorers = _scorers(metrics, judges)
    settings = {"metrics": [s.name for s in scorers if s.method == DECOMPOSED], "judges": list(judges),
                "dataset_issues": [i.to_dict() for i in dataset.issues], "source": "python"}
    if isinstance(data, (str, Path)):
        settings["data"] = str(data)
    spec = RunSpec(dataset.samples, scorers, provider=config, concurrency=concurrency or config.concurrency,
                   dataset_name=dataset.name, dataset_digest=dataset.content_hash, settings=settings)
    return spec, dataset


def evaluate(
    data: Data | RunSpec,
    metrics: Sequence[str] = (),
    *,
    judges: Sequence[str] = (),
    provider: ProviderConfig | str | None = None,
    store: Store | str | Path | None = None,
    concurrency: int | None = None,
    progress: Callable[[Progress], None] | None = None,
) -> Evaluation:
    """Score ``data`` (a dataset from ``load_dataset``, a file path, a list of row dicts or ``Sample`` objects, or
    a ready ``RunSpec``) on the decomposed ``metrics`` and the one-call ``judges`` (rubric ids such as
    ``rubric5``, ``binary``), with ``provider`` (a ``ProviderConfig`` or a provider id; offline when None: no key).

    Rows that cannot be read are skipped and listed in ``skipped``; a configuration that cannot work (a missing
    key, an unknown metric) raises ``ConfigError`` before any call, a dataset with no good row ``DataError``.
    """
    from rageval_core.session.for_run import build_and_run

    spec, dataset = _spec(data, metrics, judges, provider, concurrency)
    opened, home = _open_store(store)
    done = build_and_run(spec, opened, progress=progress)
    results = tuple(done.results)
    samples = tuple(dataset.samples) if dataset is not None else tuple(spec.plan_rows())
    return Evaluation(
        run_id=done.run_id, status=done.status, provider=done.provider, model=done.model,
        results=tuple(Score.of(r) for r in results),
        usage=done.usage, wall_s=done.wall_s,
        skipped=tuple(dataset.errors) if dataset is not None else (), samples=samples, metric_results=results,
        store=opened, _home=home,
    )


def trust(
    run: Evaluation | str,
    *,
    labels: str | Path | None = None,
    store: Store | str | Path | None = None,
    threshold: float | None = None,
    iterations: int | None = None,
    seed: int = 0,
) -> TrustReport:
    """Can these scores be trusted? Agreement of each metric × method with human labels (AUROC, balanced accuracy,
    kappa, with bootstrap intervals), the corrected share of passing rows and which rows to label next.

    ``run`` is an ``Evaluation`` or a stored run's id (in ``store``, default the workbench's). Labels come from
    the dataset's ``label_*`` columns, a ``labels`` file (JSONL / CSV: id plus label columns) and the 👍 / 👎
    given in the workbench. The report is the one ``python -m rageval_core trust`` prints (``to_dict`` for JSON).
    """
    from rageval_core.analysis.trust.report import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD
    from rageval_core.analysis.trust.run_report import run_report

    if isinstance(run, Evaluation):
        opened, run_id, samples = run.store or _open_store(store)[0], run.run_id, list(run.samples) or None
    else:
        opened, run_id, samples = (_open_store(store)[0] if store is not None else Store()), run, None
    if labels is not None and not Path(labels).is_file():
        raise DataError(f"{labels}: no such labels file")
    try:
        return run_report(opened, run_id, samples=samples, labels_file=labels, save=True, seed=seed,
                          threshold=DEFAULT_THRESHOLD if threshold is None else threshold,
                          iterations=DEFAULT_ITERATIONS if iterations is None else iterations)
    except KeyError:
        raise ConfigError(f"no run {run_id!r} in {opened.path}") from None


@dataclass(frozen=True)
class MethodComparison:
    """Two methods on the same rows of one run (the decomposed metric against a one-call judge): agreement per
    shared criterion (n, pearson, spearman, mad, kappa at the threshold) and the rows where they differ most."""

    method_a: str
    method_b: str | None
    agreement: pd.DataFrame
    disagreements: pd.DataFrame


@dataclass(frozen=True)
class RunComparison:
    """Run A against run B (two prompt, rubric or model versions on the same rows): the mean per metric and method
    in each with the difference (``summary``), the per-row values and deltas B − A (``rows``), what only one run
    computed, and what differs in their configuration (``changes``: path, A's value, B's value)."""

    run_a: str
    run_b: str
    summary: pd.DataFrame
    rows: pd.DataFrame
    only_in_a: tuple[str, ...]
    only_in_b: tuple[str, ...]
    changes: tuple[tuple[str, Any, Any], ...]


@overload
def compare(a: Evaluation, b: None = None, *, method_a: str = ..., method_b: str | None = ...,
            threshold: float = ...) -> MethodComparison: ...
@overload
def compare(a: Evaluation, b: Evaluation, *, method_a: str = ..., method_b: str | None = ...,
            threshold: float = ...) -> RunComparison: ...


def compare(a: Evaluation, b: Evaluation | None = None, *, method_a: str = DECOMPOSED, method_b: str | None = None,
            threshold: float = 0.5) -> MethodComparison | RunComparison:
    """One run: ``method_a`` (decomposed) against ``method_b`` (default: the run's first judge), as the Compare
    page's agreement table. Two runs: B against A, with different judges paired when each run has one."""
    from rageval_core.analysis import compare as cmp

    frame_a = a.to_frame()
    if b is None:
        return MethodComparison(method_a, method_b or next((m for m in cmp.judge_methods(frame_a) if m != method_a), None),
                                cmp.agreement(frame_a, method_a, method_b, threshold=threshold),
                                cmp.disagreements(frame_a, method_a, method_b))
    frame_b = b.to_frame()
    pairs = cmp.pair_methods(frame_a, frame_b)
    only_a, only_b = cmp.one_sided(frame_a, frame_b, pairs)
    changes = cmp.version_changes(_run_config(a), _run_config(b))
    return RunComparison(a.run_id, b.run_id, cmp.summary_delta(frame_a, frame_b, methods=pairs),
                         cmp.run_delta(frame_a, frame_b, methods=pairs), tuple(only_a), tuple(only_b),
                         tuple(tuple(c) for c in changes))


def _categories(samples: Sequence[Sample]) -> dict[str, str | None]:
    return {s.id: s.category for s in samples}


def _run_config(run: Evaluation) -> dict[str, Any]:
    """What the run was configured with, as the CLI's ``compare`` reads it from the store."""
    info = run.store.find_run(run.run_id) if run.store is not None else None
    if info is None:
        return {"provider": run.provider, "model": run.model}
    return {"provider": info.provider, "model": info.model, "versions": info.versions, "settings": info.settings}
