"""The Prompts page's "vs people" panel: few-shot examples from the train split, then the edited rubric and a saved
(or preset) version judged on the labelled dev rows of both languages (each row with the prompt of its language),
each version's agreement with people at its threshold calibrated on those dev rows, and the paired difference.
The rows, labels and split are those of the labelled run chosen on the Trust page (else the loaded dataset's).

The rows, the split, the runs and the statistics come from ``rageval_core.session.versus_run``; this module
reads state, calls it and draws tables. The shipped recording of a real small model (sample_data/replay/
``trust_labelled_ja_…``) makes the loop visible with no key: one click loads its two versions and replays them.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from rageval_core.analysis.trust.report import Stat
from rageval_core.analysis.trust.run_report import merged_labels
from rageval_core.analysis.trust.splits import SPLITS, TRAIN
from rageval_core.analysis.trust.versus import VersusReport
from rageval_core.session.versus_run import RecordedLoop, Version, dataset_split, judged_rows, recorded_loop, run_versus
from rageval_core.scoring import few_shot
from rageval_core.scoring.rubric import PRESET_IDS, Rubric, load_rubric
from rageval_core.store.rubric_versions import RubricStore
from rageval_core.store.runs import Store
from rageval_core.core.errors import RagevalError
from rageval_core.core.types import Sample
from rageval_ui import data, runs, sidebar, state, widgets
from rageval_ui import trust as trust_ui
from rageval_ui.i18n import core, t
from rageval_ui.trust import fmt_ci
from rageval_ui.safe_text import md_escape

RESULT = "prompts.versus_result"
AUTORUN = "prompts.versus_autorun"  # set by the recorded loop's button: judge both versions on the next run
AGAINST = "prompts.versus_against"
PASSES, FAILS = "prompts.shots_pass", "prompts.shots_fail"
DEMO = data.SAMPLE_DIR / "replay" / "trust_labelled_ja_qwen2.5-coder-1.5b.versions.json"
EDITOR = "editor"
STATS = ("auroc", "balanced_accuracy", "tpr", "tnr", "kappa")


def demo() -> RecordedLoop | None:
    return recorded_loop(DEMO)


def _baselines(language: str, versions_store: RubricStore) -> dict[str, Version]:
    """What the edited rubric can be compared with: saved rubric versions of its language, then the presets."""
    out = {f"version:{v.id}": Version(v.label, Rubric.from_json(v.rubric_json())) for v in versions_store.versions("rubric") if v.language == language}
    out.update({f"preset:{p}": Version(t("versus.preset", id=p), load_rubric(p, language)) for p in PRESET_IDS})
    return out


def _use_demo(rec: RecordedLoop, load: Callable[[Rubric], None]) -> None:
    """Save the recording's versions, edit the newest, compare it with the first, replay the recorded calls."""
    store = RubricStore()
    saved = [store.save_rubric(v.rubric, v.label) for v in rec.versions]
    load(rec.versions[-1].rubric)
    st.session_state[AGAINST] = f"version:{saved[0].id}"
    st.session_state.pop(RESULT, None)
    sidebar.use_replay(rec.log)
    st.session_state[AUTORUN] = True  # the click shows the comparison, not a second button to press


def _replaying(rec: RecordedLoop | None) -> bool:
    """The recorded prompt loop's call log is the provider now (its rows are one language's: replay only those)."""
    return rec is not None and state.get(state.PROVIDER) == "replay" and (state.get(state.REPLAY_LOG) or "") == rec.log


def labelled_source(ws: data.Workset, run_store: Store) -> tuple[list[Sample], str, str, str | None]:
    """(rows, dataset hash, name, run id): the labelled run chosen on the Trust page (its rows, labels and split),
    else the loaded dataset (run id ``None``)."""
    run_id = state.get(state.TRUST_RUN)
    if run_id:
        view = runs.load(run_id, ws, run_store)
        if view is not None and view.info.dataset_hash:
            samples = trust_ui.run_samples(view)
            if samples:
                return samples, view.info.dataset_hash, view.info.dataset_name or ws.name, run_id
    return list(ws.samples), ws.content_hash or "", ws.name, None


