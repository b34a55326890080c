"""The narrow copies of results and calls (``light_tables``) the pages read: equal to the full tables after
every kind of write, built for a database made before them, and the pages' frames, per-category tables,
agreement and leaderboard from them equal to what the full results give, also while a run is in progress."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from rageval_core.analysis import compare, leaderboard
from rageval_core.store import light_tables
from rageval_core.views import run_summary
from rageval_core.store.runs import CallEntry, RowInfo, Store
from rageval_core.core.types import DECOMPOSED, MetricResult, Usage
from bench.big_run import clone_run
from tests.analysis.test_report import two_judge_run
from rageval_ui import runs

LIGHT_RESULTS = ", ".join(light_tables.RESULT_COLUMNS)
LIGHT_CALLS = ", ".join(light_tables.CALL_COLUMNS)


def _light_equals_full(store: Store) -> None:
    """Every result and call row has its light copy, column for column, and nothing else is there."""
    conn = store._conn()
    full = conn.execute(f"SELECT {LIGHT_RESULTS}, CASE WHEN instr(details, '\"judge\"') > 0 THEN"
                        " json_extract(details, '$.judge') END FROM results ORDER BY run_id, repeat_index, id").fetchall()
    light = conn.execute(f"SELECT {LIGHT_RESULTS}, judge FROM result_light ORDER BY run_id, repeat_index, id").fetchall()
    assert [tuple(r) for r in light] == [tuple(r) for r in full]
    calls = conn.execute(f"SELECT {LIGHT_CALLS} FROM call_log WHERE run_id IS NOT NULL ORDER BY run_id, id").fetchall()
    light_calls = conn.execute(f"SELECT {LIGHT_CALLS} FROM call_light ORDER BY run_id, id").fetchall()
    assert [tuple(r) for r in light_calls] == [tuple(r) for r in calls]


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, str]:
    """The 12 seed rows with decomposed metrics, two judge configurations (judge ids in details) and a jury."""
    store = Store(tmp_path_factory.mktemp("light") / "db.sqlite")
    _, result = two_judge_run(store)
    return store, result.run_id


def _full_frame(store: Store, run_id: str, categories: dict[str, str | None]) -> pd.DataFrame:
    """The frame as the pages built it before: every result read with its details, sorted by row position."""
    position = {sid: i for i, sid in enumerate(categories)}
    results = sorted(store.results(run_id), key=lambda r: position.get(r.sample_id, len(position)))
    return compare.results_frame(results, categories)


def _view(judged: tuple[Store, str]) -> tuple[Store, runs.RunView]:
    """The judged run as the pages load it."""
    store, run_id = judged
    view = runs.load(run_id, None, store)
    assert view is not None
    return store, view


def test_light_copies_equal_the_full_tables_after_runs_juries_replacements_and_deletes(judged: tuple[Store, str]) -> None:
    store, run_id = judged
    assert store._conn().execute("SELECT COUNT(DISTINCT judge) FROM result_light WHERE run_id = ?", (run_id,)).fetchone()[0] == 2
    _light_equals_full(store)
    copy = clone_run(store, run_id, 2)  # SQL straight into the tables: the triggers copy it
    store.save_task(copy, "1", "faithfulness", [MetricResult("1~0", "faithfulness", DECOMPOSED, 0.25, details={"x": 1})])
    store._write(lambda c: c.execute("UPDATE results SET value = 0.75, details = '{\"judge\": \"z\"}' WHERE id ="
                                     " (SELECT MAX(id) FROM results)"), "edit")
    store.log_call(CallEntry(copy, "1~0", "judge:rubric5", "judge:rubric5", "judge", "k", prompt="p" * 5000,
                             usage=Usage(3, 4), cost_usd=0.5, error="boom"))
    store.log_call(CallEntry(None, None, None, None, "synth", "k"))  # a call outside any run has no copy
    _light_equals_full(store)
    store.delete_run(copy)
    assert store._conn().execute("SELECT COUNT(*) FROM result_light WHERE run_id = ?", (copy,)).fetchone()[0] == 0
    _light_equals_full(store)


def test_the_run_frame_from_sql_equals_the_frame_of_the_full_results(judged: tuple[Store, str]) -> None:
    store, run_id = judged
    rows = store.rows(run_id)
    categories = {r.sample_id: r.category for r in rows}
    got = run_summary.run_frame(store, run_id, categories)
    pd.testing.assert_frame_equal(got, _full_frame(store, run_id, categories))
    assert {"judge:rubric5@heuristic", "judge:rubric5@mirror", "jury:mean"} <= set(got["method"])
    # rows in dataset order: not the order tasks finished in
    assert list(dict.fromkeys(got["sample_id"])) == [r.sample_id for r in rows]
    no_categories = {r.sample_id: None for r in rows}
    pd.testing.assert_frame_equal(run_summary.run_frame(store, run_id, no_categories),
                                  _full_frame(store, run_id, no_categories))


def test_the_pages_frame_is_the_full_frame_with_fewer_columns_and_their_categories_come_from_sql(
    judged: tuple[Store, str]
) -> None:
    store, run_id = judged
    rows = store.rows(run_id)
    categories = {r.sample_id: r.category for r in rows}
    assert run_summary.row_categories(store, run_id) == categories
    assert list(run_summary.row_categories(store, run_id)) == [r.sample_id for r in rows]  # dataset order
    got = run_summary.run_frame(store, run_id, categories, run_summary.PAGE_COLUMNS)
    assert list(got.columns) == list(run_summary.PAGE_COLUMNS)
    pd.testing.assert_frame_equal(got, _full_frame(store, run_id, categories)[list(run_summary.PAGE_COLUMNS)])
    some = run_summary.run_frame(store, run_id, categories, ["latency_s", "value", "calls", "model"])  # any subset, in order
    assert list(some.columns) == ["sample_id", "metric", "method", "value", "model", "calls", "latency_s"]
    pd.testing.assert_frame_equal(some, _full_frame(store, run_id, categories)[list(some.columns)])
    view = runs.load(run_id, None, store)
    assert view is not None and list(view.frame.columns) == list(run_summary.PAGE_COLUMNS)
    assert view.categories != categories  # the sample file's labels ("✅ 正確な回答"), not the stored categories
    pd.testing.assert_frame_equal(view.frame, _full_frame(store, run_id, view.categories)[list(run_summary.PAGE_COLUMNS)])
    empty = clone_run(store, run_id, 1)
    store._write(lambda c: c.execute("DELETE FROM results WHERE run_id = ?", (empty,)), "empty")
    assert list(run_summary.run_frame(store, empty, {}, run_summary.PAGE_COLUMNS).columns) == list(got.columns)
    store.delete_run(empty)


def test_the_pages_tables_from_the_summary_equal_those_of_the_full_results(
    judged: tuple[Store, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    store, run_id = judged
    view = runs.load(run_id, None, store)
    assert view is not None
    full = _full_frame(store, run_id, view.categories)
    for method in compare.methods_in(full):
        expected = compare.category_table(full, method)
        expected = expected.reindex([c for c in view.category_order() if c in expected.index])
        pd.testing.assert_frame_equal(view.category_table(method), expected)
        if method != DECOMPOSED and not method.startswith("jury:"):
            pd.testing.assert_frame_equal(compare.agreement(view.frame, DECOMPOSED, method),
                                          compare.agreement(full, DECOMPOSED, method))
            for criterion in compare.shared_criteria(full, DECOMPOSED, method):
                side = compare.category_comparison(full, criterion, [DECOMPOSED, method])
                side = side.reindex([c for c in view.category_order() if c in side.index])
                pd.testing.assert_frame_equal(runs.category_comparison(view, criterion, method), side)
    assert [(r.sample_id, r.metric, r.method, r.value) for r in view.results] == \
        [(r.sample_id, r.metric, r.method, r.value) for r in sorted(
            store.results(run_id), key=lambda r: list(view.categories).index(r.sample_id))]
    board = leaderboard.by_run(leaderboard.leader_rows(store, [view.info]))[run_id]
    for method in compare.methods_in(full):
        for metric, mean in full[full["method"] == method].groupby("metric")["value"].mean().items():
            assert board.means[f"{method}/{metric}"] == pytest.approx(mean)
    assert board.scored == int(full["value"].notna().sum()) and board.unscored == int(full["value"].isna().sum())


def test_a_run_in_progress_shows_each_new_result(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    rid = store.create_run(scorers=["faithfulness"], rows=[RowInfo(str(i), i, "c" if i < 2 else "d") for i in range(3)])
    store.save_task(rid, "0", "faithfulness", [MetricResult("0", "faithfulness", DECOMPOSED, 0.5)])
    first = runs.load(rid, None, store)
    assert first is not None and first.sample_ids() == ["0"]
    assert first.category_table(DECOMPOSED).loc["c", "faithfulness"] == 0.5
    store.save_task(rid, "2", "faithfulness", [MetricResult("2", "faithfulness", DECOMPOSED, None, unscored_reason="x")])
    store.save_task(rid, "1", "faithfulness", [MetricResult("1", "faithfulness", DECOMPOSED, 1.0)])
    later = runs.load(rid, None, store)
    assert later is not None and later.sample_ids() == ["0", "1", "2"]  # dataset order, not the order written
    table = later.category_table(DECOMPOSED)
    assert table.loc["c", "faithfulness"] == 0.75 and pd.isna(table.loc["d", "faithfulness"])
    assert [r.sample_id for r in later.results] == ["0", "1", "2"]
    store.save_task(rid, "1", "faithfulness", [MetricResult("1", "faithfulness", DECOMPOSED, 0.0)])  # a task redone
    assert runs.load(rid, None, store).category_table(DECOMPOSED).loc["c", "faithfulness"] == 0.25
    _light_equals_full(store)


def _drop_light(path: Path) -> None:
    """The database as a version before the light tables left it: no copies, no triggers."""
    conn = sqlite3.connect(path)
    for kind, name in conn.execute("SELECT type, name FROM sqlite_master WHERE name LIKE '%_light%'").fetchall():
        if kind in ("table", "trigger", "view"):
            conn.execute(f"DROP {kind.upper()} IF EXISTS {name}")
    conn.execute("DROP INDEX IF EXISTS results_means")  # the views' index (light_tables.to_views)
    conn.execute("PRAGMA user_version = 0")  # a version before the light tables had no schema version either
    conn.commit()
    conn.close()


def test_a_database_from_before_the_light_tables_is_migrated_on_open(judged: tuple[Store, str], tmp_path: Path) -> None:
    store, run_id = judged
    path = tmp_path / "old.sqlite"
    source = sqlite3.connect(store.path)
    source.execute("VACUUM INTO ?", (str(path),))
    source.close()
    _drop_light(path)
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE name LIKE '%light%'").fetchone()[0] == 0
    old_results = conn.execute("SELECT COUNT(*) FROM results").fetchone()[0]
    conn.close()
    migrated = Store(path)
    assert migrated._conn().execute("SELECT COUNT(*) FROM result_light").fetchone()[0] == old_results > 0
    _light_equals_full(migrated)
    categories = {r.sample_id: r.category for r in migrated.rows(run_id)}
    pd.testing.assert_frame_equal(run_summary.run_frame(migrated, run_id, categories),
                                  _full_frame(migrated, run_id, categories))
    migrated.save_task(run_id, "1", "faithfulness", [MetricResult("1", "faithfulness", DECOMPOSED, 0.0)])
    _light_equals_full(migrated)  # the triggers came with the migration
    Store(path)  # opening again changes nothing
    _light_equals_full(migrated)


def test_a_database_with_the_copies_but_not_the_means_index_gets_the_index_only(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    rid = store.create_run(scorers=["faithfulness"], rows=[RowInfo("1", 0)])
    store.save_task(rid, "1", "faithfulness", [MetricResult("1", "faithfulness", DECOMPOSED, 0.5)])
    store._conn().execute("DROP INDEX results_means")  # the copies are views now (light_tables.to_views)
    store._conn().execute("PRAGMA user_version = 0")  # as the version before the index left it: no schema version
    again = Store(tmp_path / "db.sqlite")
    names = {r[0] for r in again._conn().execute("SELECT name FROM sqlite_master")}
    assert "results_means" in names
    assert again._conn().execute("SELECT COUNT(*) FROM result_light").fetchone()[0] == 1  # not copied twice
    _light_equals_full(again)


def test_the_frame_is_built_without_garbage_collection_and_collection_comes_back_after(
    judged: tuple[Store, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    store, run_id = judged
    seen: list[bool] = []
    real = run_summary._run_frame

    def spy(*args: object) -> pd.DataFrame:
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(run_summary, "_run_frame", spy)
    assert gc.isenabled()
    assert not run_summary.run_frame(store, run_id, {}).empty
    assert seen == [False] and gc.isenabled()
    monkeypatch.setattr(run_summary, "_run_frame", lambda *a: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        run_summary.run_frame(store, run_id, {})
    assert gc.isenabled()  # back on after a failure too
    gc.disable()
    try:
        monkeypatch.setattr(run_summary, "_run_frame", spy)
        run_summary.run_frame(store, run_id, {})
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_a_filter_narrows_a_run_once_while_it_stays_and_a_label_filter_every_time(
    judged: tuple[Store, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rageval_core.analysis.row_filter import RowFilter
    from rageval_ui import filters

    store, view = _view(judged)
    run_id = view.run_id
    calls: list[int] = []
    real = filters.filter_rows
    monkeypatch.setattr(filters, "filter_rows", lambda *a, **k: calls.append(1) or real(*a, **k))
    flt = RowFilter(categories=(view.category_order()[0],))
    first, total = filters.apply(view, flt, None, store)
    again, _ = filters.apply(runs.load(run_id, None, store), flt, None, store)  # the next click, a new view
    assert len(calls) == 1 and total == len(view.sample_ids())
    pd.testing.assert_frame_equal(first.frame, again.frame)
    assert first.frame is not again.frame  # each page gets its own copy
    expected = set(real(view.frame, flt, order=view.sample_ids()))
    assert set(first.frame["sample_id"]) == expected and 0 < len(expected) < total
    filters.apply(view, RowFilter(categories=(view.category_order()[1],)), None, store)
    assert len(calls) == 2  # another filter: narrowed again
    by_method, _ = filters.apply(view, RowFilter(methods=("jury:mean",)), None, store)
    assert set(by_method.frame["method"]) == {"jury:mean"}
    labelled = RowFilter(labels="labelled")
    filters.apply(view, labelled, None, store)
    filters.apply(view, labelled, None, store)
    assert len(calls) == 5  # labels change without the run changing: never kept


def test_the_pages_bars_scatter_and_agreement_from_the_kept_pivot_equal_those_built_from_the_frame(
    judged: tuple[Store, str]
) -> None:
    _, view = _view(judged)
    judge = "judge:rubric5@heuristic"
    table = view.wide()
    pd.testing.assert_frame_equal(table, compare.wide(view.frame))
    pd.testing.assert_frame_equal(compare.agreement(view.frame, DECOMPOSED, judge, table=table),
                                  compare.agreement(view.frame, DECOMPOSED, judge))
    pd.testing.assert_frame_equal(view.side_by_side(judge), compare.side_by_side(view.frame, judge))
    for method in view.methods():  # the bars' cells are the kept per-category tables
        pd.testing.assert_frame_equal(view.category_table(method).sort_index(),
                                      compare.category_table(view.frame, method).sort_index())


def test_the_judges_cost_table_from_the_narrow_call_log_equals_the_one_from_the_full_log(judged: tuple[Store, str]) -> None:
    from rageval_core.analysis.judge_agreement import cost_per_judge

    store, source = judged
    run_id = clone_run(store, source, 1)
    store.log_call(CallEntry(run_id, "1~0", "judge:rubric5", "judge:rubric5", "judge", "k", prompt="p" * 5000,
                             usage=Usage(3, 4), cost_usd=0.5, latency_s=0.25, cached=True))
    store.log_call(CallEntry(run_id, "1~0", "faithfulness", None, "extract", "k", usage=Usage(5, 6), cost_usd=0.125,
                             latency_s=0.5, error="boom"))
    store.log_call(CallEntry(run_id, "2~0", "judge:rubric5", "judge:rubric5", "judge", "k", usage=Usage(7, 8),
                             cost_usd=0.25, latency_s=1.0))
    light = list(run_summary.light_calls(store, run_id))
    full = list(store.iter_calls(run_id))
    assert len(light) == len(full) > 0 and "prompt" not in light[0]
    n = len(store.rows(run_id))
    table = cost_per_judge(light, n)
    pd.testing.assert_frame_equal(table, cost_per_judge(full, n))
    assert len(table) >= 2 and table["calls"].sum() + table["cached_calls"].sum() + table["errors"].sum() == len(full)
    assert table["cached_calls"].sum() == 1 and table["errors"].sum() == 1 and table["cost_usd"].sum() >= 0.25
    store.delete_run(run_id)
