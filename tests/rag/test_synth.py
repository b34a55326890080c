"""Documents (sections, chunks) and synthetic QA test sets: scripted LLM, provider failures, offline path."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from rageval_core.data.datasets import load_dataset
from rageval_core.data.documents import (
    DocumentError,
    chunk_document,
    chunk_section,
    pack_units,
    parse_document,
    read_document,
)
from rageval_core.llm.base import ProviderError
from rageval_core.offline.provider import OfflineLLM
from rageval_core.rag.synth import (
    SynthError,
    generate_testset,
    load_testset,
    near_duplicates,
    parse_pairs,
    parse_testset,
)
from tests.support.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "sample_data" / "company_policy_ja.md"

EN_DOC = """# Travel Handbook

Intro text for everyone.

## Trains

Dr. Smith approved the rule in 2024. Employees travel in standard class on trains.
First class is allowed only for trips longer than 4 hours. Tickets are booked through the travel desk.

## Hotels

The hotel limit is 150 dollars per night in large cities and 110 dollars elsewhere.
Receipts must be submitted within 10 days.
"""


def pairs_for(request):
    """A scripted generator: n distinct pairs quoting the section's heading."""
    n = request.inputs["n"]
    heading = request.inputs["heading"]
    return {"pairs": [{"question": f"What does {heading} say about point {i}?", "answer": f"{heading} point {i}."} for i in range(n)]}


# ---- sections ---------------------------------------------------------------------------------------
def test_sample_policy_has_title_and_one_section_per_heading():
    doc = read_document(POLICY)
    assert doc.name == "company_policy_ja" and doc.language == "ja"
    assert doc.title == "株式会社ハルカゼ精機 社内規程ハンドブック（抜粋）"
    headings = [s.heading for s in doc.sections]
    assert headings[1:] == ["1. 適用範囲", "2. 経費精算", "3. 出張旅費", "4. リモートワーク", "5. 休暇", "6. 情報セキュリティ", "7. 問い合わせ窓口"]
    assert doc.sections[0].heading == doc.title and "架空の会社" in doc.sections[0].text  # the preamble
    assert doc.sections[2].path == (doc.title, "2. 経費精算")
    assert "申請期限は支出日の翌月10日まで" in doc.sections[2].text and "## " not in doc.sections[2].text
    assert doc.sections[2].start_line == 9
    assert len(doc.sha256) == 64


def test_headings_inside_code_fences_and_setext_headings():
    text = "Title\n=====\n\nIntro.\n\nUsage\n-----\n\n```bash\n# not a heading\nrun it\n```\n\n### Deep\n\nDeep text here.\n"
    doc = parse_document(text, "notes")
    assert [(s.heading, s.level) for s in doc.sections] == [("Title", 1), ("Usage", 2), ("Deep", 3)]
    assert "# not a heading" in doc.sections[1].text
    assert doc.sections[2].path == ("Title", "Usage", "Deep")


def test_heading_without_text_is_not_a_section_and_crlf_is_read():
    doc = parse_document("# Doc\r\n\r\n## Empty\r\n### Child\r\nChild text is here.\r\n", "d")
    assert [s.heading for s in doc.sections] == ["Child"]
    assert doc.sections[0].path == ("Doc", "Empty", "Child")


def test_plain_text_without_headings_is_cut_into_paragraph_groups():
    paragraphs = [f"Paragraph {i} says something about topic {i}. " * 20 for i in range(6)]
    doc = parse_document("\n\n".join(paragraphs), "plain")
    assert doc.title == "plain" and len(doc.sections) >= 2
    assert all(s.heading == "" and s.level == 0 for s in doc.sections)
    assert "".join(s.text for s in doc.sections).count("Paragraph") == 6 * 20
    lines = parse_document("\n\nfirst line\nsecond line\n\n\n  later paragraph\n", "p")
    assert [(s.text, s.start_line) for s in lines.sections] == [("first line\nsecond line\n\nlater paragraph", 3)]


