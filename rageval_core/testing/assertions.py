"""Thresholds over scored rows, as a test asserts them: the mean of a metric × method (``mean``, the CLI's
``--fail-under`` rule) or every row (``each``). A failure names the rows under the bar with their score and
the judge's reason; a threshold with no scored row fails (never passes for lack of evidence). Pure: results
in, failures out."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rageval_core.analysis.thresholds import Threshold, parse_threshold
from rageval_core.core.errors import ConfigError, RagevalError
from rageval_core.core.method_labels import result_method
from rageval_core.core.types import MetricResult

MODES = ("mean", "each")
SHOWN = 10  # failing rows listed per threshold


@dataclass(frozen=True)
class RowScore:
    row_id: str
    value: float | None
    reason: str | None
    unscored_reason: str | None = None


@dataclass
class ThresholdFailure:
    threshold: Threshold
    mode: str
    mean: float | None
    scored: int
    rows: list[RowScore] = field(default_factory=list)  # the rows under the bar (each) or the lowest ones (mean)
    unscored: list[RowScore] = field(default_factory=list)

    def message(self) -> str:
        t = self.threshold
        head = f"{t.label} >= {t.minimum:g} ({self.mode}): "
        head += "no scored row" if self.mean is None else f"mean {self.mean:.3f} over {self.scored} scored row(s)"
        lines = [head]
        for r in self.rows[:SHOWN]:
            lines.append(f"  row {r.row_id}: {t.label} {r.value:.3f}" + (f" — {r.reason}" if r.reason else ""))
        if len(self.rows) > SHOWN:
            lines.append(f"  … and {len(self.rows) - SHOWN} more row(s) under {t.minimum:g}")
        for r in self.unscored[:SHOWN]:
            lines.append(f"  row {r.row_id}: unscored ({r.unscored_reason})" + (f" — {r.reason}" if r.reason else ""))
        return "\n".join(lines)


class ScoreThresholdError(RagevalError, AssertionError):
    """Raised by ``assert_thresholds``: the message lists every missed threshold with its rows.

    On the root itself, in no branch: a missed threshold is a verdict on the scores, not bad data, configuration,
    provider or store; an ``AssertionError`` so pytest reports it as a failed test, not an error.
    """

    def __init__(self, failures: Sequence[ThresholdFailure]) -> None:
        self.failures = list(failures)
        super().__init__("score thresholds missed:\n" + "\n".join(f.message() for f in self.failures))


def as_thresholds(thresholds: Mapping[str, float] | Iterable[str]) -> list[Threshold]:
    """``{"faithfulness": 0.8, "judge:rubric5:faithfulness": 0.6}`` or ``["faithfulness=0.8"]`` as thresholds."""
    items = [f"{k}={v}" for k, v in thresholds.items()] if isinstance(thresholds, Mapping) else list(thresholds)
    return [parse_threshold(text) for text in items]


def row_scores(results: Iterable[MetricResult], threshold: Threshold) -> list[RowScore]:
    """The rows' scores on one threshold's metric × method (decomposed, ``judge:<id>``), in result order."""
    return [RowScore(r.sample_id, r.value, r.reason, r.unscored_reason) for r in results
            if r.metric == threshold.metric and result_method(r) == threshold.method]


@dataclass(frozen=True)
class Outcome:
    """One threshold checked: the mean over scored rows, how many, and whether it passed (the session summary)."""

    threshold: Threshold
    mode: str
    mean: float | None
    scored: int
    passed: bool


def _check_one(results: Sequence[MetricResult], t: Threshold, mode: str) -> tuple[Outcome, ThresholdFailure | None]:
    rows = row_scores(results, t)
    scored = [r for r in rows if r.value is not None]
    unscored = [r for r in rows if r.value is None]
    mean = sum(r.value for r in scored) / len(scored) if scored else None  # type: ignore[misc]
    below = sorted((r for r in scored if r.value < t.minimum - 1e-12), key=lambda r: (r.value, r.row_id))  # type: ignore[operator]
    missed = mean is None or (mean < t.minimum - 1e-12 if mode == "mean" else bool(below or unscored))
    failure = ThresholdFailure(t, mode, mean, len(scored), below, unscored if mode == "each" or not scored else []) \
        if missed else None
    return Outcome(t, mode, mean, len(scored), not missed), failure


def outcomes(results: Sequence[MetricResult], thresholds: Mapping[str, float] | Iterable[str], mode: str = "mean") -> list[Outcome]:
    """Every threshold checked, passed or not (``check`` returns only the misses)."""
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
    return [_check_one(results, t, mode)[0] for t in as_thresholds(thresholds)]


def check(results: Sequence[MetricResult], thresholds: Mapping[str, float] | Iterable[str], mode: str = "mean") -> list[ThresholdFailure]:
    """The thresholds missed (empty when all pass). ``mean``: the mean over scored rows must reach the bar;
    ``each``: every row must (an unscored row fails it)."""
    if mode not in MODES:
        raise ConfigError(f"mode must be one of {MODES}, got {mode!r}")
    return [f for t in as_thresholds(thresholds) if (f := _check_one(results, t, mode)[1]) is not None]


def assert_thresholds(results: Sequence[MetricResult], thresholds: Mapping[str, float] | Iterable[str], mode: str = "mean") -> None:
    """``ScoreThresholdError`` (an ``AssertionError``) naming each missed threshold's rows, scores and reasons."""
    __tracebackhide__ = True  # pytest shows the test's line and the message, not this helper
    failures = check(results, thresholds, mode)
    if failures:
        raise ScoreThresholdError(failures)
