"""The static SVG bars shared by the report and Compare's first tab, against hand-computed geometry."""

from __future__ import annotations

import base64
import math
import re

import pandas as pd

from rageval_core.analysis.report import svg


def test_a_bar_is_its_mean_times_the_plot_width_and_an_unscored_cell_is_a_dash() -> None:
    tables = {"decomposed": pd.DataFrame({"faithfulness": [0.5, math.nan]}, index=["a", "b"]),
              "judge:rubric5": pd.DataFrame({"faithfulness": [1.0, 0.25], "answer_relevancy": [0.75, 0.0]}, index=["a", "b"])}
    html = svg.category_charts(tables, ["a", "b"], criterion_label=str.upper, method_label=lambda m: m.split(":")[-1],
                               label_width=100, bar_width=200)
    assert html.count("<svg") == 2 and 'aria-label="FAITHFULNESS"' in html and 'aria-label="ANSWER_RELEVANCY"' in html
    widths = re.findall(r'<rect class="bar" x="100" y="(\d+)" width="([\d.]+)"[^>]*><title>([^<]*)</title>', html)
    # Two methods a category at 11 px each and 10 px between groups: a's bars at y 26 and 37, b's at 58 and 69.
    assert widths == [
        ("26", "100.0", "a · decomposed: 0.500"), ("37", "200.0", "a · rubric5: 1.000"),  # faithfulness
        ("69", "50.0", "b · rubric5: 0.250"),  # b's decomposed cell is NaN
        ("37", "150.0", "a · rubric5: 0.750"), ("69", "0.0", "b · rubric5: 0.000"),  # answer relevancy: judge only
    ]
    assert html.count(">–</text>") == 3  # b decomposed (NaN), a and b decomposed for a criterion it lacks
    legend = html[:html.index("<div")]
    assert legend.index("decomposed") < legend.index("rubric5") and svg.PALETTE[1] in legend


def test_text_is_escaped_and_reads_without_the_reports_stylesheet() -> None:
    tables = {"<b>m</b>": pd.DataFrame({"c": [0.5]}, index=["<script>x</script> & 正確"])}
    html = svg.category_charts(tables, ["<script>x</script> & 正確"])
    assert "<script>" not in html and "<b>" not in html and "&lt;script&gt;x&lt;/script&gt; &amp; 正確" in html
    assert 'fill="currentColor"' in html and 'font-size="12"' in html  # light or dark theme alike


def test_a_chart_as_an_image_keeps_its_size_and_title_and_draws_text_in_the_colour_given() -> None:
    chart = svg.grouped_bars("Faithfulness", ["a"], ["m"], {("a", "m"): 0.5})
    img = svg.as_image(chart, "#fafafa")
    assert img.startswith('<img alt="Faithfulness" width="480" height="71"')  # 170 + 260 + 50 wide; 26 + 21 + 24 high
    inner = base64.b64decode(img.split("base64,", 1)[1].rstrip('">')).decode()
    assert "currentColor" not in inner and 'fill="#fafafa"' in inner and inner == chart.replace("currentColor", "#fafafa")
    both = svg.category_charts({"m": pd.DataFrame({"c": [0.5]}, index=["a"])}, ["a"], images="#31333f")
    assert both.count("<img") == 1 and "<svg" not in both  # for st.html, which drops inline SVG
