"""The report as one self-contained HTML file: inline CSS, static SVG charts, no script, no network.

Japanese renders through a system CJK font stack (Hiragino, Noto Sans CJK, Yu Gothic, Meiryo), so the file
needs no web font. Every value from the data is escaped; claims are highlighted in the answer by verdict.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from html import escape
from typing import TYPE_CHECKING, Any, Sequence

import pandas as pd

from rageval_core.analysis.report import svg
from rageval_core.analysis.report.build import ChosenRow, RunReport
from rageval_core.analysis.report.words import Words

if TYPE_CHECKING:
    from rageval_core.analysis.external_scores import TheirsVsOurs
    from rageval_core.store.runs import RunInfo

FONT_STACK = ('system-ui, -apple-system, "Segoe UI", "Hiragino Sans", "Hiragino Kaku Gothic ProN", '
              '"Noto Sans CJK JP", "Noto Sans JP", "Yu Gothic", YuGothic, Meiryo, sans-serif')
CSS = f"""
body {{ font-family: {FONT_STACK}; color: #1f2328; max-width: 1100px; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }}
h1 {{ font-size: 1.7rem; }} h2 {{ border-bottom: 1px solid #d0d7de; padding-bottom: .2rem; margin-top: 2.2rem; }}
h3 {{ margin-top: 1.4rem; }}
table {{ border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }}
th, td {{ border: 1px solid #d0d7de; padding: .25rem .55rem; text-align: left; }}
td.num {{ text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }} th {{ background: #f6f8fa; }}
.muted {{ color: #656d76; font-size: .88rem; }}
.chart {{ font-family: {FONT_STACK}; }}
.chart-title {{ font-weight: 600; font-size: 13px; }} .label {{ font-size: 12px; }} .tick {{ font-size: 10px; fill: #656d76; }}
.grid {{ stroke: #d0d7de; stroke-width: 1; }} .whisker {{ stroke: #4c78a8; stroke-width: 2; }}
.sample {{ border: 1px solid #d0d7de; border-radius: 6px; padding: .6rem 1rem; margin: 1rem 0; }}
.answer mark.ok {{ background: #dafbe1; }} .answer mark.bad {{ background: #ffd8d3; }} .answer mark.unknown {{ background: #fff1b3; }}
.context {{ background: #f6f8fa; padding: .4rem .6rem; margin: .3rem 0; font-size: .88rem; white-space: pre-wrap; }}
td.reason {{ text-align: left; font-size: .85rem; max-width: 560px; }}
section.answer table {{ width: 100%; }} section.answer td {{ vertical-align: top; font-size: .88rem; }}
.badge {{ padding: .05rem .45rem; border-radius: .6rem; font-weight: 600; }} .badge.green {{ background: #dafbe1; color: #1a7f37; }}
.badge.orange {{ background: #fff1e5; color: #bc4c00; }} .badge.gray {{ background: #eaeef2; color: #57606a; }}
.badge.red {{ background: #ffebe9; color: #cf222e; }}
.note {{ border-left: 4px solid #bf8700; background: #fff8c5; padding: .4rem .8rem; margin: .8rem 0; font-size: .9rem; }}
"""


_VERDICTS: dict[Any, str] = {1: "supported", 0: "not_supported"}  # a claim's verdict as stored (any JSON value): its word

def _fmt(value: Any, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return escape(str(value))


def _table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, cls: str = "") -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    def td(c: Any) -> str:
        numeric = isinstance(c, (int, float)) and not isinstance(c, bool) or (
            isinstance(c, str) and (c[:1].isdigit() or c.startswith("-0") or c == "-"))
        return f'<td class="num">{_fmt(c)}</td>' if numeric else f"<td>{_fmt(c)}</td>"

    body = "".join("<tr>" + "".join(td(c) for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _interval(v: Any, lo: Any, hi: Any) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return f"{v:.3f}"
    return f"{v:.3f} [{lo:.3f}, {hi:.3f}]"


def _category_charts(rep: RunReport, w: Words) -> str:
    return svg.category_charts(rep.category_tables, [c for c, _ in rep.categories], criterion_label=w.metric)


def _highlighted_answer(answer: str, claims: Sequence[dict[str, Any]]) -> str:
    """The answer with each claim found in it marked by verdict (green supported, red not, yellow unknown)."""
    spans: list[tuple[int, int, str, str]] = []
    for c in claims:
        text = str(c.get("claim") or "")
        start = answer.find(text) if text else -1
        if start < 0 or any(s < start + len(text) and start < e for s, e, _, _ in spans):
            continue
        verdict = c.get("verdict")
        kind = "ok" if verdict == 1 else "bad" if verdict == 0 else "unknown"
        spans.append((start, start + len(text), kind, str(c.get("reason") or "")))
    spans.sort()
    out, pos = [], 0
    for s, e, kind, reason in spans:
        out.append(escape(answer[pos:s]))
        out.append(f'<mark class="{kind}" title="{escape(reason)}">{escape(answer[s:e])}</mark>')
        pos = e
    out.append(escape(answer[pos:]))
    return "".join(out)


def _chosen(row: ChosenRow, w: Words) -> str:
    parts = [f'<div class="sample"><h3>#{escape(row.sample_id)} {escape(row.category or "")}</h3>',
             f'<p class="muted">{escape(w("spread", spread=f"{row.spread:.3f}"))}</p>']
    if row.sample is not None:
        s = row.sample
        parts.append(f"<p><b>{w('question')}</b>: {escape(s.question)}</p>")
        parts.append(f'<p class="answer"><b>{w("answer")}</b>: {_highlighted_answer(s.answer, row.claims)}</p>')
        if row.claims:
            parts.append('<p class="muted">' + w("claims_legend", ok=f'<mark class="ok" style="background:#dafbe1">{w("supported")}</mark>',
                                                   bad=f'<mark style="background:#ffd8d3">{w("not_supported")}</mark>') + "</p>")
        if s.ground_truth:
            parts.append(f"<p><b>{w('ground_truth')}</b>: {escape(s.ground_truth)}</p>")
        for i, c in enumerate(s.contexts):
            parts.append(f'<div class="context"><b>{w("context", i=i + 1)}</b>: {escape(c)}</div>')
    else:
        parts.append(f'<p class="muted">{w("no_texts")}</p>')
    if row.claims:
        parts.append(_table(w.headings(["claim", "verdict", "reason"]),
                            [[c.get("claim"), w(_VERDICTS[c.get("verdict")]) if c.get("verdict") in _VERDICTS else "-",
                              c.get("reason")] for c in row.claims], cls="claims"))
    from rageval_core.core.method_labels import result_method

    lines: list[tuple[str, str, float | str, str]] = [
        (r.metric, result_method(r), r.value if r.value is not None else (r.unscored_reason or "-"), r.reason or "")
        for r in sorted(row.results, key=lambda r: (r.metric, result_method(r)))]
    head = "".join(f"<th>{escape(h)}</th>" for h in w.headings(["criterion", "method", "score", "reason"]))
    body = "".join(f"<tr><td>{escape(w.metric(m))}</td><td>{escape(me)}</td><td class='num'>{_fmt(v)}</td>"
                   f'<td class="reason">{escape(str(why))}</td></tr>' for m, me, v, why in lines)
    parts.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>")
    return "".join(parts)


def _trust(trust: dict[str, Any] | None, w: Words) -> str:
    if not trust:
        return f'<p class="muted">{w("trust_none")}</p>'
    def cell(a: dict[str, Any], key: str) -> str:
        stat = a.get(key) or {}
        return _interval(stat.get("value"), stat.get("low"), stat.get("high"))

    rows = [[w.metric(a.get("metric", "")), a.get("method"), a.get("n_labelled"), _threshold(a, w), cell(a, "auroc"),
             cell(a, "balanced_accuracy"), cell(a, "kappa"), " ".join(w.message(n) for n in a.get("notes") or [])]
            for a in trust.get("agreement", [])]
    out = _table(w.headings(["criterion", "method", "labelled rows", "pass threshold", "AUROC [95%]", "balanced accuracy [95%]",
                             "kappa [95%]", "note"]), rows)
    return out + _trust_extras(trust, cell, w) + _annotators(trust.get("annotators"), w)


def _threshold(a: dict[str, Any], w: Words) -> str:
    source = a.get("threshold_source") or "default"
    detail = a.get("threshold_detail") or {}
    if detail.get("by_language"):  # the offline judge's shipped calibrated verdict, one per language
        shown = " / ".join(f"{_fmt(v)} ({escape(str(k))})" for k, v in detail["by_language"].items())
        return w("threshold_shipped", shown=shown)
    return f"{_fmt(a.get('threshold'))} ({w('threshold_dev') if source != 'default' else w('threshold_default')})"


def _trust_extras(trust: dict[str, Any], cell: Any, w: Words) -> str:
    """The split, the thresholds calibrated on dev, the Rogan-Gladen share and the bias flags of a saved report."""
    out = []
    split = trust.get("split")
    if split:
        rows = ", ".join(w("split_rows", name=escape(k), n=v) for k, v in (split.get("rows") or {}).items())
        out.append("<p>" + w("split", seed=escape(str(split.get("seed"))), rows=rows, looks=split.get("test_looks", 0),
                             shown=w("test_shown") if split.get("test_shown") else w("test_hidden")) + "</p>")
    cal = trust.get("calibration") or []
    if cal:
        out.append(f"<p>{w('calibrated')}</p>")
        out.append(_table(w.headings(["criterion", "method", "threshold", "dev balanced accuracy", "at the default", "test"]),
                          [[w.metric(c["metric"]), c["method"], c["threshold"], cell(c, "dev"), cell(c, "dev_at_default"),
                            w("hidden") if c.get("test") is None else cell(c, "test")] for c in cal]))
    estimates = [e for e in trust.get("estimates", []) if e.get("rogan_gladen")]
    if estimates:
        out.append(f"<p>{w('share')}</p>")
        out.append(_table(w.headings(["criterion", "method", "corrected [95%]", "Rogan–Gladen [95%]", "note"]),
                          [[w.metric(e["metric"]), e["method"], cell(e, "corrected"), cell(e, "rogan_gladen"),
                            " ".join(w.message(n) for n in [*(e.get("notes") or []), e["rogan_gladen"].get("note") or ""]).strip()]
                           for e in estimates]))
    bias = [b for b in trust.get("bias") or [] if b.get("flagged")]
    if trust.get("bias") is not None:
        out.append(f"<p>{w('bias', flagged=len(bias), n=len(trust['bias']))}</p>")
        if bias:
            out.append(_table(w.headings(["criterion", "method", "feature", "effect", "adjusted p"]),
                              [[w.metric(b["metric"]), b["method"], b["feature"],
                                f"{'ρ' if b['kind'] == 'spearman' else 'η²'} {b['effect']:+.3f}", b["p_adjusted"]]
                               for b in bias]))
    return "".join(out)


def _annotators(block: dict[str, Any] | None, w: Words) -> str:
    """People against each other beside each judge against each person, and whether the judge is within their range."""
    if not block:
        return ""
    rows, sentences = [], []
    for c in block.get("criteria", []):
        people = c.get("people") or {}
        rows.append([w.metric(c.get("criterion", "")), w("people_row", statistic=c.get("statistic")), c.get("n_shared"),
                     _interval(people.get("value"), people.get("low"), people.get("high")), ", ".join(c.get("labelled", {})), ""])
        for j in c.get("judges", []):
            each = ", ".join(f"{a} {_fmt(v.get('kappa'))}" for a, v in (j.get("per_annotator") or {}).items())
            rows.append(["", j.get("method"), "", _fmt(j.get("mean")), each, w.verdict(j.get("verdict"))])
            sentences.append(w.message(j.get("sentence")))
    head = "<p>" + w("people", names=escape(", ".join(block.get("annotators", []))), n=_fmt(block.get("to_settle"))) + "</p>"
    notes = "".join(f'<p class="muted">{escape(s)}</p>' for s in sentences if s)
    return head + _table(w.headings(["criterion", "people / judge", "rows", "kappa or alpha [95%]", "annotators / kappa with each",
                                     "judge is"]), rows) + notes


def _offline_only(info: RunInfo) -> bool:
    """Every method of the run scored by the offline heuristic (no judge configuration of another provider)."""
    configs = info.settings.get("judge_configs") or []
    return info.provider == "offline" and all(c.get("provider") in (None, "offline") for c in configs)


def _offline_note(info: RunInfo, w: Words) -> str:
    """An offline run's report says where its scores come from and what the offline judge catches and misses
    (the sealed suite's frozen figures, ``offline.limits``)."""
    if not _offline_only(info):
        return ""
    from rageval_core.offline.limits import heuristic_note, limits_text

    return (f'<div class="note"><p><b>{w("offline_heading")}</b> {escape(heuristic_note(w.language))}</p>'
            f"<p>{escape(limits_text(w.language))}</p></div>")


def _theirs(view: TheirsVsOurs, w: Words, top: int = 5) -> str:
    """Their scores vs ours: which columns were compared and which not, the agreement, the rows that differ most."""
    from rageval_core.analysis.external_scores import NOT_IN_RUN, default_method, unmatched_reason

    out = [f"<h3>{w('theirs')}</h3>", f'<p class="muted">{escape(w("theirs_note"))}</p>']
    lines = [w("theirs_compared", source=escape(c.source), column=f"<code>{escape(c.column)}</code>",
               metric=escape(w.metric(str(c.metric))), scored=c.scored, rows=c.rows) for c in view.matched]
    for c in view.unmatched:
        kind, metric = unmatched_reason(c)
        why = w("theirs_not_in_run", metric=w.metric(metric or "")) if kind == NOT_IN_RUN else w("theirs_no_metric")
        lines.append(w("theirs_not_compared", source=escape(c.source), column=f"<code>{escape(c.column)}</code>", why=escape(why)))
    out.append("<ul>" + "".join(f"<li>{line}</li>" for line in lines) + "</ul>")
    if view.agreement.empty:
        return "".join(out)
    out.append(f"<p>{escape(w('theirs_agreement', threshold=f'{view.threshold:g}'))}</p>")
    out.append(_table(w.headings(["their column", "metric", "our method", "n", "pearson", "spearman", "mad", "mean diff",
                                  "same side", "kappa", "note"]),
                      [[f"{r.source}:{r.column}", w.metric(r.metric), r.method, r.n, r.pearson, r.spearman, r.mad,
                        r.mean_diff, r.agree, r.kappa, w.message(r.note) if isinstance(r.note, str) else ""]
                       for r in view.agreement.itertuples()]))
    for c in view.matched:
        method = default_method(view.methods_for(c))
        if method is None:
            continue
        rows = view.rows(c, method).head(top)
        out.append(f"<p><b>{escape(w('theirs_rows', source=c.source, column=c.column, method=method))}</b></p>")
        out.append(_table(w.headings(["row", "theirs", "ours", "ours − theirs"]),
                          [[r.sample_id, r.theirs, r.ours, r.diff] for r in rows.itertuples()]))
    return "".join(out)


def render_run(rep: RunReport, w: Words | None = None) -> str:
    """One run's sections, in ``w``'s language (English by default)."""
    w = w or Words()
    i = rep.info
    when = datetime.fromtimestamp(i.created_at, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    judges = ", ".join(f"{c.get('id')}: {c.get('provider')}/{c.get('model') or '-'} ({c.get('method')})"
                       for c in i.settings.get("judge_configs") or []) or f"{i.provider}/{i.model}"
    out = [f'<section class="run" id="run-{escape(i.id)}"><h2>{escape(w("run", name=i.name or i.id))}</h2>',
           f'<p class="muted">{escape(w("run_line", id=i.id, when=when, status=i.status, judges=judges))}'
           + (f"<br>{escape(w('note', note=i.note))}" if i.note else "") + "</p>",
           _offline_note(i, w),
           f"<h3>{w('dataset')}</h3>",
           _table(w.headings(["dataset", "hash", "rows", "language", "texts from"]),
                  [[i.dataset_name, (i.dataset_hash or "")[:12], rep.n_rows, rep.language or "-", w.texts_from(rep.texts_source)]]),
           _table(w.headings(["category", "rows"]), [(w("none_category") if c == "(none)" else c, n) for c, n in rep.categories]),
           f"<h3>{w('per_category')}</h3>",
           _category_charts(rep, w)]
    for m, t in rep.category_tables.items():
        out.append(f"<p><b>{escape(m)}</b></p>")
        out.append(_table([w.heading("category")] + [w.metric(c) for c in t.columns],
                          [[cat] + [None if pd.isna(v) else float(v) for v in t.loc[cat]] for cat in t.index]))
    out.append(f"<h3>{w('versus')}</h3>")
    if _offline_only(i) and rep.decomposed_vs_judge:
        out.append(f'<p class="muted"><b>{w("heuristic_only")}</b> {escape(w("heuristic_only_note"))}</p>')
    if not rep.decomposed_vs_judge:
        out.append(f'<p class="muted">{w("versus_none")}</p>')
    for m, stats in rep.decomposed_vs_judge.items():
        kappa_at = f"{stats['threshold'].iloc[0]:g}"
        out.append(f"<p><b>{escape(w('versus_one', method=m, threshold=kappa_at))}</b></p>")
        out.append(_table(w.headings(["criterion", "n", "pearson", "spearman", "mad", "kappa", "note"]),
                          [[w.metric(r.criterion), r.n, r.pearson, r.spearman, r.mad, r.kappa, w.message(r.note) if isinstance(r.note, str) else ""]
                           for r in stats.itertuples()]))
    if rep.theirs is not None:
        out.append(_theirs(rep.theirs, w))
    out.append(f"<h3>{w('judge_vs_judge')}</h3>")
    pairs = rep.judge_pairs
    if pairs.empty:
        out.append(f'<p class="muted">{w("one_judge")}</p>')
    else:
        out.append(_table(w.headings(["criterion", "judge A", "judge B", "n", "Spearman [95%]", "kappa [95%]", "note"]),
                          [[w.metric(r.criterion), r.judge_a, r.judge_b, r.n, _interval(r.spearman, r.spearman_lo, r.spearman_hi),
                            _interval(r.kappa, r.kappa_lo, r.kappa_hi), w.message(r.note) if isinstance(r.note, str) else ""]
                           for r in pairs.itertuples()]))
        rows = [(f"{w.metric(r.criterion)}: {r.judge_a} vs {r.judge_b}",
                 None if math.isnan(r.spearman) else r.spearman,
                 None if math.isnan(r.spearman_lo) else r.spearman_lo, None if math.isnan(r.spearman_hi) else r.spearman_hi)
                for r in pairs.itertuples()]
        out.append(svg.intervals(w("spearman_chart"), rows, undefined=w("undefined")))
    out.append(f"<h3>{w('trust')}</h3>")
    out.append(_trust(rep.trust, w))
    out.append(f"<h3>{w('cost')}</h3>")
    c = rep.cost
    out.append(_table(w.headings(["method", "calls", "cache hits", "errors", "tokens", "cached input", "cost ($)", "seconds",
                                  "calls/row", "seconds/row"]),
                      [[r.judge, r.calls, r.cached_calls, r.errors, r.tokens,
                        "–" if math.isnan(r.cached_share) else f"{r.cached_share:.0%}", f"{r.cost_usd:.4f}", r.seconds,
                        r.calls_per_row, r.seconds_per_row] for r in c.itertuples()]))
    out.append(f"<h3>{w('chosen', n=len(rep.chosen))}</h3>")
    out.extend(_chosen(r, w) for r in rep.chosen)
    out.append("</section>")
    return "".join(out)


def render(reports: Sequence[RunReport], *, title: str | None = None, words: Words | None = None, opening: str = "") -> str:
    """The whole document in ``words``' language (English by default); ``title`` defaults to the language's.
    ``opening``: HTML put first, under the title (the views' one-screen trust answer, already escaped)."""
    w = words or Words()
    title = title or w("title")
    made = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M UTC")
    summary = ""
    if len(reports) > 1:
        summary = f"<h2>{w('runs')}</h2>" + _table(
            w.headings(["run", "dataset", "rows", "methods"]),
            [[r.info.name or r.info.id, r.info.dataset_name, r.n_rows, ", ".join(r.methods)] for r in reports])
    body = opening + summary + "".join(render_run(r, w) for r in reports)
    return (f'<!DOCTYPE html><html lang="{w.language}"><head><meta charset="utf-8"><title>{escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width, initial-scale=1"><style>{CSS}</style></head><body>'
            f'<h1>{escape(title)}</h1><p class="muted">{escape(w("made", when=made))}</p>{body}</body></html>\n')
