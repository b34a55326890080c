"""The small RAG: retrieval math, index cache, scripted answers, failures, offline end to end, CLI chain."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset
from rageval_core.data.documents import chunk_document, parse_document, read_document
from rageval_core.llm.base import ProviderError
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.rag.simple import RagError, build_index, cosine_matrix, hit_rate, run_rag, top_k
from rageval_core.rag.synth import TestItem, generate_testset
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
POLICY = ROOT / "sample_data" / "company_policy_ja.md"


def item(i: int, question: str, truth: str = "x", section: int | None = None, doc: str = "company_policy_ja") -> TestItem:
    md = {} if section is None else {"document": doc, "section_index": section}
    return TestItem(f"q{i}", question, truth, md)


# ---- pure math --------------------------------------------------------------------------------------
def test_cosine_matrix_normalises_and_handles_zero_rows():
    q = np.array([[2.0, 0.0], [0.0, 0.0]])
    d = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 3.0]])
    sims = cosine_matrix(q, d)
    assert sims.shape == (2, 3)
    assert sims[0].tolist() == pytest.approx([1.0, 2**-0.5, 0.0])
    assert sims[1].tolist() == [0.0, 0.0, 0.0]
    with pytest.raises(ValueError):
        cosine_matrix(np.ones((1, 2)), np.ones((1, 3)))


def test_top_k_is_best_first_with_stable_ties():
    assert top_k(np.array([0.1, 0.9, 0.5, 0.9]), 3) == [1, 3, 2]
    assert top_k(np.array([0.2]), 5) == [0]
    with pytest.raises(ValueError):
        top_k(np.array([0.2]), 0)


def test_hit_rate_counts_questions_with_a_relevant_chunk_and_skips_unknown():
    retrieved = [["a", "b"], ["c", "d"], ["e"], ["a"]]
    relevant = [{"b"}, {"x"}, None, {"a", "z"}]
    assert hit_rate(retrieved, relevant) == pytest.approx(2 / 3)
    assert hit_rate([["a"]], [None]) is None


# ---- index ------------------------------------------------------------------------------------------
def test_index_is_embedded_once_per_embedder_and_chunk_set():
    doc = read_document(POLICY)
    chunks = chunk_document(doc, size=150, overlap=0)
    emb = HashEmbedder(dim=128)
    first = build_index(chunks, emb)
    second = build_index(chunks, emb)
    assert emb.calls == 1 and second is first
    build_index(chunks, emb, with_heading=False)  # different texts: embedded again
    assert emb.calls == 2
    assert first.vectors.shape == (len(chunks), 128)
    with pytest.raises(RagError):
        build_index([], emb)


# ---- pipeline with a scripted LLM -------------------------------------------------------------------
def test_scripted_answers_from_the_top_k_chunks():
    doc = read_document(POLICY)
    llm = ScriptedLLM(default=lambda r: {"answer": f"{len(r.inputs['contexts'])} contexts"})
    items = [
        item(1, "宿泊費の上限は1泊あたりいくらですか？", "東京23区・大阪市が14,000円です。", section=3),
        item(2, "パスワードは何文字以上にしますか？", "12文字以上です。", section=6),
    ]
    result = run_rag(items, [doc], llm, HashEmbedder(), k=2)
    assert [s.id for s in result.samples] == ["q1", "q2"]
    s1 = result.samples[0]
    assert len(s1.contexts) == 2 and s1.answer == "2 contexts" and s1.ground_truth == "東京23区・大阪市が14,000円です。"
    md = s1.metadata
    assert md["retrieved_chunk_ids"][0].startswith("company_policy_ja:s03:") and md["retrieval_hit"] is True
    assert md["retrieval_scores"] == sorted(md["retrieval_scores"], reverse=True)
    assert (md["rag_k"], md["rag_provider"], md["rag_model"]) == (2, "scripted", "scripted-1")
    assert "宿泊費の上限は1泊あたり東京23区" in s1.contexts[0]
    request = llm.calls("rag_answer")[0]
    assert request.language == "ja" and request.inputs["contexts"] == list(s1.contexts)
    assert "<contexts count=\"2\">" in request.messages[-1].content and "提供された文書には記載がありません" in request.messages[0].content
    assert result.hit_rate == 1.0 and result.errors == 0 and not result.offline


def test_a_failed_answer_is_recorded_and_the_next_question_goes_on():
    doc = read_document(POLICY)
    llm = ScriptedLLM(default=lambda r: {"answer": "ok"})
    llm.script("rag_answer", ProviderError("server said 503", kind="server", status=503), "no json here")
    items = [item(i, q) for i, q in enumerate(["日当はいくらですか？", "有給休暇は何日ですか？", "内線は何番ですか？"])]
    result = run_rag(items, [doc], llm, HashEmbedder(), k=1)
    answers = [(s.answer, s.metadata.get("rag_error", "")) for s in result.samples]
    assert answers[0][0] == "" and answers[0][1].startswith("provider_error (server)") and "503" in answers[0][1]
    assert answers[1][0] == "" and answers[1][1].startswith("parse_error")
    assert answers[2] == ("ok", "")
    assert result.errors == 2 and result.hit_rate is None  # no provenance: nothing to judge retrieval by
    assert all(len(s.contexts) == 1 for s in result.samples)


def test_english_questions_use_the_english_template_and_bad_inputs_raise():
    doc = parse_document("## Hotels\n\nThe hotel limit is 150 dollars per night.\n\n## Trains\n\nStandard class only.\n", "travel")
    llm = ScriptedLLM(default=lambda r: {"answer": "150 dollars."})
    result = run_rag([item(1, "What is the hotel limit?", section=0, doc="travel")], [doc], llm, HashEmbedder(), k=5)
    assert len(result.samples[0].contexts) == 2  # k above the number of chunks returns them all
    assert llm.calls()[0].language == "en" and "The provided documents do not say" in llm.calls()[0].messages[0].content
    with pytest.raises(RagError):
        run_rag([item(1, "q")], [doc], llm, HashEmbedder(), k=0)
    with pytest.raises(RagError):
        run_rag([], [doc], llm, HashEmbedder())


def test_embedding_failure_stops_the_run_with_a_message():
    class Broken(HashEmbedder):
        model = "broken"

        def embed(self, texts):
            raise ProviderError("embedding quota", kind="rate_limit", status=429)

    with pytest.raises(RagError, match="embedding the chunks failed"):
        run_rag([item(1, "q")], [read_document(POLICY)], ScriptedLLM(), Broken())


# ---- offline end to end -----------------------------------------------------------------------------
def test_offline_pipeline_on_the_sample_policy(tmp_path):
    doc = read_document(POLICY)
    cfg = ProviderConfig(provider="offline")
    llm, embedder = build_llm(cfg, db_path=tmp_path / "db.sqlite"), build_embedder(cfg)
    ts = generate_testset(doc, llm, per_section=2)
    result = run_rag(ts.items, [doc], llm, embedder, k=2)
    assert result.offline and len(result.samples) == len(ts.items) >= 14
    assert result.hit_rate is not None and result.hit_rate >= 0.8
    assert all(s.answer and s.metadata["rag_offline"] for s in result.samples)
    hits = [s.metadata["retrieval_hit"] for s in result.samples]
    assert result.hit_rate == pytest.approx(sum(hits) / len(hits))


# ---- CLI: synth → rag → evaluate --------------------------------------------------------------------
def test_cli_synth_rag_evaluate_binary_judge(home, capsys):
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--per-section", "1", "--out", "ts.json", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "offline heuristic" in out and "company_policy_ja" in out
    testset = json.loads((home / "ts.json").read_text(encoding="utf-8"))
    assert testset["format"] == "rageval-testset" and testset["generator"]["offline"] is True
    assert cli.main(["rag", "ts.json", "--docs", str(POLICY), "--provider", "offline", "--k", "2", "--out", "rag.json", "--quiet"]) == 0
    assert "retrieval hit rate" in capsys.readouterr().out
    rows = load_dataset(home / "rag.json")
    assert len(rows.samples) == len(testset["rows"]) and not rows.errors
    assert all(len(s.contexts) == 2 and s.ground_truth for s in rows.samples)
    code = cli.main(["evaluate", "rag.json", "--provider", "offline", "--judge", "binary", "--out", "results.json", "--quiet"])
    assert code == 0
    results = json.loads((home / "results.json").read_text(encoding="utf-8"))
    assert set(results["summary"]["judge:binary"]) == {"faithfulness", "answer_correctness"}


def test_cli_bad_inputs_exit_2(home, capsys):
    (home / "empty.md").write_text("\n", encoding="utf-8")
    (home / "bad.json").write_text("[1, 2", encoding="utf-8")
    assert cli.main(["synth", "missing.md", "--provider", "offline", "--out", "t.json"]) == 2
    assert cli.main(["synth", "empty.md", "--provider", "offline", "--out", "t.json"]) == 2
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--out", "t.csv"]) == 2
    assert cli.main(["synth", str(POLICY), "--provider", "nope", "--out", "t.json"]) == 2
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--per-section", "0", "--out", "t.json"]) == 2
    assert cli.main(["rag", "bad.json", "--docs", str(POLICY), "--provider", "offline", "--out", "r.json"]) == 2
    assert cli.main(["rag", "bad.json", "--docs", str(POLICY), "--provider", "offline", "--k", "0", "--out", "r.json"]) == 2
    assert cli.main(["rag", "bad.json", "--provider", "offline", "--out", "r.json"]) == 2  # --docs is required
    (home / "bad_template.txt").write_text("# variables: text\n\n{text} {nope}", encoding="utf-8")
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--template", "bad_template.txt", "--out", "t.json"]) == 2
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--template", "no_such.txt", "--out", "t.json"]) == 2
    err = capsys.readouterr().err
    assert "missing.md" in err and "empty" in err and "--k must be at least 1" in err
    assert "nope" in err and "no_such.txt" in err
    assert not (home / "t.json").exists() and not (home / "r.json").exists()


def test_cli_offline_run_recorded_and_replayed_gives_the_same_set_still_labelled_offline(home, capsys):
    base = ["--per-section", "1", "--quiet"]
    assert cli.main(["synth", str(POLICY), "--provider", "offline", "--out", "a.json", "--record-log", "calls.jsonl", *base]) == 0
    assert cli.main(["rag", "a.json", "--docs", str(POLICY), "--provider", "offline", "--out", "ra.json", "--record-log", "calls.jsonl", "--quiet"]) == 0
    replay = ["--provider", "replay", "--replay-log", "calls.jsonl"]
    assert cli.main(["synth", str(POLICY), *replay, "--out", "b.json", *base]) == 0
    assert cli.main(["rag", "b.json", "--docs", str(POLICY), *replay, "--out", "rb.json", "--quiet"]) == 0
    a, b = (json.loads((home / f).read_text(encoding="utf-8")) for f in ("a.json", "b.json"))
    assert [r["question"] for r in b["rows"]] == [r["question"] for r in a["rows"]]
    assert b["generator"]["provider"] == "replay" and b["generator"]["offline"] is True  # replayed offline answers
    ra, rb = (load_dataset(home / f).samples for f in ("ra.json", "rb.json"))
    assert [s.answer for s in rb] == [s.answer for s in ra]
    assert all(s.metadata["rag_offline"] and s.metadata["rag_provider"] == "replay" for s in rb)


def test_an_edited_answer_template_is_what_the_model_receives():
    doc = read_document(POLICY)
    llm = ScriptedLLM(default=lambda r: {"answer": "ok"})
    edited = "# variables: question, contexts\n\n---system---\n規定の担当者として答えてください。JSON: {{\"answer\": \"...\"}}\n---user---\n{contexts}\n{question}\n"
    run_rag([item(1, "日当はいくらですか？")], [doc], llm, HashEmbedder(), template=edited)
    assert llm.calls()[0].messages[0].content.startswith("規定の担当者として")
    with pytest.raises(RagError, match="template"):
        run_rag([item(1, "q")], [doc], llm, HashEmbedder(), template="# variables: question\n\n{question} {extra}")
