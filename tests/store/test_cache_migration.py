"""The caches' first layout (hex keys, origins as text, usage as JSON) moves to the narrow tables once, in
place, resumably, and every cached answer and vector reads back the same; a store written by main at 8a158dc
opens and exports the same bytes as 8a158dc exported.

Fixtures: tests/store/fixtures/legacy_500ef79/ (answers inline in the cache rows) and main_8a158dc/ (answers
by text id, nine embedding rows; 3 distinct rows, the six metrics, rubric5 and binary against the fake server,
with the fake server's embeddings; an SQL dump and its four exports, all made by the code at 8a158dc).
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from rageval_core.analysis import export
from rageval_core.embeddings.cache import CachedEmbedder, embedding_key
from rageval_core.llm.transport.cache import ResponseCache
from rageval_core.store import cache_tables, texts
from rageval_core.store.runs import Store

FIXTURES = Path(__file__).parent / "fixtures"
MAIN = FIXTURES / "main_8a158dc"
MAIN_RUN = "20261202-163227-4fb2b7"


def _load(tmp_path: Path, fixture: str) -> Path:
    path = tmp_path / f"{fixture}.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(gzip.decompress((FIXTURES / fixture / "store.sql.gz").read_bytes()).decode("utf-8"))
    conn.close()
    return path


def _old_rows(path: Path) -> tuple[dict[str, tuple[list[str], dict[str, int]]], dict[str, bytes]]:
    """The first layout's answers (key -> texts, usage) and vectors (key -> bytes), read as that layout kept them."""
    conn = sqlite3.connect(path)
    answers = {}
    columns = {r[1] for r in conn.execute("PRAGMA table_info(llm_response_cache)")}
    ids_column = "text_ids" if "text_ids" in columns else "NULL"  # 500ef79 kept every answer inline
    for key, inline, ids, usage in conn.execute(f"SELECT key, texts, {ids_column}, usage FROM llm_response_cache"):
        found = texts.get_many(conn, json.loads(ids)) if ids else {}
        answers[key] = ([found[i] for i in json.loads(ids)] if ids else json.loads(inline), json.loads(usage))
    vectors = {key: bytes(v) for key, v in conn.execute("SELECT key, vector FROM embedding_cache")}
    conn.close()
    return answers, vectors


def _tables(path: Path) -> set[str]:
    return {r[0] for r in sqlite3.connect(path).execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _assert_same(cache: ResponseCache, path: Path, answers: dict, vectors: dict) -> None:
    for key, (want, usage) in answers.items():
        got = cache.get(key)
        assert got is not None and got[0] == want and got[1].to_dict() == usage, key
    conn = sqlite3.connect(path)
    for key, vector in vectors.items():
        row = conn.execute("SELECT vector FROM embedding_cache WHERE key = ?", (cache_tables.stored_key(key),)).fetchone()
        assert row is not None and bytes(row[0]) == vector  # float32 as the provider's answer was kept: lossless


@pytest.mark.parametrize("fixture", ["legacy_500ef79", "main_8a158dc"])
def test_the_first_cache_layout_moves_once_and_every_answer_reads_back(tmp_path: Path, fixture: str) -> None:
    path = _load(tmp_path, fixture)
    answers, vectors = _old_rows(path)
    assert len(answers) == 30 and len(vectors) == (9 if fixture == "main_8a158dc" else 0)
    Store(path)
    cache = ResponseCache(path)
    assert not {"llm_response_cache_v1", "embedding_cache_v1"} & _tables(path) and cache.count() == 30
    conn = sqlite3.connect(path)
    assert {len(k) for (k,) in conn.execute("SELECT key FROM llm_response_cache")} == {16}
    assert conn.execute("SELECT provider, model, task != '' FROM cache_origins JOIN llm_response_cache ON"
                        " cache_origins.id = origin LIMIT 1").fetchone() == ("openai-compatible", "fake-judge", 1)
    _assert_same(cache, path, answers, vectors)
    assert cache.clear(model="fake-judge") == 30 and cache.count() == 0


def test_a_cache_move_cut_short_reads_both_tables_and_goes_on_at_the_next_open(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    path = _load(tmp_path, "main_8a158dc")
    answers, vectors = _old_rows(path)
    monkeypatch.setattr(cache_tables, "BATCH", 4)
    real = cache_tables.ensure
    monkeypatch.setattr(cache_tables, "ensure", lambda conn, p, **kw: real(conn, p, max_batches=2))
    half = ResponseCache(path)
    conn = sqlite3.connect(path)
    moved = conn.execute("SELECT COUNT(*) FROM llm_response_cache").fetchone()[0]
    left = conn.execute("SELECT COUNT(*) FROM llm_response_cache_v1").fetchone()[0]
    assert (moved, left) == (8, 22) and half.count() == 30  # some rows moved, some not: both answer
    for key, (want, _) in answers.items():
        assert half.get(key)[0] == want
    monkeypatch.setattr(cache_tables, "ensure", real)
    done = ResponseCache(path)  # the next open moves the rest and drops the old tables
    assert not {"llm_response_cache_v1", "embedding_cache_v1"} & _tables(path)
    _assert_same(done, path, answers, vectors)


class _Embed:
    provider, model, batch_size = "p", "m", 8

    def __init__(self) -> None:
        self.calls = 0

    def embed_batch(self, batch):
        self.calls += 1
        return np.ones((len(batch), 3), dtype=np.float32)


def test_a_vector_of_the_first_layout_is_a_hit_after_the_move(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE embedding_cache (key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,"
                 " dim INTEGER NOT NULL, vector BLOB NOT NULL)")  # the layout up to 8a158dc
    vector = np.array([0.6, 0.8, 0.0], dtype=np.float32)
    conn.execute("INSERT INTO embedding_cache VALUES (?, 'p', 'm', 3, ?)", (embedding_key("p", "m", None, "hello"), vector.tobytes()))
    conn.commit()
    conn.close()
    inner = _Embed()
    embedder = CachedEmbedder(inner, db_path=path)
    got = embedder.embed(["hello", "new"])
    assert inner.calls == 1 and embedder.hits == 1 and embedder.misses == 1
    assert got[0].tobytes() == vector.tobytes()  # read back bit for bit
    again = CachedEmbedder(_Embed(), db_path=path)
    assert np.array_equal(again.embed(["new", "hello"]), got[::-1]) and again.misses == 0


def test_a_store_written_by_8a158dc_exports_the_same_bytes(tmp_path: Path) -> None:
    path = _load(tmp_path, "main_8a158dc")
    store = Store(path)
    ResponseCache(path)
    for name, write in {
        "export_details.json": lambda p: export.export_json(store, MAIN_RUN, p, include_details=True),
        "export.json": lambda p: export.export_json(store, MAIN_RUN, p),
        "export.csv": lambda p: export.export_csv(store, MAIN_RUN, p),
        "calls.jsonl": lambda p: export.export_calls_jsonl(store, MAIN_RUN, p),
    }.items():
        write(tmp_path / name)
        assert (tmp_path / name).read_bytes() == gzip.decompress((MAIN / (name + ".gz")).read_bytes()), name
