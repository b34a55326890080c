"""Judge vs judge: the same rows scored by several judges, side by side. Pure functions of result frames.

Pairwise agreement per criterion (Spearman, and Cohen's kappa with both sides split at a threshold), each
with a seeded percentile bootstrap interval over rows; the rows where judges split (some pass, some fail at
the threshold), widest spread first; and per judge the calls, tokens, cost and seconds per row. The
statistics themselves are ``rageval_core.core.stats`` (one copy of the math).
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from rageval_core.analysis.compare import agreement_note, methods_in, shared_criteria, wide
from rageval_core.core.method_labels import scorer_label
from rageval_core.core.stats import bootstrap_ci, cohen_kappa, spearman
from rageval_core.run.tallies import tally_calls

PAIR_COLUMNS = ["criterion", "judge_a", "judge_b", "n", "spearman", "spearman_lo", "spearman_hi",
                "kappa", "kappa_lo", "kappa_hi", "threshold", "note"]


def _nan(value: float | None) -> float:
    return math.nan if value is None else float(value)


def judge_scores(frame: pd.DataFrame, metric: str, judges: Sequence[str]) -> pd.DataFrame:
    """One row per sample, one column per judge: that judge's value for ``metric`` (NaN when unscored)."""
    table = wide(frame)
    cols = {j: table[f"{metric}|{j}"] for j in judges if f"{metric}|{j}" in table.columns}
    return pd.DataFrame(cols, index=table.index)


def pair_agreement(x: Sequence[float], y: Sequence[float], *, threshold: float = 0.5, iterations: int = 1000,
                   seed: int = 0) -> dict[str, Any]:
    """Spearman and kappa (at ``threshold``) of two judges over the same rows, with bootstrap intervals."""
    a, b = np.asarray(x, float), np.asarray(y, float)

    def rho(idx: list[int]) -> float | None:
        return spearman(a[idx], b[idx])

    def kappa(idx: list[int]) -> float | None:
        return cohen_kappa(a[idx], b[idx], threshold)

    n = len(a)
    s_ci = bootstrap_ci(rho, n, iterations=iterations, seed=seed) if n >= 2 else None
    k_ci = bootstrap_ci(kappa, n, iterations=iterations, seed=seed) if n >= 1 else None
    return {
        "n": n,
        "spearman": _nan(spearman(a, b)), "spearman_lo": _nan(s_ci[0] if s_ci else None), "spearman_hi": _nan(s_ci[1] if s_ci else None),
        "kappa": _nan(cohen_kappa(a, b, threshold)), "kappa_lo": _nan(k_ci[0] if k_ci else None), "kappa_hi": _nan(k_ci[1] if k_ci else None),
        "threshold": threshold,
    }


def pairwise(frame: pd.DataFrame, judges: Sequence[str] | None = None, *, threshold: float = 0.5,
             iterations: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Every pair of judges on every criterion both produced, over the rows both scored."""
    judges = list(judges) if judges is not None else methods_in(frame)
    rows = []
    for ja, jb in combinations(judges, 2):
        for metric in shared_criteria(frame, ja, jb):
            scores = judge_scores(frame, metric, [ja, jb])
            both = scores.dropna()
            x, y = both[ja].to_numpy(), both[jb].to_numpy()
            stats = pair_agreement(x, y, threshold=threshold, iterations=iterations, seed=seed)
            rows.append({"criterion": metric, "judge_a": ja, "judge_b": jb, **stats,
                         "note": agreement_note(x, y, threshold, (ja, jb))})
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def splits(frame: pd.DataFrame, judges: Sequence[str] | None = None, *, threshold: float = 0.5,
           top: int | None = None) -> pd.DataFrame:
    """(row, criterion) pairs where the judges split: at least one passes and one fails at ``threshold``.
    Columns: sample_id, category, criterion, spread (max − min), passes, voters, then one column per judge."""
    judges = list(judges) if judges is not None else methods_in(frame)
    categories = frame.drop_duplicates("sample_id").set_index("sample_id")["category"]
    rows = []
    for metric in dict.fromkeys(frame.loc[frame["method"].isin(judges), "metric"]):
        scores = judge_scores(frame, metric, judges)
        for sid, values in scores.iterrows():
            scored = values.dropna()
            if len(scored) < 2:
                continue
            passes = int((scored >= threshold).sum())
            if 0 < passes < len(scored):
                rows.append({"sample_id": sid, "category": categories.get(sid), "criterion": metric,
                             "spread": float(scored.max() - scored.min()), "passes": passes, "voters": len(scored),
                             **{j: values.get(j, math.nan) for j in scores.columns}})
    out = pd.DataFrame(rows, columns=["sample_id", "category", "criterion", "spread", "passes", "voters", *judges])
    out = out.sort_values(["spread", "sample_id"], ascending=[False, True], kind="mergesort").reset_index(drop=True)
    return out if top is None else out.head(top)


def cost_per_judge(calls: Iterable[Any], n_rows: int) -> pd.DataFrame:
    """Per judge (display method): calls, cache hits, errors, tokens, cost and call seconds, in total and per row,
    and the share of input tokens the provider served from its prompt cache (NaN without input tokens)."""
    totals = tally_calls(calls, lambda get, _method: scorer_label(get("scorer"), get("method") or "?"))
    rows = []
    per = max(1, n_rows)
    for judge, u in totals.items():
        rows.append({"judge": judge, "calls": u.calls, "cached_calls": u.cached_calls, "errors": u.errors, "tokens": u.tokens,
                     "cost_usd": u.cost_usd, "seconds": u.latency_s, "input_tokens": u.input_tokens,
                     "cached_input_tokens": u.cached_input_tokens, "calls_per_row": u.calls / per,
                     "tokens_per_row": u.tokens / per, "cost_per_row": u.cost_usd / per, "seconds_per_row": u.latency_s / per,
                     "cached_share": math.nan if u.cached_share is None else u.cached_share})
    return pd.DataFrame(rows, columns=["judge", "calls", "cached_calls", "errors", "tokens", "cost_usd", "seconds",
                                       "calls_per_row", "tokens_per_row", "cost_per_row", "seconds_per_row",
                                       "input_tokens", "cached_input_tokens", "cached_share"])
