"""A file's bytes as a leak check must see them: for an SQLite store, its compressed texts decoded too.

The store deflates long texts (``rageval_core.store.texts``) and packs results' details
(``store.details_codec``), so a secret that reached the database would not show in its raw bytes; leak tests
search ``readable(path)`` instead, which appends every decoded text and details of a store file.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from rageval_core.store import details_codec, texts


def readable(path: Path) -> bytes:
    """``path``'s bytes, plus (for an SQLite database holding ``texts``) every text and packed details decoded."""
    raw = path.read_bytes()
    if not raw.startswith(b"SQLite format 3\x00"):
        return raw
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        extra: list[str] = []
        if "texts" in tables:
            ids = [tid for (tid,) in conn.execute("SELECT id FROM texts")]  # composites joined from their segments
            extra += list(texts.get_many(conn, ids).values())
        if "results" in tables and "details_pack" in {r[1] for r in conn.execute("PRAGMA table_info(results)")}:
            extra += [repr(details_codec.decode_pack(p)) for (p,) in conn.execute(
                "SELECT details_pack FROM results WHERE details_pack IS NOT NULL")]
    finally:
        conn.close()
    return raw + "\n".join(extra).encode("utf-8")
