"""The Prompts page's "vs people" panel: few-shot examples from the train split, then the edited rubric and a saved
(or preset) version judged on the labelled dev rows, each version's agreement with people and the paired difference.

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
from rageval_ui import data, sidebar, state, widgets
from rageval_ui.i18n import core, t
from rageval_ui.trust import fmt_ci
from rageval_ui.safe_text import md_escape

RESULT = "prompts.versus_result"
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


def _offer_demo(ws: data.Workset, load: Callable[[Rubric], None]) -> None:
    rec = demo()
    if rec is None or ws.content_hash != rec.dataset_hash:
        return
    if state.get(state.PROVIDER) == "replay" and (state.get(state.REPLAY_LOG) or "") == rec.log:
        st.caption(t("versus.demo_label", model=md_escape(rec.model), date=md_escape(rec.recorded_on), server=md_escape(rec.server),
                     n=len(rec.rows)))
        return
    st.button(t("versus.demo", model=md_escape(rec.model), date=md_escape(rec.recorded_on)), key="prompts.versus_demo", on_click=_use_demo,
              args=(rec, load), help=t("versus.demo_help"), type="primary")


def _few_shot(ws: data.Workset, rubric: Rubric, labels: dict, assignment: dict, set_examples: Callable[[list], None]) -> None:
    st.markdown(t("versus.shots_heading"))
    current = few_shot.examples_of(rubric)
    st.caption(t("versus.shots_now", rows=md_escape(", ".join(e.row_id for e in current))) if current else t("versus.shots_none"))
    passes, fails, add, drop = st.columns([1, 1, 2, 2])
    n_pass = passes.number_input(t("versus.shots_pass"), 0, 4, 1, key=PASSES)
    n_fail = fails.number_input(t("versus.shots_fail"), 0, 4, 1, key=FAILS)
    train = [r for r, s in assignment.items() if s == TRAIN]
    chosen = few_shot.choose_examples(ws.samples, labels, rubric, train, passes=int(n_pass), fails=int(n_fail))
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
                      **{k: _cell(v, False, False) for k, v in stats.items()}})
    diff = next((d for d in rep.differences if d.criterion == criterion), None)
    if diff is not None:
        lines.append({"version": t("versus.difference"), "n": diff.n, "unscored": None,
                      **{k: _cell(diff.differences[k], True, diff.excludes_zero(k)) for k in STATS}})
    frame = pd.DataFrame(lines, columns=["version", "n", "unscored", *STATS])
    frame["unscored"] = frame["unscored"].astype("Int64")  # blank on the difference line, not NaN
    return frame


def _show(result) -> None:
    rep: VersusReport = result.report
    calls = ", ".join(t("versus.calls", version=md_escape(label), calls=int(r.provider_calls), cached=int(r.cache_hits))
                      for label, r in result.runs.items())
    st.caption(t("versus.done", n=len(result.rows), threshold=f"{rep.threshold:g}", calls=calls))
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
    _offer_demo(ws, load)
    run_store = Store()
    labels = merged_labels(ws.samples, run_store.labels(ws.content_hash or ""))
    if not labels.labels:
        st.info(t("versus.no_labels"))
        return
    split = dataset_split(run_store, ws.content_hash or "", ws.samples, labels, ws.name)
    counts = split.counts()
    st.caption(t("versus.split", seed=split.seed, counts=md_escape(" · ".join(f"{s} {counts.get(s, 0)}" for s in SPLITS)),
                 looks=int(split.test_looks)))
    if rubric is None:
        return
    by_criterion = {c: labels.for_criterion(c) for c in labels.criteria()}
    _few_shot(ws, rubric, by_criterion, split.assignment, set_examples)
    options = _baselines(language, versions_store)
    if st.session_state.get(AGAINST) not in options:
        st.session_state[AGAINST] = next(iter(options))
    against = st.selectbox(t("versus.against"), list(options), format_func=lambda k: options[k].label, key=AGAINST)
    rows, _ = judged_rows(ws.samples, labels, split.assignment, [rubric, options[against].rubric])
    problems = sidebar.config_problems()
    sidebar.show_problems(problems)
    if sidebar.is_offline():
        st.warning(t("versus.offline"), icon="🧮")
    if st.button(t("versus.run", n=len(rows)), key="prompts.versus_run", type="primary", disabled=not rows or bool(problems)):
        saved = versions_store.find_by_hash(rubric.content_hash, "rubric")
        new = Version(saved[-1].label if saved and template_text is None else EDITOR, rubric, template_text)
        try:
            with st.spinner(t("versus.running", n=len(rows))):
                st.session_state[RESULT] = run_versus(
                    ws.samples, labels, options[against], new, config=sidebar.current_config(), store=run_store,
                    assignment=split.assignment, dataset_name=ws.name, dataset_digest=ws.content_hash)
        except RagevalError as exc:
            widgets.show_error(t("versus.failed"), exc)
    result = st.session_state.get(RESULT)
    if result is not None:
        _show(result)
