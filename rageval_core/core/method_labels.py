"""How a result's method is shown when one run holds several judge configurations.

The method string of a result never changes (DESIGN.md Contracts: ``judge:rubric5`` stays ``judge:rubric5``
whichever model judged). A result scored under a named judge configuration carries the configuration's id
in ``details["judge"]``; every table, summary and statistic then keys it by ``<method>@<judge id>`` so two
models on the same rubric are two columns, not one average. Results of single-configuration runs keep
their plain method.

In ``core`` because the store, the runner, the analysis and the UI all key by these labels.
"""

from __future__ import annotations

from typing import Any, Mapping

SEPARATOR = "@"
JURY_PREFIX = "jury:"

__all__ = ["JURY_PREFIX", "SEPARATOR", "base_method", "display_method", "is_jury", "judge_of", "result_method",
           "scorer_label"]


def display_method(method: str, judge: str | None) -> str:
    """``judge:rubric5@gpt-4o-mini`` for a result of a named configuration, else the method itself."""
    return f"{method}{SEPARATOR}{judge}" if judge else method


def judge_of(details: Mapping[str, Any] | None) -> str | None:
    """The judge configuration id a result's details carry (None for single-configuration runs)."""
    if not details:
        return None
    value = details.get("judge")
    return str(value) if value else None


def result_method(result: Any) -> str:  # Any: a MetricResult, or a row read back from the store (method, details)
    """The display method of a ``MetricResult`` (see the module docstring)."""
    return display_method(result.method, judge_of(getattr(result, "details", None)))


def scorer_label(scorer: str | None, method: str) -> str:
    """The display method of a call-log entry: bound scorers are named ``<scorer>@<judge id>``."""
    if scorer and SEPARATOR in scorer and not method.startswith(JURY_PREFIX):
        return display_method(method, scorer.split(SEPARATOR, 1)[1])
    return method


def base_method(label: str) -> str:
    """The contract method of a display label (``judge:rubric5@x`` → ``judge:rubric5``)."""
    return label.split(SEPARATOR, 1)[0]


def is_jury(label: str) -> bool:
    return label.startswith(JURY_PREFIX)
