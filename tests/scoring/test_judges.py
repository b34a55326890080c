"""Several judge configurations in one run: files, per-judge stacks (keys, limits, sampling), labels, estimate."""

from __future__ import annotations

import json

import pytest

from rageval_core.analysis.export import run_to_csv, run_to_dict
from rageval_core.scoring.judges.bound import judge_scorers
from rageval_core.scoring.judges.config import JudgeConfig, JudgeConfigError, load_judges, parse_judges
from rageval_core.providers.config import ProviderConfig
from rageval_core.run import estimate
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.scripted_llm import ScriptedLLM
from tests.scoring.test_judge import scores_for, seed_samples


def test_judges_file_yaml_and_json(tmp_path):
    (tmp_path / "j.yaml").write_text(
        "- {id: local, provider: openai-compatible, base_url: 'http://127.0.0.1:9/v1', model: qwen, method: rubric5,"
        " temperature: 0.2, rpm: 30, api_key_env: LOCAL_KEY}\n"
        "- {provider: offline, method: decomposed, metrics: [faithfulness, answer_relevancy]}\n",
        encoding="utf-8",
    )
    judges = load_judges(tmp_path / "j.yaml")
    assert [j.id for j in judges] == ["local", "heuristic-v4"]
    assert judges[0].sampling == {"temperature": 0.2} and judges[0].rpm == 30.0
    assert judges[1].decomposed and judges[1].metrics == ("faithfulness", "answer_relevancy")
    (tmp_path / "j.json").write_text(json.dumps({"judges": [j.to_dict() for j in judges]}), encoding="utf-8")
    assert load_judges(tmp_path / "j.json") == judges


@pytest.mark.parametrize(
    "entries, message",
    [
        ([{"id": "a", "api_key": "sk-123"}], "keys never go in a judges file"),
        ([{"id": "a"}, {"id": "a"}], "judge id given twice: a"),
        ([{"id": "a", "method": "decomposed"}], "needs metrics"),
        ([{"id": "a", "provider": "nope"}], "unknown provider"),
        ([{"id": "a", "temprature": 0}], "unknown field(s) temprature"),
        ([{"id": "a", "rpm": "fast"}], "rpm must be a number"),
        ([], "non-empty list"),
    ],
)
def test_bad_judge_entries_are_reported(entries, message):
    with pytest.raises(JudgeConfigError) as err:
        parse_judges(entries)
    assert message in str(err.value)
    assert "sk-123" not in str(err.value)


def _two_judges(store, samples, scripted):
    judges = [JudgeConfig("heuristic", provider="offline"),
              JudgeConfig("scripted", provider="openai-compatible", model="scripted-1", temperature=0.7, seed=11)]
    scorers = judge_scorers(judges, ProviderConfig(), llms={"scripted": scripted})
    return scorers, run_rows(samples, scorers, config=ProviderConfig(), store=store, concurrency=2)


def test_two_judges_one_run_results_carry_provider_model_and_judge(tmp_path):
    samples = seed_samples()[:4]
    store = Store(tmp_path / "db.sqlite")
    scripted = ScriptedLLM(default=lambda r: scores_for(r, 4))
    scorers, result = _two_judges(store, samples, scripted)
    assert [s.name for s in scorers] == ["judge:rubric5@heuristic", "judge:rubric5@scripted"]
    stored = store.results(result.run_id)
    by = {(r.details["judge"], r.provider, r.model) for r in stored}
    assert by == {("heuristic", "offline", "heuristic-v4"), ("scripted", "scripted", "scripted-1")}
    assert {r.method for r in stored} == {"judge:rubric5"}  # the contract's method string is unchanged
    # The scripted judge got its sampling settings; the offline one answered 4 rows itself.
    assert len(scripted.requests) == 4 and {(r.temperature, r.seed) for r in scripted.requests} == {(0.7, 11)}
    assert all(r.value == 0.75 for r in stored if r.details["judge"] == "scripted")
    assert set(result.summary) == {"judge:rubric5@heuristic", "judge:rubric5@scripted"}
    data = run_to_dict(store, result.run_id)
    first = data["rows"][0]["results"]
    assert {(r["method"], r["provider"], r["judge"]) for r in first} == {
        ("judge:rubric5", "offline", "heuristic"), ("judge:rubric5", "scripted", "scripted")}
    # The export without details reads narrow columns (the judge taken out of the details in SQL): the same
    # rows as the full read with its details left out.
    full = run_to_dict(store, result.run_id, include_details=True)["rows"]
    assert data["rows"] == [{**row, "results": [{k: v for k, v in r.items() if k != "details"} for r in row["results"]]}
                            for row in full]
    header = run_to_csv(store, result.run_id).splitlines()[0]
    assert "judge:rubric5@heuristic/faithfulness" in header and "judge:rubric5@scripted/faithfulness" in header
    configs = store.get_run(result.run_id).settings["judge_configs"]
    assert [c["id"] for c in configs] == ["heuristic", "scripted"] and configs[1]["temperature"] == 0.7
    calls = store.calls(result.run_id)
    assert {(c.scorer, c.provider) for c in calls} == {("judge:rubric5@heuristic", "offline"), ("judge:rubric5@scripted", "scripted")}


