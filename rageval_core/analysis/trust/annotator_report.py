"""The ``annotators`` block of a trust report: per criterion, how far people agree with each other (Cohen's
kappa with its interval for two annotators, Krippendorff's alpha for more), each judge's kappa with every
annotator, a plain sentence on whether the judge is within the people's range, and the rows people
disagree on (a queue to settle). Built from label maps and scores in memory; no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rageval_core.core import stats
from rageval_core.analysis.trust.annotators import (
    alpha_with_interval,
    disagreeing_rows,
    kappa_with_interval,
    overlap,
    pairs,
    verdict,
)
from rageval_core.analysis.trust.report import Stat
from rageval_core.core.messages import say

LabelMap = Mapping[str, Mapping[str, Mapping[str, int]]]  # criterion -> annotator -> row -> 0/1


@dataclass
class PairAgreement:
    a: str
    b: str
    n: int
    kappa: Stat

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "n": self.n, "kappa": self.kappa.to_dict()}


@dataclass
class JudgeAmongPeople:
    """One method's kappa with each annotator, their mean, and where that stands among the people."""

    metric: str
    method: str
    per_annotator: dict[str, dict[str, Any]]  # annotator -> {"kappa": float | None, "n": int}
    mean: float | None
    verdict: str
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class CriterionAnnotators:
    criterion: str
    labelled: dict[str, int]  # annotator -> rows labelled
    statistic: str  # "kappa" (two annotators) or "alpha" (more)
    n_shared: int  # rows the statistic is computed on
    people: Stat
    spread: tuple[float, float] | None  # min and max pairwise kappa
    pairs: list[PairAgreement]
    judges: list[JudgeAmongPeople]
    disagreements: list[dict[str, Any]] = field(default_factory=list)  # {"row_id", "labels", "settled"}

    def to_dict(self) -> dict[str, Any]:
        return {
            "criterion": self.criterion, "labelled": self.labelled, "statistic": self.statistic, "n_shared": self.n_shared,
            "people": self.people.to_dict(), "spread": None if self.spread is None else list(self.spread),
            "pairs": [p.to_dict() for p in self.pairs], "judges": [j.to_dict() for j in self.judges],
            "disagreements": self.disagreements,
        }


@dataclass
class AnnotatorsBlock:
    annotators: list[str]
    criteria: list[CriterionAnnotators]

    def to_settle(self) -> list[dict[str, Any]]:
        """The unsettled disagreements of every criterion: the queue to settle."""
        return [{"criterion": c.criterion, **d} for c in self.criteria for d in c.disagreements if not d["settled"]]

    def to_dict(self) -> dict[str, Any]:
        return {"annotators": self.annotators, "criteria": [c.to_dict() for c in self.criteria], "to_settle": len(self.to_settle())}


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def judge_among_people(metric: str, method: str, values: Mapping[str, float], by_annotator: Mapping[str, Mapping[str, int]],
                       people: Stat, spread: tuple[float, float] | None, threshold: float) -> JudgeAmongPeople:
    """The judge's kappa (pass = score >= threshold) with each annotator on their shared rows, and the verdict."""
    per: dict[str, dict[str, Any]] = {}
    for name, labels in sorted(by_annotator.items()):
        rows = overlap(labels, values)
        kappa = stats.cohen_kappa(stats.binarize([values[r] for r in rows], threshold), [labels[r] for r in rows]) if rows else None
        per[name] = {"kappa": kappa, "n": len(rows)}
    defined = [p["kappa"] for p in per.values() if p["kappa"] is not None]
    mean = sum(defined) / len(defined) if defined else None
    interval = (people.low, people.high) if people.low is not None and people.high is not None else None
    where = verdict(mean, people.value, interval, spread)
    low, high = interval or spread or (people.value, people.value)
    sentence = say(f"annotators.{where}", criterion=metric, method=method, judge=_fmt(mean), people=_fmt(people.value),
                   low=_fmt(low), high=_fmt(high))
    return JudgeAmongPeople(metric, method, per, mean, where, str(sentence))


def criterion_block(criterion: str, by_annotator: Mapping[str, Mapping[str, int]], methods: Mapping[str, Mapping[str, float]],
                    *, threshold: float, iterations: int, seed: int, groups: Mapping[str, str] | None = None,
                    settled: Mapping[tuple[str, str], Any] | None = None) -> CriterionAnnotators:
    """One criterion's block; ``methods`` is ``{method: {row: score}}`` of the metric with the criterion's id."""
    names = sorted(by_annotator)
    pair_stats = []
    for a, b in pairs(names):
        value, ci, n = kappa_with_interval(by_annotator[a], by_annotator[b], iterations=iterations, seed=seed, groups=groups)
        pair_stats.append(PairAgreement(a, b, n, Stat.of(value, ci)))
    if len(names) == 2:
        statistic, people, n_shared = "kappa", pair_stats[0].kappa, pair_stats[0].n
    else:
        value, ci, n_shared = alpha_with_interval(by_annotator, iterations=iterations, seed=seed)
        statistic, people = "alpha", Stat.of(value, ci)
    defined = [p.kappa.value for p in pair_stats if p.kappa.value is not None]
    spread = (min(defined), max(defined)) if defined else None
    judges = [judge_among_people(criterion, method, values, by_annotator, people, spread, threshold)
              for method, values in methods.items()]
    disagreements = [{"row_id": r, "labels": given, "settled": (r, criterion) in (settled or {})}
                     for r, given in disagreeing_rows(by_annotator).items()]
    return CriterionAnnotators(criterion, {a: len(by_annotator[a]) for a in names}, statistic, n_shared, people, spread,
                               pair_stats, judges, disagreements)


def build_annotators(label_map: LabelMap, scores: Mapping[str, Mapping[str, Mapping[str, float]]], *,
                     rows: set[str] | None = None, threshold: float, iterations: int, seed: int,
                     groups: Mapping[str, str] | None = None,
                     settled: Mapping[tuple[str, str], Any] | None = None) -> AnnotatorsBlock | None:
    """The block over the criteria two or more people labelled (on ``rows`` when given); ``None`` when none is."""
    criteria = []
    everyone: set[str] = set()
    for criterion, by_annotator in label_map.items():
        kept = {a: {r: v for r, v in labels.items() if rows is None or r in rows} for a, labels in by_annotator.items()}
        kept = {a: labels for a, labels in kept.items() if labels}
        if len(kept) < 2:
            continue
        everyone |= set(kept)
        criteria.append(criterion_block(criterion, kept, scores.get(criterion, {}), threshold=threshold,
                                        iterations=iterations, seed=seed, groups=groups, settled=settled))
    return AnnotatorsBlock(sorted(everyone), criteria) if criteria else None
