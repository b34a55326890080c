"""Where each dataset field comes from in a trace: ``--map FILE`` (JSON) or the defaults below.

A source is ``"<spans>:<attribute key>[#<json path>]"``; a field takes a list of sources, tried in order:

- ``<spans>``: ``root`` (the span without a parent), ``any``, a span kind (``RETRIEVER``, ``LLM``, ``CHAIN``,
  ``RERANKER``, ...) or ``name=<span name>``;
- ``<attribute key>``: an OpenInference key (``input.value``); an indexed list (``retrieval.documents``,
  ``llm.input_messages``) gives its items;
- ``#<json path>``: dotted keys (and list indexes, ``-1`` the last) into a JSON value (``#inputs.query``).

``question`` and ``metadata`` take the first span (by start time) with a value, ``answer`` the last,
``contexts`` the documents of every matching span in start order. Example::

    {"question": ["root:input.value#query"], "answer": ["LLM:llm.output_messages"],
     "contexts": ["name=rerank:reranker.output_documents", "RETRIEVER:retrieval.documents"],
     "metadata": {"user": "root:user.id"}}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rageval_core.data.traces.model import TraceFormatError

FIELDS = ("question", "answer", "contexts", "ground_truth")
MAX_MAP_BYTES = 1024 * 1024
DEFAULTS: dict[str, tuple[str, ...]] = {
    "question": ("root:input.value", "RETRIEVER:input.value", "LLM:llm.input_messages"),
    "answer": ("root:output.value", "LLM:llm.output_messages", "LLM:output.value"),
    "contexts": ("RERANKER:reranker.output_documents", "RETRIEVER:retrieval.documents"),
    "ground_truth": (),
}
DEFAULT_METADATA: dict[str, tuple[str, ...]] = {"session_id": ("any:session.id",), "user_id": ("any:user.id",)}


@dataclass(frozen=True)
class Source:
    """One parsed source: which spans, which attribute, which path inside its JSON value."""

    spans: str
    key: str
    path: tuple[str, ...] = ()

    @classmethod
    def parse(cls, text: str, where: str) -> "Source":
        selector, sep, rest = text.partition(":")
        if not sep or not selector or not rest:
            raise TraceFormatError(f"{where}: {text!r} is not '<spans>:<attribute key>' (e.g. 'root:input.value')")
        key, _, path = rest.partition("#")
        return cls(selector, key, tuple(p for p in path.split(".") if p))

    def matches(self, span: Any, root_id: str | None) -> bool:
        if self.spans == "root":
            return span.span_id == root_id
        if self.spans == "any":
            return True
        if self.spans.startswith("name="):
            return span.name == self.spans[len("name="):]
        return span.kind == self.spans.upper()


@dataclass(frozen=True)
class TraceMap:
    fields: dict[str, tuple[Source, ...]]
    metadata: dict[str, tuple[Source, ...]] = field(default_factory=dict)


def _sources(value: Any, where: str) -> tuple[Source, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise TraceFormatError(f"{where}: give a source string or a list of them")
    return tuple(Source.parse(v, where) for v in items)


def build_map(spec: dict[str, Any] | None = None, file: str = "--map") -> TraceMap:
    """The defaults, overridden field by field by ``spec`` (what a map file holds); unknown keys are an error."""
    spec = dict(spec or {})
    unknown = sorted(set(spec) - set(FIELDS) - {"metadata"})
    if unknown:
        raise TraceFormatError(f"{file}: unknown key(s) {', '.join(unknown)}; use {', '.join(FIELDS)} or metadata")
    fields = {f: _sources(spec[f], f"{file}, {f}") if f in spec else tuple(Source.parse(s, f) for s in DEFAULTS[f]) for f in FIELDS}
    meta_spec = spec.get("metadata", {})
    if not isinstance(meta_spec, dict):
        raise TraceFormatError(f"{file}, metadata: give an object of column name -> source")
    metadata = {k: tuple(Source.parse(s, k) for s in v) for k, v in DEFAULT_METADATA.items()}
    metadata.update({str(k): _sources(v, f"{file}, metadata.{k}") for k, v in meta_spec.items()})
    return TraceMap(fields, metadata)


def load_map(path: str | Path) -> TraceMap:
    """A map file (JSON object) as a ``TraceMap``; ``TraceFormatError`` naming the file and key when it is wrong."""
    p = Path(path)
    try:
        if p.stat().st_size > MAX_MAP_BYTES:
            raise TraceFormatError(f"{p}: {p.stat().st_size:,} bytes is too large for a map file (a few lines of JSON)")
        spec = json.loads(p.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise TraceFormatError(f"{p}: cannot read the map file ({exc.strerror or exc})") from None
    except RecursionError:
        raise TraceFormatError(f"{p}: the map file is nested too deep to be a map") from None
    except ValueError as exc:  # not JSON, not UTF-8
        raise TraceFormatError(f"{p}: the map file is not JSON ({exc})") from None
    if not isinstance(spec, dict):
        raise TraceFormatError(f"{p}: the map file must hold a JSON object")
    return build_map(spec, str(p))


def read_keys(trace_map: TraceMap) -> set[str]:
    """Every attribute key the map reads (the readers keep only these, and the items under them)."""
    sources = [s for group in (*trace_map.fields.values(), *trace_map.metadata.values()) for s in group]
    return {s.key for s in sources}
