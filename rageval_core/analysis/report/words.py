"""The HTML report's own words in Japanese and English: headings, table labels and explanations.

The report is a file people read away from the workbench, so it is written in one language: the UI's when the
Compare page builds it, ``report --lang`` (default: the data's language) from the CLI. Messages the core wrote
with a code (trust notes, the annotators' sentences) are put in that language by ``core.messages.render``, the same
words on the page and in a report the CLI wrote. Metric ids, statistic names (AUROC, kappa, Spearman, Rogan–Gladen),
method ids and model names are the same in both languages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rageval_core.core import messages

LANGUAGES = ("en", "ja")

# key → (English, Japanese); ``str.format`` templates.
WORDS: dict[str, tuple[str, str]] = {
    "title": ("RAG evaluation report", "RAG 評価レポート"),
    "made": ("Made {when} by the RAG Eval Workbench. Self-contained: no script, no network; charts are inline SVG.",
             "{when} に RAG Eval Workbench で作成。単体で開けます（スクリプトなし・通信なし、グラフは埋め込み SVG）。"),
    "runs": ("Runs", "実行"),
    "run": ("Run {name}", "実行 {name}"),
    "run_line": ("{id} · {when} · status {status} · judged by {judges}", "{id} · {when} · 状態 {status} · 判定 {judges}"),
    "note": ("Note: {note}", "メモ: {note}"),
    "dataset": ("Dataset", "データセット"),
    "per_category": ("Per category (the source article's layout: mean over scored rows, - when none scored)",
                     "カテゴリ別（元記事の形式：採点できた行の平均、採点された行がなければ -）"),
    "versus": ("Decomposed vs single-prompt judge", "分解型と一括判定（単一プロンプト）"),
    "versus_none": ("This run has no decomposed metric beside a judge.", "この実行には、判定器と並ぶ分解型メトリクスがありません。"),
    "versus_one": ("decomposed vs {method} (rows scored by both; kappa at {threshold})",
                   "分解型と {method}（両方で採点された行、kappa のしきい値 {threshold}）"),
    "heuristic_only": ("Note:", "注:"),
    "heuristic_only_note": (
        "both methods come from the offline heuristic (no LLM on either side), so agreement between them measures "
        "nothing about an LLM judge: it compares the heuristic with itself. Judge with a real model, or replay a recording.",
        "どちらの手法もオフラインのヒューリスティック（LLM なし）から出ているため、両者の一致は LLM 判定について何も測りません"
        "（ヒューリスティックを自分自身と比べているだけです）。実際のモデルで判定するか、記録を再生してください。"),
    "judge_vs_judge": ("Judge vs judge", "判定器どうし"),
    "one_judge": ("One judge only: nothing to pair.", "判定器が一つだけのため、組にできません。"),
    "spearman_chart": ("Spearman between judges, with 95% bootstrap intervals", "判定器間の Spearman（95% ブートストラップ区間）"),
    "undefined": ("undefined", "定義できない"),
    "trust": ("Agreement with human labels (trust)", "人のラベルとの一致（信頼性）"),
    "trust_none": ("Not computed for this run (Trust page or <code>trust</code> CLI with human labels).",
                   "この実行では計算されていません（人のラベルを用意して「信頼性」ページか <code>trust</code> コマンドで計算します）。"),
    "cost": ("Cost", "費用"),
    "chosen": ("Chosen rows ({n})", "選んだ行（{n} 行）"),
    "spread": ("largest disagreement between methods on one criterion: {spread}", "一つの観点での手法間の最大の食い違い: {spread}"),
    "question": ("Question", "質問"),
    "answer": ("Answer", "回答"),
    "ground_truth": ("Ground truth", "正解"),
    "context": ("Context {i}", "コンテキスト {i}"),
    "claims_legend": ("Claims: {ok} · {bad} (decomposed faithfulness verdicts)", "主張: {ok} · {bad}（分解型の忠実性の判定）"),
    "supported": ("supported", "裏付けあり"),
    "not_supported": ("not supported", "裏付けなし"),
    "no_texts": ("Row texts not available (the dataset file was not found).", "行の本文がありません（データセットのファイルが見つかりません）。"),
    "threshold_shipped": ("{shown} (shipped offline calibration, fitted on the benchmarks' dev halves)",
                          "{shown}（同梱のオフライン校正、ベンチマークの dev 半分で決定）"),
    "threshold_dev": ("calibrated on dev", "dev で校正"),
    "threshold_default": ("default", "既定"),
    "split": ("Label split (seed {seed}): {rows}; {shown}, test opened {looks} times.",
              "ラベルの分割（シード {seed}）: {rows}。{shown}。test を開いた回数 {looks}。"),
    "split_rows": ("{name} {n} rows", "{name} {n} 行"),
    "test_shown": ("test figures shown", "test の数値を表示"),
    "test_hidden": ("test figures hidden", "test の数値は非表示"),
    "calibrated": ("<b>Pass thresholds calibrated on dev</b> (best balanced accuracy; dev figures are optimistic)",
                   "<b>dev で校正した合格しきい値</b>（バランス正解率が最大のもの。dev の数値は楽観的です）"),
    "hidden": ("hidden", "非表示"),
    "share": ("<b>Share that passes</b>: corrected by the labels (prediction-powered) and by the verdict's "
              "sensitivity and specificity (Rogan–Gladen)",
              "<b>合格する割合</b>: ラベルで補正（prediction-powered）と、判定の感度・特異度で補正（Rogan–Gladen）"),
    "bias": ("<b>Bias in the labelled rows</b>: {flagged} of {n} tests flagged (judge error against row features, "
             "Holm-adjusted p &lt; 0.05)",
             "<b>ラベル付きの行での偏り</b>: {n} 件の検定のうち {flagged} 件に警告（行の特徴ごとの判定誤差、Holm 補正後 p &lt; 0.05）"),
    "people": ("<b>Agreement between people</b> ({names}; {n} disagreement(s) to settle)",
               "<b>人どうしの一致</b>（{names}、決着させる食い違い {n} 件）"),
    "people_row": ("people ({statistic})", "人どうし（{statistic}）"),
    "rows_word": ("rows", "行"),
    "none_category": ("(none)", "（なし）"),
    "texts.the samples given": ("the samples given", "渡された行"),
    "texts.the run": ("the run", "実行に保存された行"),
    "texts.found": ("{name} (found by hash)", "{name}（ハッシュで発見）"),
    "offline_heading": ("Offline heuristic.", "オフラインのヒューリスティック。"),
    "verdict.within": ("within", "人どうしの幅の内側"),  # the judge against the people's range (annotator_report)
    "verdict.below": ("below", "人どうしの幅より下"),
    "verdict.above": ("above", "人どうしの幅より上"),
    "verdict.unknown": ("unknown", "判断できません"),
    "theirs": ("Their scores vs ours", "ほかのツールのスコアと私たちのスコア"),
    "theirs_note": ("The rows came with another tool's scores. Those come from the file, named by tool and column; they "
                    "are never one of our methods and enter none of our figures.",
                    "行にはほかのツールのスコアが付いていました。それらはファイルから読んだもので、ツール名と列名で示します。"
                    "私たちの手法ではなく、私たちの数値には一切入りません。"),
    "theirs_compared": ("compared: {source} {column} → {metric} ({scored} of {rows} rows scored by {source})",
                        "比較: {source} {column} → {metric}（{rows} 行のうち {scored} 行を {source} が採点）"),
    "theirs_not_compared": ("not compared: {source} {column} ({why})", "比較なし: {source} {column}（{why}）"),
    "theirs_not_in_run": ("this run did not compute {metric}", "この実行では {metric} を計算していません"),
    "theirs_no_metric": ("no metric of ours measures it", "これを測るメトリクスが私たちにはありません"),
    "theirs_agreement": ("Agreement (rows scored by both; mean diff = ours − theirs; same side and kappa at {threshold})",
                         "一致（両方で採点された行。平均差 = 私たち − ほかのツール。同じ側と kappa のしきい値 {threshold}）"),
    "theirs_rows": ("{source}: {column} (from the file) vs ours by {method}, the largest disagreement first",
                    "{source}: {column}（ファイルから）と私たちの {method}、食い違いの大きい順"),
}

# Table headings: key → (English, Japanese).
HEADINGS: dict[str, tuple[str, str]] = {
    "claim": ("claim", "主張"), "verdict": ("verdict", "判定"), "reason": ("reason", "理由"),
    "criterion": ("criterion", "観点"), "method": ("method", "手法"), "score": ("score", "スコア"),
    "labelled rows": ("labelled rows", "ラベル付きの行"), "pass threshold": ("pass threshold", "合格しきい値"),
    "AUROC [95%]": ("AUROC [95%]", "AUROC [95%]"), "balanced accuracy [95%]": ("balanced accuracy [95%]", "バランス正解率 [95%]"),
    "kappa [95%]": ("kappa [95%]", "kappa [95%]"), "note": ("note", "注記"), "threshold": ("threshold", "しきい値"),
    "dev balanced accuracy": ("dev balanced accuracy", "dev のバランス正解率"), "at the default": ("at the default", "既定のしきい値で"),
    "test": ("test", "test"), "corrected [95%]": ("corrected [95%]", "補正後 [95%]"),
    "Rogan–Gladen [95%]": ("Rogan–Gladen [95%]", "Rogan–Gladen [95%]"), "feature": ("feature", "特徴"),
    "effect": ("effect", "効果量"), "adjusted p": ("adjusted p", "補正後の p"), "people / judge": ("people / judge", "人 / 判定器"),
    "rows": ("rows", "行数"), "kappa or alpha [95%]": ("kappa or alpha [95%]", "kappa または alpha [95%]"),
    "annotators / kappa with each": ("annotators / kappa with each", "アノテーター / 各人との kappa"),
    "judge is": ("judge is", "判定器は"), "dataset": ("dataset", "データセット"), "hash": ("hash", "ハッシュ"),
    "language": ("language", "言語"), "texts from": ("texts from", "本文の出所"), "category": ("category", "カテゴリ"),
    "n": ("n", "件数"), "pearson": ("pearson", "Pearson"), "spearman": ("spearman", "Spearman"),
    "mad": ("mad", "平均絶対差"), "kappa": ("kappa", "kappa"), "judge A": ("judge A", "判定器 A"),
    "judge B": ("judge B", "判定器 B"), "Spearman [95%]": ("Spearman [95%]", "Spearman [95%]"),
    "calls": ("calls", "呼び出し"), "cache hits": ("cache hits", "キャッシュヒット"), "errors": ("errors", "エラー"),
    "tokens": ("tokens", "トークン"), "cached input": ("cached input", "キャッシュ済み入力"), "cost ($)": ("cost ($)", "費用（$）"),
    "seconds": ("seconds", "秒"), "calls/row": ("calls/row", "行あたりの呼び出し"), "seconds/row": ("seconds/row", "行あたりの秒数"),
    "run": ("run", "実行"), "methods": ("methods", "手法"),
    "their column": ("their column", "ほかのツールの列"), "metric": ("metric", "メトリクス"),
    "our method": ("our method", "私たちの手法"), "mean diff": ("mean diff", "平均差"), "same side": ("same side", "同じ側"),
    "row": ("row", "行"), "theirs": ("theirs", "ほかのツール"), "ours": ("ours", "私たち"),
    "ours − theirs": ("ours − theirs", "私たち − ほかのツール"),
}

METRICS: dict[str, str] = {  # the criteria's Japanese names (the UI catalogue's metric.<id>)
    "faithfulness": "忠実性", "answer_relevancy": "回答の関連性", "context_precision": "コンテキストの精度",
    "context_recall": "コンテキストの再現率", "context_relevance": "コンテキストの関連性", "answer_correctness": "回答の正確性",
}


@dataclass(frozen=True)
class Words:
    """The report's words in one language, the core's coded messages included."""

    language: str = "en"

    @property
    def ja(self) -> bool:
        return self.language == "ja"

    def __call__(self, key: str, **kw: Any) -> str:
        en, ja = WORDS[key]
        return (ja if self.ja else en).format(**kw)

    def heading(self, key: str) -> str:
        en, ja = HEADINGS.get(key, (key, key))
        return ja if self.ja else en

    def headings(self, keys: list[str]) -> list[str]:
        return [self.heading(k) for k in keys]

    def metric(self, metric: str) -> str:
        """A criterion's name: "Faithfulness", 「忠実性」; a custom criterion's id made readable."""
        if self.ja and metric in METRICS:
            return METRICS[metric]
        return metric.replace("_", " ").title()

    def message(self, text: Any) -> str:
        """A message the core wrote (a trust note, a sentence) in this language (as written when it has no code)."""
        if not text:
            return ""
        return messages.render(str(text), self.language)

    def verdict(self, verdict: Any) -> str:
        """Where a judge sits against the people's range (within / below / above / unknown), in this language."""
        return self(f"verdict.{verdict}") if f"verdict.{verdict}" in WORDS else self.message(verdict)

    def texts_from(self, source: str | None) -> str:
        """Where the row texts came from (``build.find_samples``), in this language."""
        if not source:
            return "-"
        if source in ("the samples given", "the run"):
            return self(f"texts.{source}")
        if source.endswith(" (found by hash)"):
            return self("texts.found", name=source.removesuffix(" (found by hash)"))
        return source


def language_of(language: str | None, data_language: str | None = None) -> str:
    """The report's language: the one asked for, else the data's, else English."""
    for candidate in (language, data_language):
        if candidate in LANGUAGES:
            return str(candidate)
    return "en"
