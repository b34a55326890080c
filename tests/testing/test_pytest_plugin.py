"""The pytest plugin end to end, in a pytest of its own (a subprocess, the offline judge): the example test file
passes, a copy with a threshold raised above what the rows reach fails naming the row, its score and the
reason, and with no judge chosen the marked tests are skipped with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "pytest"
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "RAGEVAL_PROVIDER", "RAGEVAL_STRICT_SKIPS", "PYTEST_ADDOPTS")


def _pytest(tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict[str, str]]:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    env["RAGEVAL_HOME"] = str(tmp_path / "home")
    report = tmp_path / f"report-{len(list(tmp_path.glob('report-*')))}.xml"
    done = subprocess.run([sys.executable, "-m", "pytest", *args, "-p", "no:cacheprovider", f"--junitxml={report}"],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    outcomes = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        kind = next((c.tag for c in case if c.tag in ("failure", "error", "skipped")), "passed")
        outcomes[f"{case.get('classname')}::{case.get('name')}"] = kind
    return done, outcomes


def test_the_example_passes_offline_and_a_raised_threshold_fails_naming_the_row(tmp_path: Path) -> None:
    raised = tmp_path / "raised"
    raised.mkdir()
    (raised / "conftest.py").write_text((EXAMPLE / "conftest.py").read_text(encoding="utf-8"), encoding="utf-8")
    (raised / "answers.jsonl").write_text((EXAMPLE / "answers.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    source = (EXAMPLE / "test_rag_quality.py").read_text(encoding="utf-8")
    assert '{"answer_relevancy": 0.6}, mode="each"' in source
    (raised / "test_raised.py").write_text(source.replace('{"answer_relevancy": 0.6}', '{"answer_relevancy": 0.7}'), encoding="utf-8")
    done, outcomes = _pytest(tmp_path, str(EXAMPLE), str(raised), "--rageval-provider", "offline")
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    failed = [name for name, kind in outcomes.items() if kind != "passed"]
    assert len(outcomes) == 8 and failed == ["test_raised::test_every_answer_addresses_its_question"], outcomes
    assert "rageval: offline/default model (--rageval-provider)" in done.stdout
    assert "FAILED" in done.stdout and "test_raised.py::test_every_answer_addresses_its_question" in done.stdout
    assert "answer_relevancy >= 0.7 (each): mean 0.838 over 4 scored row(s)" in done.stdout
    assert "row leave-2: answer_relevancy 0.659 — offline: no questions can be generated offline" in done.stdout
    assert "7 passed" in done.stdout  # the example's 4 and the copy's other 3


def test_with_no_judge_chosen_the_marked_tests_are_skipped_with_the_reason(tmp_path: Path) -> None:
    done, outcomes = _pytest(tmp_path, str(EXAMPLE), "-rs")
    assert done.returncode == 0, done.stdout[-3000:]
    assert set(outcomes.values()) == {"skipped"} and len(outcomes) == 4
    assert "no judge chosen: pass --rageval-provider offline" in done.stdout
