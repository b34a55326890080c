"""Prompts & rubric, in four tabs: edit criteria, level descriptions and the raw judge template (placeholder checks,
a preview of the filled prompt for a row, the judge run on the pinned rows); versions (save, diff, and the grid of
two or more versions side by side on the same rows); vs people; and the decomposed steps' templates."""

from __future__ import annotations

import pandas as pd
import streamlit as st


from rageval_core.scoring.metrics.judge import (
    check_template,
    judge_template,
    render_judge_prompt,
    template_from_text,
    template_notes,
)
from rageval_core.scoring.rubric import PRESET_IDS, Rubric, RubricError, is_preset, load_rubric
from rageval_core.core.errors import RagevalError
from rageval_core.store.rubric_versions import RubricStore
from rageval_core.store.runs import Store
from rageval_core.scoring.few_shot import with_examples
from rageval_ui import data, evaluation, jobs, nav, prompt_versions, rubric_edit, sidebar, state, step_edit, versus_panel, widgets
from rageval_ui.runs import run_status
from rageval_ui.i18n import core, header, headers, t

CRITERIA = "prompts.criteria"
LEVELS = "prompts.levels"
BASE = "prompts.base"
VERSION = "prompts.editor_version"
RUBRIC_ID = "prompts.rubric_id"
INSTRUCTIONS = "prompts.instructions"
TAB = "prompts.tab"  # the label of the open tab


def _load(rubric) -> None:
    """Start editing ``rubric``: fresh tables, its id and instructions, the shipped template."""
    criteria, levels = rubric_edit.rubric_to_frames(rubric)
    st.session_state.update({CRITERIA: criteria, LEVELS: levels, BASE: rubric, state.RUBRIC: rubric})
    st.session_state[RUBRIC_ID] = rubric.id
    st.session_state[INSTRUCTIONS] = rubric.instructions
    st.session_state[state.TEMPLATE_TEXT] = None
    st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1


def _table_editor(name: str, heading: str, column_config: dict, version: int) -> bool:
    """One of the rubric's two tables in a data editor; True when an edit was applied to the stored table."""
    st.markdown(heading)
    frame: pd.DataFrame = st.session_state[name]
    key = f"{name}_editor.{version}"  # a new version starts the editor with no pending edits
    st.data_editor(frame, key=key, num_rows="dynamic", hide_index=True, width="stretch",
                   column_config={**headers(frame), **column_config})
    edits = st.session_state.get(key)
    if not data.has_edits(edits):
        return False
    st.session_state[name] = data.apply_editor_state(frame, edits)
    return True


st.title(nav.PROMPTS.heading)
ws: data.Workset = st.session_state[state.DATASET]
language = ws.language if ws.language in ("ja", "en") else "en"
versions_store = RubricStore()
if BASE not in st.session_state:
    _load(load_rubric("rubric5", language))
elif st.session_state[BASE].language != language:  # the data's language changed since the rubric was loaded
    current = st.session_state.get(state.RUBRIC)
    if current is not None and is_preset(current) and current.id in PRESET_IDS:
        _load(load_rubric(current.id, language))  # an untouched preset follows the data's language
    else:
        st.warning(t("prompts.mixed", rubric=widgets.md_escape(st.session_state[BASE].language), data=widgets.md_escape(language)), icon="🌐")
if sidebar.is_offline():
    st.info(t("prompts.offline"), icon="🧮")
# Keyed: the open tab is the session's, so a rerun (a button in a tab, the recorded loop switching the provider)
# stays on it. Every tab is still drawn: the editor's rubric and template are what the other tabs judge with.
edit_tab, versions_tab, versus_tab, steps_tab = st.tabs(
    [t("prompts.tab.edit"), t("prompts.tab.versions"), t("prompts.tab.versus"), t("prompts.tab.steps")],
    key=TAB, on_change="rerun")
