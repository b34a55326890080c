"""The one redaction step (rageval_core/core/redact.py): known values, headers, URL credentials, cache identity,
the provider boundary, and what ordinary prose must keep."""

from __future__ import annotations

import sqlite3

import pytest

from rageval_core.core import redact
from rageval_core.cli import _shown_argv
from rageval_core.llm.base import Completion, LLMRequest, Message, ProviderError
from rageval_core.llm.transport.cache import CachedLLM, ResponseCache
from rageval_core.llm.keys import KEY_ENV_VARS
from rageval_core.llm.redacting import RedactingLLM
from rageval_core.store.runs import RowInfo, Store
from rageval_core.core.types import MetricResult

KEY = "plainKnownValue-unit-5521"  # no well-known key shape: only the remembered value can catch it


def test_known_values_env_keys_and_key_shapes_are_redacted(monkeypatch):
    monkeypatch.setenv("GOOGLE_API_KEY", "envOnlyValue-unit-8812")
    redact.remember(KEY)
    text = f"a {KEY} b envOnlyValue-unit-8812 c sk-abcdefgh12345678 d AIza{'x' * 30} e"
    assert redact.redact(text) == "a *** b *** c *** d *** e"
    redact.remember("slash/inside/value-77")
    assert redact.redact("?q=slash%2Finside%2Fvalue-77") == "?q=***"  # the URL-encoded form too


def test_the_env_var_list_matches_the_providers():
    assert set(redact.KEY_ENV_VARS) == {n for names in KEY_ENV_VARS.values() for n in names}


@pytest.mark.parametrize("name", ["AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "ANTHROPIC_API_KEY", "PHOENIX_API_KEY"])
def test_every_provider_and_service_secret_in_the_environment_is_redacted(monkeypatch, name):
    monkeypatch.setenv(name, "envSecretValue-unit-4471")
    assert redact.redact("x envSecretValue-unit-4471 y") == "x *** y"


def test_short_and_placeholder_values_are_not_searched_for_as_bare_text():
    redact.remember("ollama", "not-needed", None, "")
    assert redact.redact("ollama serves not-needed") == "ollama serves not-needed"
    assert redact.redact("the tok is here", extra=["tok"]) == "the tok is here"  # extra: 4 characters at least
    assert redact.redact("the tok1 is here", extra=["tok1"]) == "the *** is here"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Authorization: Bearer abcdefghijkl", "Authorization: ***"),
        ('{"authorization": "Basic dXNlcjpwYXNzd29yZA=="}', '{"authorization": "***"}'),
        ("x-goog-api-key: abcdefgh1jklmnop", "x-goog-api-key: ***"),
        ("sent Bearer abcd1234efgh", "sent Bearer ***"),
        ("sent Basic dXNlcjpwYXNzd29yZA==", "sent Basic ***"),
        ("cannot reach http://user:pw@127.0.0.1:9/v1 (x)", "cannot reach http://***@127.0.0.1:9/v1 (x)"),
        ("GET https://h/v1/m?alt=sse&key=abc123&sig=zz9 ok", "GET https://h/v1/m?alt=sse&key=***&sig=*** ok"),
        ("https://h/v1?access_token=abc&api_key=d", "https://h/v1?access_token=***&api_key=***"),
        ("(see /rag?token=abc1), then", "(see /rag?token=***), then"),
    ],
)
def test_headers_and_urls_in_free_text(text, expected):
    assert redact.redact(text) == expected


@pytest.mark.parametrize(
    "prose",
    [
        "A basic approach to retrieval ranks chunks first.",
        "The bearer of the document signs it.",
        "Authorization: required for everything",
        "task-management and risk-assessment are covered",
        "認可 (authorization) は必須です。basic な設定で十分です。",
    ],
)
def test_ordinary_prose_is_kept(prose):
    assert redact.redact(prose) == prose


