"""What a run records once it is over: the summary of its results and the cost of its calls per method or scorer.

Plain Python, no pandas (importing pandas took about 75 MB of the CLI's peak memory, more than any table of a
12,000-row run). The runner writes these at the end of a run; the export, the CLI and ``analysis`` read them.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Callable, Iterable, Mapping, Protocol

from rageval_core.core.method_labels import result_method
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, Usage


# ---- summaries (plain Python; used by the runner, the export and the CLI) -------------------------------
class ResultHead(Protocol):
    """What a summary reads of a result: a ``MetricResult``, or a row the runner streams from the store."""

    @property
    def method(self) -> str: ...

    @property
    def metric(self) -> str: ...

    @property
    def value(self) -> float | None: ...

    @property
    def unscored_reason(self) -> str | None: ...

    @property
    def details(self) -> Mapping[str, Any] | None: ...


def summarize(results: Iterable[ResultHead]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{method: {metric: {mean, scored, unscored, unscored_reasons, reasked, recovered}}}``; the mean covers
    scored rows only; ``reasked`` / ``recovered`` count re-asks after unusable answers and those that worked.

    Decomposed first, then judges in the order they appear; metrics in the standard id order.
    """
    totals: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0])  # running sum, count (flat memory)
    reasons: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
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
        why = reasons.get((method, metric), Counter[str]())
        out.setdefault(method, {})[metric] = {
            "mean": (total / count) if count else None,
            "scored": int(count),
            "unscored": sum(why.values()),
            "unscored_reasons": dict(why),
            "reasked": reasks[(method, metric)][0],
            "recovered": reasks[(method, metric)][1],
        }
    return out


def cost_dict(method: str, usage: Usage) -> dict[str, Any]:
    """One method's cost as the export's ``cost`` and the cost tables hold it: these keys in this order (the export
    JSON contract), a cache write only where a provider billed one."""
    out: dict[str, Any] = {
        "method": method, "calls": usage.calls, "cached_calls": usage.cached_calls, "errors": usage.errors,
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens, "cost_usd": usage.cost_usd,
        "latency_s": usage.latency_s, "cached_input_tokens": usage.cached_input_tokens,
    }
    if usage.cache_write_tokens:
        out["cache_write_tokens"] = usage.cache_write_tokens
    return out


COST_KEYS = tuple(cost_dict("", Usage()))


def method_of_scorer(scorer: str | None) -> str:
    """Judge scorers are named by their method (``judge:rubric5``); every other scorer is decomposed."""
    return scorer if scorer and scorer.startswith("judge:") else DECOMPOSED


def cost_by_method(calls: Iterable[Any]) -> dict[str, Usage]:
    """Call-log entries (``store.CallEntry`` or dicts with the same keys) summed per method."""
    return tally_calls(calls, lambda get, method: method)


def cost_by_scorer(calls: Iterable[Any]) -> dict[str, Usage]:
    """Like ``cost_by_method`` but per scorer (a decomposed metric or a judge), keyed by scorer name.

    A call shared through the claim memo counts for the scorer that made it.
    """
    return tally_calls(calls, lambda get, method: get("scorer") or "?")


def tally_calls(calls: Iterable[Any], key: Callable[[Callable[[str], Any], str], str]) -> dict[str, Usage]:
    """Call-log entries summed per ``key(get, method)`` (``get`` reads a field of the entry; ``method`` is its
    method, or its scorer's): an error counts as an error only; a response-cache hit as a cached call with its
    latency; a provider call with its tokens, cost and latency. Keys in first-call order."""
    sums: dict[str, list[Any]] = {}  # plain running sums (a 12,000-row run logs ~84,000 calls), one Usage per key
    for c in calls:
        get = c.get if isinstance(c, Mapping) else (lambda k, _c=c: getattr(_c, k, None))
        method = get("method") or method_of_scorer(get("scorer"))
        m = sums.setdefault(key(get, method), [0, 0, 0, 0, 0, 0, 0, 0.0, 0.0])
        if get("error"):
            m[2] += 1
            continue
        if get("cached"):
            m[1] += 1
        else:
            usage = get("usage")
            read = usage.get if isinstance(usage, Mapping) else (lambda k, _u=usage: getattr(_u, k, 0))
            m[0] += 1
            m[3] += int(read("input_tokens") or 0)
            m[4] += int(read("output_tokens") or 0)
            m[5] += int(read("cached_input_tokens") or 0)
            m[6] += int(read("cache_write_tokens") or 0)
            m[7] += float(get("cost_usd") or 0.0)
        m[8] += float(get("latency_s") or 0.0)
    return {
        k: Usage(inp, out, hit, written, calls=n, cached_calls=cached, errors=errors, cost_usd=cost, latency_s=latency)
        for k, (n, cached, errors, inp, out, hit, written, cost, latency) in sums.items()
    }
