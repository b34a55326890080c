"""The runner with a scripted LLM and tiny scorers: storage, summary, errors, cancel, resume, call log."""

import json
import threading
import time

import pytest

from rageval_core.llm.base import Completion, LLMRequest, Message, ProviderError
from rageval_core.scoring.metrics.base import CallEstimate, summarize_traces
from rageval_core.run import RunError, estimate, load_run, make_call_hook
from tests.support.runs import run_rows
from rageval_core.store.runs import RowInfo, Store
from rageval_core.core.types import MetricResult, Sample, Usage
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM


class ValueScorer:
    """One call per row; the scripted answer's ``v`` is the value (None → unscored parse_error)."""

    def __init__(self, name="faithfulness", method="decomposed", metrics=("faithfulness",), task="verify_claims"):
        self.name, self.method, self.metrics, self.task = name, method, tuple(metrics), task

    def score(self, sample, ctx):
        trace = []
        completion = ctx.call(LLMRequest(self.task, (Message("user", f"{self.name} {sample.id} {sample.answer}"),)), trace)
        value = json.loads(completion.text)["v"]
        out = []
        for metric in self.metrics:
            if value is None:
                r = MetricResult(sample.id, metric, self.method, None, unscored_reason="parse_error")
            else:
                r = MetricResult(sample.id, metric, self.method, float(value), reason=f"{metric} ok")
            out.append(summarize_traces(r, trace))
        return out

    def estimate(self, sample):
        return CallEstimate(llm_calls=1, input_tokens=100, output_tokens=20)


class BrokenScorer(ValueScorer):
    def score(self, sample, ctx):
        if sample.id == "2":
            raise KeyError("boom in scorer")
        return super().score(sample, ctx)


def samples(n=3):
    return [Sample(str(i), f"q{i}", (f"c{i}",), f"a{i}", f"g{i}", {"category": "correct" if i % 2 else "partial"}) for i in range(1, n + 1)]


def answer(value_of):
    return lambda req: {"v": value_of(req)}


@pytest.fixture()
def store(tmp_path):
    return Store(tmp_path / "r.sqlite")


def test_run_scores_every_pair_stores_and_summarises(store):
    llm = ScriptedLLM(default=answer(lambda r: 0.5 if "judge" in r.prompt_text else 1.0))
    judge = ValueScorer("judge:rubric5", "judge:rubric5", ("faithfulness", "answer_relevancy"), task="judge")
    seen = []
    result = run_rows(samples(), [ValueScorer(), judge], llm, HashEmbedder(), store=store, concurrency=2, progress=seen.append)
    assert result.status == "done" and result.done_tasks == result.total_tasks == 6
    assert len(result.results) == 9 and len(store.results(result.run_id)) == 9
    assert result.summary["decomposed"]["faithfulness"] == {"mean": 1.0, "scored": 3, "unscored": 0, "unscored_reasons": {}, "reasked": 0, "recovered": 0}
    assert result.summary["judge:rubric5"]["answer_relevancy"]["mean"] == 0.5
    assert result.provider_calls == 6 and result.cache_hits == 0
    assert result.cost["decomposed"].calls == 3 and result.cost["judge:rubric5"].calls == 3
    assert all(r.provider == "scripted" and r.model == "scripted-1" for r in result.results)
    assert seen[-1].done == seen[-1].total == 6 and seen[-1].calls == 6 and seen[0].done == 0
    calls = store.calls(result.run_id)
    assert sorted((c.sample_id, c.scorer) for c in calls) == sorted(
        (s, n) for s in "123" for n in ("faithfulness", "judge:rubric5")
    )
    assert all(c.request_key and c.prompt and c.response for c in calls)
    assert store.get_run(result.run_id).status == "done"


def test_scorer_exception_becomes_unscored_provider_error(store):
    llm = ScriptedLLM(default=answer(lambda r: 1.0))
    result = run_rows(samples(), [BrokenScorer()], llm, HashEmbedder(), store=store)
    assert result.status == "done"
    bad = [r for r in result.results if r.sample_id == "2"]
    assert len(bad) == 1 and bad[0].value is None and bad[0].unscored_reason == "provider_error"
    assert "boom in scorer" in bad[0].reason
    assert result.summary["decomposed"]["faithfulness"]["unscored"] == 1


