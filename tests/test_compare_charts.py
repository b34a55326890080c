"""Compare's charts are built without Altair's schema checks (for speed): their specs are the ones the checked
build gives, and they pass the checks."""

from __future__ import annotations

import altair as alt
import pandas as pd
from altair.utils import schemapi

from ui import charts


def _checked(chart: alt.TopLevelMixin) -> dict:
    return type(chart).to_dict(chart, validate=True)  # raises on a spec the schema rejects


def test_unchecked_charts_give_the_checked_specs() -> None:
    bars = pd.DataFrame({"category": ["a", "a", "b"], "criterion": ["F", "F", "F"],
                         "method": ["decomposed", "judge:rubric5", "decomposed"], "mean": [0.5, 0.75, 1.0]})
    points = pd.DataFrame({"sample_id": ["1", "2"], "category": ["a", None], "criterion": ["faithfulness"] * 2,
                           "decomposed": [0.2, 0.9], "judge": [0.25, 1.0]})
    rows = pd.DataFrame({"sample_id": ["1", "1", "2"], "judge": ["x", "y", "x"], "value": [0.1, 0.2, 0.3]})
    built = [charts.grouped_bars(bars, ["a", "b"], ["F"]),
             charts.agreement_scatter(points, [("faithfulness", "Faithfulness")]),
             charts.judge_rows(rows, ["1", "2"])]
    assert schemapi.DEBUG_MODE  # the checks are off only while a chart is built
    for chart in built:
        assert chart.to_dict() == _checked(chart)
        assert "to_dict" not in chart.to_dict()  # the override is not a spec property
