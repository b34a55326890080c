"""The Prompts page's Versions tab: save the rubric or template being edited as a named version (the name box empties
once saved), diff two versions, and the versions grid — two or more versions judge the same rows, each version's
score and reason side by side, the rows where they differ first, the versions' agreement beside it (the promptfoo
view; the numbers are ``rageval_core.analysis.version_grid``, the runs ``rageval_core.session.prompt_grid``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from rageval_core.analysis import version_grid
from rageval_core.core.errors import RagevalError
from rageval_core.scoring.metrics.judge import check_template
from rageval_core.scoring.rubric import PRESET_IDS, Rubric, load_rubric
from rageval_core.session.versus_run import Version
from rageval_core.store.rubric_versions import RubricStore
from rageval_core.store.runs import Store
from rageval_ui import data, sidebar, widgets
from rageval_ui.i18n import t
from rageval_ui.safe_text import md_escape

if TYPE_CHECKING:
    from rageval_core.session.prompt_grid import GridRun

NAME = "prompts.version_name"
PICK = "prompts.grid_versions"
PICKED = "prompts.grid_versions.kept"  # the user's own pick (kept across pages); none: the default pick
ROWS = "prompts.grid_rows"
RESULT = "prompts.grid_result"
CRITERION = "prompts.grid_criterion"
EDITOR = "editor"  # the rubric and template being edited, as a version (the vs people panel calls it the same)
ALL = "(all)"


def _save(store: RubricStore, kind: str, content: Any, language: str) -> None:
    """Save the editor's rubric or template under the typed name, then empty the name box (a callback: the box is
    drawn again after it, so it may be changed here)."""
    name = str(st.session_state.get(NAME) or "").strip() or None
    saved = store.save_rubric(content, name) if kind == "rubric" else store.save_template(content, name, language)
    st.session_state[NAME] = ""
    st.toast(t("steps.saved", label=md_escape(saved.label)))


def save_and_diff(store: RubricStore, rubric: Rubric | None, template: Any, text: str, language: str) -> None:
    """Save the edited rubric or template as a version; diff any two saved versions."""
    st.subheader(t("prompts.versions"))
    st.text_input(t("prompts.version_name"), key=NAME, placeholder="strict-faithfulness-v2", help=t("prompts.version_name_help"))
    save_rubric, save_template = st.columns(2)
    save_rubric.button(t("prompts.save_rubric"), disabled=rubric is None, on_click=_save, args=(store, "rubric", rubric, language))
    save_template.button(t("prompts.save_template"), disabled=template is None, on_click=_save,
                         args=(store, "template", text, language))
    all_versions = store.versions()
    if len(all_versions) >= 2:
        labels = {v.id: f"{v.kind}: {v.label} · {v.created_at_iso}" for v in all_versions}
        a, b = st.columns(2)
        first = a.selectbox(t("prompts.diff_a"), list(labels), index=1, format_func=labels.get, key="prompts.diff_a")
        second = b.selectbox(t("prompts.diff_b"), list(labels), index=0, format_func=labels.get, key="prompts.diff_b")
        st.code(store.diff(first, second) or t("steps.no_diff"), language="diff")
    else:
        st.caption(t("prompts.save_two"))


def choices(store: RubricStore, language: str, rubric: Rubric | None, template_text: str | None) -> dict[str, Version]:
    """What the grid can judge with: the editor, saved rubric versions and judge-template versions of the data's
    language (a template with the editor's rubric, when they fit), then the presets. Keys are stable ids; labels
    are distinct (a saved version's number)."""
    out: dict[str, Version] = {}
    if rubric is not None:
        out[EDITOR] = Version(EDITOR, rubric, template_text)
    for v in store.versions("rubric"):
        if v.language == language:
            out[f"rubric:{v.id}"] = Version(f"#{v.id} {v.name or v.subject}", Rubric.from_json(v.rubric_json()))
    for v in store.versions("template"):
        if v.language == language and v.subject.endswith(("/judge", "/judge-custom")) and rubric is not None \
                and not check_template(v.content, rubric):
            out[f"template:{v.id}"] = Version(f"#{v.id} {v.name or v.subject}", rubric, v.content)
    for p in PRESET_IDS:
        out[f"preset:{p}"] = Version(t("versus.preset", id=p), load_rubric(p, language))
    return out


def _picked() -> None:
    st.session_state[PICKED] = list(st.session_state.get(PICK) or [])


def _default_pick(options: dict[str, Version]) -> list[str]:
    """The editor and the newest saved version, else the editor and the rubric5 preset."""
    first = [k for k in options if k != EDITOR and not k.startswith("preset:")][:1] or ["preset:rubric5"]
    return [k for k in [EDITOR, *first] if k in options][:2]


def grid_panel(ws: data.Workset, pinned: set[str], store: RubricStore, language: str, rubric: Rubric | None,
               template_text: str | None) -> None:
    """Pick versions and rows, judge them (one run each, through the response cache), show the grid."""
    st.subheader(t("grid.heading"))
    st.caption(t("grid.help"))
    options = choices(store, language, rubric, template_text)
    kept = [k for k in st.session_state.get(PICKED) or [] if k in options]
    st.session_state[PICK] = kept or _default_pick(options)  # until a pick of the user's: the newest saved version
    picked = st.multiselect(t("grid.versions"), list(options), format_func=lambda k: options[k].label, key=PICK,
                            on_change=_picked, placeholder=t("common.choose"))
    names = {"pinned": t("grid.rows_pinned", n=len(pinned & set(ws.by_id()))), "all": t("grid.rows_all", n=len(ws.samples))}
    which = st.radio(t("grid.rows"), list(names), format_func=names.get, horizontal=True, key=ROWS)
    rows = [s for s in ws.samples if which == "all" or s.id in pinned]
    problems = sidebar.config_problems()
    sidebar.show_problems(problems)
    if sidebar.is_offline():
        st.warning(t("grid.offline"), icon="🧮")
    if st.button(t("grid.run", n=len(rows), k=len(picked)), key="prompts.grid_run", type="primary",
                 disabled=len(picked) < 2 or not rows or bool(problems)):
        from rageval_core.session.prompt_grid import run_grid

        try:
            with st.spinner(t("grid.running", n=len(rows), k=len(picked))):
                st.session_state[RESULT] = run_grid(rows, [options[k] for k in picked], config=sidebar.current_config(),
                                                    store=Store(), dataset_name=ws.name, dataset_digest=ws.content_hash,
                                                    categories=ws.categories())
        except RagevalError as exc:
            widgets.show_error(t("grid.failed"), exc)
    result = st.session_state.get(RESULT)
    if result is not None:
        show(result, ws)


def _calls(result: GridRun) -> str:
    """Per version what its run cost: calls sent (or, replaying a recording, answers read from it) and cache hits."""
    return " · ".join(
        t("grid.calls_replayed", version=md_escape(label), calls=int(run.provider_calls), cached=int(run.cache_hits))
        if run.provider == "replay" else
        t("grid.calls_sent", version=md_escape(label), calls=int(run.provider_calls), cached=int(run.cache_hits))
        for label, run in result.runs.items())


def show(result: GridRun, ws: data.Workset) -> None:
    """The grid of a finished comparison, the rows where the versions differ first; its statistics beside it."""
    st.caption(t("grid.done", n=len(result.rows), k=len(result.versions), calls=_calls(result)))
    widgets.offline_banner([r for run in result.runs.values() for r in run.results])
    criteria = list(dict.fromkeys(result.frame["metric"]))
    if not criteria:
        st.info(t("grid.nothing"))
        return
    pick = st.selectbox(t("filter.criterion"), [ALL, *criteria], key=CRITERION,
                        format_func={ALL: t("grid.all_criteria"), **{c: widgets.metric_label(c) for c in criteria}}.get)
    chosen = criteria if pick == ALL else [pick]
    cells = version_grid.grid(result.frame, result.versions, criteria=chosen, order=result.rows)
    n_differ = int(cells["differs"].sum())
    st.markdown(t("grid.differ", n=n_differ, total=len(cells)))
    summary = version_grid.version_summary(result.frame, result.versions)
    summary = summary[summary["criterion"].isin(chosen)]
    means = summary.groupby("version")["mean"].mean()
    left, right = st.columns(2)  # the statistics beside each other, above the grid they sum up
    with left:
        st.markdown(t("grid.summary"))
        shown = summary.drop(columns=["scored"]).assign(criterion=lambda f: widgets.metric_labels(f["criterion"]))
        widgets.table(shown, hide_index=True, width="stretch", placeholder=widgets.UNSCORED,
                      column_config=widgets.score_columns(shown[["mean", "pass share"]]))
    with right:
        st.markdown(t("grid.agreement"))
        pairs = version_grid.version_agreement(result.frame, result.versions)
        widgets.table(_pairs_frame(pairs[pairs["criterion"].isin(chosen)]), hide_index=True, width="stretch",
                      placeholder=widgets.UNSCORED)
        st.caption(t("grid.agreement_help"))
    widgets.table(_grid_frame(cells, result.versions, ws), hide_index=True, width="stretch",
                  placeholder=widgets.UNSCORED, column_config=_grid_columns(result.versions, means))


def _grid_frame(cells: pd.DataFrame, versions: Sequence[str], ws: data.Workset) -> pd.DataFrame:
    """The grid as shown: row, the start of its question, criterion, ≠ where the versions differ, then per version
    its score and reason (text cells: shown as text, never as Markdown)."""
    by_id = ws.by_id()
    out = pd.DataFrame({
        "row": cells["sample_id"],
        "question": [widgets.shorten(by_id[s].question, 50) if s in by_id else "" for s in cells["sample_id"]],
        "criterion": widgets.metric_labels(cells["criterion"]),
        "differs": ["≠" if d else "" for d in cells["differs"]],
    })
    for label in versions:
        out[version_grid.score_column(label)] = cells[version_grid.score_column(label)].astype(float)
        out[version_grid.reason_column(label)] = cells[version_grid.reason_column(label)]
    return out


def _grid_columns(versions: Sequence[str], means: pd.Series) -> dict[str, Any]:
    """Narrow fixed columns; each version's score column says its mean over the cells shown (as promptfoo's
    headers carry a pass rate), its reason column is the widest."""
    config: dict[str, Any] = {"row": st.column_config.TextColumn(t("th.row"), width="small"),
                              "question": st.column_config.TextColumn(t("th.question"), width="small"),
                              "criterion": st.column_config.TextColumn(t("th.criterion"), width="small"),
                              "differs": st.column_config.TextColumn(t("th.differs"), width=40)}
    for label in versions:
        score, reason = version_grid.score_column(label), version_grid.reason_column(label)
        mean = means.get(label)
        config[score] = st.column_config.NumberColumn(
            t("grid.score_of", version=label, mean=widgets.fmt_score(mean)), format="%.3f", width=130)
        config[reason] = st.column_config.TextColumn(t("grid.reason_of", version=label), width="medium")
    return config


def _pairs_frame(pairs: pd.DataFrame) -> pd.DataFrame:
    """Each pair of versions: n, Spearman and kappa with their 95 % intervals, as text."""
    def ci(value: float, low: float, high: float) -> str:
        if pd.isna(value):
            return widgets.UNSCORED
        return widgets.fmt_score(value) if pd.isna(low) or pd.isna(high) else \
            f"{widgets.fmt_score(value)} [{widgets.fmt_score(low)}, {widgets.fmt_score(high)}]"

    return pd.DataFrame({
        "criterion": widgets.metric_labels(pairs["criterion"]),
        "versions": [f"{a} ↔ {b}" for a, b in zip(pairs["judge_a"], pairs["judge_b"])],
        "n": pairs["n"],
        "spearman": [ci(r.spearman, r.spearman_lo, r.spearman_hi) for r in pairs.itertuples()],
        "kappa": [ci(r.kappa, r.kappa_lo, r.kappa_hi) for r in pairs.itertuples()],
    })
