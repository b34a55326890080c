"""The tables Inspect shows for one row: its results in reading order, and each metric's evidence
(offline relevancy asks, per-chunk precision verdicts, TP / FP / FN statements) as frames."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rageval_core.store.runs import CallEntry
from rageval_core.core.types import DECOMPOSED, METRIC_IDS, MetricResult
from rageval_ui.i18n import t
from rageval_ui.widgets import fmt_score


def reading_order(results: Sequence[MetricResult]) -> list[MetricResult]:
    """Decomposed results first, then each judge; within a method, metrics in their usual order."""
    def key(r: MetricResult) -> tuple[bool, str, int]:
        return r.method != DECOMPOSED, r.method, METRIC_IDS.index(r.metric) if r.metric in METRIC_IDS else len(METRIC_IDS)

    return sorted(results, key=key)


def asks_frame(offline_relevancy: Mapping[str, Any]) -> pd.DataFrame:
    """The offline answer-relevancy stand-in: each ask of the question, the answer types found, coverage, score."""
    return pd.DataFrame([
        {
            t("evidence.ask"): a["text"],
            t("evidence.answer_types"): ", ".join(f"{k} {'✓' if ok else '✗'}" for k, ok in a["types_found"].items()),
            t("evidence.topic_words"): fmt_score(a["coverage"]),
            t("evidence.missing"): ", ".join(a["missing"]),
            t("col.score"): fmt_score(a["score"]),
        }
        for a in offline_relevancy["asks"]
    ])


def chunks_frame(details: Mapping[str, Any]) -> pd.DataFrame:
    """Context precision's per-chunk verdicts, the chunks numbered [1], [2], … like the contexts shown above."""
    chunks = pd.DataFrame(details["verdicts"])
    if "context_index" in chunks:
        chunks.insert(0, "context", chunks.pop("context_index").map(lambda i: f"[{int(i) + 1}]"))
    if details.get("precision_at_k"):
        chunks["precision@k"] = pd.Series(details["precision_at_k"]).map(fmt_score)
    return chunks


def correctness_frame(details: Mapping[str, Any]) -> pd.DataFrame:
    """Answer correctness's statements by class (TP, then FP, then FN) with the classifier's reason."""
    rows = [
        {t("evidence.class"): label, t("evidence.statement"): item.get("statement"), t("col.reason"): item.get("reason")}
        for label in ("TP", "FP", "FN")
        for item in details.get(label) or []
    ]
    return pd.DataFrame(rows, columns=[t("evidence.class"), t("evidence.statement"), t("col.reason")])


def call_title(n: int, call: CallEntry) -> str:
    """"3. faithfulness · verify · openai/gpt-4o-mini · 0.42 s": who called, the task, the model and the outcome."""
    status = t("evidence.cache_hit") if call.cached else (t("evidence.error") if call.error else f"{call.latency_s:.2f} s")
    who = call.scorer if call.scorer and call.scorer != call.method else (call.method or call.scorer)
    return f"{n}. {who} · {call.task} · {call.provider}/{call.model} · {status}"