def test_empty_or_unreadable_documents_raise(tmp_path):
    with pytest.raises(DocumentError, match="empty"):
        parse_document("  \n\n", "blank")
    (tmp_path / "doc.pdf").write_bytes(b"%PDF")
    with pytest.raises(DocumentError, match="Markdown or text"):
        read_document(tmp_path / "doc.pdf")
    with pytest.raises(DocumentError, match="cannot read"):
        read_document(tmp_path / "missing.md")
    (tmp_path / "sjis.txt").write_bytes("経費は翌月10日までに申請します。".encode("cp932"))
    assert "翌月10日" in read_document(tmp_path / "sjis.txt").text


# ---- chunks -----------------------------------------------------------------------------------------
def test_pack_units_fills_chunks_and_carries_the_overlap():
    assert pack_units([10, 10, 10, 10], size=25, overlap=0) == [[0, 1], [2, 3]]
    assert pack_units([10, 10, 10, 10], size=25, overlap=10) == [[0, 1], [1, 2], [2, 3]]
    assert pack_units([30, 5], size=20, overlap=5) == [[0], [1]]  # an oversized unit is a chunk of its own
    assert pack_units([], size=10, overlap=0) == []
    with pytest.raises(ValueError):
        pack_units([1], size=10, overlap=10)
    with pytest.raises(ValueError):
        pack_units([1], size=0, overlap=0)


def test_japanese_chunks_keep_whole_sentences_within_their_section():
    doc = read_document(POLICY)
    chunks = chunk_document(doc, size=120, overlap=40)
    assert len({c.id for c in chunks}) == len(chunks)
    for section in doc.sections:
        mine = [c for c in chunks if c.section_index == section.index]
        assert mine, section.heading
        for c in mine:
            assert len(c.text) <= 120 + 10  # sentence units up to the size; joins add no characters in ja
            assert c.text.endswith(("。", "日", "）")), c.text  # cut at sentence ends, never mid-sentence
            assert c.heading == section.heading and c.embed_text().startswith(section.heading + "\n")
    expense = [c for c in chunks if c.section_index == 2]
    assert len(expense) >= 3
    carried = expense[1].text.split("。")[0] + "。"
    assert expense[0].text.endswith(carried) and len(carried) <= 40  # the overlap: chunk 0's last sentence
    assert chunks[0].id == "company_policy_ja:s00:c00"
    assert chunk_document(doc, size=120, overlap=40) == chunks  # stable ids and texts


def test_english_chunks_split_at_sentence_ends_but_not_abbreviations():
    doc = parse_document(EN_DOC, "travel")
    assert doc.language == "en"
    trains = next(s for s in doc.sections if s.heading == "Trains")
    chunks = chunk_section(trains, doc.name, "en", size=90, overlap=0)
    texts = [c.text for c in chunks]
    assert texts[0].startswith("Dr. Smith approved the rule in 2024.")  # "Dr." is not a sentence end
    assert all(t.endswith(".") for t in texts)
    assert " ".join(texts).count("travel desk") == 1
    long = parse_document("## A\n\n" + "word " * 200, "long").sections[0]
    pieces = chunk_section(long, "long", "en", size=100, overlap=20)
    assert len(pieces) > 5 and all(len(p.text) <= 100 for p in pieces)


# ---- dedupe and parsing -----------------------------------------------------------------------------
def test_near_duplicates_drop_rewrites_but_keep_questions_about_other_numbers():
    qs = [
        "How many days of leave do new employees get?",
        "How many days of leave do new employees get ?",
        "how many days of leave do new employees get",
        "「2. 経費精算」によると、1件あたり5,000円未満の支出についてはどのように定められていますか？",
        "「2. 経費精算」によると、1件あたり5,000円以上50,000円未満の支出についてはどのように定められていますか？",
        "What is the hotel limit in large cities?",
    ]
    assert near_duplicates(qs) == {1: 0, 2: 0}
    reworded = ["What is the deadline for expense claims?", "What is the deadline for submitting expense claims?"]
    assert near_duplicates(reworded) == {}  # a reworded question is kept at the default 0.9
    assert near_duplicates(reworded, threshold=0.6) == {1: 0}


