"""The bundled sample data loads cleanly and keeps its documented shape."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rageval_core.data.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[2]
SAMPLE_DATA = ROOT / "sample_data"
SEED_000 = ROOT.parent / "shared" / "seeds" / "000_b23df1dcfde5bc48.txt"
CATEGORIES = {"correct": 3, "hallucination": 3, "bad_context": 3, "partial": 3}


def test_every_file_is_documented() -> None:
    readme = (SAMPLE_DATA / "README.md").read_text(encoding="utf-8")
    for path in SAMPLE_DATA.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme, path.name


def test_ml_qa_ja_is_the_seed_dataset() -> None:
    ds = load_dataset(SAMPLE_DATA / "ml_qa_ja.json")
    assert ds.issues == [] and ds.language == "ja"
    assert [s.id for s in ds.samples] == [str(i) for i in range(1, 13)]
    counts: dict[str, int] = {}
    for s in ds.samples:
        counts[s.category or ""] = counts.get(s.category or "", 0) + 1
        assert s.metadata["category_label"] and len(s.contexts) == 2 and s.ground_truth
    assert counts == CATEGORIES


@pytest.mark.skipif(not SEED_000.exists(), reason="../shared/seeds is not present (fresh clone)")
def test_ml_qa_ja_matches_the_seed_appendix_exactly() -> None:
    text = SEED_000.read_text(encoding="utf-8")
    appendix = text[text.index("\n付録\n"):]
    seed_rows = json.loads(appendix[appendix.index("["): appendix.rindex("]") + 1])
    ours = json.loads((SAMPLE_DATA / "ml_qa_ja.json").read_text(encoding="utf-8"))
    assert ours == seed_rows


def test_ml_qa_en_parallels_the_japanese_rows() -> None:
    ja = load_dataset(SAMPLE_DATA / "ml_qa_ja.json").samples
    en = load_dataset(SAMPLE_DATA / "ml_qa_en.json")
    assert en.issues == [] and en.language == "en"
    assert [s.id for s in en.samples] == [f"{s.id}-en" for s in ja]
    for j, e in zip(ja, en.samples):
        assert e.category == j.category and len(e.contexts) == len(j.contexts)
        assert e.ground_truth and e.answer and e.metadata["category_label"]
        assert not re.search(r"[\u3040-\u30ff\u4e00-\u9fff]", e.question + e.answer + "".join(e.contexts))
    # The hallucinated facts are numbers; the translation keeps each of them (rows 4, 5 and 6).
    by_id = {s.id: s.answer for s in en.samples}
    assert "1970" in by_id["4-en"] and "Alan Turing" in by_id["4-en"]
    assert all(x in by_id["5-en"] for x in ("1.7 trillion", "17.5 billion", "97"))
    assert "50%" in by_id["6-en"] and "0.5" in by_id["6-en"]


def test_labelled_mini_has_human_labels_and_grounded_contexts() -> None:
    ds = load_dataset(SAMPLE_DATA / "labelled_mini_ja.jsonl")
    assert ds.issues == [] and ds.language == "ja" and len(ds.samples) == 16
    policy = (SAMPLE_DATA / "company_policy_ja.md").read_text(encoding="utf-8")
    faithful = [s.metadata["label_faithful"] for s in ds.samples]
    relevant = [s.metadata["label_relevant"] for s in ds.samples]
    assert set(faithful) == {0, 1} and set(relevant) == {0, 1}
    assert 5 <= sum(faithful) <= 11  # a real mix, not one class
    for s in ds.samples:
        assert all(c in policy for c in s.contexts), s.id


def test_company_policy_has_sections_and_concrete_numbers() -> None:
    text = (SAMPLE_DATA / "company_policy_ja.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert len(sections) >= 5
    assert 1500 <= len(text) <= 2500
    assert len(re.findall(r"\d[\d,]*", text)) >= 20


LABELS = ("label_faithful", "label_relevant", "label_context", "label_correct")
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def test_trust_labelled_has_the_documented_shape() -> None:
    ds = load_dataset(SAMPLE_DATA / "trust_labelled.jsonl")
    assert ds.issues == [] and len(ds.samples) == 48
    ja = [s for s in ds.samples if not s.id.endswith("-en")]
    en = [s for s in ds.samples if s.id.endswith("-en")]
    assert [f"{s.id}-en" for s in ja] == [s.id for s in en]  # parallel rows, same order
    for j, e in zip(ja, en):
        assert CJK.search(j.question + j.answer) and not CJK.search(e.question + e.answer + "".join(e.contexts)), e.id
        assert len(j.contexts) == len(e.contexts) and j.ground_truth and e.ground_truth
        for key in (*LABELS, "category", "source"):
            assert j.metadata[key] == e.metadata[key], (e.id, key)
    # Label columns survive loading as numbers, with the counts sample_data/README.md gives.
    ones = {key: sum(s.metadata[key] for s in ds.samples) for key in LABELS}
    assert all(s.metadata[k] in (0, 1) for s in ds.samples for k in LABELS)
    assert ones == {"label_faithful": 22, "label_relevant": 46, "label_context": 44, "label_correct": 24}
    categories: dict[str, int] = {}
    for s in ds.samples:
        categories[s.category or ""] = categories.get(s.category or "", 0) + 1
    assert categories == {"faithful": 16, "wrong_number": 8, "wrong_entity": 8, "unsupported_extra": 6,
                          "partial": 4, "bad_context": 4, "off_topic": 2}
    # Two-context rows in both orders: the same pair of passages appears reversed in another row.
    two = [s for s in ds.samples if len(s.contexts) == 2]
    assert len(two) == 34
    reversed_pairs = {(a.id, b.id) for a in two for b in two if a.contexts == b.contexts[::-1] and a.id < b.id}
    assert {("t02", "t03"), ("t09", "t10"), ("t15", "t16"), ("t19", "t20"), ("t02-en", "t03-en")} <= reversed_pairs
    assert len(reversed_pairs) == 8
