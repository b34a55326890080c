"""What the Trust page and Inspect's "next row to label" share: which human labels count, the run's trust
report (computed by ``rageval_core.analysis.trust.run_report``, cached per run and labels), tables of the report and
the confusion cells that open their rows in Inspect.

No statistic is computed here: every number comes from the core's report; this module only picks the
inputs (which dataset rows keep their label columns) and lays the results out.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from rageval_core.analysis.trust import run_report as trust_report
from rageval_core.store.runs import Store
from rageval_core.analysis.trust.labels import LABEL_COLUMNS
from rageval_core.analysis.trust.ranking import LabelCandidate
from rageval_core.analysis.trust.report import TrustReport
from rageval_core.analysis.trust.split_run import current_split
from rageval_core.core.types import Sample
from rageval_core.offline.limits import limits_text
from rageval_ui import nav, state
from rageval_ui.safe_text import md_escape
from rageval_ui.i18n import core, header, lang, t
from rageval_ui.runs import RunView
from rageval_ui.widgets import UNSCORED, fmt_score, metric_label, table

LABEL_FIELDS = (*LABEL_COLUMNS, "human_labels")
SUBSET_SEED = 0  # the seeded subset of rows that keep their labels when "only k rows labelled" is on
CELLS = ("tp", "fn", "fp", "tn")  # score pass · people pass, score fail · people pass, then the two "people fail"


def _cell_titles() -> dict[str, str]:
    """The confusion grid's cell names in the UI language (literal keys, so the catalogue check sees them)."""
    return {"tp": t("trust.cell.tp"), "fn": t("trust.cell.fn"), "fp": t("trust.cell.fp"), "tn": t("trust.cell.tn")}


# ----------------------------------------------------------------------------------------- labels in use
def offline_limits() -> str:
    """What the offline judge catches and misses, in the UI language (the sealed suite's frozen figures)."""
    return limits_text(lang())


def _is_label_field(key: str) -> bool:
    """A label column: ``label_faithful``, ``human_labels``, or one naming its annotator (``label_faithful@ben``)."""
    return key in LABEL_FIELDS or str(key).partition("@")[0] in LABEL_COLUMNS


def has_label_columns(sample: Sample) -> bool:
    meta = sample.metadata
    nested = meta.get("meta") if isinstance(meta.get("meta"), Mapping) else {}
    return any(_is_label_field(k) for k in [*meta, *nested])


def without_labels(sample: Sample) -> Sample:
    """``sample`` with its label columns dropped (top level and under ``meta``), all else unchanged."""
    meta = {k: v for k, v in sample.metadata.items() if not _is_label_field(k)}
    if isinstance(meta.get("meta"), Mapping):
        meta["meta"] = {k: v for k, v in meta["meta"].items() if not _is_label_field(k)}
    return Sample(sample.id, sample.question, sample.contexts, sample.answer, sample.ground_truth, meta)


def kept_label_rows(samples: Sequence[Sample], keep: int | None, seed: int = SUBSET_SEED) -> set[str]:
    """Ids of the rows whose label columns count: all labelled rows, or a seeded uniform random ``keep`` of
    them (the corrected estimate assumes the labelled rows are a random subset, so never the first k)."""
    labelled = [s.id for s in samples if has_label_columns(s)]
    if keep is None or keep >= len(labelled):
        return set(labelled)
    return set(random.Random(seed).sample(labelled, max(0, keep)))


def labelled_samples(samples: Sequence[Sample], keep: int | None) -> list[Sample]:
    """The samples as the report should see them: label columns only on the kept rows."""
    kept = kept_label_rows(samples, keep)
    return [s if s.id in kept else without_labels(s) for s in samples]


def run_samples(view: RunView) -> list[Sample]:
    """The run's rows with their texts, in dataset order (the loaded dataset may hold more rows)."""
    return [view.samples[sid] for sid in view.sample_ids() if sid in view.samples]


def label_keep() -> int | None:
    return state.get(state.LABEL_KEEP)


# ----------------------------------------------------------------------------------------- the report
def _signature(view: RunView, run_store: Store, keep: int | None, show_test: bool) -> str:
    """What the report depends on: the run (and how far it got), the kept label rows, the stored 👍 / 👎,
    the stored label split and whether test is open (the look itself is counted once, by the page)."""
    from rageval_core.store import annotations

    stored = run_store.labels(view.info.dataset_hash or "")
    named = [run_store.annotator_labels(view.info.dataset_hash or ""),
             sorted(annotations.settlements(run_store, view.info.dataset_hash or ""))]
    split = current_split(run_store, view.info.dataset_hash, dataset_name=view.info.dataset_name,
                          row_ids=view.sample_ids()) if view.info.dataset_hash else None
    dealt = None if split is None else [split.seed, split.fractions, sorted(split.assignment.items()), split.test_looks]
    return json.dumps(
        [view.run_id, view.info.status, len(view.frame), view.info.dataset_hash, keep, sorted(view.samples), stored,
         dealt, show_test, named],
        sort_keys=True, default=str,
    )


