"""What a run records once it is over: the summary of its results and the cost of its calls per method or scorer.

Plain Python, no pandas (importing pandas took about 75 MB of the CLI's peak memory, more than any table of a
12,000-row run). The runner writes these at the end of a run; the export, the CLI and ``analysis`` read them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from rageval_core.core.method_labels import result_method
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, MetricResult


# ---- summaries (plain Python; used by the runner, the export and the CLI) -------------------------------
def summarize(results: Iterable[MetricResult]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{method: {metric: {mean, scored, unscored, unscored_reasons, reasked, recovered}}}``; the mean covers
    scored rows only; ``reasked`` / ``recovered`` count re-asks after unusable answers and those that worked.

    Decomposed first, then judges in the order they appear; metrics in the standard id order.
    """
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])  # running sum, count (flat memory)
    reasons: dict[tuple[str, str], Counter] = defaultdict(Counter)
    order: list[tuple[str, str]] = []
    reasks: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in results:
        key = (result_method(r), r.metric)
        if key not in totals and key not in reasons:
            order.append(key)
        reask = (getattr(r, "details", None) or {}).get("reask")
        if isinstance(reask, dict):
            reasks[key][0] += int(reask.get("asked") or 0)
            reasks[key][1] += int(reask.get("recovered") or 0)
        if r.value is not None:
            acc = totals[key]
            acc[0] += float(r.value)
            acc[1] += 1
        else:
            reasons[key][r.unscored_reason or "unknown"] += 1
    out: dict[str, dict[str, dict[str, Any]]] = {}
    methods = list(dict.fromkeys(m for m, _ in order))
    rank = {m: i for i, m in enumerate(METRIC_IDS)}
    seen = {k: i for i, k in enumerate(order)}
    order = sorted(order, key=lambda k: (k[0] != DECOMPOSED, methods.index(k[0]), rank.get(k[1], len(rank)), seen[k]))
    for method, metric in order:
        total, count = totals.get((method, metric), (0.0, 0))
        why = reasons.get((method, metric), Counter())
        out.setdefault(method, {})[metric] = {
            "mean": (total / count) if count else None,
            "scored": int(count),
            "unscored": sum(why.values()),
            "unscored_reasons": dict(why),
            "reasked": reasks[(method, metric)][0],
            "recovered": reasks[(method, metric)][1],
        }
    return out


@dataclass
class MethodCost:
    """Actual work of one method: provider calls, cache hits, errors, tokens, cost and summed call latency."""

    method: str
    calls: int = 0
    cached_calls: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    latency_s: float = 0.0
    cached_input_tokens: int = 0  # of input_tokens, served from the provider's prompt-prefix cache

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)

    @property
    def cached_share(self) -> float | None:
        """Share of the provider calls' input tokens the provider served from its prompt cache (None: no input)."""
        return self.cached_input_tokens / self.input_tokens if self.input_tokens else None


def method_of_scorer(scorer: str | None) -> str:
    """Judge scorers are named by their method (``judge:rubric5``); every other scorer is decomposed."""
    return scorer if scorer and scorer.startswith("judge:") else DECOMPOSED


def cost_by_method(calls: Iterable[Any]) -> dict[str, MethodCost]:
    """Aggregate call-log entries (``store.CallEntry`` or dicts with the same keys) per method."""
    return _cost_by(calls, lambda get, method: method)


def cost_by_scorer(calls: Iterable[Any]) -> dict[str, MethodCost]:
    """Like ``cost_by_method`` but per scorer (a decomposed metric or a judge), keyed by scorer name.

    A call shared through the claim memo counts for the scorer that made it.
    """
    return _cost_by(calls, lambda get, method: get("scorer") or "?")


def _cost_by(calls: Iterable[Any], key: Callable[[Callable[[str], Any], str], str]) -> dict[str, MethodCost]:
    """Call-log entries summed per ``key(get, method)``; each total is labelled with its first call's method."""
    out: dict[str, MethodCost] = {}
    for c in calls:
        get = c.get if isinstance(c, Mapping) else (lambda k, _c=c: getattr(_c, k, None))
        method = get("method") or method_of_scorer(get("scorer"))
        m = out.setdefault(key(get, method), MethodCost(method))
        usage = get("usage")
        if isinstance(usage, Mapping):
            inp, outp, hit = usage.get("input_tokens", 0), usage.get("output_tokens", 0), usage.get("cached_input_tokens", 0)
        else:
            inp, outp = getattr(usage, "input_tokens", 0), getattr(usage, "output_tokens", 0)
            hit = getattr(usage, "cached_input_tokens", 0)
        if get("error"):
            m.errors += 1
            continue
        if get("cached"):
            m.cached_calls += 1
        else:
            m.calls += 1
            m.input_tokens += int(inp or 0)
            m.output_tokens += int(outp or 0)
            m.cached_input_tokens += int(hit or 0)
            m.cost_usd += float(get("cost_usd") or 0.0)
        m.latency_s += float(get("latency_s") or 0.0)
    return out
