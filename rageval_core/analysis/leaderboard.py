"""History as a leaderboard: one line per stored run with its scores, cost and time, read with grouped SQL.

Per run: name and note (editable), dataset, provider and model(s) (every judge configuration's), the mean of
each metric per method over scored rows (``<method>/<metric>`` columns; several judge configurations and
juries are methods of their own, see ``core.method_labels``), the unscored share, provider calls, cost and wall
time. Two aggregate queries cover every run, over the narrow copies of the results and the call log
(``rageval_core.store.light_tables``), so the table stays cheap with many runs of 10,000 rows: no result details,
prompts or responses are read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Sequence

import pandas as pd

from rageval_core.analysis.run_groups import side_detail, side_kind
from rageval_core.core.method_labels import display_method
from rageval_core.store import readback
from rageval_core.store.runs import RunInfo, Store
from rageval_core.core.types import DECOMPOSED, METRIC_IDS

FIXED_COLUMNS = ["run", "side", "name", "note", "created (UTC)", "status", "dataset", "rows", "provider/model",
                 "unscored share", "calls", "cost ($)", "wall (s)"]


@dataclass
class LeaderRow:
    """One run's line of the leaderboard."""

    info: RunInfo
    judges: list[str]
    means: dict[str, float | None] = field(default_factory=dict)  # "<method>/<metric>" → mean over scored rows
    scored: int = 0
    unscored: int = 0
    calls: int = 0
    cost_usd: float = 0.0
    rows_kept: int | None = None  # ``on_rows``: the rows a filter left (None: every row of the run)

    @property
    def unscored_share(self) -> float | None:
        total = self.scored + self.unscored
        return None if total == 0 else self.unscored / total

    @property
    def wall_s(self) -> float | None:
        return None if self.info.finished_at is None else max(0.0, self.info.finished_at - self.info.created_at)


def _judges_of(info: RunInfo) -> list[str]:
    configs = info.settings.get("judge_configs") or []
    out = [f"{c.get('provider')}/{c.get('model') or c.get('provider')}" for c in configs if isinstance(c, dict)]
    run_own = f"{info.provider}/{info.model}"
    unbound = [s for s in info.scorers if "@" not in s]
    if unbound or not out:
        out.insert(0, run_own)
    return list(dict.fromkeys(out))


def leader_rows(store: Store, infos: Sequence[RunInfo] | None = None) -> list[LeaderRow]:
    """The leaderboard's lines for ``infos`` (default every stored run, newest first)."""
    infos = list(infos) if infos is not None else store.list_runs()
    rows = {i.id: LeaderRow(i, _judges_of(i)) for i in infos}
    if not rows:
        return []
    ids = list(rows)
    for run_id, method, judge, metric, mean, scored, total in readback.leaderboard_means(store, ids):
        row = rows[run_id]
        row.means[f"{display_method(method, judge)}/{metric}"] = None if scored == 0 or mean is None else float(mean)
        row.scored += int(scored)
        row.unscored += int(total) - int(scored)
    for run_id, calls, cost in readback.leaderboard_calls(store, ids):
        rows[run_id].calls = calls
        rows[run_id].cost_usd = cost
    return [rows[i] for i in ids]


def on_rows(row: LeaderRow, frame: pd.DataFrame) -> LeaderRow:
    """``row`` with its means and scored / unscored counts recomputed on ``frame``: the run's results (repeat 0, as
    the pages' frames hold them) on the rows a filter left, so every run is ranked on the same slice (a category,
    a language, slow traces). Calls, cost and wall time stay the whole run's."""
    means: dict[str, float | None] = {}
    scored = unscored = 0
    if not frame.empty:
        for (method, metric), values in frame.groupby(["method", "metric"], sort=False)["value"]:
            n = int(values.notna().sum())
            means[f"{method}/{metric}"] = float(values.mean()) if n else None
            scored += n
            unscored += len(values) - n
    kept = int(frame["sample_id"].nunique()) if not frame.empty else 0
    return replace(row, means=means, scored=scored, unscored=unscored, rows_kept=kept)


def _column_order(columns: Sequence[str]) -> list[str]:
    rank = {m: i for i, m in enumerate(METRIC_IDS)}

    def key(col: str) -> tuple[int, str, int, str]:
        method, _, metric = col.rpartition("/")
        kind = 0 if method == DECOMPOSED else 2 if method.startswith("jury:") else 1
        return (kind, method, rank.get(metric, len(rank)), metric)

    return sorted(columns, key=key)


def leaderboard_frame(rows: Sequence[LeaderRow]) -> pd.DataFrame:
    """The leaderboard as a table: the fixed columns, then a mean column per ``<method>/<metric>``. ``side`` is
    "" for a run the user started, else ``<kind>:<detail>`` (``probe:negation``; ``analysis.run_groups``)."""
    metric_cols = _column_order(list(dict.fromkeys(c for r in rows for c in r.means)))
    records = []
    for r in rows:
        i = r.info
        kind = side_kind(i)
        records.append({
            "run": i.id, "side": "" if kind is None else ":".join(p for p in (kind, side_detail(i)) if p),
            "name": i.name or "", "note": i.note or "",
            "created (UTC)": datetime.fromtimestamp(i.created_at, tz=UTC).strftime("%Y-%m-%d %H:%M:%S"),
            "status": i.status, "dataset": i.dataset_name, "rows": i.n_rows if r.rows_kept is None else r.rows_kept, "provider/model": ", ".join(r.judges),
            "unscored share": r.unscored_share, "calls": r.calls, "cost ($)": round(r.cost_usd, 6),
            "wall (s)": None if r.wall_s is None else round(r.wall_s, 1),
            **{c: r.means.get(c) for c in metric_cols},
        })
    frame = pd.DataFrame(records, columns=FIXED_COLUMNS + metric_cols)
    for c in metric_cols + ["unscored share", "wall (s)"]:
        frame[c] = frame[c].astype(float)
    return frame


def filter_sort(frame: pd.DataFrame, *, text: str = "", dataset: str | None = None, sort_by: str | None = None,
                descending: bool = True) -> pd.DataFrame:
    """Rows whose run id, name, note or provider/model contain ``text`` (case-insensitive), of ``dataset`` when
    given, sorted by ``sort_by`` (missing values last)."""
    out = frame
    if text:
        needle = text.lower()
        hay = out[["run", "name", "note", "provider/model"]].astype(str).agg(" ".join, axis=1).str.lower()
        out = out[hay.str.contains(needle, regex=False)]
    if dataset:
        out = out[out["dataset"] == dataset]
    if sort_by and sort_by in out.columns:
        out = out.sort_values(sort_by, ascending=not descending, na_position="last", kind="mergesort")
    return out.reset_index(drop=True)


def metric_columns(frame: pd.DataFrame) -> list[str]:
    return [c for c in frame.columns if c not in FIXED_COLUMNS]


def by_run(rows: Sequence[LeaderRow]) -> dict[str, LeaderRow]:
    return {r.info.id: r for r in rows}


def datasets_of(frame: pd.DataFrame) -> list[str]:
    return sorted({str(d) for d in frame["dataset"].dropna()})
