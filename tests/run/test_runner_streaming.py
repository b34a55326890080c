"""Streaming: what the runner keeps in memory does not grow with the dataset, and large estimates are scaled."""

import weakref

from rageval_core.scoring.metrics.base import CallEstimate
from rageval_core.run import estimate
from tests.support.runs import run_rows
from rageval_core.store.runs import Store
from rageval_core.core.types import MetricResult, Sample
from tests.support.scripted_llm import HashEmbedder, ScriptedLLM


class MemoScorer:
    """Memoises one value per row (as claim extraction does) and records the memo entries alive at each task."""

    method = "decomposed"

    def __init__(self, name: str, seen: list[weakref.ref], alive: list[int]) -> None:
        self.name, self.metrics = name, (name,)
        self._seen, self._alive = seen, alive

    def score(self, sample, ctx):
        ctx.memo.get_or_compute(("claims", sample.id), lambda: ["x" * 1000])
        if not any(r() is ctx.memo for r in self._seen):
            self._seen.append(weakref.ref(ctx.memo))
        self._alive.append(sum(len(m._entries) for m in (r() for r in self._seen) if m is not None))
        return [MetricResult(sample.id, self.name, self.method, 1.0)]

    def estimate(self, sample):
        return CallEstimate(llm_calls=1, input_tokens=len(sample.answer), output_tokens=10)


def _samples(n):
    return [Sample(str(i), f"q{i}", ("c",), "a" * (i % 7 + 1)) for i in range(n)]


def test_memo_entries_alive_stay_bounded_however_many_rows(tmp_path):
    seen, alive = [], []
    scorers = [MemoScorer("faithfulness", seen, alive), MemoScorer("answer_correctness", seen, alive)]
    result = run_rows(_samples(120), scorers, ScriptedLLM(), HashEmbedder(), store=Store(tmp_path / "r.sqlite"),
                 concurrency=2, workers=4)
    assert result.done_tasks == 240 and result.summary["decomposed"]["faithfulness"]["scored"] == 120
    assert max(alive) <= 2 * 4 + 2  # one memo per row in the task window, not one entry per row of the run
    assert "results" not in result.__dict__  # results are read from the store only when asked for
    assert len(result.results) == 240


def test_a_large_estimate_is_scaled_up_from_evenly_spaced_rows():
    rows = _samples(1000)
    scorer = MemoScorer("faithfulness", [], [])
    full = estimate(rows, [scorer], max_rows=None)
    scaled = estimate(rows, [scorer], max_rows=100)
    assert full.from_rows is None and scaled.from_rows == 100
    assert scaled.llm_calls == full.llm_calls == 1000
    spaced = estimate(rows[::10], [scorer], max_rows=None)
    assert scaled.input_tokens == spaced.input_tokens * 10