def test_provider_errors_are_retried_on_resume_and_finished_pairs_are_not(store):
    failing = ScriptedLLM(default=answer(lambda r: 1.0))
    failing.script("verify_claims", {"v": 1.0}, ProviderError("server said 500", kind="server", status=500), {"v": 0.0})
    first = run_rows(samples(), [ValueScorer()], failing, HashEmbedder(), store=store, concurrency=1, workers=1)
    assert first.summary["decomposed"]["faithfulness"]["unscored_reasons"] == {"provider_error": 1}
    healthy = ScriptedLLM(default=answer(lambda r: 0.25))
    second = run_rows(samples(), [ValueScorer()], healthy, HashEmbedder(), store=store, run_id=first.run_id, resume=True)
    assert second.run_id == first.run_id and second.resumed and second.skipped_tasks == 2
    assert len(healthy.requests) == 1 and "faithfulness 2" in healthy.requests[0].prompt_text
    assert {r.sample_id: r.value for r in second.results} == {"1": 1.0, "2": 0.25, "3": 0.0}


def test_cancel_stores_nothing_half_done_and_resume_completes(store):
    started = threading.Event()
    cancel = threading.Event()

    def slow(req):
        started.set()
        time.sleep(0.02)
        return {"v": 1.0}

    llm = ScriptedLLM(default=slow)

    def on_progress(p):
        if p.done >= 2:
            cancel.set()

    rows = samples(8)
    first = run_rows(rows, [ValueScorer()], llm, HashEmbedder(), store=store, concurrency=1, workers=2, progress=on_progress, cancel=cancel)
    assert first.status == "cancelled" and store.get_run(first.run_id).status == "cancelled"
    done_first = {r.sample_id for r in first.results}
    assert 2 <= len(done_first) < 8
    again = ScriptedLLM(default=answer(lambda r: 1.0))
    second = run_rows(rows, [ValueScorer()], again, HashEmbedder(), store=store, run_id=first.run_id, resume=True)
    assert second.status == "done" and len(second.results) == 8
    redone = {r.prompt_text.split()[2] for r in again.requests}
    assert redone.isdisjoint(done_first) and redone | done_first == {str(i) for i in range(1, 9)}


def test_resume_refuses_another_dataset_and_unknown_runs(store):
    llm = ScriptedLLM(default=answer(lambda r: 1.0))
    first = run_rows(samples(), [ValueScorer()], llm, HashEmbedder(), store=store)
    with pytest.raises(RunError, match="different dataset"):
        run_rows(samples(4), [ValueScorer()], llm, HashEmbedder(), store=store, run_id=first.run_id, resume=True)
    with pytest.raises(RunError, match="no run"):
        run_rows(samples(), [ValueScorer()], llm, HashEmbedder(), store=store, run_id="nope", resume=True)


class HookedLLM:
    """Stands in for build_llm's stack: reports each call to ``call_hook`` like the providers do."""

    provider, model = "hooked", "m1"

    def __init__(self, hook):
        self.hook = hook

    def complete(self, request):
        text = json.dumps({"v": 1.0})
        self.hook({"task": request.task, "request_key": request.key(), "prompt": request.prompt_text, "response": text,
                   "usage": Usage(7, 3), "cost_usd": 0.002, "latency_s": 0.1, "cached": False, "error": None})
        return Completion([text], self.provider, self.model, Usage(7, 3), 0.1, False, 0.002)


def test_call_hook_labels_calls_from_the_task_contextvar(store):
    llm = HookedLLM(make_call_hook(store))
    llm.complete(LLMRequest("judge", (Message("user", "outside any run"),)))  # not logged
    result = run_rows(samples(), [ValueScorer(), ValueScorer("judge:x", "judge:x", task="judge")], llm, HashEmbedder(),
                 store=store, log_calls=False, concurrency=3)
    calls = store.calls(result.run_id)
    assert len(calls) == 6 and {c.run_id for c in calls} == {result.run_id}
    for c in calls:
        assert c.sample_id in c.prompt and c.scorer in c.prompt
        assert c.method == ("judge:x" if c.scorer == "judge:x" else "decomposed")
    assert result.cost["judge:x"].cost_usd == pytest.approx(0.006)
    assert load_run(store, result.run_id).provider_calls == 6


def test_model_concurrency_is_bounded(store):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def tracked(req):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.01)
        with lock:
            state["now"] -= 1
        return {"v": 1.0}

    run_rows(samples(12), [ValueScorer(), ValueScorer("x", metrics=("context_recall",))], ScriptedLLM(default=tracked),
        HashEmbedder(), store=store, concurrency=3)
    assert 1 < state["peak"] <= 3


