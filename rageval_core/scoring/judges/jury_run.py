"""Adding a jury to a stored run: its results are stored like any scorer's, so every view lists it.

The jury reads the members' stored results (repeat 0), combines them per row and criterion
(``jury.combine``) and writes one task per row under scorer ``jury:<rule>``, replacing an earlier jury
with the same rule. Members are display methods (``judge:rubric5@gpt-4o-mini``); by default every judge
configuration of the run, or every non-jury method when the run has none.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Sequence

from rageval_core.scoring.judges.jury import combine, jury_method
from rageval_core.core.method_labels import is_jury, result_method
from rageval_core.store.runs import Store
from rageval_core.core.types import MetricResult
from rageval_core.core.errors import ConfigError


def default_members(methods: Sequence[str]) -> list[str]:
    """Every judge configuration's label when the run has some (``…@id``), else every non-jury method."""
    plain = [m for m in methods if not is_jury(m)]
    bound = [m for m in plain if "@" in m]
    return bound or plain


def jury_results(results: Sequence[MetricResult], rule: str, members: Sequence[str] | None = None,
                 *, threshold: float = 0.5) -> list[MetricResult]:
    """The jury's results over ``results`` (one per row and criterion some member produced)."""
    methods = list(dict.fromkeys(result_method(r) for r in results))
    chosen = list(members) if members else default_members(methods)
    unknown = [m for m in chosen if m not in methods]
    if unknown:
        raise ConfigError(f"jury members not in this run: {', '.join(unknown)} (methods: {', '.join(methods)})")
    if len(chosen) < 2:
        raise ConfigError("a jury needs at least two members")
    cells: dict[tuple[str, str], dict[str, MetricResult]] = defaultdict(dict)
    for r in results:
        label = result_method(r)
        if label in chosen:
            cells[(r.sample_id, r.metric)][label] = r
    method = jury_method(rule)
    out: list[MetricResult] = []
    for (sample_id, metric), by_member in cells.items():
        present = [m for m in chosen if m in by_member]
        votes = [by_member[m].value for m in present]
        verdict = combine(votes, rule, threshold=threshold, reasons=[by_member[m].unscored_reason for m in present])
        shown = ", ".join(f"{m} {'-' if v is None else f'{v:.2f}'}" for m, v in zip(present, votes))
        reason = f"{rule} of {verdict.voters} of {len(chosen)} members: {shown}"
        out.append(MetricResult(
            sample_id, metric, method, verdict.value, unscored_reason=verdict.unscored_reason, reason=reason,
            provider="jury", model=f"{rule}({', '.join(chosen)})",
            details={"jury": {"rule": rule, "members": chosen, "votes": dict(zip(present, votes)),
                              "threshold": threshold, "voters": verdict.voters, "passes": verdict.passes}},
        ))
    return out


def add_jury(store: Store, run_id: str, rule: str, members: Sequence[str] | None = None,
             *, threshold: float = 0.5) -> list[MetricResult]:
    """Compute the jury over a stored run and store it under scorer ``jury:<rule>`` (replacing an earlier one)."""
    results = [r for r in store.results(run_id) if not is_jury(r.method)]
    out = jury_results(results, rule, members, threshold=threshold)
    by_row: dict[str, list[MetricResult]] = defaultdict(list)
    for r in out:
        by_row[r.sample_id].append(r)
    method = jury_method(rule)
    store.save_tasks(run_id, [(sid, method, rs, 0) for sid, rs in by_row.items()])
    return out
