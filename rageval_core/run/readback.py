"""Reading a stored run back without loading it: the CLI's closing tables and failure lines at 100,000 rows.

``Run.results`` builds every result with its details (claims, prompts, raw answers); the terminal needs a few
columns of each. These fold just those columns, read with a cursor by ``store.readback``: for the failure lines
only unscored results, for the CSV the distinct pairs. Pandas is imported only by ``analysis_frame`` (the closing tables: ``run_tables``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from rageval_core.core.method_labels import display_method, judge_of
from rageval_core.store import readback as stored
from rageval_core.store.runs import Store

if TYPE_CHECKING:
    import pandas as pd

def analysis_frame(store: Store, run_id: str, categories: Mapping[str, str | None] | None = None) -> pd.DataFrame:
    """The columns ``compare``'s category tables and agreement read (sample_id, category, metric, method, value,
    unscored_reason, provider) for repeat 0, in stored order; each distinct string stored once (the CLI's tables
    no longer read it: ``run_tables`` folds them without pandas)."""
    import numpy as np
    import pandas as pd

    cats = categories or {}
    shared: dict[object, object] = {}  # one object per distinct string: a column holds pointers, not copies
    method_label = _method_labels()

    def one(value: object) -> object:
        return shared.setdefault(value, value)

    columns: dict[str, list[object]] = {name: [] for name in ("sample_id", "category", "metric", "method", "unscored_reason", "provider")}
    values: list[float] = []
    for sample_id, metric, method, judge, value, unscored, provider in stored.analysis_rows(store, run_id):
        columns["sample_id"].append(one(sample_id))
        columns["category"].append(cats.get(sample_id))
        columns["metric"].append(one(metric))
        columns["method"].append(method_label(method, judge))
        columns["unscored_reason"].append(one(unscored))
        columns["provider"].append(one(provider))
        values.append(np.nan if value is None else float(value))
    frame = pd.DataFrame({name: pd.Series(col, dtype=object) for name, col in columns.items()})
    frame.insert(4, "value", np.array(values, dtype=float))
    return frame


def _method_labels() -> Callable[[str, Any], str]:
    """``result_method`` from a stored method and its details' judge id, each distinct label made once."""
    made: dict[tuple[str, Any], str] = {}

    def label(method: str, judge: str | None) -> str:
        key = (method, judge)
        if key not in made:
            made[key] = display_method(method, judge_of({"judge": judge}))
        return made[key]

    return label


def result_pairs(store: Store, run_id: str) -> list[tuple[str, str]]:
    """The distinct (display method, metric) pairs of repeat 0 (unordered), read without the results."""
    label = _method_labels()
    return list(dict.fromkeys((label(method, judge), metric) for method, metric, judge in stored.method_metric_pairs(store, run_id)))


def unscored_results(store: Store, run_id: str) -> Iterator[SimpleNamespace]:
    """The unscored results of repeat 0 with what ``failures.summarize_failures`` reads (sample id, reason, message)."""
    for sample_id, unscored, reason, error in stored.unscored(store, run_id):
        yield SimpleNamespace(sample_id=sample_id, value=None, unscored_reason=unscored, reason=reason,
                              details={"error": error} if error else None)
