"""The plugin's end-of-session table: which tests scored rows, with which judge, each metric × method's mean over
the scored rows beside its threshold and whether it passed, the run id to open in the workbench, and how many
tests needing a judge were skipped or failed before scoring, and why. A CI log then says what was judged, not
only that pytest exited 0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rageval_core.core.method_labels import result_method
from rageval_core.core.types import DECOMPOSED, MetricResult
from rageval_core.testing.assertions import outcomes


@dataclass
class Line:
    """One metric × method a test scored (and the threshold it asserted on it, if any)."""

    test: str
    run_id: str
    metric: str
    method: str
    scored: int
    mean: float | None
    threshold: str = "-"
    passed: bool | None = None


@dataclass
class SessionRecord:
    """What the session's judge did, test by test (``current`` is the test running)."""

    judge: str = ""
    current: str = ""
    lines: list[Line] = field(default_factory=list)
    outcomes: dict[str, str] = field(default_factory=dict)  # test -> passed / failed / skipped
    skipped: Counter = field(default_factory=Counter)  # reason -> tests
    stopped: Counter = field(default_factory=Counter)  # failed before scoring: reason -> tests

    def scored(self, run_id: str, results: Sequence[MetricResult]) -> None:
        by: dict[tuple[str, str], list[float | None]] = {}
        for r in results:
            by.setdefault((r.metric, result_method(r)), []).append(r.value)
        for (metric, method), values in by.items():
            got = [v for v in values if v is not None]
            self.lines.append(Line(self.current, run_id, metric, method, len(got), sum(got) / len(got) if got else None))

    def asserted(self, run_id: str, results: Sequence[MetricResult], thresholds: Mapping[str, float] | Iterable[str],
                 mode: str) -> None:
        for o in outcomes(results, thresholds, mode):
            t = o.threshold
            line = next((x for x in self.lines if (x.test, x.run_id, x.metric, x.method) == (self.current, run_id, t.metric, t.method)
                         and x.passed is None), None)
            if line is None:
                line = Line(self.current, run_id, t.metric, t.method, o.scored, o.mean)
                self.lines.append(line)
            line.threshold, line.passed = f">= {t.minimum:g} ({mode})", o.passed

    def report(self, test: str, outcome: str, reason: str | None, stopped: bool) -> None:
        """A test needing a judge ended: ``stopped`` when it failed before scoring (its judge could not run)."""
        self.outcomes[test] = outcome
        if outcome == "skipped" and reason:
            self.skipped[reason] += 1
        elif stopped and reason:
            self.stopped[reason] += 1

    def text(self) -> list[str]:
        """The summary, line by line."""
        tests = list(dict.fromkeys(x.test for x in self.lines))
        counts = Counter(self.outcomes.get(t, "passed") for t in tests)
        out = [f"judge: {self.judge}",
               f"tests scored: {len(tests)} ({counts['passed']} passed, {counts['failed']} failed) · "
               f"skipped: {sum(self.skipped.values())} · failed before scoring: {sum(self.stopped.values())}"]
        if self.lines:
            rows = [["test", "run", "metric", "method", "rows", "mean", "threshold", "result"]]
            rows += [[x.test, x.run_id, x.metric, x.method if x.method != DECOMPOSED else "decomposed", str(x.scored),
                      "-" if x.mean is None else f"{x.mean:.3f}", x.threshold,
                      "-" if x.passed is None else "pass" if x.passed else "FAIL"] for x in self.lines]
            out += _table(rows)
        out += [f"skipped {n} test(s): {reason}" for reason, n in self.skipped.items()]
        out += [f"failed {n} test(s) before scoring: {reason}" for reason, n in self.stopped.items()]
        return out


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]


def skip_reason(report: Any) -> str | None:  # Any: pytest's TestReport (pytest is not imported here)
    """The reason pytest recorded for a skip (``longrepr`` is ``(file, line, "Skipped: reason")``)."""
    longrepr = getattr(report, "longrepr", None)
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return None if longrepr is None else str(longrepr)