@st.cache_data(show_spinner=False, max_entries=16)
def _cached_report(
    signature: str, store_path: str, run_id: str, _samples: list[Sample] | None, show_test: bool
) -> TrustReport:
    return trust_report.run_report(Store(store_path), run_id, samples=_samples, show_test=show_test, look=None)


def report(view: RunView, run_store: Store, keep: int | None, show_test: bool = False) -> TrustReport:
    """The trust report of ``view``'s run with the labels in use (cached until the run, a label or the split
    changes); ``show_test`` includes a split's test rows (the caller has counted the look)."""
    samples = labelled_samples(run_samples(view), keep) if view.samples else None
    signature = _signature(view, run_store, keep, show_test)
    return _cached_report(signature, str(run_store.path), view.run_id, samples, show_test)


def next_to_label(view: RunView, run_store: Store, keep: int | None, *, skip: str | None = None) -> LabelCandidate | None:
    """The first (row, criterion) of the core's label-next ranking for this run, other than row ``skip`` (never a
    row of the split's test set, never one already labelled).

    Only the ranking is needed here, so it calls ``label_next_for_run`` rather than building the whole report
    (bootstrap intervals included)."""
    samples = labelled_samples(run_samples(view), keep) if view.samples else None
    ranked = trust_report.label_next_for_run(run_store, view.info, samples, view.results, view.sample_ids())
    return next((c for c in ranked if c.row_id != skip), None)


def open_in_inspect(run_id: str, row_id: str) -> None:
    """Switch to Inspect on ``row_id`` of ``run_id``."""
    st.session_state[state.SELECTED_RUN] = run_id
    st.session_state[state.INSPECT_SAMPLE] = row_id
    st.switch_page(nav.INSPECT.path)


# ----------------------------------------------------------------------------------------- tables
def fmt_ci(stat: Any) -> str:
    """``0.812 [0.701, 0.903]``; ``-`` when undefined (e.g. AUROC with one class)."""
    value = getattr(stat, "value", None)
    if value is None:
        return UNSCORED
    low, high = getattr(stat, "low", None), getattr(stat, "high", None)
    return fmt_score(value) if low is None or high is None else f"{fmt_score(value)} [{fmt_score(low)}, {fmt_score(high)}]"


def coverage_frame(rep: TrustReport) -> pd.DataFrame:
    sources = {"dataset": t("label_source.dataset"), "file": t("label_source.file"), "inspector": t("label_source.inspector")}
    return pd.DataFrame(
        [{"criterion": metric_label(c.criterion), "labelled": f"{c.labelled} / {c.rows}", "pass": c.positive,
          "fail": c.labelled - c.positive, "sources": ", ".join(f"{sources.get(k, k)} {v}" for k, v in c.sources.items()),
          "conflicts": c.conflicts} for c in rep.coverage],
        columns=["criterion", "labelled", "pass", "fail", "sources", "conflicts"],
    )


def threshold_cell(a: Any) -> str:
    """``0.63 · calibrated on dev``, ``0.780 (en) / 0.724 (ja) · shipped offline calibration``, ``0.5 · default``."""
    text = getattr(a.threshold, "text", None)
    if text is not None:  # the long "shipped offline calibration (...)" is the column's tooltip
        return f"{text()} · {t('trust.threshold_shipped_short')}"
    return f"{a.threshold:.3g} · " + (t("trust.threshold_default") if a.threshold_source == "default"
                                     else t("trust.threshold_dev"))


def agreement_frame(rep: TrustReport | Sequence[Any]) -> pd.DataFrame:
    """One row per metric × method: a report's agreement, or a list of ``MethodAgreement`` (one split's)."""
    rows = rep.agreement if isinstance(rep, TrustReport) else rep
    return pd.DataFrame(
        [{"criterion": metric_label(a.metric), "method": a.method, "n": a.n_labelled,
          "threshold": threshold_cell(a),
          "people pass": a.n_positive, "AUROC": fmt_ci(a.auroc), "balanced accuracy": fmt_ci(a.balanced_accuracy),
          "kappa": fmt_ci(a.kappa), "best threshold": fmt_ci(a.best_threshold),
          "pairs": UNSCORED if a.pairwise is None else f"{fmt_ci(a.pairwise)} of {a.n_pairs}",
          "unscored labelled": a.unscored_labelled,
          "interval": ", ".join(dict.fromkeys(st_.interval for st_ in (a.auroc, a.balanced_accuracy, a.kappa))),
          "notes": " · ".join(core(n) for n in a.notes)} for a in rows],
    )


