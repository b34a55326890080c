"""Session-state keys and their defaults, in one place so pages never invent keys of their own.

Everything the workbench remembers between reruns lives in ``st.session_state`` under the names below.
Widget-bound keys (prefix ``w.``) belong to the sidebar, which app.py renders on every page, so Streamlit
keeps their values for the whole session. API keys are only ever held here, in memory.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

# Provider settings (sidebar widgets).
PROVIDER = "w.provider"
MODEL = "w.model"
API_KEY = "w.api_key"
BASE_URL = "w.base_url"
RPM = "w.rpm"
TPM = "w.tpm"
CONCURRENCY = "w.concurrency"
EMBEDDING_MODEL = "w.embedding_model"
REPLAY_LOG = "w.replay_log"
# Traces (sidebar widgets): the Phoenix server and project to pull from and push to, and the trace link template.
PHOENIX_URL = "w.phoenix_url"
PHOENIX_PROJECT = "w.phoenix_project"
TRACE_URL = "w.trace_url"  # e.g. {url}/redirects/traces/{trace_id}: links trace ids of rows without a trace_url

# Data and work in progress (plain keys, set by pages).
DATASET = "dataset"  # ui.data.LoadedDataset
PINNED = "pinned"  # set[str] of sample ids used for quick runs
EDITOR_VERSION = "editor_version"  # bumps the data_editor key so a new dataset starts with no pending edits
JOB = "job"  # ui.jobs.Job of the evaluation in progress (or just finished)
SELECTED_RUN = "selected_run"  # run id shown on Compare / Inspect
INSPECT_SAMPLE = "inspect_sample"  # sample id opened in the inspector
COMPARE_TAB = "compare.section"  # the label of Compare's open tab (its tabs run only when open)
RUBRIC = "rubric"  # the rubric being edited on Prompts & rubric
TEMPLATE_TEXT = "template_text"  # the judge template being edited
PROMPT_RESULTS = "prompt_results"  # results of "run on pinned rows"
EVALUATE_REPEATS = "evaluate.repeats"  # the Evaluate page's repeats control (the Trust page can preset it)
LABEL_KEEP = "trust.label_keep"  # dataset label columns the Trust page uses: None = every row, k = a seeded random k
STEP_TEMPLATES = "prompts.step_templates"  # {"ja/extract_claims": text}: decomposed step templates edited on Prompts
PROBE_JOB = "trust.probe_job"  # ui.trust.ProbeJob of the probes running (or just finished) for a run

DEFAULT_SAMPLE = "ml_qa_ja.json"

DEFAULTS: dict[str, Any] = {
    PROVIDER: "offline",
    MODEL: "",
    API_KEY: "",
    BASE_URL: "",
    EMBEDDING_MODEL: "",
    REPLAY_LOG: "",
    TRACE_URL: "",
    RPM: 0,
    TPM: 0,
    CONCURRENCY: 8,
    EDITOR_VERSION: 0,
    SELECTED_RUN: None,
    INSPECT_SAMPLE: None,
    PROMPT_RESULTS: None,
}


def init() -> None:
    """Fill missing keys with their defaults and load the seed dataset on the first run of a session."""
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value
    if PINNED not in st.session_state:
        st.session_state[PINNED] = set()
    if DATASET not in st.session_state:
        from rageval_ui import data

        loaded = data.load_sample_file(DEFAULT_SAMPLE)
        st.session_state[DATASET] = loaded
        st.session_state[PINNED] = set(data.default_pins(loaded))


def get(key: str) -> Any:
    """The value of ``key``, or its default when a page runs before ``init`` (e.g. under AppTest)."""
    return st.session_state.get(key, DEFAULTS.get(key))


def use_dataset(ws: Any, pins: set[str] | None = None) -> None:
    """Make ``ws`` (a ``ui.data.Workset``) the working dataset, pinning ``pins`` (default: the quick-run rows),
    and start the Dataset editor afresh: pending edits belong to the old table."""
    from rageval_ui import data

    st.session_state[DATASET] = ws
    st.session_state[PINNED] = set(data.default_pins(ws)) if pins is None else pins
    st.session_state[EDITOR_VERSION] = get(EDITOR_VERSION) + 1


def is_new_upload(uploaded: Any, seen_key: str) -> bool:
    """True once per uploaded file: ``st.file_uploader`` returns the same file on every rerun, and loading it
    again would drop the edits made since."""
    signature = (uploaded.name, uploaded.size, getattr(uploaded, "file_id", ""))
    if st.session_state.get(seen_key) == signature:
        return False
    st.session_state[seen_key] = signature
    return True


def restore(key: str, default: Any, options: Any = None, *, shared: bool = False) -> None:
    """Before drawing the widget ``key``: bring back the value it had when its page was last shown.

    Streamlit drops a widget's value when a rerun does not draw it (another page was open), so a choice like
    Evaluate's judges would reset to the default. ``remember`` keeps a copy under a plain key; this puts it
    back, keeping only values still among ``options`` (a saved rubric may have been deleted since).

    ``shared``: the same key is drawn on several pages (the row filters). Each page's widget is a widget of
    its own, which starts from its default even when the key holds a value, so the kept value is always put
    back; the widget must then keep it current with ``on_change=remember, args=(key,)``.
    """
    kept = f"{key}.kept"
    if key in st.session_state and not (shared and kept in st.session_state):
        return
    value = st.session_state.get(kept, default)
    if options is not None:
        allowed = list(options)
        if isinstance(value, list):
            value = [v for v in value if v in allowed]
        elif value not in allowed:
            value = default
    st.session_state[key] = value


def remember(*keys: str) -> None:
    """After drawing the widgets ``keys``: keep their values for the next visit (see ``restore``)."""
    for key in keys:
        if key in st.session_state:
            st.session_state[f"{key}.kept"] = st.session_state[key]
