"""A store written by main at 500ef79 (before texts by reference) opens, migrates in place and exports the
same bytes; a migration cut short goes on at the next open.

The fixture (tests/store/fixtures/legacy_500ef79/) is that store as an SQL dump and its four exports, all made
by the code at 500ef79: 3 distinct rows, the six metrics, rubric5 and binary, against the fake server. The
exports are compared twice: with what this code exports from the store before it migrates (byte for byte, all
four), and with what 500ef79 exported (the CSV and the call log byte for byte; the JSON exports after removing
the one key added since, ``cost.*.cached_input_tokens``).
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from pathlib import Path

import pytest

from rageval_core.analysis import export
from rageval_core.store import migrate_texts
from rageval_core.store.runs import Store

FIXTURE = Path(__file__).parent / "fixtures" / "legacy_500ef79"
RUN = "20261202-134435-d43156"
EXPORTS = {
    "export_details.json": lambda s, p: export.export_json(s, RUN, p, include_details=True),
    "export.json": lambda s, p: export.export_json(s, RUN, p),
    "export.csv": lambda s, p: export.export_csv(s, RUN, p),
    "calls.jsonl": lambda s, p: export.export_calls_jsonl(s, RUN, p),
}


def _legacy_db(tmp_path: Path) -> Path:
    path = tmp_path / "legacy.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(gzip.decompress((FIXTURE / "store.sql.gz").read_bytes()).decode("utf-8"))
    conn.close()
    return path


def _inline_texts(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        results = conn.execute("SELECT COUNT(*) FROM results WHERE instr(details, '\"prompt\": \"') > 0").fetchone()[0]
        calls = conn.execute("SELECT COUNT(*) FROM call_log WHERE prompt IS NOT NULL").fetchone()[0]
        return int(results), int(calls)
    finally:
        conn.close()


def _exports(store: Store, out: Path) -> dict[str, bytes]:
    written = {}
    for name, write in EXPORTS.items():
        write(store, out / name)
        written[name] = (out / name).read_bytes()
    return written


def _as_500ef79(name: str, data: bytes) -> bytes:
    """An export without the keys added after 500ef79 (JSON re-read; other formats as they are)."""
    if not name.endswith(".json"):
        return data
    doc = json.loads(data)
    for cost in doc["cost"].values():
        cost.pop("cached_input_tokens", None)
    return json.dumps(doc, ensure_ascii=False, indent=2).encode("utf-8")


def _assert_exports_equal(store: Store, out: Path, before: dict[str, bytes]) -> None:
    now = _exports(store, out)
    assert now == before
    for name, data in now.items():
        frozen = gzip.decompress((FIXTURE / (name + ".gz")).read_bytes())
        assert _as_500ef79(name, data) == _as_500ef79(name, frozen), name


def _unmigrated_exports(path: Path, out: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """What this code exports from the legacy store while it is still unconverted (a copy, migration held off)."""
    copy = out / "unmigrated.sqlite"
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(path.read_bytes())
    with monkeypatch.context() as m:
        m.setattr(migrate_texts, "migrate", lambda conn, **kw: False)
        exports = _exports(Store(copy), out)
    assert _inline_texts(copy)[0] > 0  # it really read the inline texts
    return exports


def test_legacy_store_migrates_and_exports_the_same_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _legacy_db(tmp_path)
    before = _inline_texts(path)
    assert before[0] > 0 and before[1] > 0  # the fixture holds texts inline, as 500ef79 wrote them
    size_before = sum(len(r[0] or "") + len(r[1] or "") for r in sqlite3.connect(path).execute(
        "SELECT details, NULL FROM results UNION ALL SELECT prompt, response FROM call_log"))
    before_exports = _unmigrated_exports(path, tmp_path / "before", monkeypatch)
    store = Store(path)
    assert _inline_texts(path) == (0, 0)
    conn = sqlite3.connect(path)
    size_after = sum(len(r[0] or "") for r in conn.execute("SELECT details FROM results"))
    size_after += sum(len(r[0]) for r in conn.execute("SELECT body FROM texts"))
    assert size_after * 3 < size_before, (size_before, size_after)  # each text once, long ones compressed
    _assert_exports_equal(store, tmp_path, before_exports)
    assert migrate_texts.pending(store._conn()) is False


def test_a_migration_cut_short_goes_on_at_the_next_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _legacy_db(tmp_path)
    before_exports = _unmigrated_exports(path, tmp_path / "before", monkeypatch)
    monkeypatch.setattr(migrate_texts, "BATCH", 7)
    real = migrate_texts.migrate
    monkeypatch.setattr(migrate_texts, "migrate", lambda conn: real(conn, max_batches=2))
    first = Store(path)
    half = _inline_texts(path)
    assert 0 < half[0] < _inline_texts_total(path) and half[1] > 0  # some rows done, some not: both read
    _assert_exports_equal(first, tmp_path / "half", before_exports)
    monkeypatch.setattr(migrate_texts, "migrate", real)
    Store(path)  # the same thread reuses its connection: the next open finishes the rest
    assert _inline_texts(path) == (0, 0)
    _assert_exports_equal(Store(path), tmp_path / "done", before_exports)


def _inline_texts_total(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM results").fetchone()[0])
    finally:
        conn.close()