def test_estimate_per_scorer_and_method():
    judge = ValueScorer("judge:rubric5", "judge:rubric5", ("faithfulness", "answer_relevancy"))
    est = estimate(samples(4), [ValueScorer(), ValueScorer("answer_relevancy", metrics=("answer_relevancy",)), judge],
                   price=lambda i, o: i * 1e-6 + o * 2e-6)
    assert est.llm_calls == 12 and est.input_tokens == 1200
    assert est.rows[0].cost_usd == pytest.approx(400e-6 + 80 * 2e-6)
    by = est.by_method()
    assert by["decomposed"].llm_calls == 8 and by["decomposed"].metrics == ("faithfulness", "answer_relevancy")
    assert by["judge:rubric5"].llm_calls == 4
    assert estimate(samples(1), [judge]).cost_usd is None  # no price known → unknown, not 0
    assert estimate(samples(1), [judge], provider="offline", model="heuristic-v4").cost_usd == 0.0


def test_invalid_rows_are_recorded_with_the_run(store):
    result = run_rows(samples(2), [ValueScorer()], ScriptedLLM(default=answer(lambda r: 1.0)), HashEmbedder(), store=store,
                 invalid_rows=[RowInfo("x9", 5, None, False, "answer is missing")])
    assert [(r.sample_id, r.error) for r in result.invalid_rows] == [("x9", "answer is missing")]
    assert result.total_tasks == 2


def test_estimate_prices_from_the_providers_table():
    from rageval_core.llm.pricing import load_prices

    est = estimate(samples(2), [ValueScorer()], provider="openai", model="gpt-4o-mini")
    price = load_prices().lookup("gpt-4o-mini")
    assert price is not None
    # 100 input tokens a row as the scorer says, plus OpenAI's chat framing of each call (counted by o200k_base)
    from rageval_core.core.tokens import CHAT_FRAMING

    assert est.input_tokens == 2 * (100 + CHAT_FRAMING) and est.tokens_by == ("o200k_base",)
    assert est.cost_usd == pytest.approx((est.input_tokens * price.input + 40 * price.output) / 1_000_000)
    assert estimate(samples(2), [ValueScorer()], provider="gemini").cost_usd > 0  # the provider's default model
    assert estimate(samples(2), [ValueScorer()], provider="openai", model="no-such-model").cost_usd is None
    assert estimate(samples(2), [ValueScorer()], provider="openai-compatible", model="qwen").cost_usd == 0.0


def test_versions_record_an_edited_decomposed_template_and_settings_store_its_text(store):
    from rageval_core.scoring.prompts import load_template
    from rageval_core.run import scorer_versions

    shipped = load_template("extract_claims", "ja")
    edited_text = shipped.text + "\n(edited)"
    rows = [Sample("1", "質問ですか？", ("文脈です。",), "答えです。", None)]
    plain = scorer_versions([ValueScorer()], rows)
    assert plain["_templates"]["ja/extract_claims"] == shipped.short_hash and "_edited_templates" not in plain
    assert "ja/synth_qa" not in plain["_templates"]  # not a metric step
    options = {"templates": {"ja/extract_claims": edited_text}}
    edited = scorer_versions([ValueScorer()], rows, options)
    assert edited["_templates"]["ja/extract_claims"] != shipped.short_hash
    assert edited["_edited_templates"] == ["ja/extract_claims"]
    result = run_rows(rows, [ValueScorer()], ScriptedLLM(default=answer(lambda r: 1.0)), HashEmbedder(), store=store, options=options)
    info = store.get_run(result.run_id)
    assert info.versions["_edited_templates"] == ["ja/extract_claims"]
    assert info.settings["options"]["templates"]["ja/extract_claims"] == edited_text


def test_resume_refuses_other_scorers_models_or_prompt_versions(store):
    llm = ScriptedLLM(default=answer(lambda r: 1.0))
    first = run_rows(samples(), [ValueScorer()], llm, HashEmbedder(), store=store)
    with pytest.raises(RunError, match="same metrics and judges"):
        run_rows(samples(), [ValueScorer("x", metrics=("context_recall",))], llm, HashEmbedder(), store=store,
            run_id=first.run_id, resume=True)

    class Other(ScriptedLLM):
        model = "another-model"

    with pytest.raises(RunError, match="same provider and model"):
        run_rows(samples(), [ValueScorer()], Other(default=answer(lambda r: 1.0)), HashEmbedder(), store=store,
            run_id=first.run_id, resume=True)
    edited = {"templates": {"extract_claims": "{question}\n(edited)"}}
    with pytest.raises(RunError, match="other prompt or rubric versions"):
        run_rows(samples(), [ValueScorer()], llm, HashEmbedder(), store=store, run_id=first.run_id, resume=True, options=edited)
    # the same configuration resumes (tuples in describe() survive the JSON round trip)
    again = run_rows(samples(), [ValueScorer()], llm, HashEmbedder(), store=store, run_id=first.run_id, resume=True)
    assert again.resumed and again.skipped_tasks == 3
