"""Issue 27, must show: after the README's CLI example, run with umask 022, the state folder is 0700 and every
file in it (SQLite and its WAL / SHM, logs, spill) and every export (JSON, CSV, call log, HTML report, trust
report, crash log) is 0600; a looser existing state folder is tightened with a warning naming it."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.core import private

ROOT = Path(__file__).resolve().parents[2]
README_EXAMPLE = ["evaluate", str(ROOT / "sample_data" / "ml_qa_ja.json"), "--provider", "offline",
                  "--metrics", "faithfulness,answer_relevancy,context_precision,answer_correctness",
                  "--judge", "rubric5", "--out", "results.json", "--fail-under", "faithfulness=0.5"]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    before = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(before)


def test_open_private_makes_new_and_existing_files_0600_under_umask_022(tmp_path, umask_022):
    fresh = tmp_path / "fresh.txt"
    with private.open_private(fresh, "w") as fh:
        fh.write("質問")
    old = tmp_path / "old.jsonl"
    old.write_text("kept\n", encoding="utf-8")
    assert _mode(old) == 0o644  # what Path.write_text gives under this umask
    with private.open_private(old, "a") as fh:
        fh.write("added\n")
    raw = private.write_private_bytes(tmp_path / "raw.bin", b"\x00\x01")
    assert [_mode(p) for p in (fresh, old, raw)] == [0o600, 0o600, 0o600]
    assert fresh.read_text(encoding="utf-8") == "質問" and old.read_text(encoding="utf-8") == "kept\nadded\n"
    assert raw.read_bytes() == b"\x00\x01"


def test_a_looser_folder_is_tightened_once_with_a_warning_naming_it(tmp_path, umask_022, monkeypatch):
    lines: list[str] = []
    monkeypatch.setattr(private, "warn", lines.append)
    new = private.private_dir(tmp_path / "a" / "state")
    assert _mode(new) == 0o700 and not lines
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    private.private_dir(loose)
    private.private_dir(loose)
    assert _mode(loose) == 0o700
    assert lines == [f"warning: {loose} was readable by others (mode 755); now 0700"]


def _walk(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): _mode(p) for p in [root, *root.rglob("*")]}


def test_the_readme_cli_example_leaves_only_private_state_and_exports(tmp_path, umask_022, monkeypatch, capsys):
    monkeypatch.delenv("RAGEVAL_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".rageval").mkdir(mode=0o755)  # left by an older version
    done = subprocess.run([sys.executable, "-m", "rageval_core", *README_EXAMPLE], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          preexec_fn=lambda: os.umask(0o022))
    assert done.returncode == 1, done.stderr  # the example's threshold is missed on purpose
    assert f"warning: {tmp_path / '.rageval'} was readable by others (mode 755); now 0700" in done.stderr
    run_id = done.stdout.split("run ", 1)[1].split()[0]
    for args in (["runs", "export", run_id, "--out", "out/results.csv"],
                 ["runs", "calls", run_id, "--out", "out/calls.jsonl"],
                 ["report", run_id, "--out", "out/report.html"],
                 ["trust", run_id, "--out", "out/trust.json"]):
        assert cli.main(args) in (0, 1), capsys.readouterr().err
    monkeypatch.setattr("rageval_core.analysis.export.export_json", lambda *a, **k: 1 / 0)
    assert cli.main(["evaluate", str(ROOT / "sample_data" / "ml_qa_en.json"), "--provider", "offline",
                     "--metrics", "faithfulness", "--out", "crash.json"]) == 3
    state = _walk(tmp_path / ".rageval")
    assert {name for name in state if name.startswith("rageval.sqlite")} >= {"rageval.sqlite", "rageval.sqlite-wal"}
    assert any(name.startswith("logs/internal-error-") for name in state)
    loose = {name: f"{mode:o}" for name, mode in state.items()
             if mode != (0o700 if (tmp_path / ".rageval" / name).is_dir() else 0o600)}
    assert not loose, loose
    exports = {p.name: _mode(p) for p in [tmp_path / "results.json", *(tmp_path / "out").iterdir()]}
    assert set(exports) == {"results.json", "results.csv", "calls.jsonl", "report.html", "trust.json"}
    assert set(exports.values()) == {0o600}, exports
