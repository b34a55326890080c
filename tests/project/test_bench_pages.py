"""bench/pages.py still runs: it builds its runs, opens each page and Compare's tabs, and prints its last line."""

from __future__ import annotations

import pytest

from bench import pages


def test_the_page_bench_runs_on_a_small_run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                           tmp_path) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))  # the bench points it at its own temp dir; restored after
    assert pages.main(["--template-rows", "4", "--sizes", "8", "--home", str(tmp_path)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    figures = dict(item.split("=") for item in last.split())
    assert set(figures) == {"compare_8_s", "compare_rows_8_s", "compare_runs_8_s", "history_8_s", "inspect_8_s",
                            "run_b_default_ok"}
    assert figures["run_b_default_ok"] == "1" and all(float(v) >= 0 for k, v in figures.items() if k.endswith("_s"))
