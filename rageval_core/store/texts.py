"""Content-addressed texts: each prompt segment and response the store keeps is written once.

Why: a run's prompts repeat most of their text. Every call of a step starts with the same instructions and
examples, a row's steps send the same contexts, question, answer and claims (each inside its own tags, under
each step's own heading), and a result's details repeated the prompts and responses of its calls beside the
call log's copy (about 7 KB a judge result at 17dc5b7). Here a prompt is cut into runs of data lines and runs
of frame lines, blank lines and lone tags (``segments``), so a row's answer is one segment however many steps
wrap it; each distinct segment and response is one row of ``texts``, found again by a 16-byte digest, and the
whole prompt is one more row listing its segments' ids (a *composite*), so the call log and the results
name a prompt by one id.

A body of 128 bytes or more is stored zlib-compressed when that saves a tenth (a BLOB); shorter ones and
those that do not compress stay TEXT, so ``typeof(body)`` says which. A composite is a BLOB starting with a
zero byte (a zlib stream never does), then its segment ids as varints. Pure functions first, then the SQL.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import zlib
from typing import Iterable, Mapping, Sequence

_COMPRESS_FROM = 128
_COMPOSITE = b"\x00"  # first byte of a composite body; zlib's first byte is 0x78 (or another CMF, never 0)


def _is_frame(line: str) -> bool:
    """A blank line or a lone tag (``<answer>``, ``</contexts>``, ``<claim index="2">``): the templates' frame
    around each piece of data, the same for every row."""
    s = line.strip()
    return not s or (s.startswith("<") and s.endswith(">"))


def segments(text: str) -> list[str]:
    """``text`` cut into maximal runs of frame lines (``_is_frame``) and of data lines; ``"".join`` of the
    result is ``text`` exactly. The data between two tags (a context, the answer, a claim) is then one segment
    wherever a template puts it, and a heading with its tags another, shared by every row."""
    out: list[str] = []
    run = ""
    kind: bool | None = None
    for line in text.splitlines(keepends=True):
        frame = _is_frame(line)
        if run and frame != kind:
            out.append(run)
            run = ""
        run += line
        kind = frame
    if run:
        out.append(run)
    return out


def digest(text: str) -> bytes:
    """The key a text is found by: the first 16 bytes of its SHA-256 (collisions are out of reach at any
    store size: 2**64 texts for an even chance)."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def encode_body(text: str) -> str | bytes:
    """What ``texts.body`` holds for ``text``: zlib bytes when they save a tenth, else the text itself."""
    raw = text.encode("utf-8")
    if len(raw) >= _COMPRESS_FROM:
        packed = zlib.compress(raw, 6)
        if len(packed) * 10 < len(raw) * 9:
            return packed
    return text


def decode_body(body: str | bytes) -> str:
    """The text of a stored body (``encode_body`` inverted); a composite needs its segments (``get_many``)."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        data = bytes(body)
        if data[:1] == _COMPOSITE:
            raise ValueError("texts: a composite body is read with its segments (texts.get_many)")
        return zlib.decompress(data).decode("utf-8")
    return str(body)


def encode_composite(ids: Sequence[int]) -> bytes:
    """A composite body: the zero byte, then each id as an unsigned LEB128 varint (1–3 bytes an id)."""
    out = bytearray(_COMPOSITE)
    for i in ids:
        i = int(i)
        if i < 0:
            raise ValueError(f"texts: negative id {i}")
        while i >= 0x80:
            out.append((i & 0x7F) | 0x80)
            i >>= 7
        out.append(i)
    return bytes(out)


def composite_ids(body: str | bytes) -> list[int] | None:
    """The segment ids of a composite body, None for a text's own body."""
    if not isinstance(body, (bytes, bytearray, memoryview)):
        return None
    data = bytes(body)
    if data[:1] != _COMPOSITE:
        return None
    ids: list[int] = []
    value = shift = 0
    for byte in data[1:]:
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            ids.append(value)
            value = shift = 0
    return ids


# ---- ids already known --------------------------------------------------------------------------------------
class Known:
    """Ids of texts one store has committed, by text, up to a budget of characters (then started over).

    Why: a run's prompts repeat their frame (instructions, headings, tags) in every call, and a result's details
    name the prompts and responses the call log stored a moment before; each was a digest and a ``SELECT`` in
    every transaction (about 150 a row at 1,200 rows). A text's id never changes once committed (``texts`` rows
    are never deleted or renumbered), so a later transaction of the same store may use it without asking.
    Filled only after a commit (``add``): an id of a rolled-back transaction never gets here."""

    def __init__(self, chars: int = 1_000_000) -> None:
        self.ids: dict[str, int] = {}
        self.chars = chars
        self._used = 0
        self._lock = threading.Lock()

    def add(self, ids: Mapping[str, int]) -> None:
        """Remember the ids of a committed transaction's texts."""
        with self._lock:
            for text, tid in ids.items():
                if text in self.ids:
                    continue
                if self._used + len(text) > self.chars:
                    self.ids = {}  # readers holding the old dict keep reading it: ids stay true
                    self._used = 0
                self.ids[text] = tid
                self._used += len(text)


