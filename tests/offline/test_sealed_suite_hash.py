"""The sealed suite (bench/data/sealed_edits.jsonl) stays as it was sealed: its sha256 equals the recorded one
and every row is well formed. This test never scores the suite: it is scored once, by a bench command,
so that no rule is ever tuned on it (bench/data/sealed_edits.README.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"
SUITE = DATA / "sealed_edits.jsonl"
RECORD = DATA / "sealed_edits.sha256"

TEXT_FIELDS = ("id", "type", "form", "language", "domain", "edit", "question", "answer")
TYPES = {"control", "paraphrase", "number", "date", "negation", "entity", "unit", "invention"}
FAITHFUL_TYPES = {"control", "paraphrase"}


def rows() -> list[dict]:
    out = []
    for number, line in enumerate(SUITE.read_text(encoding="utf-8").splitlines(), 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{SUITE.name} row {number}: not JSON ({exc})") from exc
    return out


def test_the_suite_has_the_recorded_sha256():
    # Line endings are normalised so that a checkout converted to CRLF does not count as an edit.
    digest = hashlib.sha256(SUITE.read_bytes().replace(b"\r\n", b"\n")).hexdigest()
    recorded, name = RECORD.read_text(encoding="utf-8").split()
    assert name == SUITE.name
    assert digest == recorded, "bench/data/sealed_edits.jsonl changed: the sealed suite is never edited"


def test_every_row_has_the_required_fields_and_labels():
    seen = set()
    for number, row in enumerate(rows(), 1):
        where = f"{SUITE.name} row {number}"
        for field in TEXT_FIELDS:
            assert isinstance(row.get(field), str), f"{where}: field {field!r} missing or not text"
        for field in ("id", "question", "answer"):
            assert row[field].strip(), f"{where}: field {field!r} is blank"
        contexts = row.get("contexts")
        assert isinstance(contexts, list) and 1 <= len(contexts) <= 3, f"{where}: 'contexts' must hold 1-3 texts"
        assert all(isinstance(c, str) and c.strip() for c in contexts), f"{where}: a blank context"
        assert row["type"] in TYPES, f"{where}: unknown type {row['type']!r}"
        assert row["form"] in {"plain", "realistic"}, f"{where}: unknown form {row['form']!r}"
        assert row["language"] in {"en", "ja"}, f"{where}: unknown language {row['language']!r}"
        for field in ("label_faithful", "label_relevant"):
            assert row.get(field) in (0, 1) and not isinstance(row.get(field), bool), f"{where}: {field} not 0/1"
        assert row["label_faithful"] == int(row["type"] in FAITHFUL_TYPES), f"{where}: label contradicts type"
        assert row["id"] not in seen, f"{where}: duplicate id {row['id']!r}"
        seen.add(row["id"])
    assert len(seen) >= 96
