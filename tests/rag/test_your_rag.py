"""Your RAG system as the thing evaluated: mapping (pure), an HTTP endpoint on loopback, a Python callable,
and the CLI chain synth → rag → evaluate; failing and hanging questions are marked and the rest go on; a
header token never reaches disk or output."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.providers.config import ProviderConfig
from rageval_core.rag.synth import TestItem, load_testset
from rageval_core.rag.your_rag import (
    CallableRAG,
    EndpointRAG,
    MappingError,
    RagMapping,
    answer_with_system,
    build_body,
    latency_summary,
    read_reply,
    safe_url,
    system_stack,
    try_one,
)
from rageval_core.rag.your_rag.mapping import get_path, mapping_from_dict
from tests.support.rag_server import RagServer
from tests.support.store_bytes import readable

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "tok-PLANTED-7f3a9c1e55"
DOC = ROOT / "sample_data" / "company_policy_ja.md"


# ---- mapping (pure) --------------------------------------------------------------------------------------
def test_paths_step_into_objects_lists_and_map_over_lists():
    reply = {"output": {"text": "答え", "sources": [{"page_content": "A", "id": 7}, {"page_content": "B", "id": 9}]}}
    assert get_path(reply, "output.text") == "答え"
    assert get_path(reply, "output.sources.1.page_content") == "B"
    assert get_path(reply, "output.sources[].id") == [7, 9]
    with pytest.raises(KeyError, match="no key 'answer'"):
        get_path(reply, "output.answer")
    with pytest.raises(KeyError, match="index 5 out of range"):
        get_path(reply, "output.sources.5")


def test_default_mapping_fits_question_in_answer_and_contexts_out():
    m = RagMapping()
    assert build_body(m, "Q?") == {"question": "Q?"}
    assert read_reply(m, {"answer": " A ", "contexts": ["c1", {"text": "c2"}]}).contexts == ("c1", "c2")
    assert read_reply(m, {"answer": " A ", "contexts": "one"}).answer == "A"


def test_a_custom_mapping_writes_nested_bodies_and_reads_ids():
    m = mapping_from_dict({"question": "input.query", "body": {"top_k": 3}, "metadata": "input.meta",
                           "answer": "output.text", "contexts": "output.docs", "context_text": "page_content",
                           "context_ids": "output.docs[].id"})
    assert build_body(m, "Q", {"category": "x"}) == {"top_k": 3, "input": {"query": "Q", "meta": {"category": "x"}}}
    reply = read_reply(m, {"output": {"text": "A", "docs": [{"page_content": "P", "id": 3}]}})
    assert (reply.answer, reply.contexts, reply.context_ids) == ("A", ("P",), ("3",))


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"contexts": []}, "answer: answer: no key 'answer'"),
        ({"answer": 3, "contexts": []}, "holds a int, not text"),
        ({"answer": "a", "contexts": {"x": 1}}, "holds a dict, not a list"),
        ({"answer": "a", "contexts": [{"body": "x"}]}, r"contexts\[0\]: text: no key 'text'"),
    ],
)
def test_a_reply_that_does_not_fit_names_the_path(reply, message):
    with pytest.raises(MappingError, match=message):
        read_reply(RagMapping(), reply)


def test_mapping_files_reject_unknown_keys_and_non_path_values():
    with pytest.raises(MappingError, match="unknown key"):
        mapping_from_dict({"anwser": "x"})
    with pytest.raises(MappingError, match="dotted path"):
        mapping_from_dict({"answer": 3})


def test_latency_summary_median_and_p95_by_hand():
    # sorted 1..10: median 5.5; p95 at rank 0.95 * 9 = 8.55 → 9 + 0.55 * (10 - 9) = 9.55
    assert latency_summary([float(x) for x in range(10, 0, -1)]) == {"n": 10, "median_s": 5.5, "p95_s": 9.55, "max_s": 10.0}
    assert latency_summary([]) == {"n": 0, "median_s": None, "p95_s": None, "max_s": None}


def test_urls_lose_their_credentials_before_they_are_stored_or_shown():
    assert safe_url("http://user:secret@127.0.0.1:9/v1/rag?key=abc&k=3") == "http://***@127.0.0.1:9/v1/rag?key=***&k=3"


# ---- a RAG server on loopback ----------------------------------------------------------------------------
@pytest.fixture()
def rag_server() -> Iterator[RagServer]:
    srv = RagServer()
    yield srv
    srv.close()


def _items(*questions: str) -> list[TestItem]:
    return [TestItem(str(n), q, "正解", {"category": "policy"}) for n, q in enumerate(questions, 1)]


def test_failing_and_hanging_questions_are_marked_and_the_others_answered(rag_server, tmp_path):
    system = EndpointRAG(rag_server.url, timeout_s=1.0)
    cfg = ProviderConfig(concurrency=3, max_retries=0, timeout_s=1.0)
    llm = system_stack(system, cfg, db_path=tmp_path / "db.sqlite")
    run = answer_with_system(_items("適用範囲は？", "FAIL です", "HANG です", "休暇は？"), llm, system.descriptor, concurrency=3)
    by_id = {s.id: s for s in run.samples}
    assert [s.id for s in run.samples] == ["1", "2", "3", "4"]  # the test set's order
    assert by_id["1"].answer.startswith("適用範囲は？") and by_id["1"].contexts == ("第1条 この規程は全従業員に適用する。",)
    assert by_id["1"].metadata["retrieved_chunk_ids"] == ["c1"]
    assert by_id["2"].answer == "" and by_id["2"].metadata["rag_error"].startswith("server: ")
    assert by_id["3"].answer == "" and by_id["3"].metadata["rag_error"].startswith("timeout: ")
    assert run.errors == 2 and run.latency["n"] == 2
    # a re-run asks nothing again for the answered questions (response cache, same system description)
    before = len(rag_server.requests)
    again = answer_with_system(_items("適用範囲は？", "休暇は？"), llm, system.descriptor)
    assert len(rag_server.requests) == before and again.cached == 2


def test_try_one_shows_the_raw_reply_and_what_the_mapping_read(rag_server):
    system = EndpointRAG(rag_server.url)
    shown = try_one(system, "適用範囲は？", system.descriptor)
    assert shown["ok"] and shown["reply"]["contexts"][0]["id"] == "c1"
    assert shown["read"]["contexts"] == ["第1条 この規程は全従業員に適用する。"]
    wrong = EndpointRAG(rag_server.url, mapping=RagMapping(answer="output.text"))
    assert try_one(wrong, "Q", wrong.descriptor)["error"].startswith("malformed_response: ")


def test_an_unreachable_endpoint_is_a_connection_error_on_the_row(tmp_path):
    system = EndpointRAG("http://127.0.0.1:9/rag", timeout_s=2.0)
    llm = system_stack(system, ProviderConfig(max_retries=0), db_path=tmp_path / "db.sqlite")
    run = answer_with_system(_items("Q"), llm, system.descriptor)
    assert run.samples[0].metadata["rag_error"].startswith("connection: ") and "cannot reach" in run.samples[0].metadata["rag_error"]


# ---- Python callables ------------------------------------------------------------------------------------
def rag_pair(question):
    return f"{question}: 回答", ["文脈A", "文脈B"]


def rag_with_metadata(question, metadata):
    return {"answer": f"{metadata['category']}: {question}", "contexts": [{"text": "文脈"}]}


async def rag_async(question):
    return {"answer": "async " + question, "contexts": ["文脈"]}


def rag_broken(question):
    if "壊" in question:
        raise RuntimeError("index not loaded")
    return question, ["ok"]


@pytest.mark.parametrize(
    ("fn", "answer", "contexts"),
    [(rag_pair, "Q: 回答", ("文脈A", "文脈B")), (rag_with_metadata, "policy: Q", ("文脈",)), (rag_async, "async Q", ("文脈",))],
)
def test_callables_sync_async_with_metadata_dict_or_pair(fn, answer, contexts, tmp_path):
    system = CallableRAG(fn)
    llm = system_stack(system, ProviderConfig(cache=False), db_path=tmp_path / "db.sqlite")
    sample = answer_with_system(_items("Q"), llm, system.descriptor).samples[0]
    assert (sample.answer, sample.contexts) == (answer, contexts)


def test_a_callable_that_raises_marks_only_that_row(tmp_path):
    system = CallableRAG("tests.rag.test_your_rag:rag_broken")
    llm = system_stack(system, ProviderConfig(max_retries=0), db_path=tmp_path / "db.sqlite")
    run = answer_with_system(_items("普通", "壊れる"), llm, system.descriptor)
    assert run.samples[0].answer == "普通"
    assert "RuntimeError: index not loaded" in run.samples[1].metadata["rag_error"]


# ---- the CLI chain ---------------------------------------------------------------------------------------
def _all_text(*roots: Path) -> str:
    return "\n".join(readable(p).decode("utf-8", errors="replace") for root in roots for p in root.rglob("*") if p.is_file())


def test_cli_synth_rag_endpoint_evaluate_and_the_token_never_leaves_memory(rag_server, tmp_path, monkeypatch, capsys):
    home, work = tmp_path / "home", tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("RAGEVAL_HOME", str(home))
    monkeypatch.setenv("MY_RAG_TOKEN", TOKEN)
    testset, answered, results = work / "testset.json", work / "answered.json", work / "results.json"
    assert cli.main(["synth", str(DOC), "--provider", "offline", "--per-section", "1", "--out", str(testset), "--quiet"]) == 0
    n_questions = len(load_testset(testset).items)
    code = cli.main(["rag", str(testset), "--endpoint", rag_server.url, "--header", "Authorization: Bearer $MY_RAG_TOKEN",
                     "--out", str(answered), "--quiet", "--record-log", str(work / "calls.jsonl")])
    assert code == 0
    assert rag_server.requests[0]["auth"] == f"Bearer {TOKEN}"  # the value was read at call time and sent
    rows = json.loads(answered.read_text(encoding="utf-8"))
    rows = rows if isinstance(rows, list) else rows["rows"]
    assert len(rows) == n_questions and all(r["contexts"] for r in rows)
    assert cli.main(["rag", str(testset), "--endpoint", rag_server.url, "--header", "Authorization: Bearer $MY_RAG_TOKEN",
                     "--out", str(answered), "--quiet"]) == 0
    assert len(rag_server.requests) == n_questions  # the re-run asked nothing again
    assert cli.main(["evaluate", str(answered), "--provider", "offline", "--metrics", "faithfulness", "--quiet",
                     "--out", str(results)]) == 0
    out = capsys.readouterr()
    assert "latency median" in out.out and f"{n_questions} from the cache" in out.out
    assert TOKEN not in out.out + out.err
    assert TOKEN not in _all_text(home, work), "the planted header token reached a file"
    assert "Bearer ***" in answered.read_text(encoding="utf-8")  # the echoed token was scrubbed from the answer


def test_cli_rag_callable_and_configuration_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    testset = tmp_path / "t.json"
    testset.write_text(json.dumps([{"question": "壊れる？", "answer": "x"}, {"question": "普通？", "answer": "y"}],
                                  ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "a.json"
    assert cli.main(["rag", str(testset), "--callable", "tests.rag.test_your_rag:rag_broken", "--max-retries", "0",
                     "--out", str(out), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "RuntimeError: index not loaded" in err
    assert cli.main(["rag", str(testset), "--out", str(out)]) == 2
    assert "give --endpoint URL or --callable" in capsys.readouterr().err
    assert cli.main(["rag", str(testset), "--callable", "nope.module:fn", "--out", str(out)]) == 2
    assert "cannot import nope.module" in capsys.readouterr().err
    assert cli.main(["rag", str(testset), "--callable", "tests.rag.test_your_rag:rag_pair", "--docs", str(DOC), "--out", str(out)]) == 2
    assert "--docs and --provider are for the built-in pipeline" in capsys.readouterr().err
