"""Where a question goes in a RAG server's request and where the answer and contexts come back (pure, no I/O).

A mapping is a few dotted paths, with defaults that fit common servers (``{"question": ...}`` in,
``answer`` and ``contexts`` out). Paths step into objects by key and into lists by index
(``data.0.text``); ``[]`` maps over a list (``sources[].page_content``). Contexts may be strings or objects
with a text field; ids are optional.

Mapping file (JSON, or YAML when PyYAML is installed)::

    {"question": "input.query", "body": {"top_k": 3}, "answer": "output.text",
     "contexts": "output.sources", "context_text": "page_content", "context_ids": "output.sources[].id"}
"""

from __future__ import annotations

import copy
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Mapping
from rageval_core.core.errors import ConfigError

class MappingError(ConfigError):
    """A reply (or a mapping file) that does not fit the mapping: the message names the path."""


@dataclass(frozen=True)
class RagMapping:
    """Request and reply paths. ``body`` is a fixed request body the question is written into."""

    question: str = "question"
    body: Mapping[str, Any] = field(default_factory=dict)
    metadata: str | None = None  # where the row's metadata goes in the request, if anywhere
    answer: str = "answer"
    contexts: str = "contexts"
    context_text: str = "text"  # the text field of context objects (strings are taken as they are)
    context_ids: str | None = None  # e.g. "output.sources[].id"; by default the "id" of context objects

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["body"] = dict(self.body)
        return out


@dataclass(frozen=True)
class RagReply:
    """What the mapping read from one reply."""

    answer: str
    contexts: tuple[str, ...]
    context_ids: tuple[str, ...] | None = None


_FIELDS = set(RagMapping.__dataclass_fields__)


def mapping_from_dict(data: Mapping[str, Any], source: str = "mapping") -> RagMapping:
    """A mapping from a parsed file; unknown keys and non-string paths are errors naming the key."""
    if not isinstance(data, Mapping):
        raise MappingError(f"{source}: expected an object with keys {', '.join(sorted(_FIELDS))}")
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        raise MappingError(f"{source}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(_FIELDS))}")
    for key, value in data.items():
        if key == "body":
            if not isinstance(value, Mapping):
                raise MappingError(f"{source}: 'body' must be an object (the fixed part of the request)")
        elif value is not None and (not isinstance(value, str) or not value.strip()):
            raise MappingError(f"{source}: {key!r} must be a dotted path such as 'output.text'")
    for key in ("question", "answer", "contexts", "context_text"):
        if key in data and data[key] is None:
            raise MappingError(f"{source}: {key!r} cannot be empty")
    fields: dict[str, Any] = {k: (dict(v) if k == "body" else v) for k, v in data.items()}  # checked above
    return RagMapping(**fields)


def load_mapping(path: str | Path) -> RagMapping:
    """Read a mapping file (.json, or .yaml / .yml with PyYAML)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise MappingError(f"{p}: cannot read the mapping file ({exc})") from None
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:
                raise MappingError(f"{p}: YAML needs PyYAML (pip install pyyaml), or write the mapping as JSON") from None
            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except MappingError:
        raise
    except Exception as exc:  # a syntax error of either format
        raise MappingError(f"{p}: not valid {p.suffix.lstrip('.') or 'JSON'} ({exc})") from None
    return mapping_from_dict(data, str(p))


def _steps(path: str) -> list[str]:
    return [s for s in path.replace("[]", ".[]").split(".") if s]


def get_path(obj: Any, path: str) -> Any:
    """The value at ``path``; ``KeyError`` naming the step that failed."""
    return _get(obj, _steps(path), path)


def _get(obj: Any, steps: list[str], path: str) -> Any:
    for i, step in enumerate(steps):
        if step == "[]":
            if not isinstance(obj, list):
                raise KeyError(f"{path}: expected a list before '[]', got {type(obj).__name__}")
            return [_get(item, steps[i + 1:], path) for item in obj]
        if isinstance(obj, Mapping):
            if step not in obj:
                raise KeyError(f"{path}: no key {step!r} (keys: {', '.join(map(str, list(obj)[:8])) or 'none'})")
            obj = obj[step]
        elif isinstance(obj, list) and step.lstrip("-").isdigit():
            index = int(step)
            if not -len(obj) <= index < len(obj):
                raise KeyError(f"{path}: index {index} out of range (list of {len(obj)})")
            obj = obj[index]
        else:
            raise KeyError(f"{path}: cannot read {step!r} from a {type(obj).__name__}")
    return obj


def set_path(obj: dict[str, Any], path: str, value: Any) -> None:
    """Write ``value`` at a dotted ``path`` of objects, creating the objects on the way."""
    steps = _steps(path)
    if not steps or "[]" in steps:
        raise MappingError(f"request path {path!r}: use object keys only, e.g. 'input.query'")
    node = obj
    for step in steps[:-1]:
        child = node.get(step)
        if not isinstance(child, dict):
            child = node[step] = {}
        node = child
    node[steps[-1]] = value


def build_body(mapping: RagMapping, question: str, metadata: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The request body: the fixed ``body`` with the question (and, if mapped, the metadata) written in."""
    body = copy.deepcopy(dict(mapping.body))
    set_path(body, mapping.question, question)
    if mapping.metadata:
        set_path(body, mapping.metadata, dict(metadata or {}))
    return body


def read_reply(mapping: RagMapping, reply: Any) -> RagReply:
    """Answer, contexts and ids from a parsed reply, or ``MappingError`` saying which path did not fit."""
    try:
        answer = get_path(reply, mapping.answer)
    except KeyError as exc:
        raise MappingError(f"answer: {exc.args[0]}") from None
    if not isinstance(answer, str):
        raise MappingError(f"answer: {mapping.answer} holds a {type(answer).__name__}, not text")
    try:
        raw_contexts = get_path(reply, mapping.contexts)
    except KeyError as exc:
        raise MappingError(f"contexts: {exc.args[0]}") from None
    if isinstance(raw_contexts, str):
        raw_contexts = [raw_contexts]
    if not isinstance(raw_contexts, list):
        raise MappingError(f"contexts: {mapping.contexts} holds a {type(raw_contexts).__name__}, not a list")
    contexts = []
    for n, item in enumerate(raw_contexts):
        if isinstance(item, str):
            contexts.append(item)
            continue
        try:
            text = get_path(item, mapping.context_text)
        except KeyError as exc:
            raise MappingError(f"contexts[{n}]: {exc.args[0]}") from None
        if not isinstance(text, str):
            raise MappingError(f"contexts[{n}].{mapping.context_text} holds a {type(text).__name__}, not text")
        contexts.append(text)
    ids = None
    if not mapping.context_ids and raw_contexts and all(isinstance(x, Mapping) and "id" in x for x in raw_contexts):
        ids = tuple(str(x["id"]) for x in raw_contexts)  # context objects that carry an id: keep it
    elif mapping.context_ids:
        try:
            found = get_path(reply, mapping.context_ids)
        except KeyError as exc:
            raise MappingError(f"context_ids: {exc.args[0]}") from None
        if not isinstance(found, list) or any(isinstance(x, (dict, list)) for x in found):
            raise MappingError(f"context_ids: {mapping.context_ids} must be a list of ids")
        ids = tuple(str(x) for x in found)
    return RagReply(answer.strip(), tuple(contexts), ids)
