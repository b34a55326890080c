"""Traces pulled from a running Phoenix into dataset rows: the newest ``limit`` traces of a project whose root span
started in a time window, each with all its spans, rebuilt by the same code as a Phoenix export file
(``data.traces.import_traces``, format ``phoenix``: one row per RAG answer, incomplete traces skipped by reason).

Two passes over the REST API, both paginated with Phoenix's cursor: the root spans (``parent_id=null``) in the
window, newest first, up to ``limit``; then every span of those traces (``trace_id`` filters, a hundred ids a
request). ``limit`` counts traces, not spans, so no trace is cut in half by a page. A root span whose parent was
recorded by another service (not in Phoenix) is not a root here; such traces are not pulled.
"""

from __future__ import annotations

import json
import re
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from rageval_core.data.phoenix.client import MAX_SPAN_PAGE, PhoenixClient, Project, chunks
from rageval_core.data.phoenix.config import DEFAULT_LIMIT, DEFAULT_LINK, PhoenixError
from rageval_core.data.traces.importer import import_traces
from rageval_core.data.traces.mapping import TraceMap
from rageval_core.data.traces.model import TraceImport

_RELATIVE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}

__all__ = ["PhoenixPull", "fill_link", "parse_when", "pull_traces"]


@dataclass
class PhoenixPull:
    """What a pull read: the rebuilt rows (``result``), the project, and how much came over the wire."""

    result: TraceImport
    project: Project
    url: str
    n_traces: int
    n_spans: int
    since: datetime | None = None
    until: datetime | None = None

    def summary(self) -> str:
        window = f"{_iso(self.since) or 'the start'} → {_iso(self.until) or 'now'}"
        return f"{self.result.summary()}; the newest {self.n_traces} trace(s) started {window}"


def parse_when(text: str | None, now: datetime | None = None) -> datetime | None:
    """A time bound: ``30m``, ``24h``, ``7d``, ``2w`` (that long before now) or an ISO 8601 date or time (without an
    offset it is UTC, as Phoenix reads it). ``None`` for an empty bound; ``PhoenixError`` naming the text."""
    if text is None or not str(text).strip():
        return None
    now = now or datetime.now(UTC)
    match = _RELATIVE.match(str(text))
    if match:
        return now - timedelta(**{_UNITS[match.group(2).lower()]: float(match.group(1))})
    try:
        when = datetime.fromisoformat(str(text).strip().replace("Z", "+00:00"))
    except ValueError:
        raise PhoenixError(f"time {text!r} is neither a duration (30m, 24h, 7d, 2w) nor an ISO 8601 date or time "
                           "(2026-12-01, 2026-12-01T09:00:00+09:00)") from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def fill_link(template: str | None, *, url: str, project: Project) -> str | None:
    """A trace link template with the server's parts filled in (``{url}``, ``{project}`` = the name,
    ``{project_id}``) and ``{trace_id}`` left for each row; ``None`` for no links. ``PhoenixError`` when the
    template has no ``{trace_id}``."""
    if template is None or not template.strip():
        return None
    if "{trace_id}" not in template:
        raise PhoenixError(f"trace link template {template!r} has no {{trace_id}} placeholder")
    return (template.strip().replace("{url}", url).replace("{project_id}", urllib.parse.quote(project.id, safe=""))
            .replace("{project}", urllib.parse.quote(project.name, safe="")))


def pull_traces(client: PhoenixClient, project_name: str, *, since: datetime | None = None,
                until: datetime | None = None, limit: int = DEFAULT_LIMIT, trace_url: str | None = DEFAULT_LINK,
                trace_map: TraceMap | None = None, page_size: int = MAX_SPAN_PAGE) -> PhoenixPull:
    """The newest ``limit`` traces of the project whose root started in [since, until), as dataset rows (in the
    order they started). ``trace_url``: a link template for each row (default Phoenix's trace page; ``None`` for
    none). ``PhoenixError`` when the server cannot be read or the window holds no trace."""
    if limit < 1:
        raise PhoenixError(f"--limit must be at least 1 (got {limit})")
    if since and until and since >= until:
        raise PhoenixError(f"the time window is empty: since {_iso(since)} is not before until {_iso(until)}")
    project = client.project(project_name)
    link = fill_link(trace_url, url=client.public_url, project=project)
    window = [("start_time", _iso(since)), ("end_time", _iso(until))]
    roots = [s for s in client.spans(project, [("parent_id", "null"), *window], page_size=page_size, max_items=limit)
             if not s.get("parent_id")]
    order = list(dict.fromkeys(_trace_id(s) for s in roots if _trace_id(s)))[:limit]
    order.reverse()  # Phoenix lists newest first; the dataset reads in the order they happened
    if not order:
        raise PhoenixError(f"no trace in project {project.name!r} on Phoenix at {client.shown} started between "
                           f"{_iso(since) or 'the start'} and {_iso(until) or 'now'}")
    wanted = {tid: n for n, tid in enumerate(order)}
    spans: list[dict[str, Any]] = []
    for ids in chunks(order):
        spans.extend(s for s in client.spans(project, [("trace_id", t) for t in ids], page_size=page_size)
                     if _trace_id(s) in wanted)
    spans.sort(key=lambda s: wanted[_trace_id(s)])
    page = json.dumps({"data": spans, "next_cursor": None}, ensure_ascii=False).encode("utf-8")
    result = import_traces(page, f"Phoenix {client.shown} project {project.name}", "phoenix", trace_map, link)
    return PhoenixPull(result, project, client.shown, len(order), len(spans), since, until)


def _trace_id(span: Any) -> str:
    context = span.get("context") if isinstance(span, dict) else None
    return str((context or {}).get("trace_id") or "")


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat()
