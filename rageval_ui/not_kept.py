"""Evaluate's panel for a run the store did not keep whole (a full disk mid-run): never a success.

It names what was lost (tasks and results, cache and call-log entries, the run's own record), where the results
are kept (the spill file, set aside before the run), offers every computed result as a download (the export with
``"complete": false``), and the resume step: once there is room, one button writes the spilled results back and
scores only what is missing (no call a spilled result covers is paid again).
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from rageval_core.core.errors import RagevalError
from rageval_core.run.persist import Run
from rageval_core.store.db import STORE_ERRORS
from rageval_core.store.runs import Store
from rageval_ui import jobs, state
from rageval_ui.i18n import t
from rageval_ui.safe_text import md_code, md_escape

LOST_KINDS = {  # ``store.engine.warn`` kinds → what each lost write costs, in the page's language
    "cache": "lost.cache", "embedding_cache": "lost.embedding_cache", "call_log": "lost.call_log",
    "run_rows": "lost.run_rows", "run_dataset": "lost.run_dataset", "run_status": "lost.run_status",
}


def lost_text(warnings: dict[str, int]) -> str:
    """The store's own lost writes, each with what it costs, or "" when none."""
    return "; ".join(t(LOST_KINDS.get(kind, "lost.other"), n=n, kind=kind) for kind, n in sorted(warnings.items()) if n)


def show(result: Run, job: jobs.Job) -> None:
    """The error, the counts, the spill file, a download of every computed result and the resume button."""
    n, spilled = result.unsaved_tasks, result.spilled_tasks
    results = sum(len(task[2]) for task in result.not_kept.tasks) if result.not_kept is not None else 0
    store_path = result.store.path if result.store is not None else ""
    with st.container(border=True):
        if n:
            st.error(t("not_kept.head", n=int(n), computed=int(result.done_tasks - result.skipped_tasks),
                       results=int(results)), icon="💾")
            if spilled:
                st.markdown(t("not_kept.spilled", n=int(spilled), file=md_code(result.spill_file)))
            if n - spilled:
                st.markdown(t("not_kept.nowhere", n=int(n - spilled)))
        else:
            st.error(t("not_kept.record"), icon="💾")
        lost = lost_text(result.warnings)
        if lost:
            st.markdown(t("not_kept.lost", lost=md_escape(lost)))
        st.markdown(t("not_kept.resume", db=md_code(store_path), n=int(spilled)))
    data = _export(result)
    if data is not None:
        st.download_button(t("not_kept.download"), data, file_name=f"results-{result.run_id}-incomplete.json",
                           mime="application/json", key="not_kept.download")
    if st.button(t("not_kept.resume_button"), type="primary", key="not_kept.resume_button", disabled=job.spec is None):
        st.session_state[state.JOB] = jobs.resume(job, store_path=store_path or None)
        st.rerun()


def _export(result: Run) -> bytes | None:
    """Every computed result as the export JSON (stored and not kept), or None when the store cannot be read."""
    from rageval_core.analysis.export import run_to_dict

    store: Any = result.store or Store()
    try:
        data = run_to_dict(store, result.run_id, not_kept=result.not_kept, lost=result.warnings)
    except (RagevalError, *STORE_ERRORS, OSError, KeyError):
        return None
    return json.dumps(data, ensure_ascii=False, indent=2, default=str).encode("utf-8")
