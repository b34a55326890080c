"""Our ragas- and DeepEval-named files read by the real ragas 0.4.3 and DeepEval 4.3.1, each in its own test-only venv
(tests/support/external_venvs.py: created on first use, skipped with the reason where pip cannot install them, a
failure under RAGEVAL_REQUIRE_E2E=1 as in CI). Every field must come back: question, contexts in order, answer,
reference, and for DeepEval the id and metadata it keeps in additional_metadata."""

from __future__ import annotations

from pathlib import Path

import pytest

from rageval_core.core.types import Sample
from rageval_core.data.datasets import load_dataset, save_dataset
from tests.support.external_venvs import DEEPEVAL, INSTALL_TIMEOUT_S, RAGAS, run_in, venv_or_skip

EXTERNAL = Path(__file__).resolve().parents[1] / "data" / "external"
pytestmark = pytest.mark.timeout(INSTALL_TIMEOUT_S + 300)

RAGAS_READ = r"""
import ast, json, sys
import pandas as pd
from ragas import EvaluationDataset

def rows(ds):
    return [s.to_dict() for s in ds.samples]

jsonl, json_path, csv_path, ragas_csv = sys.argv[1:5]
out = {"from_jsonl": rows(EvaluationDataset.from_jsonl(jsonl)),
       "from_list": rows(EvaluationDataset.from_list(json.load(open(json_path, encoding="utf-8"))))}
for name, path in (("ours", csv_path), ("ragas", ragas_csv)):
    try:
        EvaluationDataset.from_pandas(pd.read_csv(path))
        out[name + "_plain"] = "loaded"
    except Exception as exc:  # ragas has no CSV reader: read_csv gives the list column as text, which it rejects
        out[name + "_plain"] = type(exc).__name__
    converted = pd.read_csv(path, converters={"retrieved_contexts": ast.literal_eval})
    out[name + "_converted"] = rows(EvaluationDataset.from_pandas(converted))
print(json.dumps(out, ensure_ascii=False))
"""

DEEPEVAL_READ = r"""
import json, sys
from deepeval.dataset import EvaluationDataset

out = {}
for kind, path in zip(("json", "jsonl", "csv"), sys.argv[1:4]):
    ds = EvaluationDataset()
    getattr(ds, f"add_goldens_from_{kind}_file")(path)
    out[kind] = [{"input": g.input, "actual_output": g.actual_output, "expected_output": g.expected_output,
                  "retrieval_context": g.retrieval_context, "context": g.context,
                  "additional_metadata": g.additional_metadata} for g in ds.goldens]
print(json.dumps(out, ensure_ascii=False))
"""


@pytest.fixture(scope="session")
def ragas_python() -> Path:
    return venv_or_skip(RAGAS)


@pytest.fixture(scope="session")
def deepeval_python() -> Path:
    return venv_or_skip(DEEPEVAL)


def _ragas_fields(s: Sample) -> dict[str, object]:
    return {"user_input": s.question, "retrieved_contexts": list(s.contexts), "response": s.answer, "reference": s.ground_truth}


def test_our_ragas_named_jsonl_json_and_csv_load_into_ragas_with_every_field(ragas_python: Path, tmp_path: Path) -> None:
    samples = load_dataset(EXTERNAL / "ragas_results.csv").samples
    paths = [save_dataset(samples, tmp_path / f"ours.{ext}", naming="ragas") for ext in ("jsonl", "json", "csv")]
    got = run_in(ragas_python, RAGAS, RAGAS_READ, *map(str, paths), str(EXTERNAL / "ragas_to_csv.csv"))
    want = [_ragas_fields(s) for s in samples]
    assert isinstance(got, dict)
    assert got["from_jsonl"] == want and got["from_list"] == want and got["ours_converted"] == want
    # ragas's own CSV and ours behave the same: plain read_csv is rejected, the literal_eval converter loads every field
    assert got["ours_plain"] == got["ragas_plain"] == "ValidationError"
    assert [r["retrieved_contexts"] for r in got["ragas_converted"]] == [r["retrieved_contexts"] for r in want]


def test_our_deepeval_named_json_jsonl_and_csv_load_into_deepeval_with_every_field(deepeval_python: Path, tmp_path: Path) -> None:
    samples = load_dataset(EXTERNAL / "deepeval_goldens.json").samples
    keep = samples[:-1]  # a DeepEval CSV cannot hold the last row's context with a "|" (refused when written)
    paths = [save_dataset(samples, tmp_path / "ours.json", naming="deepeval"),
             save_dataset(samples, tmp_path / "ours.jsonl", naming="deepeval"),
             save_dataset(keep, tmp_path / "ours.csv", naming="deepeval")]
    got = run_in(deepeval_python, DEEPEVAL, DEEPEVAL_READ, *map(str, paths))
    assert isinstance(got, dict)
    for kind, rows in (("json", samples), ("jsonl", samples), ("csv", keep)):
        # DeepEval's CSV loader gives [] for an empty context cell, as it does reading its own save_as CSV
        none = [] if kind == "csv" else None
        want = [{"input": s.question, "actual_output": s.answer, "expected_output": s.ground_truth,
                 "retrieval_context": list(s.contexts), "context": s.metadata.get("context") or none,
                 "additional_metadata": {"id": s.id, **{k: v for k, v in s.metadata.items() if k != "context"}}}
                for s in rows]
        assert got[kind] == want, kind
    assert got["jsonl"][-1]["retrieval_context"][1].count("|") == 1  # JSONL keeps lists: the "|" survives
