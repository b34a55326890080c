"""Issue 27's small CLI truths: a redirect from ``rag --endpoint`` is reported as a redirect (not followed, the
token never resent, the Location's query never shown); the summary counts each row once; a bare ``runs`` lists
the runs as ``runs list`` does."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from rageval_core import cli
from tests.support.rag_server import RagServer

TOKEN = "ragRedirectToken-5521q"


@pytest.fixture
def rag_server() -> Iterator[RagServer]:
    server = RagServer()
    try:
        yield server
    finally:
        server.close()


def test_a_redirect_is_named_not_followed_and_the_row_counted_once(rag_server, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("MY_RAG_TOKEN", TOKEN)
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps([{"id": "q1", "question": "MOVED: 経費の期限は？", "answer": "x"}], ensure_ascii=False),
                         encoding="utf-8")
    code = cli.main(["rag", str(questions), "--endpoint", rag_server.url, "--header", "Authorization: Bearer $MY_RAG_TOKEN",
                     "--max-retries", "0", "--out", str(tmp_path / "a.json"), "--quiet"])
    out = capsys.readouterr()
    assert code == 2  # nothing answered
    assert "HTTP 307 redirect to http://other.example:8080/v2/rag, not followed" in out.err, out.err
    assert "not JSON" not in out.err and "SHOULD-NOT-SHOW" not in out.out + out.err and TOKEN not in out.out + out.err
    assert len(rag_server.requests) == 1  # asked once, at the given address only
    assert "0 of 1 question(s) answered" in out.out and "1 failed" in out.out


def test_bare_runs_lists_the_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    assert cli.main(["runs"]) == 0
    assert "no runs yet" in capsys.readouterr().out
