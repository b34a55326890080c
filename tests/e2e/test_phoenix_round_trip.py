"""Issue 35, must show: N traces pulled from a real Phoenix into a dataset, evaluated offline, N × k span annotations
then readable through Phoenix's REST API and its own client; a second push adds none.

The server is the real ``arize-phoenix`` 20.26.1 in its own test-only venv (tests/support/phoenix_server.py: made on
first use, a skip with the reason where pip cannot install it, a failure under RAGEVAL_REQUIRE_E2E=1 as in CI),
started on 127.0.0.1 with authentication on. Its traces come from an instrumented RAG app as one sends them: the
OpenTelemetry SDK, the OpenInference OpenAI instrumentor and openai against the project's fake server
(tests/support/phoenix_worker.py). The workbench gets the key through PHOENIX_API_KEY only, and it must appear in no
file, store or output.
"""

from __future__ import annotations

import json
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rageval_core import cli
from tests.support.apptest import assert_ok, button, compare_tab, metric, plain, start_app, set_kept
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.phoenix_server import INSTALL_TIMEOUT_S, PhoenixServer, start, venv_or_skip
from tests.support.store_bytes import readable

pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT_S + 600)

PROJECT = "rag-app"
# (question, documents, answer): the answers are what the app's LLM said, some faithful, some not.
RAG = [
    ("What is overfitting?", ["Overfitting is when a model fits its training data too closely and generalises poorly.",
                              "Dropout and early stopping reduce overfitting."],
     "Overfitting is when a model fits its training data too closely and generalises poorly."),
    ("What does dropout do?", ["Dropout randomly zeroes activations during training to reduce overfitting."],
     "Dropout randomly zeroes activations during training, which reduces overfitting."),
    ("When was the transformer introduced?", ["The transformer architecture was introduced in 2017."],
     "The transformer was introduced in 2012 by IBM."),
    ("What is a learning rate?", ["The learning rate sets the size of each gradient descent step.",
                                  "Too high a learning rate makes training diverge."],
     "The learning rate sets the size of each gradient descent step; too high a value makes training diverge."),
    ("What is batch normalisation?", ["Batch normalisation normalises layer inputs over a mini-batch."],
     "Batch normalisation normalises layer inputs over each mini-batch."),
]
CHAT = ("Hello, who are you?", "I am the ML assistant.")  # no retriever span: not a RAG answer, skipped
N = len(RAG)
METRICS = "faithfulness,answer_relevancy,context_precision"
K = 3 + 4  # three decomposed metrics + rubric5's four criteria (answer_correctness unscored: no ground truth)
ANSWERS = {q: a for q, _, a in RAG} | {CHAT[0]: CHAT[1]}


def _answer(request) -> str:
    return next(a for q, a in ANSWERS.items() if f"Question: {q}" in request.prompt)


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PhoenixServer]:
    python = venv_or_skip()
    server = start(python, tmp_path_factory.mktemp("phoenix"))
    try:
        with FakeLLMServer(responder=_answer) as llm:
            rows = [{"question": q, "documents": d} for q, d, _ in RAG] + [{"question": CHAT[0], "documents": []}]
            server.seed(PROJECT, rows, llm.openai_base_url)
        yield server
    finally:
        server.stop()


