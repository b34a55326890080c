"""Content-addressed texts: each prompt segment and response the store keeps is written once.

Why: a run's prompts repeat most of their text. Every call of a step starts with the same instructions and
examples, a row's steps send the same contexts, question and answer, and a result's details repeated the
prompts and responses of its calls beside the call log's copy (about 7 KB a judge result at 17dc5b7). Here a
prompt is cut into segments at blank lines (``segments``); each distinct segment and response is one row of
``texts``, found again by a 16-byte digest, and the call log and the results hold lists of row ids.

A body of 128 bytes or more is stored zlib-compressed when that saves a tenth (a BLOB); shorter ones and
those that do not compress stay TEXT, so ``typeof(body)`` says which. Pure functions first, then the SQL.
"""

from __future__ import annotations

import hashlib
import sqlite3
import zlib
from typing import Iterable, Mapping, Sequence

DDL = """
CREATE TABLE IF NOT EXISTS texts (
    id INTEGER PRIMARY KEY,
    digest BLOB NOT NULL UNIQUE,
    body NOT NULL
);
"""

# A segment shorter than this is joined to the next one: a row of ``texts`` costs about 50 bytes of key,
# index and header, more than a short heading such as "質問:\n" would save by being shared.
MIN_SEGMENT = 64
_COMPRESS_FROM = 128


def segments(text: str) -> list[str]:
    """``text`` cut after each blank line (``"\\n\\n"``), short pieces joined to the next; ``"".join`` of the
    result is ``text`` exactly. The cuts fall between a template's instructions, examples and data blocks."""
    out: list[str] = []
    pending = ""
    start = 0
    while True:
        cut = text.find("\n\n", start)
        if cut < 0:
            break
        piece = pending + text[start:cut + 2]
        start = cut + 2
        if len(piece) < MIN_SEGMENT:
            pending = piece
            continue
        out.append(piece)
        pending = ""
    tail = pending + text[start:]
    if tail:
        out.append(tail)
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
    """The text of a stored body (``encode_body`` inverted)."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return zlib.decompress(bytes(body)).decode("utf-8")
    return str(body)


# ---- SQL -----------------------------------------------------------------------------------------------
def ensure(conn: sqlite3.Connection) -> None:
    """Create the ``texts`` table (inside the caller's schema setup)."""
    conn.executescript(DDL)


def put(conn: sqlite3.Connection, text: str, memo: dict[bytes, int] | None = None) -> int:
    """The id of ``text`` in ``texts``, inserting it if new. ``memo`` (one per write transaction: ids of a
    rolled-back transaction must not outlive it) skips the lookup of a text repeated within it."""
    key = digest(text)
    if memo is not None and key in memo:
        return memo[key]
    row = conn.execute("SELECT id FROM texts WHERE digest = ?", (key,)).fetchone()
    if row is None:  # OR IGNORE: outside a transaction another writer may have added it meanwhile
        cur = conn.execute("INSERT OR IGNORE INTO texts (digest, body) VALUES (?, ?)", (key, encode_body(text)))
        row = (cur.lastrowid,) if cur.rowcount == 1 else conn.execute("SELECT id FROM texts WHERE digest = ?", (key,)).fetchone()
    found = int(row[0])
    if memo is not None:
        memo[key] = found
    return found


def put_segments(conn: sqlite3.Connection, text: str, memo: dict[bytes, int] | None = None) -> list[int]:
    """The ids of ``text``'s segments (``segments``), each stored once."""
    return [put(conn, piece, memo) for piece in segments(text)]


def get_many(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    """The texts of ``ids`` (read in chunks under SQLite's variable limit)."""
    wanted = sorted(set(int(i) for i in ids))
    out: dict[int, str] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for tid, body in conn.execute(f"SELECT id, body FROM texts WHERE id IN ({marks})", chunk):
            out[int(tid)] = decode_body(body)
    missing = set(wanted) - out.keys()
    if missing:
        raise LookupError(f"texts: ids {sorted(missing)[:5]} are referenced but not stored")
    return out


def join(ids: Sequence[int], texts: Mapping[int, str]) -> str:
    """The text whose segment ids are ``ids``."""
    return "".join(texts[int(i)] for i in ids)
