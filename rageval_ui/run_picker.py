"""The run picker that Compare, Inspect, Trust and History share: stop with a hint when no run is stored, else a
select box of the user's runs, newest first, that starts on (and remembers) the session's selected run.

Side runs (probes, "vs people" runs, prompt tests: ``rageval_core.analysis.run_groups``) are listed only with the
"side runs" toggle on, each under the run it was made for; the toggle is one setting for every page."""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from rageval_core.store.runs import RunInfo, Store
from rageval_core.analysis import run_groups
from rageval_ui import nav, runs, state
from rageval_ui.i18n import t, t_opt
from rageval_ui.names import probe_name

SHOW_SIDE = "runs.show_side"  # the "side runs" toggle, shared by the pickers and History


def stored_runs_or_stop(store: Store, empty_message: str, *, offer_evaluate: bool = False) -> list[RunInfo]:
    """Every stored run, newest first; with none, show ``empty_message`` (and a way to Evaluate) and stop."""
    infos = store.list_runs()
    if not infos:
        st.info(empty_message)
        if offer_evaluate and st.button(t("common.go_evaluate")):
            st.switch_page(nav.EVALUATE.path)
        st.stop()
    return infos


def user_runs(infos: Sequence[RunInfo]) -> list[RunInfo]:
    """The runs the user started, newest first (no probes, vs people runs or prompt tests)."""
    return run_groups.user_runs(infos)


def side_label(info: RunInfo) -> str:
    """"probe: negation", "vs people: v2", "prompt test: judge": what a side run is, in the UI language."""
    kind = run_groups.side_kind(info)
    if kind is None:
        return ""
    name = t_opt(f"runs.side.{kind}", kind)
    detail = run_groups.side_detail(info)
    if detail and kind == "probe":
        detail = probe_name(detail)
    return f"{name}: {detail}" if detail else name


def run_labels(infos: Sequence[RunInfo]) -> dict[str, str]:
    """Each run's line in a select box; a side run starts with "↳" and says what it is."""
    return {i.id: (f"↳ {side_label(i)} · " if run_groups.is_side(i) else "") + runs.run_label(i) for i in infos}


def _toggled(side_ids: frozenset[str]) -> None:
    """Keep the toggle for every page; turned off while a side run is selected, the picker starts on the newest
    run of the user's again."""
    state.remember(SHOW_SIDE)
    if not st.session_state.get(SHOW_SIDE) and state.get(state.SELECTED_RUN) in side_ids:
        st.session_state[state.SELECTED_RUN] = None


def side_toggle(infos: Sequence[RunInfo]) -> bool:
    """The "show side runs" toggle (with how many there are); off when there are none."""
    side_ids = frozenset(i.id for i in infos if run_groups.is_side(i))
    state.restore(SHOW_SIDE, False, shared=True)
    if not side_ids:
        return False
    return bool(st.toggle(t("runs.show_side", n=len(side_ids)), key=SHOW_SIDE, on_change=_toggled, args=(side_ids,),
                          help=t("runs.show_side_help")))


def pick(infos: Sequence[RunInfo]) -> tuple[str, list[RunInfo]]:
    """The side-runs toggle and the "Run" select box: the user's runs newest first (side runs under their parent
    with the toggle on; the session's selected run listed in any case, as a side run opened from History is),
    starting on the selected run, whose choice becomes the session's selected run. Returns the run id and the runs
    listed (with only side runs stored, those)."""
    listed = run_groups.picker_runs(infos, with_side=side_toggle(infos), keep=state.get(state.SELECTED_RUN)) or list(infos)
    ids = [i.id for i in listed]
    selected = state.get(state.SELECTED_RUN)
    run_id = st.selectbox(t("common.run"), ids, index=ids.index(selected) if selected in ids else 0,
                          format_func=run_labels(listed).get)
    st.session_state[state.SELECTED_RUN] = run_id
    return run_id, listed


def pick_run(infos: Sequence[RunInfo]) -> str:
    """``pick``'s run id."""
    return pick(infos)[0]