def _config(frame: pd.DataFrame, widths: Mapping[str, int], helps: Mapping[str, str],
            labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``column_config`` of the columns ``frame`` shows: each heading in the UI language (or ``labels``' short one), a
    fixed width in pixels (so the table fits the page at 1,400 px instead of growing a horizontal scrollbar) and a
    tooltip where given."""
    return {c: st.column_config.Column((labels or {}).get(c) or header(c), width=widths.get(c), help=helps.get(c))
            for c in frame.columns}


# Pixel widths that add up to less than an expander's inner width at a 1,400-px window (906 px with the sidebar open).
AGREEMENT_WIDTHS = {"criterion": 122, "method": 100, "n": 32, "threshold": 138, "people pass": 80, "AUROC": 124,
                    "balanced accuracy": 124, "kappa": 124, "best threshold": 50, "unscored labelled": 40}
MOVED_OUT = ("interval", "pairs", "notes")
BEST = "best threshold"  # shown as "best" (trust.best_short), its full heading in the tooltip  # said under the table, not in columns that would push it past the page


def _lines_below(frame: pd.DataFrame, column: str) -> None:
    """A caption per row whose ``column`` ("pairs" or "notes") says something: "Faithfulness · decomposed: …"."""
    for _, r in frame.iterrows():
        if r[column] in ("", UNSCORED):
            continue
        scorer = md_escape(f"{r['criterion']} · {r['method']}")
        text = md_escape(r[column])
        st.caption(t("trust.pairs_line", scorer=scorer, text=text) if column == "pairs" else
                   t("trust.note_line", scorer=scorer, text=text))


def agreement_table(rep: TrustReport | Sequence[Any]) -> None:
    """The agreement table, fitted to the page: the best threshold without its interval, the unscored column only
    when some row has one; the pairs and the notes as lines under it, the kinds of interval in AUROC's tooltip."""
    frame = agreement_frame(rep)
    if frame.empty:
        return
    frame["best threshold"] = [UNSCORED if a.best_threshold.value is None else fmt_score(a.best_threshold.value)
                               for a in (rep.agreement if isinstance(rep, TrustReport) else rep)]
    kinds = ", ".join(dict.fromkeys(k for cell in frame["interval"] for k in str(cell).split(", ") if k))
    shown = frame.drop(columns=[*MOVED_OUT, *(["unscored labelled"] if (frame["unscored labelled"] == 0).all() else [])])
    shipped = f"{t('trust.threshold_shipped_short')}: {t('trust.threshold_shipped')}"
    helps = {"threshold": f"{t('trust.threshold_help')} ({shipped})",
             "AUROC": f"{t('trust.auroc_help')} {t('trust.intervals_help', kinds=kinds)}",
             "balanced accuracy": t("trust.bacc_help"),
             BEST: f"{header(BEST)}: {t('trust.best_threshold_help')}"}  # the full heading, shortened above it
    labels = {BEST: t("trust.best_short")}
    table(shown, hide_index=True, width="stretch", column_config=_config(shown, AGREEMENT_WIDTHS, helps, labels))
    _lines_below(frame, "pairs")
    _lines_below(frame, "notes")


ESTIMATE_WIDTHS = {"criterion": 125, "method": 105, "score mean (all rows)": 128, "labels only": 165, "corrected": 128,
                   "Rogan–Gladen": 128, "score − people": 55, "as tight as k labels": 55}


def estimate_table(rep: TrustReport) -> None:
    """The corrected estimate's table, fitted to the page (its notes as lines under it), with what Rogan–Gladen and
    the corrected interval are in the column tooltips."""
    frame = estimate_frame(rep)
    if frame.empty:
        return
    shown = frame.drop(columns=["notes"])
    helps = {"corrected": t("trust.corrected_help"), "Rogan–Gladen": t("trust.rogan_gladen_help"),
             "labels only": t("trust.labels_only_help"), "as tight as k labels": t("trust.tight_help"),
             "score mean (all rows)": t("trust.score_mean_help", n=rep.n_rows)}
    table(shown, hide_index=True, width="stretch", column_config=_config(shown, ESTIMATE_WIDTHS, helps))
    _lines_below(frame, "notes")


def estimate_frame(rep: TrustReport) -> pd.DataFrame:
    rows = []
    for e in rep.estimates:
        est = e.estimate
        rows.append({
            "criterion": metric_label(e.metric), "method": e.method,
            "score mean (all rows)": fmt_ci(est.judge_only),  # over every scored row: n in the column's tooltip
            "labels only": f"{fmt_ci(est.labels_only)} n={est.labels_only.n}",
            "corrected": fmt_ci(est.corrected),
            "Rogan–Gladen": UNSCORED if e.rogan_gladen is None or e.rogan_gladen.value is None else fmt_ci(e.rogan_gladen),
            "score − people": fmt_score(est.judge_bias) if est.judge_bias is not None else UNSCORED,
            "as tight as k labels": UNSCORED if est.effective_labels is None else f"{est.effective_labels:.0f}",
            "notes": " · ".join(core(n) for n in [*e.notes, *([e.rogan_gladen.note] if e.rogan_gladen and e.rogan_gladen.note
                                                               else [])]),
        })
    return pd.DataFrame(rows)


def calibration_frame(rep: TrustReport) -> pd.DataFrame:
    """Thresholds chosen on dev: balanced accuracy there, at the default, and on test (when open)."""
    return pd.DataFrame(
        [{"criterion": metric_label(c.metric), "method": c.method, "threshold": round(c.threshold, 3),
          "dev balanced accuracy": f"{fmt_ci(c.dev)} n={c.dev.n}",
          "dev at the default": fmt_ci(c.dev_at_default),
          "test balanced accuracy": t("trust.test_hidden_cell") if c.test is None else f"{fmt_ci(c.test)} n={c.test.n}"}
         for c in rep.calibration or []],
    )


def calibration_headings(rep: TrustReport) -> dict[str, str]:
    """``column_config`` of ``calibration_frame``: the default threshold named in its column's heading."""
    return {"dev at the default": t("trust.dev_at_default", threshold=f"{rep.threshold:g}")}


def bias_frame(rep: TrustReport) -> pd.DataFrame:
    """Judge error against row features, smallest p first (the report's bias tests, Holm-adjusted)."""
    tests = sorted(rep.bias or [], key=lambda b: b.p_value)
    return pd.DataFrame(
        [{"criterion": metric_label(b.metric), "method": b.method, "feature": b.feature,
          "effect": f"{'ρ' if b.kind == 'spearman' else 'η²'} {b.effect:+.3f}", "n": b.n, "p": round(b.p_value, 4),
          "Holm p": round(b.p_adjusted, 4) if b.p_adjusted is not None else None, "flag": "⚠️" if b.flagged else "",
          "mean error by group": ", ".join(f"{g} {m:+.2f}" for g, m in b.group_means.items())} for b in tests],
        columns=["criterion", "method", "feature", "effect", "n", "p", "Holm p", "flag", "mean error by group"],
    )


def estimate_points(rep: TrustReport) -> pd.DataFrame:
    """The three estimates of every criterion × method as points with intervals, for ``charts.estimates``."""
    rows = []
    for e in rep.estimates:
        for kind, est in (("score mean", e.estimate.judge_only), ("labels only", e.estimate.labels_only),
                          ("corrected", e.estimate.corrected)):
            if est.value is not None:
                rows.append({"scorer": f"{metric_label(e.metric)} · {e.method}", "estimate": kind,
                             "value": est.value, "low": est.low, "high": est.high, "n": est.n})
    return pd.DataFrame(rows, columns=["scorer", "estimate", "value", "low", "high", "n"])


def label_next_frame(candidates: Sequence[LabelCandidate], view: RunView) -> pd.DataFrame:
    return pd.DataFrame(
        [{"row": c.row_id, "criterion": metric_label(c.criterion), "question": view.question_snippet(c.row_id, 40),
          "priority": round(c.priority, 3), "why": core(c.reason), "near threshold": round(c.uncertainty, 3), "methods disagree": round(c.disagreement, 3),
          "repeat spread": round(c.spread, 3)} for c in candidates],
        columns=["row", "criterion", "question", "priority", "why", "near threshold", "methods disagree", "repeat spread"],
    )


# ----------------------------------------------------------------------------------------- confusion
def confusion_grid(agreement: Any, run_id: str, key: str) -> None:
    """A 2 × 2 grid (score pass/fail × people pass/fail); each cell lists its rows as buttons that open
    the row in Inspect."""
    matrix = agreement.confusion
    st.markdown(t("trust.matrix", criterion=md_escape(metric_label(agreement.metric)), method=md_escape(agreement.method),
                  threshold=f"{matrix.threshold:g}"))
    titles = _cell_titles()
    for pair in (CELLS[:2], CELLS[2:]):
        cols = st.columns(2)
        for col, cell in zip(cols, pair):
            ids = list(getattr(matrix, cell))
            with col.popover(f"{titles[cell]}: {len(ids)}", width="stretch", disabled=not ids):
                for rid in ids:
                    if st.button(t("compare.inspect", row=md_escape(rid)), key=f"{key}.{cell}.{rid}"):
                        open_in_inspect(run_id, rid)
