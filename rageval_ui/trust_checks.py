"""The Trust page's stability and probes panels: repeat stability of a run made with repeats, and probes
run through the core (``rageval_core.analysis.trust.checks``) on a helper thread, kept beside the run's trust
report so its export carries them.

Every figure comes from the core's reports (``StabilityReport`` / ``ProbeReport``, rendered from their
``to_dict()`` so a report the CLI saved shows the same way); nothing is computed here.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from rageval_core.analysis.trust import checks as trust_checks
from rageval_core.session import probes as probe_runs
from rageval_core.store import trust_reports as trust_report
from rageval_core.scoring.metrics.base import Scorer
from rageval_core.scoring.metrics.judge import JudgeScorer
from rageval_core.scoring.metrics.registry import DECOMPOSED_METRICS, KNOWN_OPTIONS, build_scorers
from rageval_core.scoring.rubric import PRESET_IDS
from rageval_core.store.runs import Store
from rageval_core.analysis.trust.probes import PROBES
from rageval_core.core.errors import RagevalError
from rageval_core.core.types import Sample
from rageval_ui import nav, sidebar, state
from rageval_ui.runs import RunView
from rageval_ui.trust import run_samples
from rageval_ui.i18n import core, header, t
from rageval_ui.names import probe_name
from rageval_ui.errors import unexpected_error
from rageval_ui.widgets import UNSCORED, fmt_score, metric_label, show_error, table
from rageval_ui.safe_text import md_code, md_escape

if TYPE_CHECKING:
    from rageval_core.providers.config import ProviderConfig

REPEATS_CLI = "python -m rageval_core trust DATA --repeats 3"
PROBES_CLI = "python -m rageval_core trust RUN_ID --probes all"


def _signed(value: Any) -> str:
    return UNSCORED if value is None else f"{float(value):+.3f}"


def _interval(value: Any, low: Any, high: Any, signed: bool = False) -> str:
    fmt = _signed if signed else fmt_score
    if value is None:
        return UNSCORED
    return fmt(value) if low is None or high is None else f"{fmt(value)} [{fmt(low)}, {fmt(high)}]"


# ----------------------------------------------------------------------------------------- stability
def stability_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """Per metric × method: the mean with its interval across repeats, per-repeat means, spread, flips."""
    return pd.DataFrame(
        [{"criterion": metric_label(m["metric"]), "method": m["method"], "rows": m["n_rows"],
          "mean [95% across repeats]": _interval(m["mean"], m["low"], m["high"]),
          "per-repeat means": " / ".join(fmt_score(v) for v in m["repeat_means"]),
          "mean sd": fmt_score(m["mean_sd"]), "max range": fmt_score(m["max_range"]),
          "flip rate": fmt_score(m["flip_rate"]), "rows flipping": m["rows_flipping"],
          "unscored": ", ".join(f"{k} {v}" for k, v in (m.get("unscored_rows") or {}).items()) or "0"}
         for m in report.get("metrics", [])],
    )


def unstable_rows_frame(report: Mapping[str, Any], top: int = 10) -> pd.DataFrame:
    """The rows whose score moved most between repeats (largest sd first), as the core reported them."""
    rows = sorted((r for r in report.get("rows", []) if r.get("sd")), key=lambda r: -(r["sd"] or 0))[:top]
    return pd.DataFrame(
        [{"row": r["row_id"], "criterion": metric_label(r["metric"]), "method": r["method"],
          "values per repeat": " / ".join(fmt_score(v) for v in r["values"]), "sd": fmt_score(r["sd"]),
          "flip rate": fmt_score(r["flip_rate"])} for r in rows],
        columns=["row", "criterion", "method", "values per repeat", "sd", "flip rate"],
    )


@st.cache_data(show_spinner=False, max_entries=8)
def _stability(store_path: str, run_id: str, n_results: int) -> dict[str, Any]:
    return trust_checks.stability_for_run(Store(store_path), run_id).to_dict()


def stability_panel(view: RunView, run_store: Store) -> None:
    """Repeat stability (under the page's heading, ``stability.heading``)."""
    repeats = int((view.info.settings or {}).get("repeats", 1))
    if repeats < 2:
        st.info(t("stability.once", cli=md_code(REPEATS_CLI)))
        if st.button(t("stability.set_repeats"), key="trust.repeats"):
            st.session_state[state.EVALUATE_REPEATS] = 3
            st.switch_page(nav.EVALUATE.path)
        return
    report = _stability(str(run_store.path), view.run_id, len(view.frame))
    st.caption(t("stability.caption", n=int(report["repeats"]), threshold=f"{report['threshold']:g}",
                 note=md_escape(core(report["note"]))))
    table(stability_frame(report), hide_index=True, width="stretch")
    moving = unstable_rows_frame(report)
    if moving.empty:
        st.caption(t("stability.none_moved"))
    else:
        st.markdown(t("stability.moved"))
        table(moving, hide_index=True, width="stretch")


# ----------------------------------------------------------------------------------------- probes
def scorers_of_run(scorer_names: Sequence[str], options: Mapping[str, Any] | None) -> tuple[list[Scorer], list[str]]:
    """The run's decomposed metrics and preset judges rebuilt from their names, and the names that cannot be
    (edited or saved rubrics are not stored with the run, so probes leave them out and say so)."""
    metrics = [n for n in scorer_names if n in DECOMPOSED_METRICS]
    judges, left_out = [], []
    for name in scorer_names:
        if name in metrics:
            continue
        rubric = name.split(":", 1)[1] if name.startswith("judge:") else None
        if rubric in PRESET_IDS:
            judges.append(JudgeScorer(rubric))
        else:
            left_out.append(name)
    metric_options = {k: v for k, v in (options or {}).items() if k in KNOWN_OPTIONS}  # a CLI run stores run options too
    return [*build_scorers(metrics, metric_options), *judges], left_out


@dataclass
class ProbeJob:
    """Probes of one run scoring on a helper thread; the page polls it like an evaluation job."""

    run_id: str
    probes: list[str]
    current: str = ""
    done_tasks: int = 0
    total_tasks: int = 0
    report: dict[str, Any] | None = None
    error: str | None = None
    started_at: float = field(default_factory=time.time)
    _thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def wait(self, timeout: float | None = None) -> bool:
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running


def run_rows(view: RunView) -> tuple[list[Sample], list[Sample]]:
    """The run's rows with their texts, and the dataset's other rows (parallel rows for the language probe)."""
    in_run = run_samples(view)
    ids = {s.id for s in in_run}
    return in_run, [s for sid, s in view.samples.items() if sid not in ids]


def start_probes(view: RunView, probes: Sequence[str], config: ProviderConfig, store_path: str) -> ProbeJob:
    """Run ``probes`` on the run's rows with its scorers (``probe_runs.run_probes``) on a helper thread,
    then save the report's ``probes`` section beside the run's trust report."""
    job = ProbeJob(view.run_id, list(probes))
    samples, parallel = run_rows(view)
    scorers, _ = scorers_of_run(view.info.scorers, (view.info.settings or {}).get("options"))

    def progress(name: str, p: Any) -> None:
        job.current, job.done_tasks, job.total_tasks = name, p.done, p.total

    def work() -> None:
        try:
            run_store = Store(store_path)
            report = probe_runs.run_probes(
                samples, scorers, list(probes), store=run_store, base_run_id=view.run_id, config=config,
                parallel=parallel, progress=progress, dataset_name=view.info.dataset_name,
            ).to_dict()
            saved = trust_report.saved_report(run_store, view.run_id) or {}
            saved.setdefault("sections", {})["probes"] = report
            trust_report.save_report(run_store, view.run_id, saved)
            job.report = report
        except RagevalError as exc:
            job.error = str(exc)
        except Exception as exc:  # noqa: BLE001 - last resort: a helper thread has no page to fall back on
            job.error = unexpected_error(exc)

    job._thread = threading.Thread(target=work, name=f"rageval-probes-{view.run_id}", daemon=True)
    job._thread.start()
    return job


def _largest(shift: Mapping[str, Any]) -> Any:
    """The largest row shift with its sign (probe − original): the row that moved most, whose shift a report saved
    before ``max_shift`` kept its sign still carries; else ``max_shift``."""
    top = shift.get("top") or []
    return top[0].get("shift", shift.get("max_shift")) if top else shift.get("max_shift")


SHIFT_COLUMNS = ("mean shift [95% CI]", "largest row shift", "moved most")
PROBE_WIDTHS = {"probe": 110, "criterion": 120, "method": 100, "pairs": 45, "mean shift [95% CI]": 160,
                "largest row shift": 110, "flagged when": 85, "flag": 55, "moved most": 110}  # 895 px: fits at 1,400


def probes_frame(report: Mapping[str, Any]) -> pd.DataFrame:
    """One line per probe × metric × method: mean shift with its interval, the flag and its tolerance."""
    rows = []
    for probe in report.get("probes", []):
        for s in probe.get("shifts", []):
            bound = f"> +{s['tolerance']:g}" if s["upward_only"] else t("probes.abs_shift_over", tolerance=f"{s['tolerance']:g}")
            rows.append({
                "probe": probe_name(probe["probe"]), "criterion": metric_label(s["metric"]), "method": s["method"], "pairs": s["n"],
                "mean shift [95% CI]": _interval(s["mean_shift"], s["low"], s["high"], signed=True),
                "largest row shift": _signed(_largest(s)), "flagged when": bound,
                "flag": "⚠️ " + t("probes.flag") if s["flagged"] else t("probes.ok"),
                "moved most": ", ".join(f"{r['row_id']} {r['shift']:+.2f}" for r in s.get("top", [])),
            })
    return pd.DataFrame(rows, columns=["probe", "criterion", "method", "pairs", "mean shift [95% CI]",
                                       "largest row shift", "flagged when", "flag", "moved most"])


def probe_notes(report: Mapping[str, Any]) -> list[str]:
    """Per probe: its cases, what it skipped and why (a probe with nothing to score says so)."""
    notes = []
    for probe in report.get("probes", []):
        skipped = ", ".join(f"{k} {v}" for k, v in (probe.get("skipped") or {}).items()) or t("common.none")
        notes.append(t("probes.note_line", probe=probe_name(probe["probe"]), n=probe["n_cases"], note=core(probe.get("note", "")), skipped=skipped))
    return notes


def saved_probes(run_store: Store, run_id: str) -> dict[str, Any] | None:
    saved = trust_report.saved_report(run_store, run_id) or {}
    return (saved.get("sections") or {}).get("probes")


def probes_panel(view: RunView, run_store: Store) -> None:
    """Probes (under the page's heading, ``probes.heading``): the saved shifts, or the controls that run them."""
    st.caption(t("probes.help"))
    st.caption(t("probes.shift_help"))
    job: ProbeJob | None = st.session_state.get(state.PROBE_JOB)
    if job is not None and job.run_id == view.run_id and job.running:
        _probe_progress()
        return
    if job is not None and job.run_id == view.run_id and job.error:
        show_error(t("probes.failed", run=view.run_id, error=job.error))
    report = saved_probes(run_store, view.run_id)
    if report is not None:
        flagged = report.get("flagged") or []
        (st.warning if flagged else st.success)(
            t("probes.flagged", names=md_escape(", ".join(probe_name(p) for p in flagged))) if flagged else t("probes.none_flagged"))
        if report.get("note"):
            st.caption(md_escape(core(report["note"])))
        frame = probes_frame(report)
        shift_help = t("probes.shift_help")
        table(frame, hide_index=True, width="stretch", column_config={
            c: st.column_config.Column(header(c), help=shift_help if c in SHIFT_COLUMNS else None, width=PROBE_WIDTHS.get(c))
            for c in frame.columns})
        with st.expander(t("probes.notes")):
            for note in probe_notes(report):
                st.markdown(md_escape(note))
    else:
        st.info(t("probes.none_yet", cli=md_code(PROBES_CLI)))
    _probe_controls(view, run_store, rerun=report is not None)


def _probe_controls(view: RunView, run_store: Store, *, rerun: bool) -> None:
    scorers, left_out = scorers_of_run(view.info.scorers, (view.info.settings or {}).get("options"))
    chosen = st.multiselect(t("probes.heading"), list(PROBES), default=list(PROBES), key="trust.probes",
                            format_func=probe_name, placeholder=t("common.choose"))
    if left_out:
        st.caption(t("probes.left_out", names=md_escape(", ".join(left_out))))
    problems = sidebar.config_problems()
    if view.info.provider != sidebar.current_config().provider:
        st.caption(t("probes.other_provider", judge=sidebar.provider_label(), provider=md_escape(view.info.provider)))
    if st.button(t("probes.rerun") if rerun else t("probes.run"), key="trust.run_probes",
                 disabled=not chosen or not scorers or not view.samples or bool(problems)):
        st.session_state[state.PROBE_JOB] = start_probes(view, chosen, sidebar.current_config(), str(run_store.path))
        st.rerun()
    if not view.samples:
        st.caption(t("probes.no_rows"))


@st.fragment(run_every=0.5)
def _probe_progress() -> None:
    job: ProbeJob | None = st.session_state.get(state.PROBE_JOB)
    if job is None:
        return
    if job.running:
        share = job.done_tasks / job.total_tasks if job.total_tasks else 0.0
        st.progress(share, text=t("probes.progress", probe=md_escape(probe_name(job.current) if job.current else "…"), done=int(job.done_tasks),
                                         total=int(job.total_tasks)))
        return
    st.rerun(scope="app")
