"""AppTest: the Dataset page's mapping step (a file with names the loader does not know, mapped, previewed as it will
be read, then used), other tools' files loading without a map, and downloads in ragas's and DeepEval's names."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.support.apptest import assert_ok, button, metric, plain, start_app

EXTERNAL = Path(__file__).resolve().parents[1] / "data" / "external"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    return start_app(monkeypatch, tmp_path / "home")


def _mine() -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["prompt", "docs", "reply", "gold"])
    writer.writerow(["What is overfitting?", "Overfitting fits noise.\n\nRegularisation helps.", "It fits noise.", "Noise is learnt."])
    writer.writerow(["過学習とは？", "訓練データへの過度な適合。", "過度な適合です。", "過度な適合。"])
    return out.getvalue().encode("utf-8")


def test_a_file_with_unknown_names_is_mapped_previewed_and_used(app: AppTest) -> None:
    app.file_uploader[0].upload("mine.csv", _mine(), "text/csv")
    app.run()
    assert_ok(app)
    assert metric(app, "Valid rows") == "0"
    expander = next(e for e in app.expander if plain(e.label) == "Map columns of mine.csv")
    assert "Read this way: 0 of 0 rows" in " ".join(c.value for c in expander.caption)
    for field, column in (("question", "prompt"), ("contexts", "docs"), ("answer", "reply"), ("ground_truth", "gold")):
        app.selectbox(key=f"dataset.map.{field}").set_value(column)
    app.selectbox(key="dataset.map.sep").set_value("blank")
    app.run()
    assert_ok(app)
    expander = next(e for e in app.expander if plain(e.label) == "Map columns of mine.csv")
    assert "Read this way: 2 of 2 rows, 0 errors, 0 warnings." in [c.value for c in expander.caption]
    preview = expander.dataframe[0].value
    assert list(preview["question"]) == ["What is overfitting?", "過学習とは？"]
    assert preview.loc[0, "contexts"] == "2: Overfitting fits noise. ‖ Regularisation helps."
    assert metric(app, "Valid rows") == "0"  # nothing changes until the map is used
    button(app, "Use these columns").click().run()
    assert_ok(app)
    assert metric(app, "Valid rows") == "2" and metric(app, "Detected language") in ("English (en)", "Japanese (ja)")
    ws = app.session_state["dataset"]
    assert ws.samples[0].contexts == ("Overfitting fits noise.", "Regularisation helps.")
    assert ws.samples[1].ground_truth == "過度な適合。" and "question=prompt" in ws.source


def test_a_ragas_results_csv_loads_without_a_map_and_keeps_ragas_scores(app: AppTest) -> None:
    app.file_uploader[0].upload("ragas_results.csv", (EXTERNAL / "ragas_results.csv").read_bytes(), "text/csv")
    app.run()
    assert_ok(app)
    assert metric(app, "Valid rows") == "9"
    ws = app.session_state["dataset"]
    assert [len(s.contexts) for s in ws.samples] == [2] * 8 + [3]
    assert ws.samples[0].external_scores["ragas:faithfulness"] == 1.0
    table = app.data_editor[0].value  # the editor keeps them as labelled columns, so an edit does not drop them
    assert "ragas:faithfulness" in table.columns


def test_downloads_follow_the_chosen_names_and_a_deepeval_csv_that_cannot_hold_a_row_says_so(app: AppTest) -> None:
    app.file_uploader[0].upload("goldens.json", (EXTERNAL / "deepeval_goldens.json").read_bytes(), "application/json")
    app.run()
    app.selectbox(key="dataset.naming").set_value("ragas").run()
    assert_ok(app)
    from rageval_ui import data

    ws = app.session_state["dataset"]
    first = json.loads(data.download_bytes(ws, "jsonl", "ragas").splitlines()[0])
    assert first["user_input"] == ws.samples[0].question and first["retrieved_contexts"] == list(ws.samples[0].contexts)
    app.selectbox(key="dataset.naming").set_value("deepeval").run()
    assert_ok(app)
    assert any("Cannot write this as deepeval" in w.value and "row 9" in w.value for w in app.warning)