def test_redact_url_and_its_secrets():
    url = "http://alice:pw-unit-secret-1@host:8/v1?key=qk-unit-secret-2&x=1&token=tk-unit-3"
    assert redact.redact_url(url) == "http://***@host:8/v1?key=***&x=1&token=***"
    found = redact.url_secrets(url)
    assert {"pw-unit-secret-1", "alice:pw-unit-secret-1", "qk-unit-secret-2", "tk-unit-3"} <= set(found)
    assert "YWxpY2U6cHctdW5pdC1zZWNyZXQtMQ==" in found  # the Basic auth header an HTTP client derives
    assert "alice" not in found  # a user name alone would redact ordinary words
    assert redact.redact_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    assert redact.redact_url(None) is None


def test_url_identity_tells_hosts_and_credentials_apart_without_holding_them():
    salt = b"0" * 32
    a = redact.url_identity("http://u:pw-identity-aaaa@host/v1", salt)
    assert a == redact.url_identity("http://u:pw-identity-aaaa@host/v1", salt)
    assert a != redact.url_identity("http://u:pw-identity-bbbb@host/v1", salt)
    assert a != redact.url_identity("http://u:pw-identity-aaaa@other/v1", salt)
    assert a != redact.url_identity("http://u:pw-identity-aaaa@host/v1", b"1" * 32)  # keyed by the salt
    assert "pw-identity" not in a and a.startswith("http://***@host/v1#credentials=")
    assert redact.url_identity("http://host/v1", salt) == "http://host/v1"  # old cache keys stay valid
    assert redact.url_identity("http://host/v1", salt, ["tok-a"]) != redact.url_identity("http://host/v1", salt, ["tok-b"])


def test_redact_data_keeps_shape_and_drops_secret_fields_only_when_asked():
    redact.remember(KEY)
    data = {"api_key": KEY, "input_tokens": 3, "criteria": {"token_budget": "ok"}, "items": ("x", KEY), "n": 1.5}
    assert redact.redact_data(data) == {"api_key": "***", "input_tokens": 3, "criteria": {"token_budget": "ok"},
                                        "items": ["x", "***"], "n": 1.5}
    assert redact.redact_data(data, drop_secret_fields=True) == {"input_tokens": 3, "criteria": {}, "items": ["x", "***"], "n": 1.5}


class _Echo:
    provider, model = "p", "m"

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.calls = 0

    def complete(self, request: LLMRequest) -> Completion:
        self.calls += 1
        if self.fail:
            raise ProviderError(f"HTTP 401: bad key {KEY}", kind="auth", status=401, retry_after=2.0)
        return Completion(texts=[f'{{"reason": "the key is {KEY}"}}'], provider="p", model="m", raw={"echo": KEY})


def _request() -> LLMRequest:
    return LLMRequest(task="t", messages=(Message("user", "q"),))


def test_the_provider_boundary_redacts_answers_and_errors():
    redact.remember(KEY)
    out = RedactingLLM(_Echo()).complete(_request())
    assert out.texts == ['{"reason": "the key is ***"}'] and out.raw == {"echo": "***"}
    with pytest.raises(ProviderError) as info:
        RedactingLLM(_Echo(fail=True)).complete(_request())
    err = info.value
    assert str(err) == "HTTP 401: bad key ***" and (err.kind, err.status, err.retry_after) == ("auth", 401, 2.0)


def test_the_cache_row_holds_the_redacted_url_and_keys_differ_by_credentials(tmp_path):
    db_path = tmp_path / "c.sqlite"
    cache = ResponseCache(db_path)
    first = CachedLLM(_Echo(), cache, base_url="http://u:pw-cache-secret-1@h/v1")
    first.complete(_request())
    second = _Echo()
    CachedLLM(second, cache, base_url="http://u:pw-cache-secret-2@h/v1").complete(_request())
    assert second.calls == 1  # other credentials: no shared answer
    third = _Echo()
    assert CachedLLM(third, cache, base_url="http://u:pw-cache-secret-1@h/v1").complete(_request()).cached is True
    header_a, header_b = _Echo(), _Echo()
    CachedLLM(header_a, cache, base_url="http://h/rag", credentials=("tok-header-a1",)).complete(_request())
    CachedLLM(header_b, cache, base_url="http://h/rag", credentials=("tok-header-b2",)).complete(_request())
    assert (header_a.calls, header_b.calls) == (1, 1)
    with sqlite3.connect(db_path) as conn:
        conn.execute("PRAGMA wal_checkpoint(FULL)")
        stored = {r[0] for r in conn.execute(  # each row names its origin (store.cache_tables)
            "SELECT base_url FROM llm_response_cache JOIN cache_origins ON cache_origins.id = origin")}
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"pw-cache-secret" not in raw and b"tok-header" not in raw and stored == {"http://***@h/v1", "http://h/rag"}


