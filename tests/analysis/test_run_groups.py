"""Side runs kept under their parent run (rageval_core.analysis.run_groups; issue 38 item 3): pickers list the user's
runs newest first, History groups probes under their base run and the Prompts page's runs together by kind."""

from __future__ import annotations

from typing import Any

from rageval_core.store.runs import RunInfo
from rageval_core.analysis import run_groups


def info(run_id: str, created: float, settings: dict[str, Any] | None = None, name: str = "ml_qa_en") -> RunInfo:
    return RunInfo(run_id, created, "done", name, "h", ["faithfulness"], {}, "offline", None, None, settings or {})


# Four evaluations, probes of two of them (one probe of a probe run), a vs-people pair and prompt tests (one tagged,
# one stored before the tag, one step test) — the mix of issue 38's walk, made in this order.
RUNS = [
    info("u1", 1.0),
    info("p1a", 2.0, {"probe": "paraphrase", "base_run": "u1", "probe_seed": 0}, "ml_qa_en [probe: paraphrase]"),
    info("u2", 3.0),
    info("p2a", 4.0, {"probe": "negation", "base_run": "u2"}),
    info("p2b", 5.0, {"probe": "paraphrase", "base_run": "p2a"}),  # a probe of a probe run: still u2's
    info("v1", 6.0, {"versus": {"version": "v2", "split": "dev"}}, "trust_labelled · vs people · v2"),
    info("v2", 6.5, {"versus": {"version": "editor", "split": "dev"}}, "trust_labelled · vs people · editor"),
    info("t1", 7.0, {"prompt_test": "judge"}),
    info("t2", 7.5, {}, "ml_qa_en · prompt test"),  # before the tag
    info("t3", 7.7, {}, "ステップの試行 · extract_claims"),
    info("u3", 8.0),
    info("p9", 8.5, {"probe": "shuffle", "base_run": "gone"}),  # its base run was deleted
    info("u4", 9.0),
]


def test_kinds_and_details() -> None:
    kinds = {i.id: run_groups.side_kind(i) for i in RUNS}
    assert kinds == {"u1": None, "p1a": "probe", "u2": None, "p2a": "probe", "p2b": "probe", "v1": "versus",
                     "v2": "versus", "t1": "prompt_test", "t2": "prompt_test", "t3": "prompt_test", "u3": None,
                     "p9": "probe", "u4": None}
    details = {i.id: run_groups.side_detail(i) for i in RUNS if run_groups.is_side(i)}
    assert details["p1a"] == "paraphrase" and details["v1"] == "v2" and details["t1"] == "judge" and details["t2"] == ""
    assert run_groups.parent_of(RUNS[1]) == "u1" and run_groups.parent_of(RUNS[0]) is None


def test_a_picker_lists_the_users_runs_newest_first() -> None:
    shuffled = RUNS[::2] + RUNS[1::2]
    assert [i.id for i in run_groups.picker_runs(shuffled)] == ["u4", "u3", "u2", "u1"]
    # a side run the session selected (opened from History) stays listed, after the user's runs
    assert [i.id for i in run_groups.picker_runs(RUNS, keep="p2a")] == ["u4", "u3", "u2", "u1", "p2a"]
    assert [i.id for i in run_groups.picker_runs(RUNS, keep="u3")] == ["u4", "u3", "u2", "u1"]


def test_with_side_runs_each_sits_under_its_parent() -> None:
    listed = [i.id for i in run_groups.picker_runs(RUNS, with_side=True)]
    assert listed == ["u4", "u3", "u2", "p2b", "p2a", "u1", "p1a", "p9", "v2", "v1", "t3", "t2", "t1"]
    assert sorted(listed) == sorted(i.id for i in RUNS)  # nothing lost, nothing twice


def test_groups_and_counts() -> None:
    groups = run_groups.group_runs(RUNS)
    assert [(g.run.id if g.run else None, g.kind, [s.id for s in g.side]) for g in groups] == [
        ("u4", None, []), ("u3", None, []), ("u2", None, ["p2b", "p2a"]), ("u1", None, ["p1a"]),
        (None, "probe", ["p9"]), (None, "versus", ["v2", "v1"]), (None, "prompt_test", ["t3", "t2", "t1"])]
    assert run_groups.side_counts(RUNS) == {"u4": 0, "u3": 0, "u2": 2, "u1": 1}


def test_a_sorted_leaderboard_keeps_side_runs_under_their_parent() -> None:
    order = ["p2a", "u1", "t1", "u2", "p1a"]  # a filter left these, sorted by a score
    assert run_groups.grouped_ids(RUNS, order, with_side=False) == ["u1", "u2"]
    assert run_groups.grouped_ids(RUNS, order, with_side=True) == ["u1", "p1a", "u2", "p2a", "t1"]


def test_a_cycle_of_parents_does_not_hang() -> None:
    loop = [info("a", 1.0, {"probe": "x", "base_run": "b"}), info("b", 2.0, {"probe": "y", "base_run": "a"})]
    assert [g.kind for g in run_groups.group_runs(loop)] == ["probe"]
    assert run_groups.user_runs(loop) == []
