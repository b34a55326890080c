"""Static SVG charts for the HTML report and Compare's first tab: no script, no network, no chart library.

Two shapes: grouped horizontal bars (one panel per criterion, a bar per method in each category) and
intervals (a dot with its 95% whiskers per statistic). Scores are on [0, 1]; correlations and kappa on
[-1, 1]. All text is escaped. Sizes and colours are presentation attributes, text in ``currentColor``, so a
chart reads in a page without the report's stylesheet; the report's CSS classes still style it there. Compare
shows the bars as images (``as_image``: Streamlit's ``st.html`` drops inline SVG), which cost the browser
nothing to load where its first open waited over a second for the chart library on a 1,000-row run.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable, Mapping
from html import escape
from typing import Sequence

import pandas as pd

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac", "#eeca3b")


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


# Presentation attributes per element class: what the report's stylesheet also sets (its CSS wins there).
_TITLE = 'class="chart-title" font-size="13" font-weight="600" fill="currentColor"'
_LABEL = 'class="label" font-size="12" fill="currentColor"'
_TICK = 'class="tick" font-size="10" fill="currentColor" fill-opacity="0.7"'
_GRID = 'class="grid" stroke="currentColor" stroke-opacity="0.25" stroke-width="1"'


def _open(title: str, width: int, height: int) -> list[str]:
    return [f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" style="margin: 0 1.2rem .8rem 0">',
            f'<text x="0" y="16" {_TITLE}>{escape(title)}</text>']


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def grouped_bars(title: str, categories: Sequence[str], methods: Sequence[str],
                 values: dict[tuple[str, str], float | None], *, label_width: int = 170, bar_width: int = 260) -> str:
    """One panel: for each category a bar per method (``values[(category, method)]``, None = no scored row)."""
    bar_h, gap = 11, 10
    group_h = len(methods) * bar_h + gap
    top = 26
    height = top + len(categories) * group_h + 24
    width = label_width + bar_width + 50
    out = _open(title, width, height)
    for t in (0.0, 0.5, 1.0):
        x = label_width + t * bar_width
        out.append(f'<line x1="{_num(x)}" y1="{top - 4}" x2="{_num(x)}" y2="{height - 20}" {_GRID}/>')
        out.append(f'<text x="{_num(x)}" y="{height - 6}" {_TICK} text-anchor="middle">{t:g}</text>')
    for ci, cat in enumerate(categories):
        y0 = top + ci * group_h
        out.append(f'<text x="{label_width - 6}" y="{y0 + len(methods) * bar_h / 2 + 4:.1f}" {_LABEL} '
                   f'text-anchor="end">{escape(cat)}</text>')
        for mi, method in enumerate(methods):
            v = values.get((cat, method))
            y = y0 + mi * bar_h
            if v is None:
                out.append(f'<text x="{label_width + 4}" y="{y + 9}" {_TICK}>–</text>')
                continue
            w = max(0.0, min(1.0, float(v))) * bar_width
            out.append(f'<rect class="bar" x="{label_width}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" fill="{color(mi)}">'
                       f'<title>{escape(cat)} · {escape(method)}: {v:.3f}</title></rect>')
    out.append("</svg>")
    return "".join(out)


def intervals(title: str, rows: Sequence[tuple[str, float | None, float | None, float | None]], *,
              lo: float = -1.0, hi: float = 1.0, label_width: int = 470, plot_width: int = 300,
              undefined: str = "undefined") -> str:
    """A dot per ``(label, value, low, high)`` with its interval as whiskers; undefined values say so (``undefined``,
    in the report's language)."""
    row_h, top = 20, 26
    height = top + len(rows) * row_h + 24
    width = label_width + plot_width + 60

    def x(v: float) -> float:
        return label_width + (min(hi, max(lo, v)) - lo) / (hi - lo) * plot_width

    out = _open(title, width, height)
    for t in (lo, (lo + hi) / 2, hi):
        out.append(f'<line x1="{x(t):.1f}" y1="{top - 4}" x2="{x(t):.1f}" y2="{height - 20}" {_GRID}/>')
        out.append(f'<text x="{x(t):.1f}" y="{height - 6}" {_TICK} text-anchor="middle">{t:g}</text>')
    for i, (label, value, low, high) in enumerate(rows):
        y = top + i * row_h + row_h / 2
        out.append(f'<text x="{label_width - 6}" y="{y + 4:.1f}" {_LABEL} text-anchor="end">{escape(label)}</text>')
        if value is None:
            out.append(f'<text x="{label_width + 4}" y="{y + 4:.1f}" {_TICK}>{escape(undefined)}</text>')
            continue
        if low is not None and high is not None:
            out.append(f'<line class="whisker" stroke="{color(0)}" stroke-width="2" x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}"/>')
        out.append(f'<circle class="dot" cx="{x(value):.1f}" cy="{y:.1f}" r="5" fill="{color(0)}">'
                   f'<title>{escape(label)}: {value:.3f}'
                   + ("" if low is None or high is None else f" [{low:.3f}, {high:.3f}]") + "</title></circle>")
    out.append("</svg>")
    return "".join(out)


def legend(methods: Sequence[str]) -> str:
    """The methods' colours, one swatch each, in the order of the bars."""
    return ('<p class="legend" style="margin: .2rem 0 .4rem">' + "".join(
        f'<span style="display: inline-block; margin-right: 1rem; font-size: .85rem"><i style="display: inline-block; '
        f'width: .8rem; height: .8rem; margin-right: .3rem; vertical-align: -1px; background: {color(i)}"></i>'
        f'{escape(m)}</span>' for i, m in enumerate(methods)) + "</p>")


def as_image(chart: str, text_color: str = "#31333f") -> str:
    """A chart of this module as an ``<img>`` with its title as alt text: for a page whose HTML sanitiser drops
    inline SVG (Streamlit's ``st.html``). An image shows no tooltips, and its text cannot take the page's colour,
    so it is drawn in ``text_color``."""
    title = re.search(r'aria-label="([^"]*)"', chart)
    size = re.search(r'width="(\d+)" height="(\d+)"', chart)
    data = base64.b64encode(chart.replace("currentColor", text_color).encode("utf-8")).decode("ascii")
    dims = f' width="{size.group(1)}" height="{size.group(2)}"' if size else ""
    return (f'<img alt="{title.group(1) if title else ""}"{dims} style="margin: 0 1.2rem .8rem 0" '
            f'src="data:image/svg+xml;base64,{data}">')


def category_charts(tables: Mapping[str, pd.DataFrame], categories: Sequence[str], *,
                    criterion_label: Callable[[str], str] = str, method_label: Callable[[str], str] = str,
                    label_width: int = 170, bar_width: int = 260, images: str | None = None) -> str:
    """Mean score per category, a bar per method, one panel per criterion, with the legend: ``tables`` maps a
    method to its category table (categories as index, criteria as columns, NaN = no scored row). ``images``, a
    text colour: each panel as an ``<img>`` in it (``as_image``), for ``st.html``."""
    criteria = list(dict.fromkeys(c for table in tables.values() for c in table.columns))
    methods = list(tables)
    panels = []
    for criterion in criteria:
        values: dict[tuple[str, str], float | None] = {}
        for method, table in tables.items():
            if criterion in table.columns:
                for category, v in table[criterion].items():
                    values[(str(category), method_label(method))] = None if pd.isna(v) else float(v)
        panel = grouped_bars(criterion_label(criterion), categories, [method_label(m) for m in methods], values,
                             label_width=label_width, bar_width=bar_width)
        panels.append(as_image(panel, images) if images else panel)
    return (legend([method_label(m) for m in methods]) + '<div class="charts" style="display: flex; flex-wrap: wrap">'
            + "".join(panels) + "</div>")
