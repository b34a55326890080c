"""Two judge versions on the labelled dev rows through the runner, the response cache and a real HTTP client
(rageval_core.session.versus_run against the local fake server)."""

import json
from dataclasses import replace
from pathlib import Path

import pytest

from rageval_core.analysis.trust.run_report import merged_labels
from rageval_core.analysis.trust.splits import DEV, TRAIN
from rageval_core.session.versus_run import Version, dataset_split, judged_rows, run_versus
from rageval_core.data.datasets import load_dataset
from rageval_core.providers.config import ProviderConfig
from rageval_core.scoring import few_shot
from rageval_core.scoring.rubric import load_rubric
from rageval_core.store.runs import Store
from rageval_core.testing.fake_llm import FakeLLMServer
from tests.support.people_judge import judge_like_people

DATA = Path(__file__).resolve().parents[2] / "sample_data" / "trust_labelled.jsonl"


@pytest.fixture(scope="module")
def dataset():
    ds = load_dataset(DATA)
    return ds, merged_labels(ds.samples, {})


def _judge_like_people(ds, labels):
    return judge_like_people(ds.samples, labels)


def test_dev_rows_of_both_languages_without_the_examples(tmp_path, dataset):
    ds, labels = dataset
    split = dataset_split(Store(tmp_path / "s.sqlite"), ds.content_hash, ds.samples, labels)
    assert split.counts() == {"train": 10, "dev": 20, "test": 18}
    rubric = load_rubric("binary", "ja")
    rows, notes = judged_rows(ds.samples, labels, split.assignment, [rubric])
    assert len(rows) == 20 and all(split.assignment[s.id] == DEV for s in rows) and not notes
    assert sum(s.id.endswith("-en") for s in rows) == 10  # the English dev rows are judged too
    # one language's rows only (a recording of that language replays): the others are named in a note
    ja, notes = judged_rows(ds.samples, labels, split.assignment, [rubric], language="ja")
    assert len(ja) == 10 and not any(s.id.endswith("-en") for s in ja)
    assert any("10 dev row(s) in another language" in n for n in notes)
    # a few-shot example taken from dev (not from train) is left out of the rows it would be judged on
    with_dev_example = few_shot.with_examples(rubric, few_shot.choose_examples(ds.samples, {
        c: labels.for_criterion(c) for c in rubric.ids}, rubric, [r.id for r in ja]))
    kept, notes = judged_rows(ds.samples, labels, split.assignment, [with_dev_example])
    assert len(kept) == 18 and any("2 dev row(s) are the rubric's few-shot examples" in n for n in notes)


def test_a_version_judges_each_row_with_the_prompt_of_its_language():
    preset = Version("p", load_rubric("binary", "ja"))
    assert preset.rubrics(["ja", "en"])["en"] == load_rubric("binary", "en")  # an untouched preset: its translation
    edited = Version("e", replace(load_rubric("binary", "ja"), instructions="評価者です。"))
    en = edited.rubrics(["en"])["en"]
    assert en.language == "en" and en.instructions == "評価者です。"  # the edits kept, under the English prompt


def test_two_versions_compared_and_only_changed_requests_sent(tmp_path, dataset):
    ds, labels = dataset
    store = Store(tmp_path / "s.sqlite")
    split = dataset_split(store, ds.content_hash, ds.samples, labels)
    base = load_rubric("binary", "ja")
    train = [r for r, s in split.assignment.items() if s == TRAIN]
    shots = few_shot.choose_examples(ds.samples, {c: labels.for_criterion(c) for c in base.ids}, base, train)
    old, new = Version("v1", base), Version("v2", few_shot.with_examples(base, shots))
    with FakeLLMServer(responder=_judge_like_people(ds, labels)) as server:
        cfg = ProviderConfig(provider="openai-compatible", model="fake", base_url=server.openai_base_url, concurrency=2)
        kwargs = dict(config=cfg, store=store, assignment=split.assignment, dataset_name="trust", dataset_digest=ds.content_hash,
                      iterations=200)
        first = run_versus(ds.samples, labels, old, new, **kwargs)
        sent = server.count("/chat/completions")
        assert sent == 40  # 20 dev rows (10 ja, 10 en) x 2 versions
        assert sum("[Generated answer]" in json.dumps(r.body, ensure_ascii=False) for r in server.requests) == 20  # en rows, en prompt
        rep = first.report
        faith_old, faith_new = rep.find("v1", "faithfulness"), rep.find("v2", "faithfulness")
        assert faith_old.agreement.balanced_accuracy.value == 0.5 and faith_old.tnr.value == 0.0
        assert faith_new.agreement.balanced_accuracy.value == 1.0 and faith_new.agreement.kappa.value == 1.0
        diff = next(d for d in rep.differences if d.criterion == "faithfulness")
        assert diff.n == 20 and diff.differences["balanced_accuracy"].value == 0.5
        assert faith_new.agreement.threshold_source == "calibrated on dev" and rep.calibrated
        assert diff.excludes_zero("tnr")  # every failing row is now caught, on every resample with a fail
        assert first.runs["v2"].provider_calls == 20

        again = run_versus(ds.samples, labels, old, new, **kwargs)
        assert server.count("/chat/completions") == sent  # nothing changed: all from the cache
        assert again.runs["v1"].cache_hits == 20 and again.runs["v2"].provider_calls == 0
        assert again.report.to_dict()["differences"] == rep.to_dict()["differences"]

        edited = Version("v3", new.rubric.with_level("faithfulness", 0, "コンテキストにない情報が一つでもあれば 0"))
        run_versus(ds.samples, labels, new, edited, **kwargs)
        assert server.count("/chat/completions") == sent + 20  # only the edited version's requests went out
    exported = json.loads(json.dumps(first.to_dict(), ensure_ascii=False))
    assert exported["runs"]["v1"]["provider_calls"] == 20 and exported["old"] == "v1"


def test_a_failed_call_leaves_that_row_unscored_and_the_rest_compared(tmp_path, dataset):
    ds, labels = dataset
    store = Store(tmp_path / "s.sqlite")
    split = dataset_split(store, ds.content_hash, ds.samples, labels)
    base = load_rubric("binary", "ja")
    with FakeLLMServer(responder=_judge_like_people(ds, labels)) as server:
        server.fault("status", status=400)
        cfg = ProviderConfig(provider="openai-compatible", model="fake", base_url=server.openai_base_url, concurrency=1,
                             max_retries=0)
        got = run_versus(ds.samples, labels, Version("a", base), Version("b", replace(base, instructions="評価者です。")),
                         config=cfg, store=store, assignment=split.assignment, dataset_name="t", dataset_digest=None,
                         iterations=50)
    a = got.report.find("a", "faithfulness")
    assert a.agreement.unscored_labelled == 1 and a.agreement.n_labelled == 19
    assert next(d for d in got.report.differences if d.criterion == "faithfulness").n == 19
