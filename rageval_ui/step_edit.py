"""The Prompts page's editor of the decomposed steps' templates (claim extraction, verification, question
generation, chunk usefulness, attribution, classification): edit with placeholder checks, preview on a row,
run the step's metrics on the pinned rows, save versions and diff them, as the judge template has.

Edits live in session state (``state.STEP_TEMPLATES``, ``{"ja/extract_claims": text}``) and reach Evaluate's
runs as ``options["templates"]``; an edited step changes the prompt and so the request key.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st


from rageval_core.scoring import step_templates
from rageval_core.scoring.metrics.registry import build_scorers
from rageval_core.scoring.prompts import TemplateError
from rageval_core.store.rubric_versions import RubricStore
from rageval_core.store.runs import Store
from rageval_core.core.types import Sample
from rageval_core.core.errors import RagevalError
from rageval_ui import evaluation, jobs, sidebar, state, widgets
from rageval_ui.runs import run_status
from rageval_ui.i18n import t
from rageval_ui.safe_text import md_code, md_escape

STEP = "prompts.step"
RESULTS = "prompts.step_results"
VERSION = "prompts.step_version"
VERSION_NAME = "prompts.step_version_name"


def edited() -> dict[str, str]:
    """The session's edited step templates (all languages)."""
    return st.session_state.setdefault(state.STEP_TEMPLATES, {})


def run_options(language: str) -> dict[str, str]:
    """The edited steps of ``language`` as ``options["templates"]`` for a run (empty: all shipped)."""
    return step_templates.overrides(edited(), language)


def _save(versions_store: RubricStore, template: object) -> None:
    """Save the step template under the typed name, then empty the name box (a callback, before it is drawn)."""
    saved = versions_store.save_template(template, str(st.session_state.get(VERSION_NAME) or "").strip() or None)  # type: ignore[arg-type]
    st.session_state[VERSION_NAME] = ""
    st.toast(t("steps.saved", label=md_escape(saved.label)))


def _reset(name: str) -> None:
    edited().pop(name, None)
    st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1


def render(language: str, samples: Sequence[Sample], pinned: set[str], preview_row: str | None,
           versions_store: RubricStore) -> None:
    st.subheader(t("steps.heading"))
    st.caption(t("steps.help"))
    names = {task: t("steps.option", task=task, metrics=", ".join(widgets.metric_label(m) for m in metrics))
             for task, metrics in step_templates.STEPS.items()}
    task = st.selectbox(t("steps.step"), list(names), format_func=names.get, key=STEP)
    name = step_templates.key(task, language)
    shipped_text = step_templates.shipped(task, language).source or ""
    current = edited().get(name, shipped_text)
    text = st.text_area(t("steps.text"), value=current, height=320,
                        key=f"prompts.step_text.{name}.{st.session_state.get(VERSION, 0)}")
    if text == shipped_text:
        edited().pop(name, None)
    else:
        edited()[name] = text
    template = None
    try:
        template = step_templates.check(task, language, text)
    except TemplateError as exc:
        st.error(t("steps.invalid", error=md_escape(exc)))
    else:
        st.success(t("steps.ok", placeholders=md_escape(", ".join("{" + p + "}" for p in template.placeholders)),
                     hash=md_code(template.short_hash), state=t("steps.shipped") if text == shipped_text else t("steps.edited")),
                   icon="✅")
    st.button(t("steps.reset"), key="prompts.step_reset", on_click=_reset, args=(name,), disabled=text == shipped_text)
    others = sorted(k for k in run_options(language) if k != name)
    if others:
        st.caption(t("steps.others", names=md_escape(", ".join(others))))

    by_id = {s.id: s for s in samples}
    if template is not None and preview_row in by_id:
        st.markdown(t("steps.preview", row=md_escape(preview_row)))
        st.code(step_templates.render_preview(task, by_id[preview_row], language, text), language=None, wrap_lines=True,
                height=300)
        st.caption(t("steps.preview_note"))

    targets = [s for s in samples if s.id in pinned]
    problems = sidebar.config_problems()
    if st.button(t("steps.run", n=len(targets)), key="prompts.step_run", disabled=template is None or not targets or bool(problems)):
        metrics = list(step_templates.STEPS[task])
        options = {"templates": run_options(language)}
        if task == "verify_claims_with_reference":
            options["economy"] = True  # the step economy mode sends
        try:
            with st.spinner(t("steps.running", n=len(targets))):
                spec = jobs.evaluation_spec(targets, build_scorers(metrics, {"economy": options.get("economy", False)}),
                                            sidebar.current_config(), options=options,
                                            dataset_name=t("steps.run_name", task=task), dataset_hash=None,
                                            settings={"prompt_test": f"step:{task}"})  # a side run
                result = jobs.run_now(spec, Store())
            st.session_state[RESULTS] = (task, result)
        except RagevalError as exc:
            widgets.show_error(t("steps.run_failed"), exc)
    shown = st.session_state.get(RESULTS)
    if shown is not None and shown[0] == task:
        result = shown[1]
        st.caption(t("steps.run_done", run=md_escape(result.run_id), status=md_escape(run_status(result.status)),
                     calls=int(result.provider_calls)))
        widgets.offline_banner(result.results)
        widgets.table(widgets.results_frame(evaluation.in_dataset_order(result.results, samples), by="row"),
                     hide_index=True, width="stretch", placeholder=widgets.UNSCORED)

    name_col, save_col = st.columns([3, 1], vertical_alignment="bottom")
    name_col.text_input(t("steps.version_name"), key=VERSION_NAME, placeholder=f"{task}-v2")
    save_col.button(t("steps.save"), key="prompts.step_save", disabled=template is None, on_click=_save,
                    args=(versions_store, template))
    versions = versions_store.versions("template", subject=name)
    if versions:
        labels = {v.id: f"{v.label} · {v.created_at_iso}" for v in versions}
        pick = st.selectbox(t("steps.diff_pick"), list(labels), format_func=labels.get, key=f"prompts.step_diff.{name}")
        from rageval_core.store.rubric_versions import diff_text

        chosen = next(v for v in versions if v.id == pick)
        st.code(diff_text(chosen.content, text, chosen.label, t("steps.editor")) or t("steps.no_diff"), language="diff")
        if st.button(t("steps.load_version"), key="prompts.step_load"):
            edited()[name] = chosen.content
            st.session_state[VERSION] = st.session_state.get(VERSION, 0) + 1
            st.rerun()
