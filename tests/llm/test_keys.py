"""API keys: where they come from, what a missing key says, and that a planted key never leaks into the
SQLite database, the replay/record log, the call log, exception messages or reprs — failures included."""

from __future__ import annotations

import json
import traceback
from pathlib import Path

import pytest

from rageval_core.llm.base import LLMRequest, Message, ProviderError
from rageval_core.core.clock import FakeClock
from rageval_core.llm.keys import PLACEHOLDER_KEY, resolve_api_key, scrub
from rageval_core.providers.config import PROVIDERS, ProviderConfig, check_config
from rageval_core.providers.registry import build_embedder, build_llm
from rageval_core.core.tasks import EXTRACT_CLAIMS, schema_for
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.store_bytes import readable

OPENAI_KEY = "sk-planted-LEAKCHECK-7c1e9a0b55d24f3e"
GEMINI_KEY = "AIzaPlantedLEAKCHECK_x9Qw3Er5Ty7Ui9Op"


def test_provider_ids_and_defaults_match_the_contract():
    assert list(PROVIDERS) == ["offline", "gemini", "openai", "openai-compatible", "azure-openai", "vertex", "anthropic", "replay"]
    assert (PROVIDERS["gemini"].default_model, PROVIDERS["gemini"].default_embedding_model) == ("gemini-2.5-flash", "gemini-embedding-001")
    assert (PROVIDERS["openai"].default_model, PROVIDERS["openai"].default_embedding_model) == ("gpt-4o-mini", "text-embedding-3-small")
    assert PROVIDERS["gemini"].key_env_vars == ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    assert PROVIDERS["openai"].key_env_vars == ("OPENAI_API_KEY",)
    assert PROVIDERS["azure-openai"].key_env_vars == ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN")
    assert PROVIDERS["anthropic"].key_env_vars == ("ANTHROPIC_API_KEY",) and PROVIDERS["anthropic"].default_embedding_model is None
    assert (PROVIDERS["vertex"].default_model, PROVIDERS["vertex"].needs_key) == ("gemini-2.5-flash", False)


@pytest.mark.parametrize(("provider", "env_var"), [("gemini", "GEMINI_API_KEY"), ("gemini", "GOOGLE_API_KEY"), ("openai", "OPENAI_API_KEY")])
def test_missing_key_names_the_env_var_and_sidebar_field(provider, env_var):
    problems = check_config(ProviderConfig(provider=provider), environ={})
    assert len(problems) == 1
    assert env_var in problems[0] and "sidebar" in problems[0] and "Traceback" not in problems[0]
    assert check_config(ProviderConfig(provider=provider), environ={env_var: "k-from-env"}) == []


def test_build_without_key_raises_a_missing_key_error_not_a_traceback(monkeypatch):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderError) as info:
        build_llm(ProviderConfig(provider="gemini"))
    assert info.value.kind == "missing_key" and "GEMINI_API_KEY" in str(info.value)


def test_key_resolution_order_and_placeholder():
    assert resolve_api_key("gemini", None, {"GEMINI_API_KEY": "a", "GOOGLE_API_KEY": "b"}) == "a"
    assert resolve_api_key("gemini", None, {"GOOGLE_API_KEY": "b"}) == "b"
    assert resolve_api_key("gemini", " sidebar ", {"GEMINI_API_KEY": "a"}) == "sidebar"
    assert resolve_api_key("openai-compatible", None, {}) == PLACEHOLDER_KEY
    assert resolve_api_key("openai-compatible", None, {"OPENAI_API_KEY": "sk-real"}) == "sk-real"
    assert resolve_api_key("openai", None, {}) is None


def test_other_config_problems_are_messages():
    assert any("Base URL" in p for p in check_config(ProviderConfig(provider="openai-compatible", model="m"), environ={}))
    assert any("replay log" in p.lower() for p in check_config(ProviderConfig(provider="replay"), environ={}))
    assert any("Unknown provider" in p for p in check_config(ProviderConfig(provider="nope")))
    assert any("rpm" in p for p in check_config(ProviderConfig(provider="offline", rpm=0)))


def test_scrub_removes_known_and_key_shaped_secrets():
    text = f"failed with {OPENAI_KEY} and Bearer abcdefgh12345678 and ?key=AIzaSomethingElse_1234567890abcd"
    out = scrub(text, [OPENAI_KEY])
    assert OPENAI_KEY not in out and "abcdefgh12345678" not in out and "AIzaSomethingElse" not in out


