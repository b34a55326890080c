"""A recorded run replays to the same scores with no provider, and an edited prompt misses honestly."""

import json
from pathlib import Path

from rageval_core import cli

SEED = Path(__file__).resolve().parents[2] / "sample_data" / "ml_qa_ja.json"


def _values(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8"))
    return {(r["id"], x["metric"], x["method"]): (x["value"], x["unscored_reason"]) for r in data["rows"] for x in r["results"]}


def test_record_then_replay_gives_identical_scores(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    rows = json.loads(SEED.read_text(encoding="utf-8"))[:3]
    data = tmp_path / "rows.json"
    data.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    log = tmp_path / "calls.jsonl"
    common = ["--metrics", "faithfulness,context_precision", "--judge", "binary", "--quiet"]

    assert cli.main(["evaluate", str(data), "--provider", "offline", "--record-log", str(log), "--out", str(tmp_path / "a.json"), *common]) == 0
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert lines and {"key", "provider", "model", "request", "response", "usage", "recorded_at"} <= set(lines[0])

    replay = ["evaluate", str(data), "--provider", "replay", "--replay-log", str(log), "--no-cache"]
    assert cli.main([*replay, "--out", str(tmp_path / "b.json"), *common]) == 0
    assert _values(tmp_path / "a.json") == _values(tmp_path / "b.json")

    # A judge whose prompt differs (another rubric) was never recorded: unscored replay_miss, not a crash.
    assert cli.main([*replay, "--out", str(tmp_path / "c.json"), "--judge", "binary-strict", "--quiet"]) == 2
    missed = _values(tmp_path / "c.json")
    assert missed and all(v == (None, "replay_miss") for v in missed.values())


def test_economy_flag_sends_fewer_requests(tmp_path, monkeypatch):
    """--economy verifies the answer's claims against contexts and ground truth in one call."""
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    rows = json.loads(SEED.read_text(encoding="utf-8"))[:2]
    data = tmp_path / "rows.json"
    data.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    counts = {}
    for mode in ("default", "economy"):
        log = tmp_path / f"{mode}.jsonl"
        extra = ["--economy"] if mode == "economy" else []
        args = ["evaluate", str(data), "--provider", "offline", "--metrics", "faithfulness,answer_correctness",
                "--record-log", str(log), "--out", str(tmp_path / f"{mode}.json"), "--quiet", *extra]
        assert cli.main(args) == 0
        counts[mode] = len(log.read_text(encoding="utf-8").splitlines())
    assert counts["economy"] < counts["default"]
