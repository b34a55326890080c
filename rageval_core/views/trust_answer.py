"""The Trust page's one-screen answer: per metric × method, can I trust this score? Pure, no I/O.

Read from a trust report in its JSON form (``TrustReport.to_dict()``, or the report saved beside a run), so the
page, the HTML report and the CLI give the same answer from the same figures. Four questions, each with its
figure and 95% interval:

- ranks: does the score rank answers the way people do? AUROC.
- pass / fail: can its verdict be used as is? Balanced accuracy at the pass threshold in use (calibrated on dev
  when a split exists, else the shipped or default one).
- share: what share of answers passes? The verdict's pass rate corrected by its sensitivity and specificity on
  the labelled rows (Rogan–Gladen), or people's own share when every row is labelled.
- settle: what would settle it? How many more labels, and which rows first (the report's label-next ranking).

A figure is ``good`` when its whole interval is at or above ``BAR``, ``weak`` when its whole interval is below,
``open`` when the interval straddles it, ``unknown`` when the labelled rows cannot define it (one class). 0.7 is
the usual floor of "acceptable" discrimination (Hosmer & Lemeshow); one bar for both, so the verdict reads the
same way for every method. The verdict follows from the two states (``verdict``).

"How many more labels": an interval narrows as 1/√n, so with the figure where it is, ``n`` labels with a
half-width ``h`` on the side that faces the bar would need ``n·(h/d)²`` labels to clear it, ``d`` the distance
from the figure to the bar. An estimate, said as one on the page.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

BAR = 0.7  # a figure is good when its interval's lower end reaches this, weak when its upper end stays below
NEXT_ROWS = 3  # label-next rows named per line

GOOD, WEAK, OPEN, UNKNOWN = "good", "weak", "open", "unknown"
USABLE, CALIBRATE, NOT_YET, NOT_USABLE = "usable", "calibrate", "not_yet", "not_usable"
SHARE_CORRECTED, SHARE_LABELS, SHARE_UNDEFINED, SHARE_NONE = "rogan_gladen", "labels", "undefined", "none"


@dataclass(frozen=True)
class Figure:
    """A statistic with its 95% interval (any part ``None`` when undefined)."""

    value: float | None
    low: float | None = None
    high: float | None = None

    @classmethod
    def of(cls, stat: Mapping[str, Any] | None) -> Figure:
        stat = stat or {}
        return cls(_num(stat.get("value")), _num(stat.get("low")), _num(stat.get("high")))

    def state(self, bar: float = BAR) -> str:
        """``good`` / ``weak`` / ``open`` against ``bar`` (module docstring); ``unknown`` with no value."""
        if self.value is None:
            return UNKNOWN
        low = self.value if self.low is None else self.low
        high = self.value if self.high is None else self.high
        if low >= bar:
            return GOOD
        if high < bar:
            return WEAK
        return OPEN


@dataclass(frozen=True)
class AnswerLine:
    """The answer for one metric × method."""

    metric: str
    method: str
    n_labelled: int  # labelled rows this method scored
    n_positive: int  # of which people passed
    rows: int  # the run's rows
    unlabelled: int  # rows of the run without a label of this criterion
    ranking: Figure  # AUROC
    ranking_state: str
    pass_fail: Figure  # balanced accuracy at ``threshold``
    pass_fail_state: str
    threshold: float
    threshold_source: str  # "default", "calibrated on dev" or the shipped calibration
    threshold_detail: dict[str, Any] | None  # the shipped per-language thresholds, when those are in use
    best_threshold: Figure  # the threshold that maximises balanced accuracy on the labelled rows
    share: Figure  # the corrected share that passes (see ``share_kind``)
    share_kind: str  # SHARE_CORRECTED, SHARE_LABELS (every row labelled), SHARE_UNDEFINED, SHARE_NONE
    apparent: float | None  # the share the verdict passes on every scored row, before correction
    labels_share: Figure  # people's share on the labelled rows (Wilson interval)
    verdict: str  # USABLE, CALIBRATE, NOT_YET, NOT_USABLE
    deciding: str | None  # the figure more labels would settle: "ranking" or "pass_fail" (NOT_YET only)
    more_labels: int | None  # labels that would settle it (NOT_YET only; None: cannot be estimated)
    next_rows: list[str] = field(default_factory=list)  # label next, first of this criterion

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class TrustAnswer:
    """Every metric × method's answer for one run (``lines`` empty: no labelled row is scored)."""

    run_id: str | None
    n_rows: int
    bar: float
    lines: list[AnswerLine]

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "n_rows": self.n_rows, "bar": self.bar, "lines": [x.to_dict() for x in self.lines]}


