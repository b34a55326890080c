"""Compare's charts are Vega-Lite specs built as dicts (no Altair objects, for speed): they pass the Vega-Lite
schema Altair ships, read their data from one named dataset each, and every scatter panel shows its criterion's
rows only."""

from __future__ import annotations

import altair as alt
import jsonschema
import pandas as pd
import pytest
from altair.utils import schemapi

from rageval_core.analysis.compare import results_frame
from rageval_core.core.types import MetricResult
from rageval_ui import charts, runs

POINTS = pd.DataFrame({"sample_id": ["1", "2", "1"], "category": ["a", None, "a"],
                       "criterion": ["faithfulness", "faithfulness", "answer_relevancy"],
                       "decomposed": [0.2, 0.9, 0.4], "judge": [0.25, 1.0, 0.5], "rows": [1, 3, 1]})
ROWS = pd.DataFrame({"sample_id": ["1", "1", "2"], "judge": ["x", "y", "x"], "value": [0.1, 0.2, 0.3]})


def _json(spec: charts.Spec) -> dict:
    """The spec as the browser gets it: each dataset's frame as rows."""
    return {**spec, "datasets": {k: v.to_dict("records") for k, v in spec["datasets"].items()}}


def _specs() -> list[charts.Spec]:
    return [charts.agreement_scatter(POINTS, [("faithfulness", "Faithfulness"), ("answer_relevancy", "Answer relevancy")]),
            charts.judge_rows(ROWS, ["1", "2"])]


@pytest.mark.parametrize("index", range(2))
def test_the_chart_specs_pass_the_vega_lite_schema(index: int) -> None:
    spec = _json(_specs()[index])
    assert spec["$schema"] == alt.SCHEMA_URL
    schemapi.validate_jsonschema(spec, alt.vegalite.v6.schema.core.load_schema())  # raises on a rejected spec
    broken = {**spec, "mark" if "mark" in spec else "columns": "not a mark"}
    with pytest.raises(jsonschema.ValidationError):
        schemapi.validate_jsonschema(broken, alt.vegalite.v6.schema.core.load_schema())


def test_the_scatter_sends_each_row_once_and_each_panel_filters_its_criterion() -> None:
    spec = charts.agreement_scatter(POINTS, [("faithfulness", "Faithfulness"), ("answer_relevancy", "Answer relevancy")])
    assert list(spec["datasets"]) == ["points"]
    sent = spec["datasets"]["points"]
    assert len(sent) == 3 and list(sent["category"]) == ["a", "(none)", "a"]  # a missing category is named
    panels = spec["concat"]
    assert [p["title"] for p in panels] == ["Faithfulness", "Answer relevancy"]
    for panel, criterion in zip(panels, ["faithfulness", "answer_relevancy"]):
        diagonal, dots = panel["layer"]
        assert diagonal["data"]["values"] == [{"decomposed": 0.0, "judge": 0.0}, {"decomposed": 1.0, "judge": 1.0}]
        assert dots["data"] == {"name": "points"}
        assert dots["transform"] == [{"filter": {"field": "criterion", "equal": criterion}}]
        assert dots["encoding"]["color"]["scale"]["domain"] == ["(none)", "a"]  # every panel, the same colours
    assert POINTS["category"].isna().sum() == 1  # the caller's frame is left as it was


def test_judge_rows_keep_their_order_and_size() -> None:
    rows = charts.judge_rows(ROWS, ["2", "1"])
    assert rows["encoding"]["y"]["sort"] == ["2", "1"] and rows["height"] == 120
    assert rows["datasets"]["rows"].equals(ROWS)


def test_drawing_leaves_the_spec_to_be_drawn_again(monkeypatch: pytest.MonkeyPatch) -> None:
    drawn: list[dict] = []

    def fake(spec: dict) -> None:  # what Streamlit does to the top level: takes the datasets out
        drawn.append(spec)
        del spec["datasets"]

    monkeypatch.setattr(charts.st, "vega_lite_chart", fake)
    spec = charts.judge_rows(ROWS, ["1", "2"])
    charts.draw(spec)
    charts.draw(spec)
    assert len(drawn) == 2 and "rows" in spec["datasets"]


def test_the_scatter_draws_rows_at_the_same_point_as_one_dot_that_counts_them() -> None:
    """Hand-computed: rows 1 and 3 (category a) both score faithfulness 1.0 / 1.0, row 2 the same values in
    category b; answer relevancy differs on every row; row 4 has no judge value and is not drawn."""
    J = "judge:rubric5"
    values = {"1": (1.0, 1.0, 0.5, 0.25), "2": (1.0, 1.0, 0.5, 0.5), "3": (1.0, 1.0, 0.75, 0.5), "4": (0.5, None, 0.5, None)}
    results = []
    for sid, (fd, fj, ad, aj) in values.items():
        for metric, method, value in (("faithfulness", "decomposed", fd), ("faithfulness", J, fj),
                                      ("answer_relevancy", "decomposed", ad), ("answer_relevancy", J, aj)):
            results.append(MetricResult(sid, metric, method, value, unscored_reason=None if value is not None else "error"))
    frame = results_frame(results, {"1": "a", "2": "b", "3": "a", "4": "a"})
    got = runs.scatter_frame(frame, J)
    assert list(got.columns) == ["sample_id", "category", "criterion", "decomposed", "judge", "rows"]
    assert got.values.tolist() == [
        ["1", "a", "faithfulness", 1.0, 1.0, 2],  # rows 1 and 3: one dot, the first row named
        ["2", "b", "faithfulness", 1.0, 1.0, 1],  # same values, another category: its own dot
        ["1", "a", "answer_relevancy", 0.5, 0.25, 1],
        ["2", "b", "answer_relevancy", 0.5, 0.5, 1],
        ["3", "a", "answer_relevancy", 0.75, 0.5, 1],
    ]
    assert got["rows"].sum() == 3 + 3  # every row scored by both is counted once per criterion
    spec = charts.agreement_scatter(got, [("faithfulness", "F"), ("answer_relevancy", "A")])
    tooltip = spec["concat"][0]["layer"][1]["encoding"]["tooltip"]
    assert [f["field"] for f in tooltip] == ["sample_id", "category", "decomposed", "judge", "rows"]
