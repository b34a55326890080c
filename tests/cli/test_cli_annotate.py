"""``annotate RUN``: import a labels file naming its annotators, hand rows out (two people a row), progress per
annotator, settle a disagreement; bad input exits 2."""

from __future__ import annotations

from pathlib import Path

from rageval_core import cli
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from tests.support.runs import run_rows
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.store import annotations
from rageval_core.store.runs import Store

ROOT = Path(__file__).resolve().parents[2]


def test_annotate_imports_hands_out_and_settles(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    ds = load_dataset(ROOT / "sample_data" / "trust_labelled.jsonl")
    rows = [s for s in ds.samples if s.id in ("t01", "t02", "t03", "t04", "t05", "t06")]
    done = run_rows(rows, build_scorers(["faithfulness"]), config=ProviderConfig(), dataset_name=ds.name, dataset_digest=ds.content_hash)
    two = str(ROOT / "sample_data" / "trust_two_annotators.jsonl")
    assert cli.main(["annotate", done.run_id, "--import", two]) == 0
    assert "imported 24 label(s) from 2 annotator(s)" in capsys.readouterr().out  # 6 rows x 2 criteria x 2 people
    assert cli.main(["annotate", done.run_id[:15], "--hand-out", "--annotators", "aiko,ben,chika", "--mode", "random",
                     "--rows", "3", "--criteria", "faithfulness"]) == 0
    out = capsys.readouterr().out
    assert "handed out 3 row(s) to 3 annotator(s) on faithfulness: 6 new queue entries" in out
    progress = {p.annotator: (p.done, p.assigned) for p in annotations.progress(Store(), ds.content_hash)}
    assert progress["chika"][0] == 0 and sum(a for _, a in progress.values()) == 6
    assert progress["aiko"][0] == progress["aiko"][1]  # aiko's labels came with the import
    assert cli.main(["annotate", done.run_id, "--settle", "t05", "answer_correctness", "1", "--by", "lead"]) == 0
    assert "settled t05 answer_correctness as 👍 (by lead)" in capsys.readouterr().out
    assert annotations.settlements(Store(), ds.content_hash) == {("t05", "answer_correctness"): {"label": 1.0, "settled_by": "lead"}}
    assert cli.main(["annotate", done.run_id, "--hand-out"]) == 2
    assert "--hand-out needs --annotators" in capsys.readouterr().err
    assert cli.main(["annotate", done.run_id, "--settle", "t05", "answer_correctness", "yes", "--by", "x"]) == 2
