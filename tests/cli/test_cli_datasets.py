"""The CLI with other tools' files: ``--map`` wherever a dataset is read, ``--naming ragas|deepeval`` for what is
written back (``evaluate --out``, ``runs export``, ``dataset convert``), ``dataset check``'s preview; offline provider."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from rageval_core import cli
from rageval_core.data.datasets import load_dataset
from rageval_core.store import db

EXTERNAL = Path(__file__).resolve().parents[1] / "data" / "external"


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _evaluate(data: str, out: str, *extra: str) -> int:
    return cli.main(["evaluate", data, "--provider", "offline", "--metrics", "faithfulness", "--judge", "binary",
                     "--out", out, "--quiet", *extra])


def _mine(home: Path) -> Path:
    path = home / "mine.csv"
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["prompt", "docs", "reply", "key"])
        writer.writerow(["What is overfitting?", "Overfitting fits noise.\n\nRegularisation helps.", "It fits noise.", "q1"])
        writer.writerow(["過学習とは？", "訓練データへの過度な適合。", "過度な適合です。", "q2"])
    return path


def test_evaluate_reads_through_map_and_writes_deepeval_rows_with_our_scores(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = _mine(home)
    assert _evaluate(str(mine), "out.csv", "--naming", "deepeval", "--map", "id=key,question=prompt",
                     "--map", "contexts=docs,answer=reply", "--contexts-sep", "blank-line") == 0
    rows = list(csv.DictReader(io.StringIO((home / "out.csv").read_text(encoding="utf-8-sig"), newline="")))
    assert [r["input"] for r in rows] == ["What is overfitting?", "過学習とは？"]
    assert rows[0]["retrieval_context"] == "Overfitting fits noise.|Regularisation helps."
    assert json.loads(rows[1]["additional_metadata"]) == {"id": "q2"}
    assert {"decomposed/faithfulness", "judge:binary/faithfulness"} <= set(rows[0])
    back = load_dataset(home / "out.csv")
    assert [s.id for s in back.samples] == ["q1", "q2"] and back.samples[0].contexts == ("Overfitting fits noise.", "Regularisation helps.")
    run_id = capsys.readouterr().out.split("run ")[-1].split()[0]
    # the run keeps the map, so its own file is read again the same way for a later export
    assert cli.main(["runs", "export", run_id, "--out", "again.jsonl", "--naming", "ragas"]) == 0
    first = json.loads((home / "again.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert first["user_input"] == "What is overfitting?" and first["retrieved_contexts"] == ["Overfitting fits noise.", "Regularisation helps."]
    assert first["id"] == "q1" and isinstance(first["decomposed/faithfulness"], float)
    mapped = ["--map", "id=key,question=prompt,contexts=docs,answer=reply", "--contexts-sep", "blank-line"]
    assert cli.main(["report", run_id, "--out", "r.html", "--data", str(mine), *mapped]) == 0
    assert "Regularisation helps." in (home / "r.html").read_text(encoding="utf-8")
    assert cli.main(["trust", str(mine), *mapped, "--metrics", "faithfulness", "--quiet"]) == 0
    assert "evaluated 2 rows" in capsys.readouterr().err


def test_runs_export_naming_needs_the_runs_own_dataset(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = home / "results.csv"
    data.write_bytes((EXTERNAL / "ragas_results.csv").read_bytes())
    assert _evaluate(str(data), "out.json") == 0
    run_id = json.loads((home / "out.json").read_text(encoding="utf-8"))["run_id"]
    assert cli.main(["runs", "export", run_id, "--out", "r.csv", "--naming", "ragas"]) == 0
    row = next(csv.DictReader(io.StringIO((home / "r.csv").read_text(encoding="utf-8-sig"), newline="")))
    assert row["retrieved_contexts"].startswith("['Overfitting") and row["faithfulness"] == "1.0"  # ragas's score, ragas's name
    other = home / "other.json"
    other.write_bytes((EXTERNAL / "ragas_to_list.json").read_bytes().replace(b"overfitting", b"underfitting"))
    capsys.readouterr()
    assert cli.main(["runs", "export", run_id, "--out", "r2.csv", "--naming", "ragas", "--data", str(other)]) == 2
    assert "not the dataset run" in capsys.readouterr().err
    data.unlink()  # the run keeps its rows: its file is not needed any more
    assert cli.main(["runs", "export", run_id, "--out", "r3.json", "--naming", "deepeval"]) == 0
    kept = json.loads((home / "r3.json").read_text(encoding="utf-8"))
    assert len(kept) == 9 and kept[0]["retrieval_context"][0].startswith("Overfitting")
    # a run stored before runs kept their rows needs its file, or --data
    db.connect(home / "home" / "rageval.sqlite").execute("UPDATE run_rows SET sample = NULL WHERE run_id = ?", (run_id,))
    capsys.readouterr()
    assert cli.main(["runs", "export", run_id, "--out", "r3.csv", "--naming", "deepeval"]) == 2
    assert "--data FILE" in capsys.readouterr().err
    same = home / "same.jsonl"
    same.write_bytes((EXTERNAL / "ragas_to_jsonl.jsonl").read_bytes())  # the same rows: the same content hash
    assert cli.main(["runs", "export", run_id, "--out", "r4.json", "--naming", "deepeval", "--data", str(same)]) == 0
    assert cli.main(["runs", "export", run_id, "--out", "r5.csv", "--naming", "deepeval", "--data", str(same)]) == 2
    assert "holds a '|'" in capsys.readouterr().err
    assert cli.main(["runs", "export", run_id, "--out", "r6.json", "--data", str(same)]) == 2  # --data goes with --naming


def test_dataset_check_previews_rows_and_convert_writes_each_naming(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["dataset", "check", str(EXTERNAL / "ragas_results.csv"), "--rows", "2"]) == 0
    shown = capsys.readouterr().out
    assert "9 of 9 row(s) read" in shown and "ragas:faithfulness=1" in shown and "2: Overfitting" in shown
    for naming, out in (("ragas", "r.csv"), ("deepeval", "d.json"), ("seed", "s.jsonl")):
        assert cli.main(["dataset", "convert", str(EXTERNAL / "ragas_results.csv"), "--out", out, "--naming", naming]) == 0
        assert load_dataset(home / out).content_hash == load_dataset(EXTERNAL / "ragas_results.csv").content_hash
    mine = _mine(home)
    assert cli.main(["dataset", "check", str(mine)]) == 2
    assert "map one (--map question=COLUMN" in capsys.readouterr().err
    assert cli.main(["dataset", "check", str(mine), "--map", "questio=prompt"]) == 2
    assert "cannot map questio" in capsys.readouterr().err
    assert cli.main(["evaluate", str(mine), "--provider", "offline", "--out", "x.json", "--map", "question"]) == 2


def test_resume_reads_the_file_through_the_map_the_run_was_started_with(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = _mine(home)
    mapped = ["--map", "id=key,question=prompt,contexts=docs,answer=reply", "--contexts-sep", "blank-line"]
    assert _evaluate(str(mine), "a.json", *mapped) == 0
    run_id = json.loads((home / "a.json").read_text(encoding="utf-8"))["run_id"]
    # as if interrupted after the first row: the second row's results were never stored
    conn = db.connect(home / "home" / "rageval.sqlite")
    conn.execute("DELETE FROM results WHERE run_id = ? AND sample_id = 'q2'", (run_id,))
    conn.commit()
    capsys.readouterr()
    assert _evaluate(str(mine), "b.json", "--resume", run_id) == 0  # no --map: the run's own
    resumed = json.loads((home / "b.json").read_text(encoding="utf-8"))
    assert resumed["run_id"] == run_id
    assert [r["id"] for r in resumed["rows"]] == ["q1", "q2"]
    assert {res["method"] for res in resumed["rows"][1]["results"]} == {"decomposed", "judge:binary"}  # redone
    assert _evaluate(str(mine), "c.json", "--resume", run_id, *mapped) == 0  # the same map again is fine
    capsys.readouterr()
    assert _evaluate(str(mine), "d.json", "--resume", run_id, "--map", "id=key,question=reply") == 2
    message = capsys.readouterr().err
    assert "read its file through --map id=key, question=prompt" in message and "give the same --map or none" in message
