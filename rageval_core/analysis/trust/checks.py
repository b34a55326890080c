"""Stability of a stored run: ``stability_for_run(store, run_id)`` → ``StabilityReport`` of a run made with
``RunSpec(repeats=K)``, the glue between the store and the pure ``trust.stability``. Probes run new evaluations,
so they live with the composition root (``rageval_core.session.probes``)."""

from __future__ import annotations


from rageval_core.core.messages import say
from rageval_core.run.repeats import DETERMINISTIC_PROVIDERS, repeat_note
from rageval_core.run import RunError
from rageval_core.store.runs import Store
from rageval_core.analysis.trust.stability import DEFAULT_THRESHOLD, StabilityReport, stability
from rageval_core.analysis.trust_defaults import DEFAULT_ITERATIONS


def stability_for_run(
    store: Store,
    run_id: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    aggregate: str = "mean",
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> StabilityReport:
    """The repeat stability of a stored run (one repeat: every spread 0, said in ``note``)."""
    info = store.find_run(run_id)
    if info is None:
        raise RunError(f"no run {run_id!r}")
    by_repeat = store.results_by_repeat(info.id)
    note = repeat_note(info.provider, (info.settings or {}).get("repeat_temperature"))
    if len(by_repeat) < 2:
        note = say("stability.one_repeat", note=note)
    return stability(
        by_repeat, threshold=threshold, aggregate=aggregate, iterations=iterations, seed=seed,
        note=note, deterministic=info.provider in DETERMINISTIC_PROVIDERS,
        row_order=[r.sample_id for r in store.rows(info.id) if r.valid],
    )
