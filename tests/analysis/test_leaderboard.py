"""History's leaderboard: per-run means per method (judges and jury apart), unscored share, calls, cost, names."""

from __future__ import annotations

import pytest

from rageval_core.scoring.judges.jury_run import add_jury
from rageval_core.analysis.leaderboard import filter_sort, leader_rows, leaderboard_frame
from rageval_core.store.runs import CallEntry, Store
from rageval_core.core.types import MetricResult, Usage


def _run(store, dataset, values, judge=None, method="judge:rubric5"):
    rid = store.create_run(scorers=[method], dataset_name=dataset, provider="offline", model="heuristic-v4")
    for i, v in enumerate(values):
        r = MetricResult(str(i), "faithfulness", method, v, None if v is not None else "parse_error",
                         details={"judge": judge} if judge else {})
        store.save_task(rid, str(i), method, [r])
    store.set_status(rid, "done")
    return rid


def test_leaderboard_means_unscored_share_calls_and_cost(tmp_path):
    store = Store(tmp_path / "db.sqlite")
    a = _run(store, "ja", [0.5, 1.0, None, 0.0])
    b = _run(store, "en", [1.0, 1.0])
    store.log_call(CallEntry(a, "0", "judge:rubric5", "judge:rubric5", "judge", "k", usage=Usage(10, 2), cost_usd=0.25))
    store.log_call(CallEntry(a, "1", "judge:rubric5", "judge:rubric5", "judge", "k2", cached=True, cost_usd=0.0))
    store.label_run(a, name="baseline", note="first try")
    frame = leaderboard_frame(leader_rows(store)).set_index("run")
    assert frame.loc[a, "judge:rubric5/faithfulness"] == pytest.approx(0.5)  # (0.5 + 1 + 0) / 3 scored
    assert frame.loc[a, "unscored share"] == pytest.approx(0.25)
    assert (frame.loc[a, "calls"], frame.loc[a, "cost ($)"]) == (1, 0.25)  # the cache hit is no provider call
    assert (frame.loc[a, "name"], frame.loc[a, "note"]) == ("baseline", "first try")
    assert frame.loc[b, "judge:rubric5/faithfulness"] == 1.0 and frame.loc[b, "unscored share"] == 0.0
    full = leaderboard_frame(leader_rows(store))
    assert filter_sort(full, text="BASE")["run"].tolist() == [a]
    assert filter_sort(full, dataset="en")["run"].tolist() == [b]
    assert filter_sort(full, sort_by="judge:rubric5/faithfulness", descending=False)["run"].tolist() == [a, b]
    store.label_run(a, name="")
    assert store.get_run(a).name is None


def test_two_judges_and_a_jury_are_columns_of_their_own(tmp_path):
    from tests.support.scripted_llm import ScriptedLLM
    from tests.scoring.test_judge import scores_for, seed_samples
    from tests.scoring.test_judges import _two_judges

    store = Store(tmp_path / "db.sqlite")
    _s, result = _two_judges(store, seed_samples()[:3], ScriptedLLM(default=lambda r: scores_for(r, 5)))
    add_jury(store, result.run_id, "median")
    row = leaderboard_frame(leader_rows(store)).iloc[0]
    assert row["judge:rubric5@scripted/faithfulness"] == 1.0
    assert "jury:median/faithfulness" in row.index and "judge:rubric5@heuristic/faithfulness" in row.index
    assert row["provider/model"] == "offline/heuristic-v4, scripted/scripted-1"
