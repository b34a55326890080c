"""Altair charts of the Compare page: grouped bars (category × criterion × method) and the decomposed vs
judge scatter per criterion.

Bars are horizontal so category labels (Japanese, with the sample data's emoji) read without rotation; each
criterion is one panel, wrapped so six criteria still fit the page width.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import altair as alt
import pandas as pd
from altair.utils.schemapi import debug_mode

from ui.i18n import header, t

# Bars colour methods, the scatter colours categories: two meanings, so two palettes that share no colour.
METHOD_SCHEME = "tableau10"
CATEGORY_SCHEME = "dark2"

C = TypeVar("C")


def _unvalidated(build: Callable[..., C]) -> Callable[..., C]:
    """Build the chart without Altair's JSON-schema checks: each object is validated as it is made and the
    whole spec again when Streamlit turns it into a dict, about 0.5 s of a Compare page (the spec is the
    same either way; tests/test_compare_charts.py checks it validates). The charts are fixed code."""
    @functools.wraps(build)
    def wrapper(*args: Any, **kwargs: Any) -> C:
        with debug_mode(False):
            chart = build(*args, **kwargs)
        object.__setattr__(chart, "to_dict", functools.partial(type(chart).to_dict, chart, validate=False))  # not a spec key
        return chart

    return wrapper


PAGE_WIDTH = 900  # px the charts may use in the wide layout
LABEL_WIDTH = 150  # px of the category labels left of the first panel


def _label_expr(labels: dict[str, str]) -> str:
    """A Vega label expression showing each data value under its UI-language name (the data keeps its values)."""
    return "".join(f"datum.label === {json.dumps(k)} ? {json.dumps(v, ensure_ascii=False)} : " for k, v in labels.items()) + "datum.label"


@_unvalidated
def grouped_bars(bars: pd.DataFrame, category_order: Sequence[str], criterion_order: Sequence[str]) -> alt.FacetChart:
    """Mean score per category, one bar per method, one panel per criterion (``runs.chart_frame`` rows)."""
    n_methods = max(1, bars["method"].nunique())
    n_categories = max(1, len([c for c in category_order if c in set(bars["category"])]))
    columns = min(4, max(1, len(criterion_order)))
    width = max(120, (PAGE_WIDTH - LABEL_WIDTH) // columns - 20)
    height = n_categories * (n_methods * 11 + 12)
    return (
        alt.Chart(bars)
        .mark_bar()
        .encode(
            y=alt.Y("category:N", sort=list(category_order), title=None, axis=alt.Axis(labelLimit=LABEL_WIDTH)),
            yOffset=alt.YOffset("method:N"),
            x=alt.X("mean:Q", scale=alt.Scale(domain=[0, 1]), title=t("chart.mean")),
            color=alt.Color("method:N", title=t("chart.method"), scale=alt.Scale(scheme=METHOD_SCHEME)),
            tooltip=["category", "criterion", "method", alt.Tooltip("mean:Q", format=".3f")],
        )
        .properties(width=width, height=height)
        .facet(
            facet=alt.Facet("criterion:N", sort=list(criterion_order), title=None, header=alt.Header(labelFontWeight="bold")),
            columns=columns,
        )
        .configure_legend(orient="bottom")
    )


@_unvalidated
def agreement_scatter(points: pd.DataFrame, criteria: Sequence[tuple[str, str]]) -> alt.ConcatChart:
    """Decomposed (x) vs judge (y) per row, one panel per ``(criterion id, label)``, with the y = x diagonal."""
    diagonal = (
        alt.Chart(pd.DataFrame({"decomposed": [0.0, 1.0], "judge": [0.0, 1.0]}))
        .mark_line(strokeDash=[4, 4], color="gray")
        .encode(x="decomposed:Q", y="judge:Q")
    )
    categories = sorted({str(c) for c in points["category"].fillna("(none)")})
    points = points.assign(category=points["category"].fillna("(none)").astype(str))
    panels = []
    for criterion, label in criteria:
        sub = points[points["criterion"] == criterion]
        dots = (
            alt.Chart(sub)
            .mark_circle(size=90, opacity=0.8)
            .encode(
                x=alt.X("decomposed:Q", scale=alt.Scale(domain=[-0.05, 1.05]), title=t("chart.decomposed")),
                y=alt.Y("judge:Q", scale=alt.Scale(domain=[-0.05, 1.05]), title=t("chart.judge")),
                color=alt.Color("category:N", title=t("chart.category"), scale=alt.Scale(scheme=CATEGORY_SCHEME,
                                domain=categories)),
                shape=alt.Shape("category:N", title=t("chart.category"), scale=alt.Scale(domain=categories)),
                tooltip=["sample_id", "category", alt.Tooltip("decomposed:Q", format=".3f"), alt.Tooltip("judge:Q", format=".3f")],
            )
        )
        panels.append(alt.layer(diagonal, dots).properties(width=165, height=165, title=label))
    return alt.concat(*panels, columns=4).configure_legend(orient="bottom")


def estimates(points: pd.DataFrame) -> alt.LayerChart:
    """Score mean, labels only and corrected per scorer, each a point with its 95% interval
    (``ui.trust.estimate_points`` rows); the interval widths are the story, so they share one axis."""
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


@_unvalidated
def judge_rows(points: pd.DataFrame, row_order: Sequence[str]) -> alt.Chart:
    """Each judge's score per row for one criterion (``sample_id``, ``judge``, ``value`` rows): rows on y, one
    dot per judge, so where judges split stands out."""
    return (
        alt.Chart(points)
        .mark_point(filled=True, size=80, opacity=0.85)
        .encode(
            y=alt.Y("sample_id:N", sort=list(row_order), title=t("chart.row")),
            x=alt.X("value:Q", scale=alt.Scale(domain=[-0.02, 1.02]), title=t("chart.score")),
            color=alt.Color("judge:N", title=t("chart.judge")),
            shape=alt.Shape("judge:N", title=t("chart.judge")),
            tooltip=["sample_id", "judge", alt.Tooltip("value:Q", format=".3f")],
        )
        .properties(width=PAGE_WIDTH - LABEL_WIDTH, height=max(120, 18 * len(row_order)))
        .configure_legend(orient="bottom")
    )
