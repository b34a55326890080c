"""Why results went unscored, in a few lines: per unscored reason, how many results and the first distinct
messages (the actual cause, e.g. "cannot reach http://127.0.0.1:9/v1"), so a front end can say what
happened without the user opening the JSON. Pure: no I/O, no printing."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

MESSAGE_CHARS = 300  # a message longer than this is cut (the full text stays in the export)


@dataclass(frozen=True)
class FailureGroup:
    """Results unscored for one reason: how many, on how many rows, and the first distinct messages."""

    reason: str
    count: int
    rows: int
    messages: tuple[str, ...]
    more_messages: int = 0  # distinct messages not listed


def _message(result: Any) -> str | None:  # Any: a MetricResult or a stored result's narrow row (reason, details)
    text = getattr(result, "reason", None) or (getattr(result, "details", None) or {}).get("error")
    if not text:
        return None
    text = " ".join(str(text).split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 1] + "…"


def summarize_failures(results: Iterable[Any], max_messages: int = 3) -> list[FailureGroup]:
    """Unscored results grouped by ``unscored_reason``, most frequent first (ties by reason name), each with
    up to ``max_messages`` distinct messages in the order first seen. Scored results are ignored."""
    counts: dict[str, int] = {}
    rows: dict[str, set[str]] = {}
    messages: dict[str, list[str]] = {}
    for r in results:
        if getattr(r, "value", None) is not None:
            continue
        reason = getattr(r, "unscored_reason", None) or "unknown"
        counts[reason] = counts.get(reason, 0) + 1
        rows.setdefault(reason, set()).add(str(getattr(r, "sample_id", "")))
        text = _message(r)
        seen = messages.setdefault(reason, [])
        if text and text not in seen:
            seen.append(text)
    return [
        FailureGroup(
            reason,
            counts[reason],
            len(rows[reason]),
            tuple(messages[reason][:max_messages]),
            max(0, len(messages[reason]) - max_messages),
        )
        for reason in sorted(counts, key=lambda k: (-counts[k], k))
    ]


def failure_lines(groups: Iterable[FailureGroup]) -> list[str]:
    """Plain-text lines for a terminal or a log: one header line per reason, then its messages indented."""
    lines: list[str] = []
    for g in groups:
        lines.append(f"{g.reason}: {g.count} result(s) on {g.rows} row(s)")
        lines.extend(f"  - {m}" for m in g.messages)
        if g.more_messages:
            lines.append(f"  … {g.more_messages} more distinct message(s) in the export")
    return lines
