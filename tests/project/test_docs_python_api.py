"""docs/python-api.md runs as written: every ```python block, in order, in one namespace, from the repository
root, offline (no key in the environment, state in a tmp RAGEVAL_HOME). A block preceded by
``<!-- docs-test: skip (why) -->`` (the one that needs a provider key) is only compiled; no other may be skipped."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "python-api.md"
BLOCK = re.compile(r"(?:<!-- docs-test: skip \((?P<why>[^)]*)\) -->\n)?```python\n(?P<code>.*?)```", re.S)
KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY")


def blocks() -> list[tuple[str | None, str]]:
    return [(m.group("why"), m.group("code")) for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))]


def test_the_page_has_its_session_and_skips_only_the_key_block() -> None:
    found = blocks()
    assert len(found) >= 8
    skipped = [why for why, _code in found if why is not None]
    assert skipped == ["needs a provider key and the network"]
    assert PAGE.read_text(encoding="utf-8").count("```python") == len(found)  # no block the pattern missed


@pytest.mark.timeout(600)
def test_every_block_runs_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import rageval_core as r

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    for name in KEY_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(ROOT)
    namespace: dict = {"__name__": "python_api_doc"}
    printed = io.StringIO()
    for number, (why, code) in enumerate(blocks(), 1):
        compiled = compile(code, f"{PAGE.name} block {number}", "exec")
        if why is None:
            with contextlib.redirect_stdout(printed):
                exec(compiled, namespace)  # noqa: S102 - the documentation's own code, run as a reader would
    out = printed.getvalue()
    assert isinstance(namespace["run"], r.Evaluation) and len(namespace["run"].results) == 72  # 12 rows x (2 metrics + rubric5's 4 criteria)
    assert r.Store().find_run(namespace["kept"].run_id) is not None  # store=r.Store() kept it in RAGEVAL_HOME
    assert namespace["report"].find("faithfulness", "decomposed").n_labelled == 48
    assert namespace["mine"].label_next and namespace["people"].annotators is not None
    assert "ConfigError - unknown metric id(s) faithfulnes" in out and "GEMINI_API_KEY" in out
    assert "rows.json row 2, question: missing question" in out
    assert "AUROC" in out and "people kappa" in out
