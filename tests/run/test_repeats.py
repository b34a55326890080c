"""Run repeats: requests per repeat, the cache bypass, storage per repeat, the store migration, resume."""

import json
import sqlite3

import pytest

from rageval_core.analysis.export import run_to_dict
from rageval_core.llm.base import LLMRequest, Message
from rageval_core.llm.transport.cache import CachedLLM, ResponseCache
from rageval_core.scoring.metrics.base import CallEstimate, summarize_traces
from rageval_core.run.repeats import SEED_STRIDE, repeat_note, repeat_request
from rageval_core.run import RunError, load_run
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.core.types import MetricResult, Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM


class SeedScorer:
    """One call per row; the scripted answer's ``v`` is the value."""

    name = "faithfulness"
    method = "decomposed"
    metrics = ("faithfulness",)

    def score(self, sample, ctx):
        trace = []
        completion = ctx.call(LLMRequest("verify_claims", (Message("user", f"row {sample.id}"),), seed=None), trace)
        return [summarize_traces(MetricResult(sample.id, "faithfulness", self.method, json.loads(completion.text)["v"]), trace)]

    def estimate(self, sample):
        return CallEstimate(llm_calls=1)


ROWS = [Sample("1", "q1", ("c1",), "a1"), Sample("2", "q2", ("c2",), "a2")]
# Row 1 wavers across the threshold (0.8 / 0.3 / 0.9); row 2 is steady.
BY_SEED = {"1": {None: 0.8, SEED_STRIDE: 0.3, 2 * SEED_STRIDE: 0.9}, "2": {None: 0.2, SEED_STRIDE: 0.2, 2 * SEED_STRIDE: 0.2}}


def by_seed(req):
    row = req.messages[0].content.split()[-1]
    return {"v": BY_SEED[row][req.seed]}


@pytest.fixture()
def store(tmp_path):
    return Store(tmp_path / "r.sqlite")


def test_repeat_request_varies_the_seed_and_bypasses_the_cache_from_repeat_one():
    req = LLMRequest("judge", (Message("user", "x"),))
    assert repeat_request(req, 0) is req  # repeat 0 is the ordinary request (shares a plain run's cache)
    r2 = repeat_request(req, 2)
    assert (r2.seed, r2.bypass_cache, r2.temperature) == (2 * SEED_STRIDE, True, 0.0)
    assert r2.key() != req.key()
    judge_repeat = repeat_request(LLMRequest("judge", (Message("user", "x"),), seed=1), 1)
    assert judge_repeat.seed == SEED_STRIDE + 1  # a judge's own repeat seeds never collide with a run repeat's
    warm = repeat_request(req, 0, temperature=0.7)
    assert (warm.temperature, warm.seed, warm.bypass_cache) == (0.7, None, False)


def test_bypass_cache_neither_reads_nor_stores(tmp_path):
    scripted = ScriptedLLM(default=lambda req: {"v": 1})
    cached = CachedLLM(scripted, ResponseCache(tmp_path / "c.sqlite"))
    req = LLMRequest("judge", (Message("user", "x"),), seed=SEED_STRIDE)
    assert not cached.complete(req).cached
    assert cached.complete(req).cached  # a seeded request is cacheable: the second is a hit ...
    bypass = LLMRequest("judge", (Message("user", "x"),), seed=SEED_STRIDE, bypass_cache=True)
    assert bypass.key() == req.key()
    assert not cached.complete(bypass).cached  # ... unless it bypasses the cache on purpose
    other = LLMRequest("judge", (Message("user", "y"),), seed=SEED_STRIDE, bypass_cache=True)
    cached.complete(other)
    assert len(scripted.requests) == 3 and cached.cache.count() == 1  # and a bypassing answer is never stored


