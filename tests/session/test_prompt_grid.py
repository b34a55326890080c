"""Two judge versions on the same rows through a real OpenAI client and the local fake server
(rageval_core.session.prompt_grid; issue 38 item 6): one run each, tagged as prompt tests, side by side."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from rageval_core.analysis import run_groups
from rageval_core.analysis.version_grid import grid, score_column
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring.rubric import load_rubric
from rageval_core.session.prompt_grid import run_grid
from rageval_core.session.versus_run import Version
from rageval_core.store.runs import Store
from rageval_core.testing.fake_llm import FakeLLMServer

ROOT = Path(__file__).resolve().parents[2]
STRICT = "Be STRICT: any unsupported detail fails."


def strict_on(rows: dict[str, str]) -> Any:
    """A judge that passes every answer, except that a prompt saying STRICT fails faithfulness on ``rows``."""
    def respond(request: Any) -> dict:
        prompt = request.prompt
        row = next((sid for answer, sid in rows.items() if answer in prompt), None)
        strict = STRICT in prompt and row is not None
        return {"faithfulness_score": 0 if strict else 1, "faithfulness_reason": "unsupported" if strict else "fine",
                "answer_correctness_score": 1, "answer_correctness_reason": "matches"}

    return respond


def test_two_versions_one_run_each_and_the_rows_they_differ_on_first(tmp_path: Path) -> None:
    ds = load_dataset(ROOT / "sample_data" / "ml_qa_en.json")
    rows = ds.samples[:4]
    base = load_rubric("binary", "en")
    strict = dataclasses.replace(base, id="binary-mine", instructions=f"{base.instructions} {STRICT}")
    failing = {rows[1].answer: rows[1].id, rows[3].answer: rows[3].id}
    store = Store(tmp_path / "s.sqlite")
    with FakeLLMServer(responder=strict_on(failing)) as server:
        config = ProviderConfig("openai-compatible", base_url=server.openai_base_url, model="fake-judge", api_key="sk-grid")
        done = run_grid(rows, [Version("binary", base), Version("v2 strict", strict)], config=config, store=store,
                        dataset_name=ds.name, dataset_digest=ds.content_hash)
        assert server.count("/chat/completions") == 8  # 4 rows × 2 versions
        again = run_grid(rows, [Version("binary", base), Version("v2 strict", strict)], config=config, store=store,
                         dataset_name=ds.name, dataset_digest=ds.content_hash)
        assert server.count("/chat/completions") == 8  # the second time from the response cache
    assert again.runs["binary"].cache_hits == 4
    table = grid(done.frame, done.versions, criteria=["faithfulness"], order=done.rows)
    assert list(table["sample_id"]) == [rows[1].id, rows[3].id, rows[0].id, rows[2].id]  # then dataset order
    assert list(table["differs"]) == [True, True, False, False]
    assert list(table[score_column("v2 strict")][:2]) == [0.0, 0.0] and list(table[score_column("binary")][:2]) == [1.0, 1.0]
    infos = {i.id: i for i in store.list_runs()}
    for label, run in done.runs.items():
        info = infos[run.run_id]
        assert run_groups.side_kind(info) == "prompt_test" and run_groups.side_detail(info) == f"grid: {label}"


def test_a_grid_needs_two_distinct_versions(tmp_path: Path) -> None:
    rubric = load_rubric("binary", "en")
    with pytest.raises(ValueError, match="two or more"):
        run_grid([], [Version("a", rubric)], config=ProviderConfig(), store=Store(tmp_path / "s.sqlite"),
                 dataset_name="d", dataset_digest=None)
    with pytest.raises(ValueError, match="share a label"):
        run_grid([], [Version("a", rubric), Version("a", rubric)], config=ProviderConfig(),
                 store=Store(tmp_path / "s.sqlite"), dataset_name="d", dataset_digest=None)
