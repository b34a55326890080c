"""A result's details as the store keeps them: its own fields inline, its calls' texts by reference.

Why: details repeated the prompt and response of every call (and a judge's raw text and parsed answer for
each of its criteria), which the call log holds already. ``pack`` takes those values out of the details and
returns the skeleton (the same JSON with ``null`` in their place, so key order and everything else is kept)
and a list of ``(path, kind, text)``; ``unpack`` puts them back. The texts go to ``store.texts``, where equal
texts are one row, so a prompt the call log and the details both hold is stored once.

Kinds: ``s`` a prompt, stored as segments; ``t`` a response or raw text, stored whole; ``j`` a parsed
answer (any JSON value), stored as its JSON text. Taken out only when long enough to be worth a reference.
Pure: no SQL here.
"""

from __future__ import annotations

import functools
import json
import zlib
from importlib import resources
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from rageval_core.core.redact import redact_data

Path = tuple[Any, ...]  # dict keys (str) and list indexes (int) from the top of the details
# Also by reference: a judge's rubric and template digests (the same for every result of a run) and its request
# keys (the same for each criterion of one call); 64 hex characters do not deflate.
TEXT_KINDS: Mapping[str, str] = {"prompt": "s", "response": "t", "raw_text": "t", "raw_response": "t",
                                 "rubric_hash": "t", "template_hash": "t"}
JSON_KEYS = frozenset({"parsed", "request_keys"})
MIN_TEXT = 48  # a shorter value stays inline: the reference and the row would cost more than it


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def pack(details: Mapping[str, Any], text: Callable[[str], str] | None = None) -> tuple[Any, list[tuple[Path, str, str]]]:
    """The skeleton of ``details`` (a JSON-ready copy, the taken values ``None``) and what was taken. With ``text``
    (a redactor: ``core.redact.redactor()``) every string, keys included, is redacted on the way: the same as
    ``pack(redact_data(details))`` in one walk instead of two."""
    taken: list[tuple[Path, str, str]] = []
    if text is None:
        return _walk(details, (), taken), taken
    walker = _Redacting(text, taken)
    skeleton = walker.walk(details, ())
    if walker.merged:  # two keys redacted to one (a secret in a key): redact the whole value first, as that does
        taken.clear()
        return _walk(redact_data(details, redactor=text), (), taken), taken
    return skeleton, taken


def _walk(value: Any, path: Path, taken: list[tuple[Path, str, str]]) -> Any:
    if isinstance(value, Mapping):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            name = str(key)
            kind = TEXT_KINDS.get(name)
            if kind is not None and isinstance(item, str) and len(item) >= MIN_TEXT:
                taken.append((path + (name,), kind, item))
                out[key] = None
            elif name in JSON_KEYS and isinstance(item, (Mapping, list, tuple)) and item:
                text = _dumps(item)
                if len(text) >= MIN_TEXT:
                    taken.append((path + (name,), "j", text))
                    out[key] = None
                else:
                    out[key] = item
            else:
                kv = type(item)  # leaves inline: most entries are strings and numbers
                out[key] = item if kv is str or kv in _SCALARS else _walk(item, path + (name,), taken)
        return out
    if isinstance(value, (list, tuple)):
        return [item if type(item) is str or type(item) in _SCALARS else _walk(item, path + (i,), taken)
                for i, item in enumerate(value)]
    return value


_SCALARS = frozenset({int, float, bool, type(None)})


class _Redacting:
    """``_walk`` over a value not yet redacted, redacting each string as ``core.redact.redact_data`` does (the
    same types kept, tuples made lists, other objects left as they are). ``merged``: two keys of one mapping were
    equal once redacted (``pack`` then redacts first and walks after, to keep what ``redact_data`` keeps)."""

    def __init__(self, text: Callable[[str], str], taken: list[tuple[Path, str, str]]) -> None:
        self.text = text
        self.taken = taken
        self.merged = False

    def walk(self, value: Any, path: Path) -> Any:
        kind = type(value)
        if kind is str:
            return self.text(value)
        if kind in _SCALARS:
            return value
        if kind is dict or isinstance(value, Mapping):
            text, taken = self.text, self.taken
            out: dict[Any, Any] = {}
            for key, item in value.items():
                if type(key) is str or isinstance(key, str):
                    key = text(key)
                if key in out:
                    self.merged = True
                kv = type(item)
                if kv in _SCALARS:
                    out[key] = item
                    continue
                name = str(key)
                found = TEXT_KINDS.get(name)
                if kv is str or isinstance(item, str):
                    done = text(item)
                    if found is not None and len(done) >= MIN_TEXT:
                        taken.append((path + (name,), found, done))
                        out[key] = None
                    else:
                        out[key] = done
                elif name in JSON_KEYS and isinstance(item, (Mapping, list, tuple)) and item:
                    done = self.redacted(item)
                    dumped = _dumps(done)
                    if len(dumped) >= MIN_TEXT:
                        taken.append((path + (name,), "j", dumped))
                        out[key] = None
                    else:
                        out[key] = done
                else:
                    out[key] = self.walk(item, path + (name,))
            return out
        if kind is list or isinstance(value, (list, tuple)):
            text = self.text
            return [text(v) if type(v) is str else v if type(v) in _SCALARS else self.walk(v, path + (i,))
                    for i, v in enumerate(value)]
        if isinstance(value, str):
            return self.text(value)
        return value

    def redacted(self, value: Any) -> Any:
        return redact_data(value, redactor=self.text)


