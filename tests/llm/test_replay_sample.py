"""The committed real-model recording (Qwen2.5-Coder-1.5B under llama.cpp, sample_data/replay/) replays
through the CLI to the scores of the recorded run: no server, no key, no network.

A replay miss here means a prompt, template, rubric or schema changed since the recording (the replay key
hashes the exact request), and the test FAILS with the command that records it again (bench/record_replay.py,
which needs the local model server, so it is run by hand, never in CI). The fingerprint of the Japanese
templates, rubric presets and task schemas stored beside the recording only sharpens the message: a miss with
an unchanged fingerprint is a bug in how requests are keyed, not a stale recording.
"""

import json
from pathlib import Path

import pytest

from bench.record_replay import EXPECTED, LOG, prompt_fingerprint
from rageval_core import cli

ROOT = Path(__file__).resolve().parents[2]


RERECORD = ("python bench/record_replay.py --base-url http://127.0.0.1:8080/v1  (needs the llama.cpp server "
            "with Qwen2.5-Coder-1.5B: docs/providers.md, 'A real small model (llama.cpp)')")


def _stale_message(missed: list[str], prompts_changed: bool) -> str:
    why = ("prompts, rubric presets or schemas changed since the recording" if prompts_changed
           else "requests miss although the prompt fingerprint is unchanged (a request-key bug?)")
    return f"{why}; {len(missed)} results not in the recording, e.g. {missed[:3]}. Record it again: {RERECORD}"


def test_the_recorded_small_model_run_replays_to_its_scores(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    expected = json.loads(EXPECTED.read_text(encoding="utf-8"))
    rows = json.loads((ROOT / expected["dataset"]).read_text(encoding="utf-8"))
    data = tmp_path / "rows.json"
    data.write_text(json.dumps([r for r in rows if str(r["id"]) in expected["row_ids"]], ensure_ascii=False), encoding="utf-8")
    out = tmp_path / "replayed.json"
    judges = [arg for judge in expected["judges"] for arg in ("--judge", judge)]
    code = cli.main(["evaluate", str(data), "--provider", "replay", "--replay-log", str(LOG), "--no-cache", "--quiet",
                     "--metrics", ",".join(expected["metrics"]), *judges, "--out", str(out)])
    assert code == 0, capsys.readouterr().err

    replayed = json.loads(out.read_text(encoding="utf-8"))
    got = {f"{r['id']}|{x['method']}|{x['metric']}": [x["value"], x["unscored_reason"]]
           for r in replayed["rows"] for x in r["results"]}
    missed = sorted(k for k, (_, reason) in got.items() if reason == "replay_miss")
    assert not missed, _stale_message(missed, prompt_fingerprint() != expected["prompt_fingerprint"])
    # Scores that mix in embedding cosines differ in the 8th decimal between runs (float sums in the bundled
    # model depend on thread scheduling): equal to 1e-6, with the same unscored reasons.
    assert set(got) == set(expected["results"])
    assert {k: v[1] for k, v in got.items()} == {k: v[1] for k, v in expected["results"].items()}
    assert {k: v[0] for k, v in got.items()} == pytest.approx({k: v[0] for k, v in expected["results"].items()}, abs=1e-6)
    assert replayed["model"] == expected["model"]  # the replayed answers name the model that gave them
    assert all(r["provider"] == "replay" for row in replayed["rows"] for r in row["results"])
