"""Charts of the Compare page as Vega-Lite specs: the decomposed vs judge scatter per criterion and each judge's
score per row; the Trust page's estimates in Altair. (The first tab's grouped bars are inline SVG, drawn by
``rageval_core.analysis.report.svg`` like the report's.)

Compare's specs are plain dicts with their data as named frames (``datasets``), drawn with ``draw``: building
Altair objects and converting them back to a dict was about a third of a Compare page on a large run (each
object validated on creation, every panel's data hashed), and the spec is the same JSON either way
(tests/analysis/test_compare_charts.py checks it against the Vega-Lite schema). Bars are horizontal so category labels
(Japanese, with the sample data's emoji) read without rotation; each criterion is one panel, wrapped so six
criteria still fit the page width.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import altair as alt
import pandas as pd
import streamlit as st

from rageval_ui.i18n import header, t

# The scatter colours categories; the first tab's SVG bars colour methods in Tableau 10 (svg.PALETTE): two
# meanings, so two palettes that share no colour.
CATEGORY_SCHEME = "dark2"

Spec = dict[str, Any]  # a Vega-Lite spec; ``datasets`` maps names to frames
SCHEMA = alt.SCHEMA_URL  # the Vega-Lite version Streamlit's front end draws (Altair's)
_CONFIG: Spec = {"view": {"continuousWidth": 300, "continuousHeight": 300}}  # Altair's default view size

PAGE_WIDTH = 900  # px the charts may use in the wide layout
LABEL_WIDTH = 150  # px of the category labels left of the first panel


def _nominal(field: str) -> dict[str, str]:
    return {"field": field, "type": "nominal"}


def _score(field: str) -> dict[str, str]:
    """A score in a tooltip, three decimals."""
    return {"field": field, "type": "quantitative", "format": ".3f"}


def _label_expr(labels: dict[str, str]) -> str:
    """A Vega label expression showing each data value under its UI-language name (the data keeps its values)."""
    return "".join(f"datum.label === {json.dumps(k)} ? {json.dumps(v, ensure_ascii=False)} : " for k, v in labels.items()) + "datum.label"


def draw(spec: Spec) -> None:
    """Show a Vega-Lite spec of this module. Streamlit sends each named dataset (a frame) as Arrow beside the
    spec and may rewrite the spec's top level, so it gets a copy: the caller's spec can be kept and drawn again."""
    st.vega_lite_chart({**spec, "datasets": dict(spec.get("datasets", {}))})


def agreement_scatter(points: pd.DataFrame, criteria: Sequence[tuple[str, str]]) -> Spec:
    """Decomposed (x) vs judge (y) per row, one panel per ``(criterion id, label)``, with the y = x diagonal;
    ``points`` are ``runs.scatter_frame`` lines (one per distinct point, ``rows`` at it).

    Every panel reads the one ``points`` dataset through a filter on its criterion, so each row's values are
    sent to the browser once (Altair's per-panel subsets were one dataset per criterion, built and hashed in
    Python on every page)."""
    points = points.assign(category=points["category"].fillna("(none)").astype(str))
    categories = sorted(points["category"].unique().tolist())
    axis = {"type": "quantitative", "scale": {"domain": [-0.05, 1.05]}}
    category = {"field": "category", "type": "nominal", "title": t("chart.category")}
    dots = {
        "data": {"name": "points"},
        "mark": {"type": "circle", "size": 90, "opacity": 0.8},
        "encoding": {
            "x": {"field": "decomposed", **axis, "title": t("chart.decomposed")},
            "y": {"field": "judge", **axis, "title": t("chart.judge")},
            "color": {**category, "scale": {"scheme": CATEGORY_SCHEME, "domain": categories}},
            "shape": {**category, "scale": {"domain": categories}},
            "tooltip": [{**_nominal("sample_id"), "title": t("chart.first_row")}, _nominal("category"),
                        _score("decomposed"), _score("judge"), {"field": "rows", "type": "quantitative", "title": t("chart.rows_here")}],
        },
    }
    diagonal = {
        "data": {"values": [{"decomposed": 0.0, "judge": 0.0}, {"decomposed": 1.0, "judge": 1.0}]},
        "mark": {"type": "line", "strokeDash": [4, 4], "color": "gray"},
        "encoding": {"x": {"field": "decomposed", "type": "quantitative"}, "y": {"field": "judge", "type": "quantitative"}},
    }
    panels = [
        {"layer": [diagonal, {**dots, "transform": [{"filter": {"field": "criterion", "equal": criterion}}]}],
         "width": 165, "height": 165, "title": label}
        for criterion, label in criteria
    ]
    return {
        "$schema": SCHEMA,
        "config": {**_CONFIG, "legend": {"orient": "bottom"}},
        "concat": panels,
        "columns": 4,
        "datasets": {"points": points[["sample_id", "category", "criterion", "decomposed", "judge", "rows"]]},
    }


def estimates(points: pd.DataFrame) -> alt.LayerChart:
    """Score mean, labels only and corrected per scorer, each a point with its 95% interval
    (``rageval_ui.trust.estimate_points`` rows); the interval widths are the story, so they share one axis."""
    order = list(dict.fromkeys(points["scorer"]))
    kinds = ["score mean", "labels only", "corrected"]  # the ``estimate`` values; the legend names them in the UI language
    base = alt.Chart(points).encode(
        y=alt.Y("scorer:N", sort=order, title=None, axis=alt.Axis(labelLimit=260)),
        yOffset=alt.YOffset("estimate:N", sort=kinds),
        color=alt.Color("estimate:N", sort=kinds, title=t("chart.estimate"),
                        legend=alt.Legend(labelExpr=_label_expr({k: header(k) for k in kinds}))),
    )
    rules = base.mark_rule(strokeWidth=2).encode(x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1]), title=t("chart.share_passes")), x2="high:Q")
    dots = base.mark_point(filled=True, size=50).encode(
        x="value:Q",
        tooltip=["scorer", "estimate", alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
                 alt.Tooltip("high:Q", format=".3f"), "n"],
    )
    return (rules + dots).properties(width=PAGE_WIDTH - 360, height=max(70, len(order) * 54))


def judge_rows(points: pd.DataFrame, row_order: Sequence[str]) -> Spec:
    """Each judge's score per row for one criterion (``sample_id``, ``judge``, ``value`` rows): rows on y, one
    dot per judge, so where judges split stands out."""
    judge = {"field": "judge", "type": "nominal", "title": t("chart.judge")}
    return {
        "$schema": SCHEMA,
        "config": {**_CONFIG, "legend": {"orient": "bottom"}},
        "data": {"name": "rows"},
        "mark": {"type": "point", "filled": True, "size": 80, "opacity": 0.85},
        "encoding": {
            "y": {"field": "sample_id", "type": "nominal", "sort": list(row_order), "title": t("chart.row")},
            "x": {"field": "value", "type": "quantitative", "scale": {"domain": [-0.02, 1.02]}, "title": t("chart.score")},
            "color": judge,
            "shape": judge,
            "tooltip": [_nominal("sample_id"), _nominal("judge"), _score("value")],
        },
        "width": PAGE_WIDTH - LABEL_WIDTH,
        "height": max(120, 18 * len(row_order)),
        "datasets": {"rows": points[["sample_id", "judge", "value"]]},
    }
