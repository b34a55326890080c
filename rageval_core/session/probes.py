"""Probes of a stored run: ``run_probes(samples, scorers, probes, store=..., config=...)`` → ``ProbeReport``. Each
probe's rows are scored through the normal runner (cache, limits, call log and store apply), one run per probe
whose settings carry the probe tag (``{"probe": name, "base_run": id}``), and compared with the base run. It builds
providers and runs specs, so it sits in the composition root, above ``analysis``.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from rageval_core.scoring.metrics.base import Scorer
from rageval_core.core.messages import say
from rageval_core.run.repeats import DETERMINISTIC_PROVIDERS
from rageval_core.run import Progress, Run, RunError, RunSpec, run
from rageval_core.store.runs import Store
from rageval_core.analysis.trust.probes import DEFAULT_TOLERANCES, build_probe, parse_probes
from rageval_core.analysis.trust.shifts import ProbeResult, probe_result
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS
from rageval_core.core.types import ANSWER_CORRECTNESS, FAITHFULNESS, Sample

if TYPE_CHECKING:
    from rageval_core.llm.base import LLM, Embedder
    from rageval_core.providers.config import ProviderConfig


def correct_rows(samples: Sequence[Sample]) -> set[str] | None:
    """Rows whose human labels say the answer is right (the verbosity probe pads only those): labelled
    correct, or, without a correctness label, faithful. ``None`` when no row carries either label."""
    from rageval_core.analysis.trust.labels import dataset_labels

    labels = dataset_labels([(s.id, s.metadata) for s in samples])
    by_row: dict[str, dict[str, int]] = {}
    for lab in labels:
        if lab.criterion in (ANSWER_CORRECTNESS, FAITHFULNESS):
            by_row.setdefault(lab.row_id, {})[lab.criterion] = lab.value
    if not by_row:
        return None
    return {rid for rid, got in by_row.items() if got.get(ANSWER_CORRECTNESS, got.get(FAITHFULNESS)) == 1}


@dataclass
class ProbeReport:
    """Every probe of one base run."""

    base_run_id: str
    seed: int
    iterations: int
    results: list[ProbeResult] = field(default_factory=list)
    provider: str | None = None
    note: str = ""

    @property
    def flagged(self) -> list[str]:
        return [r.probe for r in self.results if r.flagged]

    def find(self, probe: str) -> ProbeResult | None:
        return next((r for r in self.results if r.probe == probe), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "base_run_id": self.base_run_id, "provider": self.provider, "seed": self.seed,
            "bootstrap": {"iterations": self.iterations, "seed": self.seed, "level": 0.95},
            "note": self.note, "flagged": self.flagged, "probes": [r.to_dict() for r in self.results],
        }


def run_probes(
    samples: Sequence[Sample],
    scorers: Sequence[Scorer],
    probes: Sequence[str] | str,
    *,
    store: Store,
    base_run_id: str | None = None,
    config: ProviderConfig | None = None,
    llm: LLM | None = None,
    embedder: Embedder | None = None,
    parallel: Sequence[Sample] = (),
    correct_ids: Collection[str] | None = None,
    tolerances: Mapping[str, float] | None = None,
    seed: int = 0,
    iterations: int = DEFAULT_ITERATIONS,
    concurrency: int = 8,
    options: Mapping[str, Any] | None = None,
    progress: Callable[[str, Progress], None] | None = None,
    cancel: threading.Event | None = None,
    dataset_name: str | None = None,
) -> ProbeReport:
    """Score each probe's rows with ``scorers`` and compare them with the base run.

    ``base_run_id``: a stored run of the same ``samples`` and ``scorers`` (else one is run first).
    ``parallel``: rows in the other language for the language probe (rows of ``samples`` are used too).
    ``correct_ids``: the rows the verbosity probe pads (default: ``correct_rows(samples)``, then the
    categories). ``tolerances`` override ``trust.probes.DEFAULT_TOLERANCES`` per probe. ``progress``
    receives the probe name ("base" for the base run) with each progress update.
    """
    from rageval_core.session.for_run import build_for_run

    names = parse_probes(probes)
    tol = {**DEFAULT_TOLERANCES, **dict(tolerances or {})}
    base_spec = RunSpec(samples, scorers, provider=config, concurrency=concurrency, options=options or {},
                        dataset_name=dataset_name)
    built = build_for_run(base_spec, store, cancel=cancel, llm=llm, embedder=embedder)  # once, for every probe's run

    def scored(spec: RunSpec, name: str) -> Run:
        report = None if progress is None else (lambda p: progress(name, p))
        return run(spec, built.llm, built.embedder, store, judges=built.judges, logs_calls=built.logs_calls,
                   embedding=built.embedding, progress=report, cancel=cancel)

    if base_run_id is None:
        base_run_id = scored(base_spec, "base").run_id
    info = store.find_run(base_run_id)
    if info is None:
        raise RunError(f"no run {base_run_id!r}")
    original = store.results(info.id)
    if correct_ids is None:
        correct_ids = correct_rows(samples)
    report = ProbeReport(info.id, seed, iterations, provider=info.provider)
    if info.provider in DETERMINISTIC_PROVIDERS:
        report.note = say("probes.offline")
    for name in names:
        made = build_probe(name, samples, seed=seed, parallel=parallel, correct_ids=correct_ids)
        if not made.cases:
            report.results.append(probe_result(made, original, [], tolerance=tol[name], iterations=iterations, seed=seed))
            continue
        probed = scored(dataclasses.replace(
            base_spec, samples=made.samples, dataset_name=f"{dataset_name or info.dataset_name or 'dataset'} [probe: {name}]",
            settings={"probe": name, "base_run": info.id, "probe_seed": seed},
        ), name)
        report.results.append(
            probe_result(made, original, store.results(probed.run_id), tolerance=tol[name], iterations=iterations,
                         seed=seed, run_id=probed.run_id)
        )
    return report