@pytest.fixture()
def keyed(phoenix: PhoenixServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.setenv("PHOENIX_API_KEY", phoenix.api_key)
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path




def _rest_annotations(phoenix: PhoenixServer) -> dict[str, Any]:
    """The project's root spans and their annotations through Phoenix's REST API (plain urllib, not our client)."""
    def get(path: str) -> Any:
        request = urllib.request.Request(f"{phoenix.url}/v1/projects/{PROJECT}/{path}",
                                         headers={"Authorization": f"Bearer {phoenix.api_key}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())["data"]

    roots = {s["context"]["trace_id"]: s["context"]["span_id"] for s in get("spans?parent_id=null&limit=1000")}
    query = urllib.parse.urlencode([("span_ids", s) for s in roots.values()] + [("limit", 10000)])
    return {"roots": roots, "annotations": [
        {"id": a["id"], "span_id": a["span_id"], "name": a["name"], "kind": a["annotator_kind"],
         "identifier": a["identifier"], **a["result"]} for a in get(f"span_annotations?{query}")]}


def _main(args: list[str], capsys: pytest.CaptureFixture[str], printed: list[str]) -> int:
    code = cli.main(args)
    out = capsys.readouterr()
    printed.append(out.out + out.err)
    return code


def test_pull_evaluate_push_and_read_back_through_phoenix(phoenix: PhoenixServer, keyed: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    printed: list[str] = []
    timings: dict[str, float] = {}
    data, export = keyed / "pulled.jsonl", keyed / "results.json"
    want = f"{N} row(s) from {N + 1} trace(s), {3 * N + 2} span(s) (phoenix); skipped 1 no_retrieval"
    deadline = time.monotonic() + 90  # the seeding worker's span exporter flushes in batches: on a loaded machine the
    while True:                       # last traces reach Phoenix a little after the worker says it is done
        began = time.monotonic()
        assert _main(["phoenix", "pull", "--url", phoenix.url, "--project", PROJECT, "--since", "1h", "--limit", "50",
                      "--out", str(data)], capsys, printed) == 0, printed[-1]
        timings["pull"] = time.monotonic() - began
        if want in printed[-1] or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert want in printed[-1]
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines()]
    assert [(r["question"], r["contexts"], r["answer"]) for r in rows] == [(q, d, a) for q, d, a in RAG]  # in order
    assert [r["trace_id"] for r in rows] == phoenix.trace_ids[:N]
    project_id = rows[0]["trace_url"].split("/projects/")[1].split("/")[0]
    assert rows[0]["trace_url"] == f"{phoenix.url}/projects/{project_id}/traces/{rows[0]['trace_id']}"

    began = time.monotonic()
    assert _main(["--db", str(keyed / "runs.sqlite"), "evaluate", str(data), "--provider", "offline", "--metrics",
                  METRICS, "--judge", "rubric5", "--out", str(export), "--quiet"], capsys, printed) == 0
    timings["evaluate"] = time.monotonic() - began
    run_id = json.loads(export.read_text(encoding="utf-8"))["run_id"]

    began = time.monotonic()
    assert _main(["--db", str(keyed / "runs.sqlite"), "phoenix", "push", run_id, "--url", phoenix.url, "--project",
                  PROJECT], capsys, printed) == 0, printed[-1]
    timings["push"] = time.monotonic() - began
    assert f"{N * K} annotation(s) on {N} root span(s) ({N * K} new, 0 updated; annotator {N * K} CODE)" in printed[-1]
    first = _rest_annotations(phoenix)
    ours = [a for a in first["annotations"] if a["identifier"] == "rageval"]
    assert len(ours) == N * K
    roots = {first["roots"][r["trace_id"]] for r in rows}
    assert {a["span_id"] for a in ours} == roots  # on each trace's root span
    assert {a["name"] for a in ours} == {f"{m}·{method}" for m in METRICS.split(",") for method in ("decomposed", "judge:rubric5")} | {"answer_correctness·judge:rubric5"}
    assert {a["kind"] for a in ours} == {"CODE"}
    scored = [a for a in ours if a["score"] is not None]
    assert scored and all(a["explanation"] for a in scored) and all(a["label"] is None for a in scored)  # no calibration
    assert sum(a["label"] == "unscored" for a in ours) == N  # answer_correctness: no ground truth in traces

    began = time.monotonic()
    assert _main(["--db", str(keyed / "runs.sqlite"), "phoenix", "push", run_id[:12], "--url", phoenix.url,
                  "--project", PROJECT], capsys, printed) == 0
    timings["push again"] = time.monotonic() - began
    assert f"{N * K} annotation(s) on {N} root span(s) (0 new, {N * K} updated" in printed[-1]
    second = phoenix.annotations(PROJECT)  # Phoenix's own client this time
    assert sorted(a["id"] for a in second["annotations"]) == sorted(a["id"] for a in first["annotations"])

    files = [(str(p), readable(p)) for p in keyed.rglob("*") if p.is_file()]
    leaks = [name for name, blob in files if phoenix.api_key.encode() in blob]
    leaks += [f"output {i}" for i, text in enumerate(printed) if phoenix.api_key in text]
    assert leaks == []
    print(f"\nphoenix round trip: N={N} traces ({3 * N + 2} spans with the chat), k={K}, {N * K} annotations; server "
          f"start {phoenix.started_s:.1f}s, seed {phoenix.seed_s:.1f}s, "
          + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))


def test_pages_of_two_give_the_same_rows(phoenix: PhoenixServer, keyed: Path) -> None:
    """Both passes (root spans, then the traces' spans) follow Phoenix's cursor page by page."""
    from rageval_core.data.phoenix.client import PhoenixClient
    from rageval_core.data.phoenix.pull import pull_traces

    client = PhoenixClient(phoenix.url)
    whole = pull_traces(client, PROJECT, limit=50)
    paged = pull_traces(client, PROJECT, limit=50, page_size=2)
    assert paged.result.rows == whole.result.rows and paged.n_spans == 3 * N + 2
    newest = pull_traces(client, PROJECT, limit=2, page_size=1)  # --limit counts traces, newest first
    assert newest.n_traces == 2 and [r["question"] for r in newest.result.rows] == [RAG[-1][0]]  # + the chat, skipped


def test_refusals_name_the_server_and_never_the_key(phoenix: PhoenixServer, keyed: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = str(keyed / "never.jsonl")
    pull = ["phoenix", "pull", "--url", phoenix.url, "--project", PROJECT, "--out", out]
    assert cli.main([*pull[:-2], "--project", "nope", "--out", out]) == 2
    assert f"no project 'nope' on Phoenix at {phoenix.url}; its projects: " in capsys.readouterr().err
    monkeypatch.setenv("PHOENIX_API_KEY", "wrongKey-0123456789abcdef")
    assert cli.main(pull) == 2
    said = capsys.readouterr().err
    assert "HTTP 401" in said and "PHOENIX_API_KEY was refused" in said and "wrongKey" not in said
    monkeypatch.delenv("PHOENIX_API_KEY")
    assert cli.main(pull) == 2
    assert "this Phoenix needs an API key: set PHOENIX_API_KEY" in capsys.readouterr().err
    from tests.support.phoenix_server import free_port

    assert cli.main(["phoenix", "pull", "--url", f"http://127.0.0.1:{free_port()}", "--out", out]) == 2
    assert "cannot reach Phoenix at http://127.0.0.1:" in capsys.readouterr().err
    assert not Path(out).exists()


def test_the_dataset_page_pulls_and_compare_sends_the_scores_back(phoenix: PhoenixServer, keyed: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    app = start_app(monkeypatch, keyed / "home")
    set_kept(app, "w.phoenix_url", phoenix.url)
    set_kept(app, "w.phoenix_project", PROJECT)
    app.run()
    button(app, "Pull").click().run()
    assert_ok(app, any_error=True)
    assert metric(app, "Dataset") == f"phoenix-{PROJECT}" and metric(app, "Valid rows") == str(N)
    ws = app.session_state["dataset"]
    assert [s.metadata["trace_id"] for s in ws.samples] == phoenix.trace_ids[:N]
    assert "1 trace(s) skipped" in " ".join(app.dataframe[0].value["message"])
    from rageval_core.data.datasets import save_dataset

    data = save_dataset(ws.samples, keyed / "from-page.jsonl")
    assert cli.main(["evaluate", str(data), "--provider", "offline", "--metrics", "faithfulness", "--quiet",
                     "--out", str(keyed / "page-run.json")]) == 0
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    compare_tab(app, "Phoenix")
    button(app, "Send to Phoenix").click().run()
    assert_ok(app, any_error=True)
    said = " ".join(plain(s.value) for s in app.success)
    assert f"{N} annotations on {N} root spans in project {PROJECT}" in said
