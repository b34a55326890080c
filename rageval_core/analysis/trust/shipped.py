"""The offline judge's shipped calibrated verdict, used as the pass threshold where nothing was calibrated.

Offline, 0.5 passes far too much (on the shipped labelled set 14 of 26 unfaithful answers; most appended
inventions pass): the decomposed faithfulness value of the offline judge has a calibrated verdict point per
language, fitted on the benchmarks' dev halves with the judge's other constants (``offline/fitted.json``,
``rageval_core.offline.model.answer_threshold``). ``trust`` on an offline run with no label split uses it for
(faithfulness, decomposed), each row at its own language's point, and says so (``SHIPPED``). It applies only to
runs of the model those constants belong to (the offline model id of this version) and to the constant set the
run used (with the bundled encoder or lexical only). A threshold calibrated on the run's own dev split wins.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rageval_core.core import stats
from rageval_core.core.method_labels import result_method
from rageval_core.core.types import DECOMPOSED, MetricResult

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo

SHIPPED = "shipped offline calibration"
METRIC = "faithfulness"


class RowThresholds(float):
    """A pass threshold that differs by row (each row's language): as a float, the threshold shown when every
    row has the same one, else the rows' mean; ``at(row)`` is a row's own."""

    by_row: dict[str, float]
    by_language: dict[str, float]
    source: str
    fitted_commit: str

    def __new__(cls, by_row: Mapping[str, float], by_language: Mapping[str, float], *, source: str = SHIPPED,
                fitted_commit: str = "") -> "RowThresholds":
        values = sorted(set(by_language.values())) or [0.5]
        shown = values[0] if len(values) == 1 else sum(by_row.values()) / max(1, len(by_row))
        obj = super().__new__(cls, shown)
        obj.by_row, obj.by_language = dict(by_row), dict(sorted(by_language.items()))
        obj.source, obj.fitted_commit = source, fitted_commit
        return obj

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by the pages' cache: rebuilt from its parts
        return (_rebuild, (self.by_row, self.by_language, self.source, self.fitted_commit))

    def at(self, row_id: str) -> float:
        return self.by_row.get(row_id, float(self))

    def text(self) -> str:
        """``0.720 (ja) / 0.780 (en)``, or ``0.720 (ja)`` for one language."""
        return " / ".join(f"{v:.3f} ({lang})" for lang, v in self.by_language.items())

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "by_language": self.by_language, "fitted_commit": self.fitted_commit}


def _rebuild(by_row: dict[str, float], by_language: dict[str, float], source: str, commit: str) -> RowThresholds:
    return RowThresholds(by_row, by_language, source=source, fitted_commit=commit)


def cut(threshold: float, row_id: str) -> float:
    """A row's pass threshold: its own under ``RowThresholds``, else the one threshold."""
    return threshold.at(row_id) if isinstance(threshold, RowThresholds) else float(threshold)


def verdicts(ids: Sequence[str], values: Sequence[float], threshold: float) -> list[int]:
    """1 where a row's value reaches its threshold (``stats.binarize`` row by row)."""
    if not isinstance(threshold, RowThresholds):
        return stats.binarize(values, threshold)
    return [int(float(v) >= threshold.at(r)) for r, v in zip(ids, values, strict=True)]


def confusion_at(ids: Sequence[str], values: Sequence[float], labels: Sequence[int], threshold: float) -> stats.Confusion:
    """``stats.confusion`` with each row at its own threshold."""
    if not isinstance(threshold, RowThresholds):
        return stats.confusion(ids, values, labels, threshold)
    out = stats.Confusion(float(threshold))
    for rid, passed, y in zip(ids, verdicts(ids, values, threshold), labels, strict=True):
        cell = ("tp" if y else "fp") if passed else ("fn" if y else "tn")
        getattr(out, cell).append(str(rid))
    return out


def shipped_thresholds(info: RunInfo, results: Sequence[MetricResult]) -> dict[tuple[str, str], RowThresholds]:
    """``{("faithfulness", "decomposed"): RowThresholds}`` for a run of the current offline model, each row at
    the calibrated point of the language its value was computed in; ``{}`` for any other run."""
    from rageval_core.offline.model import EMBEDDED, answer_threshold, load_constants
    from rageval_core.providers.config import PROVIDERS

    offline = PROVIDERS.get("offline")
    if info is None or info.provider != "offline" or offline is None or info.model != offline.default_model:
        return {}
    embedded = ((info.settings or {}).get("embeddings") or {}).get("model") == EMBEDDED
    by_row: dict[str, float] = {}
    by_language: dict[str, float] = {}
    for r in results:
        if r.metric != METRIC or result_method(r) != DECOMPOSED or r.value is None:
            continue
        language = "ja" if (r.details or {}).get("language") == "ja" else "en"
        by_language[language] = by_row[r.sample_id] = answer_threshold(language, embedded)
    if not by_row:
        return {}
    commit = str(load_constants().get("commit", ""))
    return {(METRIC, DECOMPOSED): RowThresholds(by_row, by_language, fitted_commit=commit)}


def source_line(threshold: float) -> str:
    """Where a shipped threshold comes from, in one line (the CLI and the report print it)."""
    if not isinstance(threshold, RowThresholds):
        return ""
    return (f"threshold source: the offline judge's shipped calibrated verdict {threshold.text()}, fitted on the "
            f"benchmarks' dev halves by bench/fit_offline.py (commit {threshold.fitted_commit[:7] or '?'}); a threshold "
            f"calibrated on this run's own dev split (trust --split) replaces it")


__all__ = ["SHIPPED", "RowThresholds", "confusion_at", "cut", "shipped_thresholds", "source_line", "verdicts"]
