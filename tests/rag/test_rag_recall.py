"""recall@k of source chunks (bench/rag.py's measure), against hand-computed values, and the hand-written
paraphrase set shipped in sample_data (every evidence sentence is in the document it cites)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core.data.documents import chunk_document, read_document
from rageval_core.rag.simple import recall_at_k

ROOT = Path(__file__).resolve().parents[2]


def test_recall_at_k_by_hand():
    ranked = [["a", "b", "c"], ["x", "y", "z"], ["m", "n", "o"], ["q"]]
    sources = [[{"b"}], [{"z"}, {"x"}], [{"p", "n"}], []]  # the last has no source: left out
    # k=1: 0 + 1/2 + 0 = 0.5 / 3; k=2: 1 + 1/2 + 1 = 2.5 / 3; k=3: 1 + 1 + 1
    assert recall_at_k(ranked, sources, 1) == pytest.approx(0.5 / 3)
    assert recall_at_k(ranked, sources, 2) == pytest.approx(2.5 / 3)
    assert recall_at_k(ranked, sources, 3) == 1.0
    assert recall_at_k([["a"]], [[]], 1) is None
    with pytest.raises(ValueError):
        recall_at_k(ranked, sources, 0)


def test_hand_written_questions_cite_evidence_that_the_document_holds_and_do_not_copy_it():
    doc = read_document(ROOT / "sample_data" / "company_policy_ja.md")
    chunks = chunk_document(doc)
    rows = [json.loads(x) for x in (ROOT / "sample_data" / "policy_questions_ja.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 20 and len({r["id"] for r in rows}) == len(rows)
    for row in rows:
        assert any(row["evidence"] in c.text and c.section_index == row["section_index"] for c in chunks), row["id"]
        assert doc.sections[row["section_index"]].heading == row["section"]
        assert row["question"] not in row["evidence"] and row["evidence"][:12] not in row["question"]
