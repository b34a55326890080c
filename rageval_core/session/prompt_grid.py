"""Run two or more judge versions on the same rows and lay them side by side (``analysis.version_grid``): the Prompts
page's versions grid. Each version is one run through the normal runner (response cache, limits, call log, store),
tagged as a prompt test so that run pickers keep it out of the user's runs (``analysis.run_groups``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from rageval_core.analysis.version_grid import versions_frame
from rageval_core.core.types import Sample
from rageval_core.run import Progress, Run, RunSpec
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.session.for_run import build_and_run
from rageval_core.session.versus_run import Version
from rageval_core.store.runs import Store


@dataclass
class GridRun:
    """The versions' runs (by label) and their results as one frame (``method`` = the version's label)."""

    versions: list[str]
    runs: dict[str, Run]
    frame: pd.DataFrame
    rows: list[str]


def run_grid(samples: Sequence[Sample], versions: Sequence[Version], *, config: object, store: Store,
             dataset_name: str, dataset_digest: str | None,
             categories: Mapping[str, str | None] | None = None,
             progress: Callable[[str, Progress], None] | None = None) -> GridRun:
    """Judge ``samples`` with every version (in order), each as its own run; ``ValueError`` for fewer than two
    versions or two with the same label (the grid's columns are the labels)."""
    labels = [v.label for v in versions]
    if len(labels) < 2:
        raise ValueError("a grid needs two or more versions")
    if len(set(labels)) < len(labels):
        raise ValueError(f"two versions share a label: {labels}")
    runs: dict[str, Run] = {}
    for version in versions:
        report = None if progress is None else (lambda p, label=version.label: progress(label, p))
        spec = RunSpec(list(samples), [JudgeScorer(version.rubric, template=version.template)], provider=config,
                       dataset_name=f"{dataset_name} · prompt grid · {version.label}", dataset_digest=dataset_digest,
                       settings={"prompt_test": f"grid: {version.label}"})
        runs[version.label] = build_and_run(spec, store, progress=report)
    frame = versions_frame({label: run.results for label, run in runs.items()}, categories)
    return GridRun(labels, runs, frame, [s.id for s in samples])


__all__ = ["GridRun", "run_grid"]