def test_parse_pairs_keeps_valid_pairs_up_to_n():
    data = {"pairs": [{"question": " Q1 ", "answer": "A1"}, {"question": "", "answer": "x"}, "junk", {"question": "Q2", "answer": "A2"}, {"question": "Q3", "answer": "A3"}]}
    assert parse_pairs(data, 2) == [("Q1", "A1"), ("Q2", "A2")]
    assert parse_pairs({"pairs": {"question": "Q", "answer": "A"}}, 3) == [("Q", "A")]
    with pytest.raises(ValueError):
        parse_pairs({"questions": []}, 3)


# ---- generation with a scripted LLM -----------------------------------------------------------------
def test_scripted_generation_uses_the_document_language_template_and_keeps_provenance():
    doc = read_document(POLICY)
    llm = ScriptedLLM(default=pairs_for)
    seen: list[tuple[int, int, str]] = []
    ts = generate_testset(doc, llm, per_section=2, progress=lambda d, t, h: seen.append((d, t, h)))
    calls = llm.calls("synth_qa")
    assert len(calls) == len(doc.sections) == 8
    first = calls[2]
    assert first.language == "ja" and first.inputs["n"] == 2 and first.inputs["heading"] == "2. 経費精算"
    assert first.schema["properties"]["pairs"]["type"] == "array"
    system, user = first.messages[0].content, first.messages[-1].content
    assert "評価データ作成担当者" in system
    assert "<text>" in user and "申請期限は支出日の翌月10日まで" in user  # the section text, delimited
    assert "リモートワーク" not in user.split("<text>")[1]  # only this section is sent
    assert len(ts.items) == 16 and not ts.offline
    item = next(i for i in ts.items if i.metadata["section_index"] == 2)
    assert item.id == "s02-q01"
    md = item.metadata
    assert md["document"] == "company_policy_ja" and md["section"] == "2. 経費精算" and md["category"] == "2. 経費精算"
    assert md["chunk_ids"] and all(c.startswith("company_policy_ja:s02:") for c in md["chunk_ids"])
    assert md["source_chunk_id"] in md["chunk_ids"]
    assert (md["generator_provider"], md["generator_model"], md["generator_offline"]) == ("scripted", "scripted-1", False)
    assert ts.generator["template"].startswith("ja/synth_qa@") and ts.document["sha256"] == doc.sha256
    assert seen[-1] == (8, 8, "7. 問い合わせ窓口")


def test_english_document_gets_the_english_template():
    llm = ScriptedLLM(default=pairs_for)
    ts = generate_testset(parse_document(EN_DOC, "travel"), llm, per_section=1)
    assert {r.language for r in llm.calls()} == {"en"}
    assert "You write evaluation data" in llm.calls()[0].messages[0].content
    assert [i.metadata["section"] for i in ts.items] == ["Travel Handbook", "Trains", "Hotels"]


def test_a_failing_section_is_marked_and_the_rest_goes_on():
    doc = read_document(POLICY)
    llm = ScriptedLLM(default=pairs_for)
    llm.script(
        "synth_qa",
        pairs_for,  # section 0
        ProviderError("quota exhausted", kind="rate_limit", status=429),  # section 1
        "this is not JSON",  # section 2
        {"pairs": []},  # section 3
    )
    ts = generate_testset(doc, llm, per_section=2)
    status = {s.index: (s.status, s.reason) for s in ts.sections}
    assert status[1][0] == "failed" and "provider_error (rate_limit)" in status[1][1] and "quota exhausted" in status[1][1]
    assert status[2][0] == "failed" and status[2][1].startswith("parse_error")
    assert status[3] == ("empty", "the model returned no usable question/answer pair")
    assert all(status[i] == ("ok", None) for i in (0, 4, 5, 6, 7))
    assert {i.metadata["section_index"] for i in ts.items} == {0, 4, 5, 6, 7}
    assert [s.index for s in ts.failed_sections] == [1, 2]


