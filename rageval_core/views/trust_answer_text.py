"""The one-screen answer in words, in Japanese or English: the same sentences on the Trust page and at the top of the
HTML report (one catalogue here, since the report is written below the UI and must not read the UI's catalogue).

``texts(line, lang)`` gives the verdict word and four sentences (ranks, pass / fail, share, what would settle it),
each with its figure and 95% interval; ``html(answer, lang)`` the report's block. Nothing is computed here
beyond formatting: the figures and states come from ``views.trust_answer``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from html import escape

from rageval_core.views.trust_answer import (
    CALIBRATE, GOOD, NOT_USABLE, NOT_YET, OPEN, SHARE_CORRECTED, SHARE_LABELS, SHARE_UNDEFINED, USABLE, WEAK,
    AnswerLine, Figure, TrustAnswer,
)

LANGUAGES = ("en", "ja")
COLOURS = {USABLE: "green", CALIBRATE: "orange", NOT_YET: "gray", NOT_USABLE: "red"}  # the verdict's badge

WORDS: dict[str, dict[str, str]] = {
    "en": {
        "heading": "Can I trust this score?",
        "caption": "Each criterion × method against people's labels (up to {n} labelled rows). A figure is good when its "
                   "whole 95% interval is at or above {bar}, weak when all of it is below, not clear yet when it straddles {bar}.",
        "no_labels": "Not known yet: no scored row has a human label. Label rows (👍 / 👎 in Inspect, or label columns "
                     "in the dataset) to get an answer.",
        "verdict.usable": "usable as is",
        "verdict.calibrate": "ranks well, threshold needs calibration",
        "verdict.not_yet": "not yet known: label {n} more rows",
        "verdict.not_yet_open": "not yet known: label more rows",
        "verdict.not_usable": "does not rank answers as people do",
        "rank.good": "Yes: AUROC {fig}.",
        "rank.weak": "No: AUROC {fig} (0.5 = chance).",
        "rank.open": "Not clear yet: AUROC {fig}.",
        "rank.one_class": "Unknown: people {verdict} all {n} labelled rows, so there is nothing to rank.",
        "rank.none": "Unknown: no labelled row was scored by this method.",
        "pf.good": "Yes: balanced accuracy {fig} at {threshold}.",
        "pf.weak": "No, it misses people: balanced accuracy {fig} at {threshold}.",
        "pf.open": "Not clear yet: balanced accuracy {fig} at {threshold}.",
        "pf.unknown": "Unknown on these labels (one class, or none).",
        "threshold.default": "{t} (default)",
        "threshold.dev": "{t} (calibrated on dev)",
        "threshold.shipped": "{t} (shipped offline calibration)",
        "share.corrected": "{fig}, corrected for the verdict's errors (the score passes {apparent}).",
        "share.labels": "{fig} by people's labels, every row labelled (the score passes {apparent}).",
        "share.undefined": "Cannot be corrected: the verdict is no better than a coin on the labelled rows. "
                           "People pass {fig}.",
        "share.none": "Unknown.",
        "settle.usable": "Settled by these {n} labels; more only narrow the intervals.",
        "settle.calibrate_default": "Calibrate the threshold: deal a label split (the best threshold on these rows is {best}).",
        "settle.calibrate_dev": "The threshold calibrated on dev does not carry over: use the score to rank, or label more rows.",
        "settle.more": "Label {n} more rows of this criterion{next}.",
        "settle.more_than_left": "Label {n} more rows: more than the {left} unlabelled rows here, so evaluate more rows too{next}.",
        "settle.more_none_left": "Every row is labelled: evaluate about {n} more labelled rows.",
        "settle.unknown": "Label more rows{next}, until people both pass and fail some.",
        "settle.not_usable": "More labels would not change this: its AUROC stays below {bar}. Change the prompt or the method.",
        "settle.next": " (next: {rows})",
        "settle.estimate": "Labels needed are an estimate: the figure stays where it is and its interval narrows as 1/√n.",
        "people.pass": "passed",
        "people.fail": "failed",
        "report.verdict": "verdict",
        "report.criterion": "criterion · method",
        "report.ranks": "ranks answers as people do? (AUROC)",
        "report.pass_fail": "pass / fail usable as is? (balanced accuracy)",
        "report.share": "share that passes",
        "report.settle": "what would settle it",
    },
    "ja": {
        "heading": "このスコアは信頼できるか",
        "caption": "評価基準 × 手法ごとに人のラベル（最大 {n} 行）と比べます。95%区間全体が {bar} 以上なら良い、"
                   "すべて {bar} 未満なら弱い、{bar} をまたぐならまだはっきりしない、とみなします。",
        "no_labels": "まだ分かりません：スコアの付いた行に人のラベルがありません。行にラベルを付けると（Inspect の 👍 / 👎、"
                     "またはデータセットのラベル列）答えが出ます。",
        "verdict.usable": "そのまま使える",
        "verdict.calibrate": "順位付けは良い・しきい値の調整が必要",
        "verdict.not_yet": "まだ分からない：あと {n} 行ラベル付け",
        "verdict.not_yet_open": "まだ分からない：もっとラベル付けが必要",
        "verdict.not_usable": "人と同じ順位付けになっていない",
        "rank.good": "はい：AUROC {fig}。",
        "rank.weak": "いいえ：AUROC {fig}（0.5 = 偶然）。",
        "rank.open": "まだはっきりしません：AUROC {fig}。",
        "rank.one_class": "不明：ラベル付きの {n} 行すべてを人が{verdict}としたため、比べる相手がありません。",
        "rank.none": "不明：この手法はラベル付きの行にスコアを付けていません。",
        "pf.good": "はい：{threshold}でのバランス精度 {fig}。",
        "pf.weak": "いいえ、人とずれています：{threshold}でのバランス精度 {fig}。",
        "pf.open": "まだはっきりしません：{threshold}でのバランス精度 {fig}。",
        "pf.unknown": "このラベルでは不明です（一種類のみ、またはなし）。",
        "threshold.default": "しきい値 {t}（既定）",
        "threshold.dev": "しきい値 {t}（dev で調整）",
        "threshold.shipped": "しきい値 {t}（同梱のオフライン較正）",
        "share.corrected": "{fig}（判定の誤りを補正。スコア上は {apparent}）。",
        "share.labels": "人のラベルで {fig}（全行にラベルあり。スコア上は {apparent}）。",
        "share.undefined": "補正できません：ラベル付きの行で判定が偶然と変わりません。人の合格率は {fig}。",
        "share.none": "不明。",
        "settle.usable": "この {n} 件のラベルで決着しています。ラベルを増やすと区間が狭まるだけです。",
        "settle.calibrate_default": "しきい値を調整してください：ラベルを分割します（この行での最良のしきい値は {best}）。",
        "settle.calibrate_dev": "dev で調整したしきい値が通用しません：スコアは順位付けに使うか、さらにラベル付けしてください。",
        "settle.more": "この評価基準であと {n} 行ラベル付けしてください{next}。",
        "settle.more_than_left": "あと {n} 行のラベルが必要です。未ラベルの {left} 行より多いので、評価する行も増やしてください{next}。",
        "settle.more_none_left": "全行にラベルがあります：ラベル付きの行をおよそ {n} 行増やして評価してください。",
        "settle.unknown": "人の合格と不合格の両方がそろうまでラベル付けしてください{next}。",
        "settle.not_usable": "ラベルを増やしても変わりません：AUROC は {bar} 未満にとどまります。プロンプトか手法を変えてください。",
        "settle.next": "（次：{rows}）",
        "settle.estimate": "必要なラベル数は目安です：値が今のままで、区間が 1/√n で狭まると仮定しています。",
        "people.pass": "合格",
        "people.fail": "不合格",
        "report.verdict": "判定",
        "report.criterion": "評価基準 · 手法",
        "report.ranks": "人と同じように順位付けするか（AUROC）",
        "report.pass_fail": "合否をそのまま使えるか（バランス精度）",
        "report.share": "合格率",
        "report.settle": "決着に必要なもの",
    },
}


@dataclass(frozen=True)
class LineText:
    """One line of the answer in words."""

    verdict: str
    ranks: str
    pass_fail: str
    share: str
    settle: str


def words(lang: str) -> Mapping[str, str]:
    return WORDS["ja" if lang == "ja" else "en"]


def fig(f: Figure) -> str:
    """``0.812 [0.701, 0.903]`` (``0.812`` with no interval)."""
    if f.value is None:
        return "-"
    return f"{f.value:.3f}" if f.low is None or f.high is None else f"{f.value:.3f} [{f.low:.3f}, {f.high:.3f}]"


def pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def share_fig(f: Figure) -> str:
    """``46% [33%, 60%]``."""
    if f.value is None:
        return "-"
    return pct(f.value) if f.low is None or f.high is None else f"{pct(f.value)} [{pct(f.low)}, {pct(f.high)}]"


def threshold_text(line: AnswerLine, lang: str) -> str:
    w = words(lang)
    by_language = (line.threshold_detail or {}).get("by_language")
    if by_language:
        return w["threshold.shipped"].format(t=" / ".join(f"{v:.3f} ({k})" for k, v in by_language.items()))
    key = "threshold.default" if line.threshold_source == "default" else "threshold.dev"
    return w[key].format(t=f"{line.threshold:.3g}")


def verdict_word(line: AnswerLine, lang: str) -> str:
    w = words(lang)
    if line.verdict == NOT_YET:
        return w["verdict.not_yet_open"] if line.more_labels is None else w["verdict.not_yet"].format(n=f"{line.more_labels:,}")
    return w[f"verdict.{line.verdict}"]


def _ranks(line: AnswerLine, w: Mapping[str, str]) -> str:
    if line.ranking.value is not None:
        return w[f"rank.{line.ranking_state}"].format(fig=fig(line.ranking))
    if line.n_labelled and line.n_positive in (0, line.n_labelled):
        return w["rank.one_class"].format(n=line.n_labelled,
                                          verdict=w["people.pass" if line.n_positive else "people.fail"])
    return w["rank.none"]


def _pass_fail(line: AnswerLine, lang: str, w: Mapping[str, str]) -> str:
    if line.pass_fail_state in (GOOD, WEAK, OPEN):
        return w[f"pf.{line.pass_fail_state}"].format(fig=fig(line.pass_fail), threshold=threshold_text(line, lang))
    return w["pf.unknown"]


def _share(line: AnswerLine, w: Mapping[str, str]) -> str:
    if line.share_kind == SHARE_CORRECTED:
        return w["share.corrected"].format(fig=share_fig(line.share), apparent=pct(line.apparent))
    if line.share_kind == SHARE_LABELS:
        return w["share.labels"].format(fig=share_fig(line.share), apparent=pct(line.apparent))
    if line.share_kind == SHARE_UNDEFINED:
        return w["share.undefined"].format(fig=share_fig(line.labels_share))
    return w["share.none"]


def _settle(line: AnswerLine, w: Mapping[str, str], bar: float, row_name: Callable[[str], str]) -> str:
    nxt = w["settle.next"].format(rows=", ".join(row_name(r) for r in line.next_rows)) if line.next_rows else ""
    if line.verdict == USABLE:
        return w["settle.usable"].format(n=line.n_labelled)
    if line.verdict == CALIBRATE:
        if line.threshold_source == "default":
            return w["settle.calibrate_default"].format(best=fig(line.best_threshold))
        return w["settle.calibrate_dev"]
    if line.verdict == NOT_USABLE:
        return w["settle.not_usable"].format(bar=f"{bar:g}")
    if line.more_labels is None:
        return w["settle.unknown"].format(next=nxt)
    n = f"{line.more_labels:,}"
    if line.unlabelled == 0:
        return w["settle.more_none_left"].format(n=n)
    if line.more_labels > line.unlabelled:
        return w["settle.more_than_left"].format(n=n, left=line.unlabelled, next=nxt)
    return w["settle.more"].format(n=n, next=nxt)


def texts(line: AnswerLine, lang: str, *, bar: float = 0.7, row_name: Callable[[str], str] = lambda r: f"#{r}") -> LineText:
    """The verdict word and the four sentences of ``line`` in ``lang`` ("ja" or "en")."""
    w = words(lang)
    return LineText(verdict_word(line, lang), _ranks(line, w), _pass_fail(line, lang, w), _share(line, w),
                     _settle(line, w, bar, row_name))


def html(answer: TrustAnswer, lang: str, *, metric_label: Callable[[str], str] = lambda m: m) -> str:
    """The answer as the report's opening block: a heading, one table row per metric × method, the note on labels."""
    w = words(lang)
    if not answer.lines:
        return f'<section class="answer"><h2>{escape(w["heading"])}</h2><p>{escape(w["no_labels"])}</p></section>'
    n = max(line.n_labelled for line in answer.lines)
    head = "".join(f"<th>{escape(w[k])}</th>" for k in ("report.criterion", "report.verdict", "report.ranks",
                                                         "report.pass_fail", "report.share", "report.settle"))
    body = []
    for line in answer.lines:
        x = texts(line, lang, bar=answer.bar)
        body.append(
            f'<tr class="verdict-{escape(line.verdict)}"><td>{escape(metric_label(line.metric))} · {escape(line.method)}</td>'
            f'<td><span class="badge {COLOURS[line.verdict]}">{escape(x.verdict)}</span></td>'
            + "".join(f"<td>{escape(s)}</td>" for s in (x.ranks, x.pass_fail, x.share, x.settle)) + "</tr>")
    note = "" if not any(line.more_labels for line in answer.lines) else f'<p class="muted">{escape(w["settle.estimate"])}</p>'
    return (f'<section class="answer"><h2>{escape(w["heading"])}</h2>'
            f'<p class="muted">{escape(w["caption"].format(n=n, bar=f"{answer.bar:g}"))}</p>'
            f'<table class="answer"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>{note}</section>')


__all__ = ["COLOURS", "LANGUAGES", "LineText", "WORDS", "fig", "html", "pct", "share_fig", "texts", "verdict_word",
           "words"]
