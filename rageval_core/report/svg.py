"""Static SVG charts for the HTML report: no script, no network, text in the page's font stack.

Two shapes: grouped horizontal bars (one panel per criterion, a bar per method in each category) and
intervals (a dot with its 95% whiskers per statistic). Scores are on [0, 1]; correlations and kappa on
[-1, 1]. All text is escaped.
"""

from __future__ import annotations

from html import escape
from typing import Sequence

PALETTE = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#ff9da6", "#9d755d", "#bab0ac", "#eeca3b")


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


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
    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<text x="0" y="16" class="chart-title">{escape(title)}</text>']
    for t in (0.0, 0.5, 1.0):
        x = label_width + t * bar_width
        out.append(f'<line x1="{_num(x)}" y1="{top - 4}" x2="{_num(x)}" y2="{height - 20}" class="grid"/>')
        out.append(f'<text x="{_num(x)}" y="{height - 6}" class="tick" text-anchor="middle">{t:g}</text>')
    for ci, cat in enumerate(categories):
        y0 = top + ci * group_h
        out.append(f'<text x="{label_width - 6}" y="{y0 + len(methods) * bar_h / 2 + 4:.1f}" class="label" '
                   f'text-anchor="end">{escape(cat)}</text>')
        for mi, method in enumerate(methods):
            v = values.get((cat, method))
            y = y0 + mi * bar_h
            if v is None:
                out.append(f'<text x="{label_width + 4}" y="{y + 9}" class="tick">–</text>')
                continue
            w = max(0.0, min(1.0, float(v))) * bar_width
            out.append(f'<rect class="bar" x="{label_width}" y="{y}" width="{w:.1f}" height="{bar_h - 2}" fill="{color(mi)}">'
                       f'<title>{escape(cat)} · {escape(method)}: {v:.3f}</title></rect>')
    out.append("</svg>")
    return "".join(out)


def intervals(title: str, rows: Sequence[tuple[str, float | None, float | None, float | None]], *,
              lo: float = -1.0, hi: float = 1.0, label_width: int = 470, plot_width: int = 300) -> str:
    """A dot per ``(label, value, low, high)`` with its interval as whiskers; undefined values say so."""
    row_h, top = 20, 26
    height = top + len(rows) * row_h + 24
    width = label_width + plot_width + 60

    def x(v: float) -> float:
        return label_width + (min(hi, max(lo, v)) - lo) / (hi - lo) * plot_width

    out = [f'<svg class="chart" role="img" aria-label="{escape(title)}" xmlns="http://www.w3.org/2000/svg" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}">',
           f'<text x="0" y="16" class="chart-title">{escape(title)}</text>']
    for t in (lo, (lo + hi) / 2, hi):
        out.append(f'<line x1="{x(t):.1f}" y1="{top - 4}" x2="{x(t):.1f}" y2="{height - 20}" class="grid"/>')
        out.append(f'<text x="{x(t):.1f}" y="{height - 6}" class="tick" text-anchor="middle">{t:g}</text>')
    for i, (label, value, low, high) in enumerate(rows):
        y = top + i * row_h + row_h / 2
        out.append(f'<text x="{label_width - 6}" y="{y + 4:.1f}" class="label" text-anchor="end">{escape(label)}</text>')
        if value is None:
            out.append(f'<text x="{label_width + 4}" y="{y + 4:.1f}" class="tick">undefined</text>')
            continue
        if low is not None and high is not None:
            out.append(f'<line class="whisker" x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" y2="{y:.1f}"/>')
        out.append(f'<circle class="dot" cx="{x(value):.1f}" cy="{y:.1f}" r="5" fill="{color(0)}">'
                   f'<title>{escape(label)}: {value:.3f}'
                   + ("" if low is None or high is None else f" [{low:.3f}, {high:.3f}]") + "</title></circle>")
    out.append("</svg>")
    return "".join(out)