def _num(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(out) else out


def more_labels(figure: Figure, n: int, bar: float = BAR) -> int | None:
    """Labels beyond ``n`` for ``figure``'s interval to clear ``bar`` (module docstring), at least 1; ``None`` when
    the figure is undefined, sits on the bar, has no interval, or no labels were counted."""
    if figure.value is None or figure.low is None or figure.high is None or n <= 0:
        return None
    distance = abs(figure.value - bar)
    half = figure.value - figure.low if figure.value >= bar else figure.high - figure.value
    if distance <= 1e-12 or half <= 0:
        return None
    needed = math.ceil(n * (half / distance) ** 2 - 1e-9)
    return max(1, needed - n)


def verdict(ranking_state: str, pass_fail_state: str) -> tuple[str, str | None]:
    """The verdict and, when more labels would settle it, which figure they settle.

    The pass / fail is usable when its interval clears the bar, whatever the ranking (a binary judge's AUROC is
    its balanced accuracy); a score that ranks well but whose verdict misses people needs its threshold
    calibrated; one that cannot reach the bar at ranking is not usable; anything else is not yet known."""
    if pass_fail_state == GOOD:
        return USABLE, None
    if ranking_state == GOOD:
        return (CALIBRATE, None) if pass_fail_state == WEAK else (NOT_YET, "pass_fail")
    if ranking_state == WEAK:
        return NOT_USABLE, None
    return NOT_YET, "ranking"


def _share(estimate: Mapping[str, Any] | None) -> tuple[Figure, str, float | None, Figure]:
    """The corrected share, its kind, the apparent pass rate and people's share from one ``estimates`` entry."""
    if not estimate:
        return Figure(None), SHARE_NONE, None, Figure(None)
    labels = Figure.of(estimate.get("labels_only"))
    rg = estimate.get("rogan_gladen") or {}
    apparent = _num(rg.get("apparent"))
    n_labelled, n_judged = int(estimate.get("n_labelled") or 0), int(estimate.get("n_judged") or 0)
    if n_judged and n_labelled >= n_judged:  # every scored row labelled: the labels are the answer
        return labels, SHARE_LABELS, apparent, labels
    corrected = Figure.of(rg)
    if corrected.value is None:
        return corrected, SHARE_UNDEFINED, apparent, labels
    return corrected, SHARE_CORRECTED, apparent, labels


def answer_line(agreement: Mapping[str, Any], estimate: Mapping[str, Any] | None, coverage: Mapping[str, Any] | None,
                next_rows: Sequence[str] = (), *, rows: int = 0, bar: float = BAR) -> AnswerLine:
    """One metric × method's answer from its ``agreement`` entry, its ``estimates`` entry and its criterion's
    ``coverage`` (all in the report's JSON form)."""
    ranking = Figure.of(agreement.get("auroc"))
    pass_fail = Figure.of(agreement.get("balanced_accuracy"))
    rank_state, pf_state = ranking.state(bar), pass_fail.state(bar)
    word, deciding = verdict(rank_state, pf_state)
    n = int(agreement.get("n_labelled") or 0)
    needed = None
    if deciding is not None:
        needed = more_labels(ranking if deciding == "ranking" else pass_fail, n, bar)
    share, kind, apparent, labels_share = _share(estimate)
    total = int((coverage or {}).get("rows") or rows)
    labelled = int((coverage or {}).get("labelled") or 0)
    return AnswerLine(
        metric=str(agreement.get("metric")), method=str(agreement.get("method")), n_labelled=n,
        n_positive=int(agreement.get("n_positive") or 0), rows=total, unlabelled=max(0, total - labelled),
        ranking=ranking, ranking_state=rank_state, pass_fail=pass_fail, pass_fail_state=pf_state,
        threshold=float(agreement.get("threshold") or 0.0),
        threshold_source=str(agreement.get("threshold_source") or "default"),
        threshold_detail=agreement.get("threshold_detail"), best_threshold=Figure.of(agreement.get("best_threshold")),
        share=share, share_kind=kind, apparent=apparent, labels_share=labels_share, verdict=word, deciding=deciding,
        more_labels=needed, next_rows=list(next_rows)[:NEXT_ROWS],
    )


def trust_answer(report: Mapping[str, Any], *, bar: float = BAR) -> TrustAnswer:
    """The answer of a trust report (``TrustReport.to_dict()`` or a saved one): one line per metric × method
    that people's labels reach, in the report's order."""
    estimates = {(e.get("metric"), e.get("method")): e for e in report.get("estimates") or []}
    coverage = {c.get("criterion"): c for c in report.get("coverage") or []}
    next_rows: dict[str, list[str]] = {}
    for c in report.get("label_next") or []:
        next_rows.setdefault(str(c.get("criterion")), []).append(str(c.get("row_id")))
    n_rows = int(report.get("n_rows") or 0)
    lines = [
        answer_line(a, estimates.get((a.get("metric"), a.get("method"))), coverage.get(a.get("metric")),
                    next_rows.get(str(a.get("metric")), []), rows=n_rows, bar=bar)
        for a in report.get("agreement") or []
    ]
    return TrustAnswer(report.get("run_id"), n_rows, bar, lines)


__all__ = ["AnswerLine", "BAR", "Figure", "TrustAnswer", "answer_line", "more_labels", "trust_answer", "verdict"]