def test_the_store_redacts_every_text_column(tmp_path):
    redact.remember(KEY)
    store = Store(tmp_path / "s.sqlite")
    rid = store.create_run(scorers=["decomposed"], base_url=f"http://u:{KEY}@h/v1", settings={"api_key": KEY, "note": KEY},
                           rows=[RowInfo("r1", 0, None, False, f"bad row {KEY}")])
    store.save_task(rid, "r1", "decomposed", [MetricResult("r1", "faithfulness", "decomposed", None, unscored_reason="provider_error",
                                                          reason=f"HTTP 401 {KEY}", details={"claims": [KEY]})])
    store.set_status(rid, "failed", note=f"stopped: {KEY}")
    store.set_label("h", "r1", "faithfulness", 1.0, note=KEY)
    store.label_run(rid, name=f"run with {KEY}", note=f"see {KEY}")
    info = store.get_run(rid)
    assert info.base_url == "http://***@h/v1" and (info.name, info.note) == ("run with ***", "see ***")
    assert info.settings == {"note": "***"}
    assert store.results(rid)[0].reason == "HTTP 401 ***" and store.results(rid)[0].details == {"claims": ["***"]}
    assert store.rows(rid)[0].error == "bad row ***"


def test_batch_answers_are_stored_redacted_and_keyed_like_the_cache(tmp_path):
    from rageval_core.run.batch.answers import CollectingLLM
    from rageval_core.store.batch_ledger import BatchAnswer, Ledger
    from rageval_core.llm.transport.cache import url_key

    redact.remember(KEY)
    ledger = Ledger(tmp_path / "b.sqlite")
    ledger.save_answers([BatchAnswer("k1", "job", (f"echo {KEY}",), status=200),
                         BatchAnswer("k2", "job", (), error_kind="auth", error_message=f"HTTP 401 {KEY}", status=401)])
    assert ledger.answer("k1").texts == ("echo ***",) and ledger.answer("k2").error_message == "HTTP 401 ***"
    url = "http://u:pw-batch-secret-1@h/v1"
    collector = CollectingLLM(_Echo(), ledger, url, None)
    assert collector.base_url == url_key(url, tmp_path / "b.sqlite") and "pw-batch" not in collector.base_url


def test_the_crash_log_command_line_keeps_header_names_only():
    shown = _shown_argv(["rag", "t.json", "--header", "X-Custom: literal-no-digit", "--header=X-Other: v"])
    assert shown == ["rag", "t.json", "--header", "X-Custom: ***", "--header=X-Other: ***"]


def test_memoised_redaction_follows_the_known_secrets(monkeypatch):
    """Redacted strings are memoised per set of known secrets: a value remembered later still reaches a text
    redacted before, long texts past the memo's budget are still redacted."""
    late = "lateKnownValue-unit-7781"
    short, long = f"a {late} b", "x" * 300 + f" {late}"
    assert redact.redact(short) == short and redact.redact_data({"k": [long]}) == {"k": [long]}
    redact.remember(late)
    assert redact.redact(short) == "a *** b"
    assert redact.redact_data({"k": [long], long: 1}) == {"k": ["x" * 300 + " ***"], "x" * 300 + " ***": 1}
    monkeypatch.setattr(redact, "_LONG_MEMO_CHARS", 700)  # two long texts fill it: the third starts it over
    texts = [f"{i}" * 300 + f" {late} sk-abcdefgh1234567{i}" for i in range(4)]
    for _ in range(2):
        assert [redact.redact(t) for t in texts] == [f"{i}" * 300 + " *** ***" for i in range(4)]
