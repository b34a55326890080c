"""``--fail-under``: parse thresholds, check them against a run summary, print the verdicts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from rageval_core.core.errors import UsageError

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo


@dataclass(frozen=True)
class Threshold:
    """``faithfulness=0.8`` (decomposed) or ``judge:rubric5:faithfulness=0.8`` (a judge's criterion)."""

    method: str
    metric: str
    minimum: float

    @property
    def label(self) -> str:
        return self.metric if self.method == "decomposed" else f"{self.method}:{self.metric}"


def parse_threshold(text: str) -> Threshold:
    target, sep, value = text.rpartition("=")
    if not sep or not target:
        raise UsageError(f"--fail-under {text!r}: expected metric=value, e.g. faithfulness=0.8 or judge:rubric5:faithfulness=0.8")
    try:
        minimum = float(value)
    except ValueError:
        raise UsageError(f"--fail-under {text!r}: {value!r} is not a number") from None
    if not 0.0 <= minimum <= 1.0:
        raise UsageError(f"--fail-under {text!r}: scores are in [0, 1]")
    if target.startswith(("judge:", "jury:")):
        method, _, metric = target.rpartition(":")
        if method in ("judge", "jury") or not metric:
            raise UsageError(f"--fail-under {text!r}: a judge threshold is judge:<rubric id>:<criterion>=value")
        return Threshold(method, metric, minimum)
    return Threshold("decomposed", target, minimum)


@dataclass
class ThresholdCheck:
    threshold: Threshold
    mean: float | None
    scored: int
    unscored: int

    @property
    def passed(self) -> bool:
        """A mean at or above the minimum; no scored row at all is a miss, never a pass."""
        return self.mean is not None and self.mean >= self.threshold.minimum - 1e-12


def check_thresholds(summary: dict[str, dict[str, dict[str, Any]]], thresholds: Sequence[Threshold]) -> list[ThresholdCheck]:
    out = []
    for t in thresholds:
        entry = summary.get(t.method, {}).get(t.metric) or {"mean": None, "scored": 0, "unscored": 0}
        out.append(ThresholdCheck(t, entry["mean"], entry["scored"], entry["unscored"]))
    return out


# ------------------------------------------------------------------ gating at a labelled run's calibrated thresholds


@dataclass(frozen=True)
class Calibrated:
    """A metric × method's pass threshold calibrated on a labelled run's dev split, and under which judge model."""

    threshold: float
    run_id: str
    judge: tuple[str | None, str | None]  # (provider, model) the threshold was calibrated under


def judge_model(provider: str | None, model: str | None, method: str) -> tuple[str | None, str | None]:
    """Who scored a method: a named judge configuration (``judge:rubric5@gpt-4o-mini``) is its own judge, any
    other method the run's provider and model."""
    _, at, judge = method.partition("@")
    return ("judges", judge) if at else (provider, model)


def calibrated_for(run: RunInfo, thresholds: Sequence[Threshold], provider: str | None, model: str | None) -> dict[Threshold, Calibrated]:
    """The calibrated threshold of ``run`` (a stored run's info) for each ``--fail-under`` target scored now by
    ``provider`` / ``model``. A target without one in ``run``, or one calibrated under another judge model, is a
    usage error naming it: a threshold chosen for one judge says nothing about another's scores."""
    from rageval_core.analysis.trust.calibration import stored_thresholds

    stored = stored_thresholds(run.settings)
    out: dict[Threshold, Calibrated] = {}
    for t in thresholds:
        if (t.metric, t.method) not in stored:
            have = ", ".join(f"{m} by {me}" for m, me in sorted(stored)) or "none"
            raise UsageError(
                f"--fail-under {t.label} --calibration {run.id}: run {run.id} has no threshold calibrated on a dev split "
                f"for {t.metric} by {t.method} (calibrated: {have}); calibrate it with: trust {run.id} --split "
                "train=0.2,dev=0.4,test=0.4")
        theirs = judge_model(run.provider, run.model, t.method)
        mine = judge_model(provider, model, t.method)
        if theirs != mine:
            raise UsageError(
                f"--fail-under {t.label} --calibration {run.id}: its threshold was calibrated under "
                f"{theirs[0]}/{theirs[1]}, this run scores {t.metric} by {t.method} with {mine[0]}/{mine[1]}: a threshold "
                "calibrated for one judge model says nothing about another's scores")
        out[t] = Calibrated(stored[(t.metric, t.method)], run.id, theirs)
    return out


@dataclass
class PassRateCheck:
    """``--fail-under metric=share --calibration RUN``: the share of scored rows reaching RUN's calibrated
    threshold must reach ``threshold.minimum``; the mean is printed beside it."""

    threshold: Threshold
    calibrated: Calibrated
    passing: int
    scored: int
    unscored: int
    mean: float | None

    @property
    def rate(self) -> float | None:
        return self.passing / self.scored if self.scored else None

    @property
    def passed(self) -> bool:
        """A pass rate at or above the minimum; no scored row at all is a miss, never a pass."""
        return self.rate is not None and self.rate >= self.threshold.minimum - 1e-12


def check_pass_rates(results: Sequence[Any], calibrated: dict[Threshold, Calibrated]) -> list[PassRateCheck]:
    """Each target's pass rate at its calibrated threshold over a run's results (repeat 0; the last result of a
    row wins), with the mean and the unscored count."""
    from rageval_core.core.method_labels import result_method

    out = []
    for t, cal in calibrated.items():
        values: dict[str, float | None] = {}
        for r in results:
            if r.metric == t.metric and result_method(r) == t.method and getattr(r, "repeat_index", 0) == 0:
                values[r.sample_id] = r.value
        scored = [float(v) for v in values.values() if v is not None]
        out.append(PassRateCheck(t, cal, sum(v >= cal.threshold for v in scored), len(scored),
                                 len(values) - len(scored), sum(scored) / len(scored) if scored else None))
    return out
