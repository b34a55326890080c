"""What every format's reader shares: the ``ReadContext`` (where problems go, which attributes are kept),
``make_span`` (the compact ``TraceSpan`` with only the attributes the trace map reads, each checked against
the limits), the placeholder that skips a trace whose span could not be read, and how a leaf's path is
written in a message (``resourceSpans[0].scopeSpans[0].spans[3]``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from rageval_core.data.traces import traceloop
from rageval_core.data.traces.limits import LimitError, check_value, surrogate_at
from rageval_core.data.traces.model import Issues, TraceSpan
from rageval_core.data.traces.stream import FIRST_KEYS, Leaf

_INTERNED: dict[str, str] = {}
_INTERN_MAX = 10_000


def intern(text: str) -> str:
    """One string object for the kinds, statuses and names a file repeats a million times."""
    got = _INTERNED.get(text)
    if got is not None:
        return got
    if len(_INTERNED) < _INTERN_MAX and len(text) <= 100:  # short names only: the table outlives the import
        _INTERNED[text] = text
    return text


def keep_keys(keys: Iterable[str]) -> Callable[[str], bool]:
    """Whether an attribute key is one the trace map reads: one of ``keys`` or an item of one (``keys`` holds
    ``retrieval.documents``, the span has ``retrieval.documents.0.document.content``)."""
    exact = frozenset(keys)
    prefixes = tuple(k + "." for k in exact)
    seen: dict[str, bool] = {}

    def keep(key: str) -> bool:
        got = seen.get(key)
        if got is None:
            got = key in exact or key.startswith(prefixes)
            if len(seen) < 100_000:
                seen[key] = got
        return got

    return keep


@dataclass
class ReadContext:
    """Where a reader's problems go and which attribute keys it keeps (``keep(key)``)."""

    issues: Issues
    keep: Callable[[str], bool] = field(default=lambda key: True)

    last_foreign: tuple[str, Any] = ("", None)

    def problem(self, where: str, message: str) -> None:
        self.issues.add(where, message)

    def foreign(self, leaf: Leaf, message: str) -> None:
        """A leaf this format does not read (another format's list): said once per list, not once per item."""
        key = (leaf.prefix, leaf.path[:1])
        if leaf.path[0] in FIRST_KEYS and key != self.last_foreign:
            self.last_foreign = key
            self.problem(where(leaf, leaf.path[:1]), message)


class Reader(Protocol):
    def read(self, leaf: Leaf) -> Iterator[TraceSpan]: ...

    def finish(self) -> Iterator[TraceSpan]: ...


def make_span(ctx: ReadContext, trace_id: str, span_id: str, parent_id: str | None, name: Any, kind: Any,
              start: int | None, end: int | None, status: str, message: Any, attributes: Mapping[str, Any]) -> TraceSpan:
    """A ``TraceSpan`` keeping only the attributes ``ctx.keep`` names (an OpenLLMetry span's read as OpenInference
    first); ``ValueError`` naming the first field past a limit (a lone surrogate in an id or name, a kept value
    nested too deep or holding a bad number)."""
    if traceloop.is_traceloop(attributes):
        try:
            found, attributes = traceloop.as_openinference(attributes)
        except LimitError as exc:
            raise ValueError(f"OpenLLMetry attributes: {exc}") from None
        if found and str(kind).upper() == "UNKNOWN":
            kind = found
    if not (trace_id.isascii() and span_id.isascii() and (parent_id or "").isascii()):
        for label, text in (("trace id", trace_id), ("span id", span_id), ("parent id", parent_id or "")):
            problem = surrogate_at(text)
            if problem:
                raise ValueError(f"{label}: {problem}")
    name_text = name if isinstance(name, str) else "" if name is None else str(name)
    kept: dict[str, Any] = {}
    for key, value in attributes.items():
        if value is not None and ctx.keep(key):
            problem = check_value(value)
            if problem:
                raise ValueError(f"attribute {key!r}: {problem}")
            kept[key] = value
    message = message if isinstance(message, str) else ""
    if not (name_text.isascii() and message.isascii()):
        for label, text in (("name", name_text), ("status message", message)):
            problem = surrogate_at(text)
            if problem:
                raise ValueError(f"{label}: {problem}")
    return TraceSpan(trace_id, span_id, parent_id, intern(name_text), intern(str(kind).upper()), start, end,
                     intern(status), message, kept or _EMPTY)


_EMPTY: dict[str, Any] = {}  # shared by spans with no kept attribute; never written to


def malformed(trace_id: Any, label: str) -> TraceSpan | None:
    """The placeholder that makes a trace skipped as ``malformed_span`` when one of its spans could not be read
    (``None`` when even its trace id is unknown)."""
    if not isinstance(trace_id, str) or not trace_id or surrogate_at(trace_id):
        return None
    return TraceSpan(trace_id, label, None, "", "MALFORMED", None, None, where=label)


def path_text(path: tuple[str | int, ...]) -> str:
    """``("resourceSpans", 0, "scopeSpans", 1)`` as ``resourceSpans[0].scopeSpans[1]``."""
    out = ""
    for step in path:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    return out


def where(leaf: Leaf, path: tuple[str | int, ...] | None = None) -> str:
    """A leaf's place for a message: ``line 3, data[4]``, or ``top level``."""
    text = leaf.prefix + path_text(leaf.path if path is None else path)
    return text.rstrip(", ") or "top level"