def unpack(skeleton: Any, refs: Sequence[tuple[Sequence[Any], str, str]]) -> Any:
    """``skeleton`` with each ``(path, kind, text)`` put back in place (``pack`` inverted, after JSON)."""
    for path, kind, text in refs:
        target = skeleton
        for step in path[:-1]:
            target = target[step]
        target[path[-1]] = json.loads(text) if kind == "j" else text
    return skeleton


# ---- the stored form: a projection for SQL, the rest in one compressed blob ------------------------------
# The only detail keys SQL reads (light_tables' judge column, persist's re-ask tallies, readback's errors): kept
# as plain JSON in ``results.details``. Everything else is in ``results.details_pack``.
SQL_KEYS = ("judge", "reask", "error")
_VERSION = b"\x01"  # deflate with dictionary v1; a new dictionary gets a new version byte, v1 stays readable
_DICT_V1 = (resources.files("rageval_core.store") / "details_dict_v1.txt").read_bytes()


def projection(skeleton: Mapping[str, Any]) -> str:
    """The ``details`` column: the ``SQL_KEYS`` the details have, as JSON."""
    return _dumps({k: skeleton[k] for k in SQL_KEYS if k in skeleton})


def encode_pack(skeleton: Any, refs: Sequence[tuple[Path, str, Sequence[int]]]) -> bytes:
    """The ``details_pack`` column: ``[skeleton, [[path, kind, [text ids]], ...]]`` as JSON, deflated against a
    fixed dictionary of the details' key names and the code's own constant values (no dataset or model text:
    ``details_dict_v1.txt``), which a result of a few hundred bytes needs to compress at all."""
    doc = _dumps([skeleton, [[list(p), k, list(ids)] for p, k, ids in refs]]).encode("utf-8")
    deflate = _primed(_window_bits(len(doc))).copy()
    packed: bytes = deflate.compress(doc) + deflate.flush()
    return _VERSION + packed


@functools.lru_cache(maxsize=None)
def _primed(bits: int) -> Any:
    """A compressor with the dictionary set, never fed: each result compresses with a copy of it (the same state
    as a new one, so the same bytes; setting the dictionary up was ~2/3 of a new compressor's cost)."""
    return zlib.compressobj(9, zlib.DEFLATED, -bits, 7, zlib.Z_DEFAULT_STRATEGY, _DICT_V1)


def _window_bits(size: int) -> int:
    """The smallest deflate window (8, 16 or 32 KB) that holds the dictionary and a document of ``size`` bytes.

    Why: a compressor's set-up clears tables sized by its window and memory level; at a 32 KB window and level 9
    memory that was ~0.3 ms a result, the largest share of the store's CPU a result. Every match still lies
    inside the window, so the stream is the same deflate the reader inflates with a 32 KB window and the same
    dictionary (``decode_pack``); on 3,200 results of bench/scale.py the bytes were identical to the 32 KB ones."""
    need = len(_DICT_V1) + size + _LOOKAHEAD
    return next((bits for bits in (13, 14) if need <= 1 << bits), 15)


_LOOKAHEAD = 262  # zlib's MIN_LOOKAHEAD: the part of the window a compressor keeps for what comes next


def decode_pack(blob: bytes) -> tuple[Any, list[tuple[list[Any], str, list[int]]]]:
    """``encode_pack`` inverted: the skeleton and its references."""
    data = bytes(blob)
    if data[:1] != _VERSION:
        raise ValueError(f"details_pack: unknown version byte {data[:1]!r}")
    inflate = zlib.decompressobj(-15, _DICT_V1)
    skeleton, refs = json.loads((inflate.decompress(data[1:]) + inflate.flush()).decode("utf-8"))
    return skeleton, [(list(p), str(k), [int(i) for i in ids]) for p, k, ids in refs]


def restore(details: str, pack: bytes | None, texts: Callable[[Sequence[int]], Mapping[int, str]] | Mapping[int, str]) -> Any:
    """The details of a stored result: from ``pack`` with its references filled from ``texts`` (a map of id →
    text, or a function that reads the ids it is given); a result stored before packing (``pack`` None) is its
    ``details`` JSON as it was."""
    if pack is None:
        return json.loads(details)
    skeleton, refs = decode_pack(pack)
    if not refs:
        return skeleton
    lookup = texts if isinstance(texts, Mapping) else texts([i for _, _, ids in refs for i in ids])
    return unpack(skeleton, [(p, k, "".join(lookup[i] for i in ids)) for p, k, ids in refs])