with edit_tab:  # the editor: start from, rubric tables, raw template, preview, run on the pinned rows

    saved = versions_store.versions("rubric")
    starts = {f"preset:{p}": t("prompts.start_preset", id=p, language=language) for p in PRESET_IDS}
    starts.update({f"version:{v.id}": t("judge.saved", label=v.label) for v in saved})
    pick, load = st.columns([4, 1])
    start = pick.selectbox(t("prompts.start_from"), list(starts), format_func=starts.get, key="prompts.start")
    load.markdown("&nbsp;")
    if load.button(t("prompts.load"), key="prompts.load"):
        kind, ref = start.split(":", 1)
        _load(load_rubric(ref, language) if kind == "preset" else Rubric.from_json(versions_store.rubric_json(int(ref))))
        st.rerun()

    st.subheader(t("prompts.rubric"))
    for widget_key in (RUBRIC_ID, INSTRUCTIONS):  # widget values are dropped while another page is shown
        if widget_key not in st.session_state:
            st.session_state[widget_key] = st.session_state.get(f"{widget_key}.kept", "")
    left, right = st.columns([1, 3])
    left.text_input(t("prompts.rubric_id"), key=RUBRIC_ID, help=t("prompts.rubric_id_help"))
    right.text_area(t("prompts.instructions"), key=INSTRUCTIONS, height=68)
    st.session_state[f"{RUBRIC_ID}.kept"] = st.session_state[RUBRIC_ID]
    st.session_state[f"{INSTRUCTIONS}.kept"] = st.session_state[INSTRUCTIONS]

    version = st.session_state.get(VERSION, 0)

    changed = _table_editor(CRITERIA, t("prompts.criteria"), {
        "min": st.column_config.NumberColumn(header("min"), step=1, width="small"),
        "max": st.column_config.NumberColumn(header("max"), step=1, width="small"),
        "requires": st.column_config.TextColumn(header("requires"), help=t("prompts.requires_help")),
        "description": st.column_config.TextColumn(header("description"), width="large"),
    }, version)
    changed |= _table_editor(LEVELS, t("prompts.levels"), {
        "score": st.column_config.NumberColumn(header("score"), step=1, width="small"),
        "description": st.column_config.TextColumn(header("description"), width="large"),
    }, version)
    if st.button(t("prompts.add_levels")):
        st.session_state[LEVELS] = rubric_edit.add_missing_levels(st.session_state[CRITERIA], st.session_state[LEVELS])
        changed = True
    if changed:
        st.session_state[VERSION] = version + 1
        st.rerun()

    rubric = None
    try:
        rubric = rubric_edit.frames_to_rubric(
            st.session_state[BASE],
            st.session_state[CRITERIA],
            st.session_state[LEVELS],
            rubric_id=st.session_state.get(RUBRIC_ID) or "",
            instructions=st.session_state.get(INSTRUCTIONS) or "",
        )
    except RubricError as exc:
        st.error(t("prompts.invalid") + "\n\n" + "\n".join(f"- {widgets.md_escape(core(p))}" for p in exc.problems))
    else:
        st.session_state[state.RUBRIC] = rubric
        st.success(t("prompts.rubric_ok", id=widgets.md_escape(rubric.id), n=len(rubric.criteria), hash=widgets.md_code(rubric.short_hash)), icon="✅")

    st.subheader(t("prompts.judge_template"))
    shipped = judge_template(language).source or ""
    current_text = st.session_state.get(state.TEMPLATE_TEXT) or shipped
    text = st.text_area(
        t("prompts.raw_template"),
        value=current_text,
        height=360,
        key=f"prompts.template.{version}",
    )
    st.session_state[state.TEMPLATE_TEXT] = None if text == shipped else text
    template = None
    if rubric is not None:
        problems = check_template(text, rubric)
        if problems:
            st.error(t("prompts.placeholders_failed") + "\n\n" + "\n".join(f"- {widgets.md_escape(core(p))}" for p in problems))
        else:
            template = template_from_text(text, language)
            st.success(t("prompts.placeholders_ok", placeholders=widgets.md_escape(", ".join("{" + p + "}" for p in template.placeholders)),
                         hash=widgets.md_code(template.short_hash), state=t("steps.shipped") if text == shipped else t("steps.edited")), icon="✅")
            for note in template_notes(template, rubric):  # rubric edits this template does not send
                st.warning(widgets.md_escape(note), icon="⚠️")

    st.subheader(t("prompts.preview"))
    pinned: set[str] = st.session_state[state.PINNED]
    ordered = sorted(ws.samples, key=lambda s: s.id not in pinned)
    if not ordered:
        st.info(t("prompts.no_rows"))
    elif rubric is not None and template is not None:
        row = st.selectbox(
            t("inspect.row"), [s.id for s in ordered], key="prompts.preview_row",
            format_func=lambda sid: f"{'📌 ' if sid in pinned else ''}#{sid} {ws.by_id()[sid].question[:60]}",
        )
        try:
            st.code(render_judge_prompt(rubric, ws.by_id()[row], template), language=None, wrap_lines=True, height=420)
        except RagevalError as exc:
            widgets.show_error(t("prompts.cannot_fill"), exc)

        st.subheader(t("prompts.run_pinned"))
        targets = [s for s in ws.samples if s.id in pinned]
        st.caption(t("prompts.run_caption", n=len(targets), judge=sidebar.provider_label()))
        problems = sidebar.config_problems()
        sidebar.show_problems(problems)
        if st.button(t("prompts.run_pinned"), type="primary", disabled=not targets or bool(problems)):
            try:
                judges = evaluation.build_judges([evaluation.EDITED], edited=rubric, edited_template=st.session_state[state.TEMPLATE_TEXT])
                with st.spinner(t("prompts.judging", n=len(targets))):
                    spec = jobs.evaluation_spec(targets, judges, sidebar.current_config(),
                                                dataset_name=f"{ws.name} · prompt test", dataset_hash=ws.content_hash,
                                                settings={"prompt_test": "judge"})  # a side run (analysis.run_groups)
                    result = jobs.run_now(spec, Store())
                st.session_state[state.PROMPT_RESULTS] = result
            except RagevalError as exc:
                widgets.show_error(t("prompts.judge_failed"), exc)
        result = st.session_state.get(state.PROMPT_RESULTS)
        if result is not None:
            st.caption(t("prompts.run_done", run=widgets.md_escape(result.run_id), status=widgets.md_escape(run_status(result.status)),
                         calls=int(result.provider_calls),
                         cost=widgets.fmt_cost(result.cost_usd)))
            widgets.offline_banner(result.results)
            ordered_results = evaluation.in_rubric_order(result.results, ws.samples, rubric)
            widgets.table(widgets.results_frame(ordered_results, by="row"), hide_index=True, width="stretch",
                         placeholder=widgets.UNSCORED)


def _set_examples(examples: list) -> None:
    """Replace the edited rubric's few-shot examples (they live in its metadata, kept through table edits)."""
    st.session_state[BASE] = with_examples(st.session_state[BASE], examples)
    st.session_state.pop(versus_panel.RESULT, None)


with versions_tab:
    prompt_versions.save_and_diff(versions_store, rubric, template, text, language)
    prompt_versions.grid_panel(ws, pinned, versions_store, language, rubric if template is not None else None,
                               st.session_state[state.TEMPLATE_TEXT])
with versus_tab:
    versus_panel.render(ws, rubric if template is not None else None, st.session_state[state.TEMPLATE_TEXT], language,
                        versions_store, load=_load, set_examples=_set_examples)
with steps_tab:
    step_edit.render(language, ws.samples, pinned, st.session_state.get("prompts.preview_row"), versions_store)
