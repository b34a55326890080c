"""The judge a test suite scores with: chosen once (``--rageval-provider``, else ``RAGEVAL_PROVIDER``, else the
provider whose key is in the environment), never silently: with nothing chosen the tests that need a judge
are skipped with the reason (failed when the session requires a judge); a provider name that does not exist, or a
named provider that cannot run, fails them with the message. Scoring goes through the runner (cache, retries, call log) like the CLI's
``evaluate``; rows are dicts, ``Sample`` objects or a dataset file, validated the same way."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rageval_core.core.method_labels import result_method
from rageval_core.core.types import DECOMPOSED, MetricResult, Sample
from rageval_core.testing.assertions import as_thresholds, assert_thresholds, check
from rageval_core.core.errors import DataError

# What a test scores: a dataset file, or rows as dicts (the dataset's field names) or ``Sample`` objects.
Rows = str | Path | Iterable[Sample | Mapping[str, Any]]

KEY_ORDER = ("gemini", "openai")  # with no provider named, the first whose key is set


@dataclass(frozen=True)
class JudgeChoice:
    """The provider chosen (``None``: none) and how (``--rageval-provider``, ``RAGEVAL_PROVIDER``, a key)."""

    provider: str | None
    model: str | None = None
    base_url: str | None = None
    how: str = ""

    def label(self) -> str:
        return "no judge chosen" if self.provider is None else f"{self.provider}/{self.model or 'default model'} ({self.how})"


def choose(provider: str | None = None, model: str | None = None, base_url: str | None = None,
           environ: Mapping[str, str] | None = None) -> JudgeChoice:
    """The judge of a test session (see the module docstring). The offline judge is used only when named."""
    from rageval_core.llm.keys import key_from_env

    env = os.environ if environ is None else environ
    if provider:
        return JudgeChoice(provider, model, base_url, "--rageval-provider")
    if env.get("RAGEVAL_PROVIDER"):
        return JudgeChoice(env["RAGEVAL_PROVIDER"], model or env.get("RAGEVAL_MODEL") or None, base_url, "RAGEVAL_PROVIDER")
    for name in KEY_ORDER:
        if key_from_env(name, env):
            return JudgeChoice(name, model, base_url, f"{name} key in the environment")
    return JudgeChoice(None)


NO_JUDGE = "no judge chosen"  # the one problem that is a skip (unless the session requires a judge)
UNKNOWN = "unknown provider"
CANNOT_RUN = "cannot run"


@dataclass(frozen=True)
class JudgeProblem:
    """Why tests needing a judge cannot run: ``kind`` NO_JUDGE (nothing chosen: a skip on a laptop, a failure
    when the session requires a judge), UNKNOWN (a name no provider has: a usage error, never a skip, or a typo
    turns a CI gate green) or CANNOT_RUN (a named provider missing its key or settings: a failure)."""

    kind: str
    message: str

    def is_skip(self, required: bool) -> bool:
        return self.kind == NO_JUDGE and not required


def problem(choice: JudgeChoice, environ: Mapping[str, str] | None = None) -> JudgeProblem | None:
    """What keeps ``choice`` from judging, or ``None`` when it can."""
    from rageval_core.providers.config import ProviderConfig, check_config
    from rageval_core.providers.registry import PROVIDERS

    if choice.provider is None:
        return JudgeProblem(NO_JUDGE, f"{NO_JUDGE}: pass --rageval-provider offline (the heuristic judge, no key), "
                                      "or set GEMINI_API_KEY / OPENAI_API_KEY, or RAGEVAL_PROVIDER")
    if choice.provider not in PROVIDERS:
        return JudgeProblem(UNKNOWN, f"usage error: {choice.how} names provider {choice.provider!r}, which does not "
                                     f"exist (known: {', '.join(PROVIDERS)})")
    problems = check_config(ProviderConfig(choice.provider, choice.model, choice.base_url), None if environ is None else dict(environ))
    return JudgeProblem(CANNOT_RUN, f"judge {choice.label()} {CANNOT_RUN}: " + " ".join(problems)) if problems else None


def unavailable(choice: JudgeChoice, environ: Mapping[str, str] | None = None) -> str | None:
    """Why tests needing a judge cannot run, or ``None`` when they can (``problem``'s message)."""
    found = problem(choice, environ)
    return None if found is None else found.message


def samples_of(rows: Rows, name: str = "rows") -> tuple[list[Sample], str, str]:
    """``(samples, dataset name, content hash)`` of a dataset file, a list of row dicts or of ``Sample`` objects;
    ``ValueError`` listing every bad row (file, row, field) so a typo in a fixture is not scored as 0."""
    from rageval_core.data.datasets import load_dataset

    if isinstance(rows, (str, Path)):
        loaded = load_dataset(rows)
    else:
        items = list(rows)
        data = [s.to_dict() if isinstance(s, Sample) else dict(s) for s in items]
        loaded = load_dataset(json.dumps(data, ensure_ascii=False).encode("utf-8"), f"{name}.json")
    if loaded.errors:
        raise DataError("rows that cannot be scored:\n" + "\n".join(f"  {issue}" for issue in loaded.errors))
    return list(loaded.samples), loaded.name, loaded.content_hash


@dataclass
class Scored:
    """The results of scoring some rows: look one up, or assert thresholds on them."""

    run_id: str
    results: list[MetricResult]
    record: Any = None  # the session's ``summary.SessionRecord`` (the plugin's end-of-session table), if any

    def value(self, row_id: str, metric: str, method: str = DECOMPOSED) -> float | None:
        return next((r.value for r in self.results if r.sample_id == row_id and r.metric == metric and result_method(r) == method), None)

    def failures(self, thresholds: Mapping[str, float] | Iterable[str], mode: str = "mean") -> list[Any]:
        return check(self.results, thresholds, mode)

    def assert_thresholds(self, thresholds: Mapping[str, float] | Iterable[str], mode: str = "mean") -> "Scored":
        __tracebackhide__ = True
        if self.record is not None:
            self.record.asserted(self.run_id, self.results, thresholds, mode)
        assert_thresholds(self.results, thresholds, mode)
        return self


class Judge:
    """Scores rows with the chosen provider; ``score`` then ``assert_thresholds``, or ``assert_scores`` in one go."""

    def __init__(self, choice: JudgeChoice, store_path: str | Path | None = None, concurrency: int = 4,
                 record: Any = None) -> None:
        self.choice = choice
        self.store_path = store_path
        self.concurrency = concurrency
        self.record = record  # ``summary.SessionRecord``: every score and threshold, for the session's summary

    def score(self, rows: Rows, metrics: Sequence[str] = ("faithfulness",), judges: Sequence[str] = (),
              name: str = "rows") -> Scored:
        """Score ``rows`` on decomposed ``metrics`` and one-call ``judges`` (rubric ids: ``rubric5``, ``binary``)."""
        from rageval_core.providers.config import ProviderConfig
        from rageval_core.session.for_run import build_and_run
        from rageval_core.run import RunSpec
        from rageval_core.scoring.metrics.judge import JudgeScorer
        from rageval_core.scoring.metrics.registry import build_scorers
        from rageval_core.store.runs import Store

        samples, dataset_name, digest = samples_of(rows, name)
        scorers = [*build_scorers(list(metrics)), *(JudgeScorer(j) for j in judges)]
        c = self.choice
        config = ProviderConfig(c.provider or "offline", c.model, c.base_url, concurrency=self.concurrency)
        store = Store(self.store_path) if self.store_path else Store()
        spec = RunSpec(samples, scorers, provider=config, concurrency=self.concurrency, dataset_name=dataset_name,
                       dataset_digest=digest)
        done = build_and_run(spec, store)
        if self.record is not None:
            self.record.scored(done.run_id, list(done.results))
        return Scored(done.run_id, list(done.results), self.record)

    def assert_scores(self, rows: Rows, thresholds: Mapping[str, float] | Iterable[str], mode: str = "mean") -> Scored:
        """Score exactly what the thresholds name, then assert them (``mode``: ``mean`` or ``each`` row)."""
        __tracebackhide__ = True
        parsed = as_thresholds(thresholds)
        metrics = list(dict.fromkeys(t.metric for t in parsed if t.method == DECOMPOSED))
        judges = list(dict.fromkeys(t.method.removeprefix("judge:") for t in parsed if t.method.startswith("judge:")))
        return self.score(rows, metrics, judges).assert_thresholds(thresholds, mode)