def test_config_repr_and_dict_never_show_the_key():
    cfg = ProviderConfig(provider="openai", api_key=OPENAI_KEY)
    assert OPENAI_KEY not in repr(cfg) and OPENAI_KEY not in json.dumps(cfg.to_dict())


def _request(text: str, schema: bool = True) -> LLMRequest:
    return LLMRequest(
        task=EXTRACT_CLAIMS,
        messages=(Message("user", text),),
        schema=schema_for(EXTRACT_CLAIMS) if schema else None,
    )


def _exercise(cfg: ProviderConfig, server: FakeLLMServer, tmp_path: Path, records: list, texts: list[str]) -> None:
    """Successes, retries and every kind of failure through the full stack; collects what could leak."""
    llm = build_llm(cfg, db_path=tmp_path / "db.sqlite", clock=FakeClock(), call_hook=records.append)
    texts += [repr(llm), repr(llm.base), repr(llm.top), json.dumps(llm.stats())]
    llm.complete(_request("one"))
    llm.complete(_request("one"))  # cache hit
    server.fault("rate_limit", retry_after=1)
    llm.complete(_request("two"))
    for kind in ("echo_key", "malformed", "server_error"):
        server.fault(kind, times=10)
        with pytest.raises(ProviderError) as info:
            llm.complete(_request(f"fails with {kind}"))
        server.clear_faults()
        texts += [str(info.value), repr(info.value), "".join(traceback.format_exception(info.value))]
        chained = info.value.__context__ or info.value.__cause__
        texts += [repr(chained), str(chained)]  # no SDK exception quoting the key hangs off ours
    server.api_key = "some-other-key-the-server-wants"
    with pytest.raises(ProviderError) as info:
        llm.complete(_request("wrong key"))
    server.api_key = None
    texts += [str(info.value), "".join(traceback.format_exception(info.value))]
    embedder = build_embedder(cfg, db_path=tmp_path / "db.sqlite")
    embedder.embed(["alpha", "beta"])
    texts.append(repr(embedder))


def test_planted_keys_never_leak(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)  # from the environment, as a user would set it
    records: list = []
    texts: list[str] = []
    with FakeLLMServer() as server:
        server.reject_json_schema = True
        openai_cfg = ProviderConfig(
            provider="openai-compatible",
            model="local",
            embedding_model="nomic-embed-text",
            api_key=OPENAI_KEY,
            base_url=server.openai_base_url,
            max_retries=1,
            record_log=str(tmp_path / "record.jsonl"),
        )
        gemini_cfg = ProviderConfig(provider="gemini", base_url=server.gemini_base_url, max_retries=1, record_log=str(tmp_path / "record.jsonl"))
        _exercise(openai_cfg, server, tmp_path, records, texts)
        _exercise(gemini_cfg, server, tmp_path, records, texts)
        texts += [json.dumps(r.__dict__, default=str) for r in server.requests]
        # The keys did reach the server (so the test is meaningful) ...
        assert any("invalid request made with key" in t for t in texts)
    assert any(r.error_kind == "bad_request" for r in records) and any(r.cached for r in records)
    texts += [json.dumps(r.to_dict(), ensure_ascii=False) for r in records]
    # ... and nothing we keep holds them: database (+ WAL), record log, call log, errors, reprs.
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.startswith("db.sqlite") for p in files) and (tmp_path / "record.jsonl").is_file()
    blobs = [readable(p) for p in files] + [t.encode("utf-8") for t in texts]
    for key in (OPENAI_KEY, GEMINI_KEY):
        for blob in blobs:
            assert key.encode() not in blob
            assert key[-12:].encode() not in blob  # not even a fragment


@pytest.mark.parametrize(("provider", "names"), [("gemini", ("GEMINI_API_KEY", "GOOGLE_API_KEY")), ("openai", ("OPENAI_API_KEY",))])
def test_cli_without_a_key_names_the_variables_and_exits_2_without_a_traceback(provider, names, tmp_path, monkeypatch, capsys):
    from rageval_core import cli

    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    data = Path(__file__).resolve().parents[2] / "sample_data" / "ml_qa_ja.json"
    code = cli.main(["evaluate", str(data), "--provider", provider, "--judge", "rubric5", "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 2 and not (tmp_path / "r.json").exists()
    assert all(name in err for name in names) and f"export {names[0]}=" in err and "API key" in err
    assert "Traceback" not in err
    if len(names) > 1:
        assert " または ".join(names) in err  # the Japanese half reads as Japanese
