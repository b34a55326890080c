"""The ``trust`` command's annotators section: agreement between people (kappa with its interval for two,
Krippendorff's alpha for more) beside each judge's kappa with every annotator, the plain sentence on whether
the judge is within the people's range, and the rows people disagree on (to settle in Inspect)."""

from __future__ import annotations

from typing import Any

from rageval_core.cli.common import echo, fmt, short, table

SETTLE_SHOWN = 10


def _stat(stat: Any) -> str:  # Any: a report's Stat, or its to_dict() form read back from a saved report
    value, low, high = (stat.value, stat.low, stat.high) if hasattr(stat, "value") else (stat["value"], stat["low"], stat["high"])
    if value is None:
        return "-"
    return fmt(value) if low is None else f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


def print_annotators(ctx: Any) -> None:
    block = ctx.report.annotators
    if block is None:
        return
    echo(f"\nagreement between people ({', '.join(block.annotators)}; 95% bootstrap intervals) beside the judges:")
    rows = []
    for c in block.criteria:
        spread = "-" if c.spread is None else f"{fmt(c.spread[0])}–{fmt(c.spread[1])}"
        rows.append([c.criterion, c.statistic, c.n_shared, _stat(c.people), spread, ""])
        for j in c.judges:
            each = ", ".join(f"{a} {fmt(v['kappa'])}" for a, v in j.per_annotator.items())
            rows.append(["", j.method, "", fmt(j.mean), each, j.verdict])
    echo(table(["criterion", "people / judge", "rows", "agreement", "pairs / with each", "judge is"], rows))
    for c in block.criteria:
        for j in c.judges:
            echo(f"  {j.sentence}")
    queue = block.to_settle()
    if queue:
        echo(f"\nto settle ({len(queue)} disagreement(s); open the row in Inspect):")
        echo(table(["row", "criterion", "labels"], [
            [d["row_id"], d["criterion"], short(", ".join(f"{a} {'👍' if v else '👎'}" for a, v in d["labels"].items()), 48)]
            for d in queue[:SETTLE_SHOWN]]))
        if len(queue) > SETTLE_SHOWN:
            echo(f"  … and {len(queue) - SETTLE_SHOWN} more (all in --out JSON, annotators.criteria[].disagreements)")
