"""Run two judge versions on a dataset's labelled dev rows and compare them against people: the glue between
the label split (``split_run``), the runner and the pure ``versus`` statistics. The Python API the Prompts
page's "vs people" panel calls:

- ``dataset_split(store, dataset_hash, samples, labels)`` → the dataset's stored split (dealt with the
  default fractions and seed the first time, as the Trust page and ``trust --split`` would);
- ``judged_rows(samples, labels, assignment, rubrics)`` → the dev rows a version is judged on (both languages,
  each row with the prompt of its language), and why others are left out (a few-shot example of either version);
- ``run_versus(samples, labels, old, new, config=..., store=...)`` → ``VersusRun``: each version judged
  through the normal runner (the response cache, so a version run before costs nothing and only changed
  requests are sent; limits, call log and store apply), then ``versus.compare_versions`` with each version's
  pass threshold calibrated on the dev rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rageval_core.analysis.trust.labels import HumanLabels
from rageval_core.analysis.trust.probes import PARALLEL_SUFFIX
from rageval_core.analysis.trust.split_run import SplitState, current_split, ensure_split
from rageval_core.analysis.trust.splits import DEV, split_rows
from rageval_core.analysis.trust.versus import VersusReport, compare_versions
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS, DEFAULT_THRESHOLD
from rageval_core.core.messages import say
from rageval_core.core.types import Sample
from rageval_core.session.for_run import build_and_run
from rageval_core.run import Progress, Run, RunSpec
from rageval_core.scoring.few_shot import examples_of
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.steps import sample_language
from rageval_core.scoring.rubric import PRESET_IDS, Rubric, is_preset, load_rubric
from rageval_core.store.runs import Store
from rageval_core.core.errors import ConfigError

if TYPE_CHECKING:
    from rageval_core.providers.config import ProviderConfig


@dataclass(frozen=True)
class Version:
    """One judge version: a label people recognise (``#3 strict-v2`` or "editor"), its rubric and, in
    raw-template mode, the edited template text (``None``: the shipped template)."""

    label: str
    rubric: Rubric
    template: str | None = None

    def rubrics(self, languages: Iterable[str]) -> dict[str, Rubric]:
        """The version's rubric for rows of each language, so every row is judged with the prompt of its
        language: its own rubric in its language; in another, an untouched preset's translation, else the same
        rubric (criteria as edited, few-shot examples kept) under that language's shipped prompt. A raw
        template (``template``) serves its own language only."""
        out = {self.rubric.language: self.rubric}
        for language in languages:
            if language not in out:
                preset = is_preset(self.rubric) and self.rubric.id in PRESET_IDS
                out[language] = load_rubric(self.rubric.id, language) if preset else replace(self.rubric, language=language)
        return out


@dataclass
class VersusRun:
    """The comparison and what it cost: one run per version (its id, calls sent, cache hits)."""

    report: VersusReport
    runs: dict[str, Run]
    rows: list[str]
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {**self.report.to_dict(), "notes": [*self.notes, *self.report.notes],
                "runs": {label: {"run_id": r.run_id, "provider": r.provider, "model": r.model,
                                 "provider_calls": r.provider_calls, "cache_hits": r.cache_hits}
                         for label, r in self.runs.items()}}


def _criteria_labels(labels: HumanLabels) -> dict[str, dict[str, int]]:
    return {c: labels.for_criterion(c) for c in labels.criteria()}


def dataset_split(store: Store, dataset_hash: str, samples: Sequence[Sample], labels: HumanLabels,
                  dataset_name: str | None = None) -> SplitState:
    """The dataset's split over its labelled rows: the stored one (extended to new rows; an edited version of a
    dataset of that name keeps its previous version's split and looks), else dealt now with the default fractions
    and seed, as ``trust --split`` deals it, so every page and command sees the same dev rows."""
    stored = current_split(store, dataset_hash, dataset_name=dataset_name, row_ids=[s.id for s in samples])
    fractions, seed = (stored.fractions, stored.seed) if stored is not None else (None, 0)
    labelled = set(labels.by_row())
    ids = [s.id for s in samples if s.id in labelled]
    rows = split_rows(ids, {s.id: s.category for s in samples}, _criteria_labels(labels), labels.groups, PARALLEL_SUFFIX)
    return ensure_split(store, dataset_hash, rows, fractions, seed)


def judged_rows(
    samples: Sequence[Sample],
    labels: HumanLabels,
    assignment: Mapping[str, str],
    rubrics: Sequence[Rubric],
    split: str = DEV,
    language: str | None = None,
) -> tuple[list[Sample], list[str]]:
    """The ``split`` rows labelled on a criterion of the rubrics, in either language (each is judged with the
    prompt of its language: ``Version.rubrics``; only ``language``'s when given, as a recording of one language
    replays), that are no few-shot example of any of them; and a note for each kind of row left out."""
    criteria = {c for r in rubrics for c in r.ids}
    labelled = {rid for rid, crits in labels.by_row().items() if criteria & set(crits)}
    examples = {e.row_id for r in rubrics for e in examples_of(r)}
    in_split = [s for s in samples if assignment.get(s.id) == split and s.id in labelled]
    notes: list[str] = []
    if language is not None:
        other = [s for s in in_split if sample_language(s) != language]
        if other:
            notes.append(say("versus.other_language", n=len(other), language=language))
        in_split = [s for s in in_split if s not in other]
    shown = [s for s in in_split if s.id in examples]
    if shown:
        notes.append(say("versus.example_rows", n=len(shown)))
    kept = [s for s in in_split if s.id not in examples]
    if not kept:
        notes.append(say("versus.no_dev"))
    return kept, notes


def _scores(result: Run) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for r in result.results:
        if r.value is not None:
            out.setdefault(r.metric, {})[r.sample_id] = float(r.value)
    return out


def run_versus(
    samples: Sequence[Sample],
    labels: HumanLabels,
    old: Version,
    new: Version,
    *,
    config: ProviderConfig,
    store: Store,
    assignment: Mapping[str, str],
    dataset_name: str,
    dataset_digest: str | None,
    threshold: float = DEFAULT_THRESHOLD,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
    progress: Callable[[str, Progress], None] | None = None,
    language: str | None = None,
    calibrate: bool = True,
) -> VersusRun:
    """Judge the dev rows with ``old`` then ``new`` (one run each, through the cache; each row with the prompt
    of its language; ``language`` keeps one language's rows) and compare them, each version × criterion at its
    threshold calibrated on these dev rows (``calibrate``; off: every version at ``threshold``).

    A failed call leaves only that row unscored for that version (the runner's rule); such rows drop out of
    the paired difference, and the report counts them as unscored."""
    if old.label == new.label:
        raise ConfigError(f"two versions need two labels, both are {old.label!r}")
    rows, notes = judged_rows(samples, labels, assignment, [new.rubric, old.rubric], language=language)
    ids = [s.id for s in rows]
    languages = sorted({sample_language(s) for s in rows})
    runs: dict[str, Run] = {}
    for version in (old, new) if rows else ():
        heard = None if progress is None else (lambda p, label=version.label: progress(label, p))
        spec = RunSpec(
            rows, [JudgeScorer(version.rubrics(languages), template=version.template)], provider=config,
            dataset_name=f"{dataset_name} · vs people · {version.label}", dataset_digest=dataset_digest,
            settings={"versus": {"version": version.label, "split": DEV}},
        )
        runs[version.label] = build_and_run(spec, store, progress=heard)
    scores = {v.label: _scores(runs[v.label]) if v.label in runs else {} for v in (old, new)}
    judged = set(ids)
    criteria = set(new.rubric.ids) | set(old.rubric.ids)
    wanted = {c: {r: v for r, v in vals.items() if r in judged} for c, vals in _criteria_labels(labels).items() if c in criteria}
    report = compare_versions((old.label, scores[old.label]), (new.label, scores[new.label]), wanted, ids,
                              groups=labels.groups, threshold=threshold, iterations=iterations, seed=seed,
                              calibrate=calibrate)
    return VersusRun(report, runs, ids, notes)


@dataclass(frozen=True)
class RecordedLoop:
    """A shipped recording of a real model judging a labelled dataset's dev rows with two or more versions
    (``bench/record_prompt_loop.py``): replayed, it shows the versions' real difference with no key."""

    log: str
    model: str
    recorded_on: str
    server: str
    dataset: str
    dataset_hash: str
    rows: tuple[str, ...]
    versions: tuple[Version, ...]


def recorded_loop(versions_file: str | Path) -> RecordedLoop | None:
    """The recording described by ``versions_file`` (its call log beside it), or ``None`` when either is missing."""
    path = Path(versions_file)
    log = path.with_name(path.name.replace(".versions.json", ".jsonl"))
    if not path.is_file() or not log.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    versions = tuple(Version(v["label"], Rubric.from_dict(v["rubric"]), v.get("template")) for v in data["versions"])
    return RecordedLoop(str(log), str(data["model"]), str(data["recorded_on"]), str(data.get("server") or ""),
                        str(data["dataset"]), str(data["dataset_hash"]), tuple(data["rows"]), versions)
