"""Turning the Evaluate page's choices into core scorers (decomposed metrics and one-call judges).

Judges come from three places: the shipped presets, the rubric being edited on Prompts & rubric, and
saved rubric versions. Scorer names must be unique in a run, so an edited or saved rubric that reuses a
preset's id under different content is run under a derived id (``judge:rubric5-edited``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rageval_core.core.errors import RagevalError
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import DECOMPOSED_METRICS, build_scorers
from rageval_core.scoring.rubric import PRESET_IDS, Rubric, is_preset
from rageval_core.store.db import STORE_ERRORS
from rageval_core.store.rubric_versions import RubricStore
from rageval_core.core.types import SEED_METRICS, MetricResult, Sample
from rageval_ui.i18n import t

EDITED = "edited"


@dataclass(frozen=True)
class JudgeChoice:
    key: str  # "preset:<id>", "edited" or "version:<n>"
    label: str


def metric_choices() -> list[str]:
    return list(DECOMPOSED_METRICS)


def default_metrics() -> list[str]:
    return [m for m in SEED_METRICS if m in DECOMPOSED_METRICS]


def judge_choices(edited: Rubric | None, store: RubricStore | None = None) -> list[JudgeChoice]:
    """Presets first, then the rubric on the Prompts page (when it differs from a preset), then saved versions."""
    # Short labels: a multiselect chip cuts long ones, and the id is what the run reports (judge:<id>).
    choices = [JudgeChoice(f"preset:{pid}", t("judge.preset", id=pid)) for pid in PRESET_IDS]
    if edited is not None and not is_preset(edited):
        choices.append(JudgeChoice(EDITED, t("judge.edited", id=edited.id)))
    try:
        versions = (store or RubricStore()).versions("rubric")
    except (RagevalError, *STORE_ERRORS, OSError):  # an unreadable store must not hide the presets
        versions = []
    choices.extend(JudgeChoice(f"version:{v.id}", t("judge.saved", label=v.label)) for v in versions)
    return choices


def _unique(rubric: Rubric, taken: set[str], suffix: str) -> Rubric:
    if rubric.id not in taken and not (rubric.id in PRESET_IDS and not is_preset(rubric)):
        return rubric
    base = f"{rubric.id}-{suffix}"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}{n}", n + 1
    return rubric.renamed(candidate, f"{rubric.name} ({suffix})")


def build_judges(
    keys: Sequence[str],
    *,
    edited: Rubric | None = None,
    edited_template: str | None = None,
    store: RubricStore | None = None,
) -> list[Scorer]:
    """One ``JudgeScorer`` per chosen key, with unique method names."""
    judges: list[Scorer] = []
    taken: set[str] = set()
    for key in keys:
        if key.startswith("preset:"):
            judge = JudgeScorer(key.split(":", 1)[1])
        elif key == EDITED:
            if edited is None:
                continue
            judge = JudgeScorer(_unique(edited, taken, "edited"), template=edited_template or None)
        elif key.startswith("version:"):
            version_id = int(key.split(":", 1)[1])
            rubric = Rubric.from_json((store or RubricStore()).rubric_json(version_id))
            judge = JudgeScorer(_unique(rubric, taken, f"v{version_id}"))
        else:
            raise ValueError(f"unknown judge choice {key!r}")
        if judge.rubric_id in taken:
            continue
        taken.add(judge.rubric_id)
        judges.append(judge)
    return judges


def build_all(
    metric_ids: Sequence[str],
    judge_keys: Sequence[str],
    options: Mapping[str, Any] | None = None,
    *,
    edited: Rubric | None = None,
    edited_template: str | None = None,
) -> list[Scorer]:
    """Decomposed scorers (sharing the claim memo) followed by the chosen judges."""
    return [*build_scorers(metric_ids, options or {}), *build_judges(judge_keys, edited=edited, edited_template=edited_template)]


def in_rubric_order(results: Sequence[MetricResult], samples: Sequence[Sample], rubric: Rubric) -> list[MetricResult]:
    """Results by dataset row, then in the rubric's own criterion order (not completion or string order)."""
    row = {s.id: i for i, s in enumerate(samples)}
    criterion = {c.id: i for i, c in enumerate(rubric.criteria)}
    return sorted(results, key=lambda r: (row.get(r.sample_id, len(row)), criterion.get(r.metric, len(criterion))))


def in_dataset_order(results: Sequence[MetricResult], samples: Sequence[Sample]) -> list[MetricResult]:
    """Results by dataset row, then metric in the usual order (not completion order)."""
    from rageval_core.core.types import METRIC_IDS

    row = {s.id: i for i, s in enumerate(samples)}
    return sorted(results, key=lambda r: (row.get(r.sample_id, len(row)),
                                          METRIC_IDS.index(r.metric) if r.metric in METRIC_IDS else len(METRIC_IDS)))
