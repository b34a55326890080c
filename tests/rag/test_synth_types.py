"""Question types, shares and curation of synthetic test sets: scripted LLM, offline shapes, file round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset
from rageval_core.data.documents import chunk_document, parse_document, read_document
from rageval_core.offline.provider import OfflineLLM
from rageval_core.rag.synth import (
    ANSWERABLE_OUT_OF_SCOPE,
    NEAR_DUPLICATE,
    NOT_IN_DOCUMENTS,
    UNSUPPORTED,
    SharesError,
    SynthError,
    allocate,
    generate_testset,
    load_testset,
    parse_shares,
    plan_calls,
    review_order,
    select,
    set_status,
)
from rageval_core.rag.synth.curation import question_coverage
from tests.support.scripted_llm import ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "sample_data" / "company_policy_ja.md"
MIX = "fact=0.4,reasoning=0.3,multi_chunk=0.2,out_of_scope=0.1"
EN_DOC = """# Office Handbook

## Expenses

Expenses under 5,000 yen need only the manager's approval. Larger expenses need the finance team as well.
Claims must be filed within 10 days of the purchase.

## Remote work

Employees may work remotely up to 3 days a week. Tuesdays are office days for everyone.
"""


# ---- shares and plans (hand-computed) ---------------------------------------------------------------
def test_shares_parse_normalise_and_refuse_what_cannot_be_used():
    assert parse_shares(MIX) == pytest.approx({"fact": 0.4, "reasoning": 0.3, "multi_chunk": 0.2, "out_of_scope": 0.1})
    assert parse_shares("fact=3, out-of-scope=1") == {"fact": 0.75, "out_of_scope": 0.25}
    assert parse_shares("fact=50%,reasoning=50%") == {"fact": 0.5, "reasoning": 0.5}
    for bad, fragment in [("facts=1", "unknown question type"), ("fact=-1", ">= 0"), ("fact=0", "above 0"),
                          ("fact", "TYPE=SHARE"), ("fact=lots", "not a number")]:
        with pytest.raises(SharesError, match=fragment):
            parse_shares(bad)


def test_allocation_is_largest_remainder():
    # 24 x (0.4, 0.3, 0.2, 0.1) = 9.6, 7.2, 4.8, 2.4 -> floors 9, 7, 4, 2 (22); the 2 left go to .8 and .6
    assert allocate(24, parse_shares(MIX)) == {"fact": 10, "reasoning": 7, "multi_chunk": 5, "out_of_scope": 2}
    assert allocate(3, {"fact": 1, "reasoning": 1, "multi_chunk": 1, "out_of_scope": 1}) == {
        "fact": 1, "reasoning": 1, "multi_chunk": 1, "out_of_scope": 0}


def test_plan_spreads_each_type_over_sections_and_pairs_neighbours_for_multi_chunk():
    plan = plan_calls([0, 1, 2], 2, parse_shares("fact=0.5,multi_chunk=0.5"), max_n=20)
    assert [(c.qtype, c.sections, c.n) for c in plan] == [
        ("fact", (0,), 1), ("multi_chunk", (0, 1), 2), ("fact", (1,), 1), ("multi_chunk", (1, 2), 1), ("fact", (2,), 1),
    ]
    assert [(c.qtype, c.n) for c in plan_calls([0, 1], 3, {"fact": 1.0}, max_n=20)] == [("fact", 3), ("fact", 3)]
    assert [c.sections for c in plan_calls([4], 2, {"multi_chunk": 1.0}, max_n=20)] == [(4, 4)]


# ---- scripted LLM -----------------------------------------------------------------------------------
def typed_pairs(request):
    """A scripted generator per task: pairs quoting what the request carried."""
    n, inputs = request.inputs["n"], request.inputs
    if request.task == "synth_multi_chunk":
        first = lambda text: text.split("。")[0] + "。"  # noqa: E731
        return {"pairs": [{"question": f"{inputs['heading_a']}と{inputs['heading_b']}の両方について{i}？",
                           "answer": first(inputs["text_a"]) + first(inputs["text_b"])} for i in range(n)]}
    if request.task == "synth_out_of_scope":
        return {"pairs": [{"question": f"{inputs['heading']}の社員食堂の営業時間は何時からですか{i}？",
                           "answer": inputs["not_found"]} for i in range(n)]}
    sentence = inputs["text"].split("。")[0] + "。"
    kind = "推論" if request.task == "synth_reasoning" else "事実"
    return {"pairs": [{"question": f"{inputs['heading']}の{kind}{i}は？", "answer": sentence} for i in range(n)]}


def test_each_question_type_is_requested_with_its_template_and_recorded_with_its_sources():
    doc = read_document(POLICY)
    llm = ScriptedLLM(default=typed_pairs)
    ts = generate_testset(doc, llm, per_section=3, shares=parse_shares(MIX))
    asked = {t: sum(r.inputs["n"] for r in llm.calls(t)) for t in
             ("synth_qa", "synth_reasoning", "synth_multi_chunk", "synth_out_of_scope")}
    assert asked == {"synth_qa": 10, "synth_reasoning": 7, "synth_multi_chunk": 5, "synth_out_of_scope": 2}
    systems = {r.task: r.messages[0].content for r in llm.requests}
    assert "一段の推論" in systems["synth_reasoning"] and "A と B の両方" in systems["synth_multi_chunk"]
    assert "文書には記載がありません。" in systems["synth_out_of_scope"]
    multi = llm.calls("synth_multi_chunk")[0]
    assert multi.inputs["heading_a"] != multi.inputs["heading_b"] and "<text_b>" in multi.messages[-1].content
    assert "document_text" in llm.calls("synth_out_of_scope")[0].inputs  # for the offline provider only
    assert "document_text" not in llm.calls("synth_out_of_scope")[0].messages[-1].content
    assert ts.counts()["type"] == {"fact": 10, "reasoning": 7, "multi_chunk": 5, "out_of_scope": 2}
    chunk_ids = {c.id for c in chunk_document(doc)}
    for item in ts.items:
        md = item.metadata
        assert md["status"] == "accepted" and isinstance(md["flags"], list)
        assert set(md["source_chunk_ids"]) <= chunk_ids
        expected = {"multi_chunk": 2, "out_of_scope": 0}.get(md["question_type"], 1)
        assert len(md["source_chunk_ids"]) == expected, item
    m = next(i for i in ts.items if i.question_type == "multi_chunk")
    assert m.id.startswith("s00-m") and len(m.metadata["section_indices"]) == 2
    assert ts.generator["shares"] == {"fact": 0.4, "reasoning": 0.3, "multi_chunk": 0.2, "out_of_scope": 0.1}
    assert set(ts.generator["templates"]) == {"fact", "reasoning", "multi_chunk", "out_of_scope"}


def test_an_out_of_scope_pair_that_a_chunk_answers_is_flagged_and_a_real_one_is_not():
    doc = read_document(POLICY)
    llm = ScriptedLLM().script(
        "synth_out_of_scope",
        {"pairs": [{"question": "リモートワークは週に何日まで選択できますか？", "answer": NOT_IN_DOCUMENTS["ja"]},
                   {"question": "社員食堂の営業時間は何時から何時までですか？", "answer": NOT_IN_DOCUMENTS["ja"]}]},
    )
    ts = generate_testset(doc, llm, per_section=2, shares={"out_of_scope": 1.0}, sections=[4])
    answerable, real = ts.items
    assert answerable.flags == [ANSWERABLE_OUT_OF_SCOPE]
    assert answerable.metadata["answered_by"] == "company_policy_ja:s04:c00"
    assert "heuristic" in answerable.metadata["flag_notes"][ANSWERABLE_OUT_OF_SCOPE]
    assert real.flags == [] and "answered_by" not in real.metadata
    assert question_coverage(answerable.question, doc.sections[4].text) == 1.0


def test_a_ground_truth_its_source_does_not_support_is_flagged_unsupported():
    doc = read_document(POLICY)
    llm = ScriptedLLM().script("synth_qa", {"pairs": [
        {"question": "経費の申請期限はいつですか？", "answer": "申請期限は支出日の翌月10日までです。"},
        {"question": "経費の上限は年間いくらですか？", "answer": "年間300万円が上限で、超えた分は社長が個人で負担します。"},
    ]})
    ts = generate_testset(doc, llm, per_section=2, sections=[2])
    supported, invented = ts.items
    assert supported.flags == [] and supported.metadata["support"] >= 0.5
    assert invented.flags == [UNSUPPORTED] and invented.metadata["support"] < 0.5


def test_near_duplicates_are_set_aside_beside_their_twin_and_flagged_pairs_come_first():
    doc = read_document(POLICY)
    llm = ScriptedLLM().script("synth_qa", {"pairs": [
        {"question": "経費の申請期限はいつですか？", "answer": "申請期限は支出日の翌月10日までです。"},
        {"question": "経費の上限は年間いくらですか？", "answer": "年間300万円が上限で、超えた分は社長が個人で負担します。"},
        {"question": "経費の申請期限はいつですか", "answer": "翌月10日までです。"},
    ]})
    ts = generate_testset(doc, llm, per_section=3, sections=[2])
    assert [i.id for i in ts.items] == ["s02-q01", "s02-q02"] and [i.id for i in ts.rejected] == ["s02-q03"]
    dup = ts.rejected[0]
    assert dup.status == "rejected" and dup.flags == [NEAR_DUPLICATE] and dup.metadata["duplicate_of"] == "s02-q01"
    # flagged groups first: the twin with its duplicate, then the unsupported pair
    assert [i.id for i in review_order(ts)] == ["s02-q01", "s02-q03", "s02-q02"]
    assert ts.sections[0].duplicates == 1 and ts.sections[0].kept == 2


def test_bulk_status_moves_pairs_between_in_use_and_set_aside():
    doc = read_document(POLICY)
    same = {"pairs": [{"question": "経費の申請期限はいつですか？", "answer": "申請期限は支出日の翌月10日までです。"}]}
    ts = generate_testset(doc, ScriptedLLM(default=lambda r: same), per_section=1, sections=[1, 2, 3])
    assert len(ts.items) == 1 and len(ts.rejected) == 2
    restored = set_status(ts, select(ts, flag=NEAR_DUPLICATE), "accepted")
    assert [i.id for i in restored.items] == ["s01-q01", "s02-q01", "s03-q01"] and restored.rejected == []
    assert restored.items[1].flags == [NEAR_DUPLICATE]  # accepting keeps what the check saw
    dropped = set_status(restored, ["s01-q01"], "rejected")
    assert [i.id for i in dropped.items] == ["s02-q01", "s03-q01"] and dropped.rejected[0].status == "rejected"
    with pytest.raises(ValueError, match="status"):
        set_status(ts, ["s01-q01"], "maybe")


def test_type_sources_status_and_flags_survive_the_file_and_the_dataset_loader(tmp_path):
    doc = read_document(POLICY)
    ts = generate_testset(doc, ScriptedLLM(default=typed_pairs), per_section=2, shares=parse_shares(MIX))
    ts = set_status(ts, [ts.items[0].id], "rejected")
    ts.items[0].metadata["status"] = "edited"
    path = ts.save(tmp_path / "ts.json")
    back = load_testset(path)
    assert [(i.id, i.metadata) for i in back.items] == [(i.id, i.metadata) for i in ts.items]
    assert [(i.id, i.status) for i in back.rejected] == [(ts.rejected[0].id, "rejected")]
    for suffix in ("json", "jsonl", "csv"):
        rows = load_dataset(path).samples
        out = tmp_path / f"rows.{suffix}"
        from rageval_core.data.datasets import save_dataset

        save_dataset(rows, out)
        again = {s.id: s.metadata for s in load_dataset(out).samples}
        assert set(again) == {i.id for i in ts.items}  # rejected pairs are not evaluation rows
        for item in ts.items:
            md = again[item.id]
            assert md["question_type"] == item.question_type and md["status"] == item.status
            assert md["source_chunk_ids"] == item.metadata["source_chunk_ids"] and md["flags"] == item.flags
    with pytest.raises(SynthError, match="status"):
        load_testset(json.dumps({"rows": [{"question": "q", "answer": "a", "status": "maybe"}]}).encode())


# ---- offline shapes ---------------------------------------------------------------------------------
def test_offline_types_have_distinct_shapes_in_japanese():
    doc = read_document(POLICY)
    ts = generate_testset(doc, OfflineLLM(), per_section=3, shares=parse_shares(MIX))
    assert ts.offline and "heuristic" in ts.generator["note"]
    by_type = {t: [i for i in ts.items if i.question_type == t] for t in ("fact", "reasoning", "multi_chunk", "out_of_scope")}
    assert all(by_type.values())
    assert all("どのように定められていますか" in i.question for i in by_type["fact"])
    assert all("定めに照らすと" in i.question for i in by_type["reasoning"])
    assert any("3,000円の支出はどのように扱われますか" in i.question for i in by_type["reasoning"])
    assert all(("満たし" in i.ground_truth or "当てはまります" in i.ground_truth) for i in by_type["reasoning"])
    for item in by_type["multi_chunk"]:
        a, b = item.metadata["section_indices"]
        assert a != b and doc.sections[a].heading in item.question and doc.sections[b].heading in item.question
    assert all(i.ground_truth == NOT_IN_DOCUMENTS["ja"] for i in by_type["out_of_scope"])
    # the heuristic's own out-of-scope questions pass its answerable check, and no fact pair is unsupported
    assert not any(i.flags for i in ts.items if i.question_type in ("out_of_scope", "fact"))
    assert len({i.question for i in ts.items}) == len(ts.items)


def test_offline_types_in_english():
    doc = parse_document(EN_DOC, "office")
    ts = generate_testset(doc, OfflineLLM(), per_section=2, shares={"reasoning": 1, "multi_chunk": 1, "out_of_scope": 1})
    questions = {i.question_type: i.question for i in ts.items}
    assert questions["reasoning"].startswith('Under "') and "3,000 yen" in " ".join(i.question for i in ts.items)
    assert questions["multi_chunk"].startswith('What does "') and ', and what does "' in questions["multi_chunk"]
    oos = [i for i in ts.items if i.question_type == "out_of_scope"]
    assert oos and all(i.ground_truth == NOT_IN_DOCUMENTS["en"] for i in oos)


def test_cli_synth_types_then_rag_answers_only_the_pairs_in_use(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--types", MIX, "--out", "ts.json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "reasoning" in out and "multi_chunk" in out and "flagged for review" in out
    data = json.loads((tmp_path / "ts.json").read_text(encoding="utf-8"))
    assert {r["question_type"] for r in data["rows"]} == {"fact", "reasoning", "multi_chunk", "out_of_scope"}
    data["rejected"] = [dict(data["rows"].pop(0), status="rejected")]
    (tmp_path / "ts.json").write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    assert cli.main(["rag", "ts.json", "--docs", str(POLICY), "--provider", "offline", "--out", "rag.json", "--quiet"]) == 0
    rows = load_dataset(tmp_path / "rag.json").samples
    assert len(rows) == len(data["rows"]) and data["rejected"][0]["id"] not in {r.id for r in rows}
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--types", "facts=1", "--out", "x.json"]) == 2
    assert "unknown question type" in capsys.readouterr().err