class Memo(dict[str, int]):
    """The ids of the texts one write transaction has put, by text (``put`` and ``put_segments`` skip the lookup
    of a text repeated within it), over ``known``: the ids its store has committed before."""

    def __init__(self, known: Known | None = None) -> None:
        super().__init__()
        self.known = known


_NONE_KNOWN: dict[str, int] = {}


# ---- SQL (the table is made by the ``texts`` step of ``store.migrations``) ---------------------------------
def _insert(conn: sqlite3.Connection, key: bytes, body: str | bytes) -> int:
    """Insert a body under ``key``; OR IGNORE: outside a transaction another writer may have added it meanwhile."""
    cur = conn.execute("INSERT OR IGNORE INTO texts (digest, body) VALUES (?, ?)", (key, body))
    if cur.rowcount == 1:
        return int(cur.lastrowid or 0)
    return int(conn.execute("SELECT id FROM texts WHERE digest = ?", (key,)).fetchone()[0])


def put(conn: sqlite3.Connection, text: str, memo: dict[str, int] | None = None) -> int:
    """The id of ``text`` in ``texts``, inserting it if new. ``memo`` (one per write transaction: ids of a
    rolled-back transaction must not outlive it) skips the lookup of a text repeated within it or known before."""
    return _put_many(conn, [text], memo)[0]


def _put_many(conn: sqlite3.Connection, pieces: Sequence[str], memo: dict[str, int] | None) -> list[int]:
    """The ids of ``pieces``, the new ones inserted. One fixed statement a lookup: an ``IN`` list of each
    length would be one more prepared statement in every connection's cache (5 MB more at 1,200 rows)."""
    memo = {} if memo is None else memo
    seen = getattr(memo, "known", None)  # a plain dict (a caller's own memo) knows nothing before
    known = _NONE_KNOWN if seen is None else seen.ids
    out = []
    for piece in pieces:
        found = memo.get(piece)
        if found is None:
            found = known.get(piece)
            if found is None:
                key = digest(piece)
                row = conn.execute("SELECT id FROM texts WHERE digest = ?", (key,)).fetchone()
                found = int(row[0]) if row is not None else _insert(conn, key, encode_body(piece))
            memo[piece] = found
        out.append(found)
    return out


def put_segments(conn: sqlite3.Connection, text: str, memo: dict[str, int] | None = None) -> list[int]:
    """The ids that name ``text``: none for ``""``, one row for a text of one segment, else one composite of
    its segments (``segments``, each stored once). A prompt the store holds already (the call log's, when a
    result's details name it again) is found by its digest without cutting it."""
    if not text:
        return []
    memo = {} if memo is None else memo
    found = memo.get(text)
    seen = getattr(memo, "known", None)
    if found is None and seen is not None:
        found = seen.ids.get(text)
    if found is None:
        key = digest(text)
        row = conn.execute("SELECT id FROM texts WHERE digest = ?", (key,)).fetchone()
        if row is not None:
            found = int(row[0])
        else:
            pieces = segments(text)
            body = encode_body(text) if len(pieces) == 1 else encode_composite(_put_many(conn, pieces, memo))
            found = _insert(conn, key, body)
    memo[text] = found
    return [found]


def get_many(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """The texts of ``ids`` (read in chunks under SQLite's variable limit), composites joined from their
    segments (read too, and themselves composites at times: a segment equal to an earlier whole prompt)."""
    wanted = sorted(set(int(i) for i in ids))
    bodies: dict[int, str | bytes] = {}
    todo = wanted
    while todo:
        for start in range(0, len(todo), 500):
            chunk = todo[start:start + 500]
            marks = ",".join("?" * len(chunk))
            bodies.update((int(t), b) for t, b in conn.execute(f"SELECT id, body FROM texts WHERE id IN ({marks})", chunk))
        missing = set(todo) - bodies.keys()
        if missing:
            raise LookupError(f"texts: ids {sorted(missing)[:5]} are referenced but not stored")
        parts = (composite_ids(bodies[t]) for t in todo)
        todo = sorted({i for ids_ in parts if ids_ for i in ids_} - bodies.keys())
    out: dict[int, str] = {}

    def text_of(tid: int) -> str:
        if tid not in out:  # a composite's segments are older rows than itself: no cycle
            ids_ = composite_ids(bodies[tid])
            out[tid] = decode_body(bodies[tid]) if ids_ is None else "".join(text_of(i) for i in ids_)
        return out[tid]

    return {tid: text_of(tid) for tid in wanted}


def join(ids: Sequence[int], texts: Mapping[int, str]) -> str:
    """The text whose segment ids are ``ids``."""
    return "".join(texts[int(i)] for i in ids)