def _offer_demo(dataset_hash: str, load: Callable[[Rubric], None]) -> None:
    rec = demo()
    if rec is None or dataset_hash != rec.dataset_hash:
        return
    if _replaying(rec):
        st.caption(t("versus.demo_label", model=md_escape(rec.model), date=md_escape(rec.recorded_on), server=md_escape(rec.server),
                     n=len(rec.rows)))
        return
    st.button(t("versus.demo", model=md_escape(rec.model), date=md_escape(rec.recorded_on)), key="prompts.versus_demo", on_click=_use_demo,
              args=(rec, load), help=t("versus.demo_help"), type="primary")


def _few_shot(samples: list[Sample], rubric: Rubric, labels: dict, assignment: dict, set_examples: Callable[[list], None]) -> None:
    st.markdown(t("versus.shots_heading"))
    current = few_shot.examples_of(rubric)
    st.caption(t("versus.shots_now", rows=md_escape(", ".join(e.row_id for e in current))) if current else t("versus.shots_none"))
    passes, fails, add, drop = st.columns([1, 1, 2, 2])
    n_pass = passes.number_input(t("versus.shots_pass"), 0, 4, 1, key=PASSES)
    n_fail = fails.number_input(t("versus.shots_fail"), 0, 4, 1, key=FAILS)
    train = [r for r, s in assignment.items() if s == TRAIN]
    chosen = few_shot.choose_examples(samples, labels, rubric, train, passes=int(n_pass), fails=int(n_fail))
    add.markdown("&nbsp;")
    add.button(t("versus.shots_add", n=len(chosen)), key="prompts.shots_add", on_click=set_examples, args=(chosen,),
               disabled=not chosen)
    drop.markdown("&nbsp;")
    drop.button(t("versus.shots_drop"), key="prompts.shots_drop", on_click=set_examples, args=([],), disabled=not current)


def _cell(stat: Stat, difference: bool, excludes: bool) -> str:
    if not difference or stat.value is None:
        return fmt_ci(stat)
    sign = "+" if stat.value > 0 else ""
    return f"{sign}{fmt_ci(stat)}{' ✱' if excludes else ''}"


def _threshold(agreement) -> str:
    """``0.62 · calibrated on dev`` (chosen on these dev rows) or ``0.5 · default`` (one class on dev)."""
    return f"{agreement.threshold:.3g} · " + (t("trust.threshold_default") if agreement.threshold_source == "default"
                                             else t("trust.threshold_dev"))


def report_frame(rep: VersusReport, criterion: str) -> pd.DataFrame:
    """One criterion: a line per version (n, unscored, each statistic with its interval), then new − old."""
    lines = []
    for label in (rep.old, rep.new):
        found = rep.find(label, criterion)
        if found is None:
            continue
        stats = {"auroc": found.agreement.auroc, "balanced_accuracy": found.agreement.balanced_accuracy,
                 "tpr": found.tpr, "tnr": found.tnr, "kappa": found.agreement.kappa}
        lines.append({"version": label, "n": found.agreement.n_labelled, "unscored": found.agreement.unscored_labelled,
                      "threshold": _threshold(found.agreement), **{k: _cell(v, False, False) for k, v in stats.items()}})
    diff = next((d for d in rep.differences if d.criterion == criterion), None)
    if diff is not None:
        lines.append({"version": t("versus.difference"), "n": diff.n, "unscored": None, "threshold": "",
                      **{k: _cell(diff.differences[k], True, diff.excludes_zero(k)) for k in STATS}})
    frame = pd.DataFrame(lines, columns=["version", "n", "unscored", "threshold", *STATS])
    frame["unscored"] = frame["unscored"].astype("Int64")  # blank on the difference line, not NaN
    return frame