def test_duplicates_across_sections_are_dropped_and_counted():
    doc = read_document(POLICY)
    same = {"pairs": [{"question": "経費の申請期限はいつですか？", "answer": "翌月10日までです。"}]}
    llm = ScriptedLLM(default=lambda r: same)
    ts = generate_testset(doc, llm, per_section=1)
    assert len(ts.items) == 1
    assert sum(s.duplicates for s in ts.sections) == 7 and ts.sections[0].kept == 1


def test_bad_settings_raise_before_any_call():
    doc = read_document(POLICY)
    llm = ScriptedLLM()
    with pytest.raises(SynthError, match="between 1 and"):
        generate_testset(doc, llm, per_section=0)
    with pytest.raises(SynthError, match="template"):
        generate_testset(doc, llm, template="# variables: text\n\n{text} {oops}")
    with pytest.raises(SynthError, match="no sections"):
        generate_testset(doc, llm, sections=[99])
    assert llm.requests == []


def test_cancel_marks_the_remaining_sections():
    doc = read_document(POLICY)
    cancel = threading.Event()
    llm = ScriptedLLM(default=pairs_for)
    ts = generate_testset(doc, llm, per_section=1, progress=lambda d, t, h: cancel.set() if d == 2 else None, cancel=cancel)
    assert [s.status for s in ts.sections] == ["ok", "ok"] + ["cancelled"] * 6
    assert len(llm.calls()) == 2


# ---- offline ----------------------------------------------------------------------------------------
def test_offline_generation_on_the_sample_policy_is_extractive_and_labelled():
    doc = read_document(POLICY)
    ts = generate_testset(doc, OfflineLLM(), per_section=3)
    assert ts.offline and "no language model" in ts.generator["note"]
    assert all(s.status == "ok" for s in ts.sections)
    assert 20 <= len(ts.items) <= 24
    for item in ts.items:
        section = doc.sections[item.metadata["section_index"]]
        assert item.metadata["generator_offline"] is True
        assert item.metadata["grounding"] == 1.0  # the ground truth is a sentence of its section
        assert section.heading in item.question
    assert len({i.question for i in ts.items}) == len(ts.items)


# ---- files ------------------------------------------------------------------------------------------
def test_testset_round_trip_and_it_also_loads_as_a_dataset(tmp_path):
    doc = read_document(POLICY)
    ts = generate_testset(doc, ScriptedLLM(default=pairs_for), per_section=1)
    path = ts.save(tmp_path / "ts.json")
    back = load_testset(path)
    assert [(i.id, i.question, i.ground_truth, i.metadata) for i in back.items] == [
        (i.id, i.question, i.ground_truth, i.metadata) for i in ts.items
    ]
    assert back.generator == ts.generator and [s.status for s in back.sections] == [s.status for s in ts.sections]
    loaded = load_dataset(path)
    assert [s.id for s in loaded.samples] == [i.id for i in ts.items]
    assert loaded.samples[0].ground_truth == ts.items[0].ground_truth
    assert loaded.samples[0].metadata["section"] == ts.items[0].metadata["section"]


def test_seed_003_pair_lists_are_read_and_bad_files_rejected(tmp_path):
    seed = [{"question": "カフェで仕事をしてもいいですか？", "answer": "はい、上長の許可を得れば可能です。"}]
    ts = parse_testset(seed)
    assert (ts.items[0].id, ts.items[0].ground_truth) == ("q001", seed[0]["answer"])
    assert ts.items[0].metadata == {}
    (tmp_path / "bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(SynthError, match="not a JSON test set"):
        load_testset(tmp_path / "bad.json")
    with pytest.raises(SynthError, match="missing question"):
        parse_testset([{"answer": "x"}])
    with pytest.raises(SynthError, match="duplicate"):
        parse_testset([{"id": 1, "question": "a", "answer": "b"}, {"id": 1, "question": "c", "answer": "d"}])
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in seed * 2), encoding="utf-8")
    assert [i.id for i in load_testset(jsonl).items] == ["q001", "q002"]  # rows without ids are numbered