def test_each_judge_has_its_own_key_and_rate_limit_and_the_estimate_covers_both(tmp_path, monkeypatch):
    """Two OpenAI-compatible judges on two local fake servers (the real SDK), each server accepting only its
    judge's key: every row is scored by both, so each request presented its own judge's key; the estimate
    lists each judge; the keys never reach the database."""
    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("JUDGE_A_KEY", "key-of-judge-a")
    monkeypatch.setenv("JUDGE_B_KEY", "key-of-judge-b")
    samples = seed_samples()[:2]
    with FakeLLMServer(api_key="key-of-judge-a") as server_a, FakeLLMServer(api_key="key-of-judge-b") as server_b:
        judges = [
            JudgeConfig("a", provider="openai-compatible", model="model-a", base_url=server_a.openai_base_url,
                        api_key_env="JUDGE_A_KEY", rpm=600),
            JudgeConfig("b", provider="openai-compatible", model="model-b", base_url=server_b.openai_base_url,
                        api_key_env="JUDGE_B_KEY"),
        ]
        scorers = judge_scorers(judges, ProviderConfig())
        assert scorers[0].judge_config.rpm == 600 and scorers[1].judge_config.rpm is None
        est = estimate(samples, scorers, provider="offline")
        assert [(r.scorer, r.llm_calls) for r in est.rows] == [("judge:rubric5@a", 2), ("judge:rubric5@b", 2)]
        store = Store(tmp_path / "db.sqlite")
        result = run_rows(samples, scorers, config=ProviderConfig(), store=store)
        seen = ({r.body.get("model") for r in server_a.requests}, {r.body.get("model") for r in server_b.requests})
        statuses = {r.status for r in server_a.requests + server_b.requests}
    assert seen == ({"model-a"}, {"model-b"}) and statuses == {200}
    stored = store.results(result.run_id)
    assert {r.model for r in stored} == {"model-a", "model-b"}
    assert all(r.unscored_reason != "provider_error" for r in stored)
    assert b"key-of-judge" not in (tmp_path / "db.sqlite").read_bytes()  # keys never reach disk


def test_cli_judges_file_and_jury(tmp_path, monkeypatch, capsys):
    from rageval_core import cli

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "judges.yaml").write_text(
        "- {id: five, provider: offline, method: rubric5}\n- {id: two, provider: offline, method: binary}\n", encoding="utf-8")
    data = seed_samples()
    (tmp_path / "d.json").write_text(json.dumps([s.to_dict() for s in data], ensure_ascii=False), encoding="utf-8")
    code = cli.main(["evaluate", "d.json", "--provider", "offline", "--judges", "judges.yaml", "--jury", "mean",
                     "--out", "o.json", "--quiet", "--fail-under", "jury:mean:faithfulness=0.0"])
    assert code == 0
    out = json.loads((tmp_path / "o.json").read_text(encoding="utf-8"))
    methods = {(r["method"], r.get("judge")) for row in out["rows"] for r in row["results"]}
    assert methods == {("judge:rubric5", "five"), ("judge:binary", "two"), ("jury:mean", None)}
    assert "jury:mean" in out["summary"] and "per category, jury:mean" in capsys.readouterr().out
    assert cli.main(["evaluate", "d.json", "--provider", "offline", "--judges", "missing.yaml", "--out", "o.json"]) == 2


def test_saved_configurations_round_trip_and_refuse_keys(tmp_path, monkeypatch):
    from rageval_core.scoring.judges import saved

    monkeypatch.setenv("RAGEVAL_HOME", str(tmp_path))
    assert saved.load_saved() == []
    saved.add(JudgeConfig("a", provider="offline"))
    saved.add(JudgeConfig("b", provider="openai", model="gpt-4o-mini", api_key_env="MY_KEY"))
    saved.add(JudgeConfig("a", provider="offline", method="binary"))  # replaced by id
    assert [(j.id, j.method) for j in saved.load_saved()] == [("b", "rubric5"), ("a", "binary")]
    assert load_judges(saved.saved_path()) == saved.load_saved()  # the --judges FILE format
    assert [j.id for j in saved.import_text("- {id: y, provider: offline}\n")] == ["y"]
    with pytest.raises(JudgeConfigError, match="keys never go"):
        saved.import_text('[{"id": "z", "api_key": "sk-secret"}]')
    saved.remove("a")
    saved.remove("b")
    assert not saved.saved_path().exists()
