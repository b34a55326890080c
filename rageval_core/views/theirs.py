"""Their score vs ours for a stored run (``analysis.external_scores`` over the run's results and kept rows): what
``rageval runs theirs`` and the report read; the Compare page builds the same view from its own frame."""

from __future__ import annotations

from collections.abc import Mapping

from rageval_core.analysis.external_scores import TheirsVsOurs, theirs_vs_ours
from rageval_core.core.types import Sample
from rageval_core.store.runs import Store
from rageval_core.views.run_summary import row_categories, run_frame

COLUMNS = ("sample_id", "category", "metric", "method", "value")


def for_run(store: Store, run_id: str, samples: Mapping[str, Sample] | None = None, *,
            pairs: Mapping[str, str] | None = None, threshold: float = 0.5) -> TheirsVsOurs:
    """The run's results beside the other tool's scores its rows carry (``samples``: the run's own rows unless
    given, e.g. a run stored before runs kept their rows read with its file)."""
    rows = store.samples(run_id) if samples is None else samples
    frame = run_frame(store, run_id, row_categories(store, run_id), COLUMNS)
    return theirs_vs_ours(frame, rows, pairs=pairs, threshold=threshold)
