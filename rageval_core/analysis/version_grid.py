"""Prompt versions side by side, row by row (the promptfoo view): two or more judge versions scored the same rows; per
row and criterion each version's score and reason next to each other, the rows where the versions differ first, and
how far the versions agree (``judge_agreement``: Spearman and kappa with intervals, and the rows where they split).

Pure functions of a results frame whose ``method`` column is the version's label (``versions_frame``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rageval_core.analysis import judge_agreement
from rageval_core.analysis.compare import first_seen, results_frame
from rageval_core.core.types import MetricResult

GRID_FIXED = ["sample_id", "category", "criterion", "differs", "spread"]


def versions_frame(results: Mapping[str, Sequence[MetricResult]],
                   categories: Mapping[str, str | None] | None = None) -> pd.DataFrame:
    """One results frame (``compare.results_frame``) of every version, ``method`` set to the version's label."""
    frames = [results_frame(rs, categories).assign(method=label) for label, rs in results.items()]
    return pd.concat(frames, ignore_index=True) if frames else results_frame([], categories)


def score_column(label: str) -> str:
    return f"{label} · score"


def reason_column(label: str) -> str:
    return f"{label} · reason"


def _differs(values: Sequence[float], threshold: float) -> tuple[bool, float]:
    """(the versions disagree, max − min of the scored values). Disagree: a different score, one scored and another
    not, or pass and fail on either side of ``threshold``."""
    scored = [v for v in values if not math.isnan(v)]
    if not scored:
        return False, math.nan
    spread = max(scored) - min(scored)
    one_unscored = len(scored) < len(values)
    split = any(v >= threshold for v in scored) and any(v < threshold for v in scored)
    return (spread > 1e-9 or one_unscored or split), spread


def grid(frame: pd.DataFrame, versions: Sequence[str], *, criteria: Sequence[str] | None = None,
         threshold: float = 0.5, order: Sequence[str] | None = None) -> pd.DataFrame:
    """One line per (row, criterion): ``sample_id``, ``category``, ``criterion``, ``differs``, ``spread`` (max − min
    of the scored versions), then per version ``<label> · score`` and ``<label> · reason`` (an unscored result: NaN
    and its unscored reason). The lines where the versions differ come first, widest spread first; then the rest in
    dataset order (``order``, the row ids; default: as they first appear in ``frame``)."""
    versions = list(versions)
    columns = GRID_FIXED + [c for v in versions for c in (score_column(v), reason_column(v))]
    part = frame[frame["method"].isin(versions)]
    if criteria is not None:
        part = part[part["metric"].isin(list(criteria))]
    if part.empty:
        return pd.DataFrame(columns=columns)
    part = part.drop_duplicates(["sample_id", "metric", "method"], keep="last")
    given = list(order or ())
    wanted = set(given)
    rows = [*given, *(sid for sid in first_seen(frame["sample_id"]) if sid not in wanted)]
    metrics = first_seen(part["metric"])
    categories = frame.drop_duplicates("sample_id").set_index("sample_id")["category"]
    by_key = {(r.sample_id, r.metric, r.method): r for r in part.itertuples(index=False)}
    lines: list[dict[str, Any]] = []
    for position, sid in enumerate(rows):
        for metric in metrics:
            found = [by_key.get((sid, metric, v)) for v in versions]
            if all(f is None for f in found):
                continue
            values = [math.nan if f is None or f.value is None else float(f.value) for f in found]
            differs, spread = _differs(values, threshold)
            line: dict[str, Any] = {"sample_id": sid, "category": categories.get(sid), "criterion": metric,
                                    "differs": differs, "spread": spread, "_position": position}
            for label, f, value in zip(versions, found, values):
                line[score_column(label)] = value
                line[reason_column(label)] = "" if f is None else _reason(f)
            lines.append(line)
    out = pd.DataFrame(lines)
    out["_spread"] = out["spread"].fillna(-1.0)
    out = out.sort_values(["differs", "_spread", "_position"], ascending=[False, False, True], kind="mergesort")
    return out[columns].reset_index(drop=True)


def _reason(row: Any) -> str:
    reason = row.reason if isinstance(row.reason, str) else ""
    if row.value is None or (isinstance(row.value, float) and math.isnan(row.value)):
        why = row.unscored_reason if isinstance(row.unscored_reason, str) else ""
        return f"[{why}] {reason}".strip() if why else reason
    return reason


def version_summary(frame: pd.DataFrame, versions: Sequence[str], *, threshold: float = 0.5) -> pd.DataFrame:
    """Per version and criterion: rows scored, unscored, mean score and pass share (at ``threshold``), and on how
    many rows it differs from at least one other version (``grid``'s rule)."""
    cells = grid(frame, versions, threshold=threshold)
    out = []
    for label in versions:
        part = frame[frame["method"] == label]
        for metric in first_seen(part["metric"]):
            values = part.loc[part["metric"] == metric, "value"].to_numpy(dtype=float)
            scored = values[~np.isnan(values)]
            mine = cells[cells["criterion"] == metric]
            out.append({"version": label, "criterion": metric, "scored": int(len(scored)),
                        "unscored": int(len(values) - len(scored)),
                        "mean": float(scored.mean()) if len(scored) else math.nan,
                        "pass share": float((scored >= threshold).mean()) if len(scored) else math.nan,
                        "rows that differ": int(mine["differs"].sum())})
    return pd.DataFrame(out, columns=["version", "criterion", "scored", "unscored", "mean", "pass share",
                                      "rows that differ"])


def version_agreement(frame: pd.DataFrame, versions: Sequence[str], *, threshold: float = 0.5,
                      iterations: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Every pair of versions on every criterion both scored: Spearman and kappa with bootstrap intervals
    (``judge_agreement.pairwise``; the versions are its judges)."""
    return judge_agreement.pairwise(frame, list(versions), threshold=threshold, iterations=iterations, seed=seed)


__all__ = ["GRID_FIXED", "grid", "reason_column", "score_column", "version_agreement", "version_summary",
           "versions_frame"]