def _show(result) -> None:
    rep: VersusReport = result.report
    calls = ", ".join(
        t("versus.calls_replayed", version=md_escape(label), calls=int(r.provider_calls), cached=int(r.cache_hits))
        if r.provider == "replay" else
        t("versus.calls", version=md_escape(label), calls=int(r.provider_calls), cached=int(r.cache_hits))
        for label, r in result.runs.items())
    st.caption(t("versus.done", n=len(result.rows), calls=calls))
    if rep.calibrated:
        st.caption(t("versus.thresholds", default=f"{rep.threshold:g}"))
    for criterion in dict.fromkeys(d.criterion for d in rep.differences):
        st.markdown(f"**{md_escape(widgets.metric_label(criterion))}**")
        widgets.table(report_frame(rep, criterion), hide_index=True, width="stretch", placeholder=widgets.UNSCORED)
    st.caption(t("versus.legend", old=md_escape(rep.old), new=md_escape(rep.new), iterations=rep.iterations))
    for note in [*result.notes, *rep.notes]:
        st.info(md_escape(core(note)), icon="ℹ️")


def render(ws: data.Workset, rubric: Rubric | None, template_text: str | None, language: str, versions_store: RubricStore,
           *, load: Callable[[Rubric], None], set_examples: Callable[[list], None]) -> None:
    """The panel; ``load`` puts a rubric into the editor, ``set_examples`` replaces the edited rubric's examples."""
    st.subheader(t("versus.heading"))
    st.caption(t("versus.help"))
    run_store = Store()
    samples, dataset_hash, name, followed = labelled_source(ws, run_store)
    st.caption(t("versus.source_run", run=md_escape(followed)) if followed else t("versus.source_dataset", name=md_escape(name)))
    _offer_demo(dataset_hash, load)
    labels = merged_labels(samples, run_store.labels(dataset_hash))
    if not labels.labels:
        st.info(t("versus.no_labels"))
        return
    split = dataset_split(run_store, dataset_hash, samples, labels, ws.name)
    counts = split.counts()
    st.caption(t("versus.split", seed=split.seed, counts=md_escape(" · ".join(f"{s} {counts.get(s, 0)}" for s in SPLITS)),
                 looks=int(split.test_looks)))
    if rubric is None:
        return
    by_criterion = {c: labels.for_criterion(c) for c in labels.criteria()}
    _few_shot(samples, rubric, by_criterion, split.assignment, set_examples)
    options = _baselines(language, versions_store)
    if st.session_state.get(AGAINST) not in options:
        st.session_state[AGAINST] = next(iter(options))
    against = st.selectbox(t("versus.against"), list(options), format_func=lambda k: options[k].label, key=AGAINST)
    rec = demo()
    only = rec.versions[-1].rubric.language if _replaying(rec) and rec is not None else None  # the recording's rows
    rows, _ = judged_rows(samples, labels, split.assignment, [rubric, options[against].rubric], language=only)
    problems = sidebar.config_problems()
    sidebar.show_problems(problems)
    if sidebar.is_offline():
        st.warning(t("versus.offline"), icon="🧮")
    clicked = st.button(t("versus.run", n=len(rows)), key="prompts.versus_run", type="primary", disabled=not rows or bool(problems))
    if clicked or (st.session_state.pop(AUTORUN, False) and rows and not problems):
        saved = versions_store.find_by_hash(rubric.content_hash, "rubric")
        new = Version(saved[-1].label if saved and template_text is None else EDITOR, rubric, template_text)
        try:
            with st.spinner(t("versus.running", n=len(rows))):
                st.session_state[RESULT] = run_versus(
                    samples, labels, options[against], new, config=sidebar.current_config(), store=run_store,
                    assignment=split.assignment, dataset_name=name, dataset_digest=dataset_hash, language=only)
        except RagevalError as exc:
            widgets.show_error(t("versus.failed"), exc)
    result = st.session_state.get(RESULT)
    if result is not None:
        _show(result)
