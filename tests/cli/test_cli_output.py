"""What the CLI prints: data text neutralised for the terminal, every print through one function, and the
failure summary (per unscored reason, the count and the first distinct messages)."""

from __future__ import annotations

import re
from pathlib import Path

from rageval_core.analysis.failures import failure_lines, summarize_failures
from rageval_core.core.termtext import terminal_text
from rageval_core.core.types import MetricResult

CLI = Path(__file__).resolve().parents[2] / "rageval_core" / "cli"


def test_control_characters_are_shown_not_interpreted() -> None:
    assert terminal_text("red\x1b[31m!\x1b[0m") == "red\\x1b[31m!\\x1b[0m"
    assert terminal_text("a\rb\x08c\x07") == "a\\x0db\\x08c\\x07"
    assert terminal_text("\u202eevil\u202c") == "\\u202eevil\\u202c"  # bidi override (Trojan Source)
    assert terminal_text("two\nlines") == "two\\nlines"
    assert terminal_text("two\nlines", multiline=True) == "two\nlines"
    assert terminal_text("x\ud800y") == "x\\ud800y"  # a lone surrogate cannot break the print
    kept = "過学習 ✅ 👩\u200d🔬 🇯🇵 ما هو\tend"
    assert terminal_text(kept) == kept


def test_every_cli_print_goes_through_the_neutralising_functions() -> None:
    for path in CLI.glob("*.py"):
        if path.name == "common.py":
            continue
        bare = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if re.search(r"(?<![\w.])print\(", line)]
        assert not bare, f"{path.name} lines {bare}: use echo() / err() from cli.common"


def _unscored(sid: str, reason: str, message: str | None) -> MetricResult:
    return MetricResult(sid, "faithfulness", "decomposed", None, unscored_reason=reason, reason=message)


def test_failure_summary_counts_and_distinct_messages_per_reason() -> None:
    cause = "APIConnectionError: cannot reach http://127.0.0.1:9/v1"
    results = [
        _unscored("1", "provider_error", cause),
        _unscored("1", "provider_error", cause),
        _unscored("2", "provider_error", "RateLimitError:   429\n too many"),
        _unscored("3", "no_claims", "the answer has no claims"),
        MetricResult("4", "faithfulness", "decomposed", 0.5),
        _unscored("5", "provider_error", "third"),
        _unscored("6", "provider_error", "fourth"),
    ]
    groups = summarize_failures(results)
    assert [(g.reason, g.count, g.rows) for g in groups] == [("provider_error", 5, 4), ("no_claims", 1, 1)]
    assert groups[0].messages == (cause, "RateLimitError: 429 too many", "third") and groups[0].more_messages == 1
    lines = failure_lines(groups)
    assert lines[:2] == ["provider_error: 5 result(s) on 4 row(s)", f"  - {cause}"]
    assert "  … 1 more distinct message(s) in the export" in lines
    assert summarize_failures([MetricResult("4", "faithfulness", "decomposed", 1.0)]) == []


def test_cli_messages_name_flags_and_the_ui_its_sidebar_fields(tmp_path, monkeypatch, capsys) -> None:
    from rageval_core import cli
    from rageval_core.providers.config import ProviderConfig, check_config

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    data = Path(__file__).resolve().parents[1] / "data" / "bad" / "utf8_bom.json"
    base = ["evaluate", str(data), "--metrics", "faithfulness", "--out", str(tmp_path / "o.json"), "--quiet"]
    assert cli.main(base + ["--provider", "openai-compatible"]) == 2
    err = capsys.readouterr().err
    assert "(--base-url)" in err and "(--model)" in err and "sidebar" not in err
    assert cli.main(base + ["--provider", "openai"]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "sidebar" not in err
    ui_names = {"base_url": "sidebar field 'Base URL'", "embedding_model": "sidebar field 'Embedding model'"}
    problems = check_config(ProviderConfig(provider="openai-compatible", model="m"), environ={}, names=ui_names)
    assert any("(sidebar field 'Base URL')" in p for p in problems)


def test_a_provider_failure_prints_its_cause_after_the_run(tmp_path, monkeypatch, capsys) -> None:
    import socket

    from rageval_core import cli

    with socket.socket() as probe:  # a loopback port with nothing listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    data = Path(__file__).resolve().parents[1] / "data" / "bad" / "utf8_bom.json"
    code = cli.main(["evaluate", str(data), "--provider", "openai-compatible", "--base-url", f"http://127.0.0.1:{port}/v1",
                     "--model", "m", "--metrics", "faithfulness", "--out", str(tmp_path / "o.json"), "--quiet",
                     "--max-retries", "0", "--no-cache"])
    captured = capsys.readouterr()
    assert code == 2
    summary = captured.out.split("unscored results, by reason:", 1)[1]
    assert "provider_error: 2 result(s) on 2 row(s)" in summary and f"127.0.0.1:{port}" in summary