def test_run_with_repeats_stores_each_repeat_and_keeps_repeat_zero_as_the_run(store):
    llm = ScriptedLLM(default=by_seed)
    done = run_rows(ROWS, [SeedScorer()], llm, HashEmbedder(), store=store, repeats=3)
    assert done.repeats == 3 and done.total_tasks == 6 and done.done_tasks == 6
    seeds = [r.seed for r in llm.requests if r.messages[0].content == "row 1"]
    assert len(seeds) == 3 and set(seeds) == {None, SEED_STRIDE, 2 * SEED_STRIDE}
    by_repeat = store.results_by_repeat(done.run_id)
    assert sorted(by_repeat) == [0, 1, 2]
    assert {r.sample_id: r.value for r in by_repeat[1]} == {"1": 0.3, "2": 0.2}
    # Repeat 0 is what every existing query and export reads: the same as a run without repeats.
    plain = run_rows(ROWS, [SeedScorer()], ScriptedLLM(default=by_seed), HashEmbedder(), store=store)
    assert {r.sample_id: r.value for r in store.results(done.run_id)} == {r.sample_id: r.value for r in store.results(plain.run_id)}
    exported = run_to_dict(store, done.run_id)
    assert [[x["value"] for x in row["results"]] for row in exported["rows"]] == [[0.8], [0.2]]
    assert store.find_run(done.run_id).settings["repeats"] == 3
    assert load_run(store, done.run_id).done_tasks == 6


def test_repeats_go_past_the_response_cache_but_repeat_zero_does_not(store, tmp_path):
    scripted = ScriptedLLM(default=by_seed)
    llm = CachedLLM(scripted, ResponseCache(store.path))
    run_rows(ROWS, [SeedScorer()], llm, HashEmbedder(), store=store, repeats=2)
    assert len(scripted.requests) == 4
    again = run_rows(ROWS, [SeedScorer()], llm, HashEmbedder(), store=store, repeats=2)
    assert len(scripted.requests) == 6  # repeat 0 came from the cache, repeat 1 asked the provider again
    assert {r.sample_id: r.value for r in store.results(again.run_id, repeat=1)} == {"1": 0.3, "2": 0.2}


def test_resume_keeps_the_runs_repeats(store):
    first = run_rows(ROWS, [SeedScorer()], ScriptedLLM(default=by_seed), HashEmbedder(), store=store, repeats=2)
    llm = ScriptedLLM(default=by_seed)
    resumed = run_rows(ROWS, [SeedScorer()], llm, HashEmbedder(), store=store, run_id=first.run_id, resume=True)
    assert resumed.repeats == 2 and resumed.skipped_tasks == 4 and llm.requests == []
    with pytest.raises(RunError, match="2 repeat"):
        run_rows(ROWS, [SeedScorer()], llm, HashEmbedder(), store=store, run_id=first.run_id, resume=True, repeats=3)
    with pytest.raises(RunError):
        run_rows(ROWS, [SeedScorer()], llm, HashEmbedder(), store=store, repeats=0)


def test_a_database_from_before_repeats_is_migrated_in_place(tmp_path):
    path = tmp_path / "old.sqlite"
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE results (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, sample_id TEXT NOT NULL,
            scorer TEXT NOT NULL, metric TEXT NOT NULL, method TEXT NOT NULL, value REAL, unscored_reason TEXT,
            reason TEXT, raw_score REAL, details TEXT NOT NULL, provider TEXT, model TEXT,
            calls INTEGER NOT NULL DEFAULT 0, cached_calls INTEGER NOT NULL DEFAULT 0,
            input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
            cached_input_tokens INTEGER NOT NULL DEFAULT 0, cost_usd REAL NOT NULL DEFAULT 0,
            latency_s REAL NOT NULL DEFAULT 0, created_at REAL NOT NULL);
        INSERT INTO results (run_id, sample_id, scorer, metric, method, value, details, created_at)
            VALUES ('old-run', '1', 'faithfulness', 'faithfulness', 'decomposed', 0.75, '{}', 0);
        """
    )
    conn.commit()
    conn.close()
    store = Store(path)
    assert [(r.sample_id, r.value) for r in store.results("old-run")] == [("1", 0.75)]
    assert store.finished_tasks("old-run") == {("1", "faithfulness")}
    assert list(store.results_by_repeat("old-run")) == [0]
    Store(path)  # opening it again is a no-op
    cols = [r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(results)")]
    assert cols.count("repeat_index") == 1


@pytest.mark.parametrize("provider, words", [("offline", "0 by construction"), ("replay", "replay_miss"), ("openai", "bypass")])
def test_repeat_note_says_what_repeats_mean_per_provider(provider, words):
    assert words in repeat_note(provider)
