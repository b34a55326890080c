"""Session-state keys and their defaults, in one place so pages never invent keys of their own.

Everything the workbench remembers between reruns lives in ``st.session_state`` under the names below.
API keys are only ever held here, in memory.

Sidebar widgets (prefix ``w.``) follow one rule, ``kept_widget``. Streamlit drops a widget's value on a run
that does not draw it, and ``st.switch_page`` (the in-page buttons "Open in Compare", "Inspect #N", "Label
next") drops every widget's value, the sidebar's included; it may even leave an older value behind under the
key. So a registered field's value lives under a plain key (``kept_key``) that Streamlit never touches: the
widget writes it on change (``bind``), the sidebar copies it after drawing, and ``keep_widgets`` puts it back
into the widget before the sidebar is drawn again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from rageval_ui.i18n import LANG

if TYPE_CHECKING:
    from rageval_ui.data import Workset

KEPT_WIDGETS: dict[str, Any] = {}  # widget key -> its first value (None: the widget's owner gives it one)


def kept_widget(key: str, default: Any = None) -> str:
    """Register the widget ``key`` (once, at import) so its value survives every navigation; returns ``key``.

    Every sidebar field, a new provider's included, is declared so (``FIELD = kept_widget("w.field", "")``) and
    drawn with ``**bind(FIELD)``; tests/ui/test_ui_sidebar_state.py fails on a keyed sidebar widget left out.
    """
    KEPT_WIDGETS[key] = default
    return key


def kept_key(key: str) -> str:
    """The plain key a widget's value is kept under (the name ``remember`` uses for page widgets too)."""
    return f"{key}.kept"


def bind(key: str) -> dict[str, Any]:
    """The widget arguments of a kept field: its key, and a change from the browser written to its kept copy
    (callbacks run before the script, so ``keep_widgets`` then sees the new value, not the old one)."""
    return {"key": key, "on_change": remember, "args": (key,)}


def set_kept(key: str, value: Any) -> None:
    """Set a kept field from code (a button's on_click, before the sidebar is drawn): widget and kept copy."""
    st.session_state[key] = value
    st.session_state[kept_key(key)] = value


def keep_widgets() -> None:
    """Before the sidebar is drawn: give every kept field its kept value again (or its default on a session's
    first run). What Streamlit holds under the key is not trusted: after ``st.switch_page`` it can be gone, or
    an older value it never cleared."""
    missing = object()
    for key, default in KEPT_WIDGETS.items():
        aside = kept_key(key)
        current = st.session_state.get(key, missing)
        if aside in st.session_state:
            if current is missing or current != st.session_state[aside]:
                st.session_state[key] = st.session_state[aside]
        elif current is missing and default is not None:
            st.session_state[key] = default


def remember_widgets() -> None:
    """After the sidebar is drawn: keep every field's value as drawn (or as code set it on this run)."""
    remember(*KEPT_WIDGETS)


# Provider settings (sidebar widgets).
PROVIDER = kept_widget("w.provider", "offline")
MODEL = kept_widget("w.model", "")
API_KEY = kept_widget("w.api_key", "")
BASE_URL = kept_widget("w.base_url", "")
RPM = kept_widget("w.rpm", 0)
TPM = kept_widget("w.tpm", 0)
CONCURRENCY = kept_widget("w.concurrency", 8)
EMBEDDING_MODEL = kept_widget("w.embedding_model", "")
REPLAY_LOG = kept_widget("w.replay_log", "")
API_VERSION = kept_widget("w.api_version", "")  # azure-openai (empty: OPENAI_API_VERSION, then the SDK default here)
PROJECT = kept_widget("w.project", "")  # vertex: the Google Cloud project (empty: GOOGLE_CLOUD_PROJECT)
LOCATION = kept_widget("w.location", "")  # vertex: the region (empty: GOOGLE_CLOUD_LOCATION, then global)
kept_widget(LANG)  # the 日本語 / English switch: its first value is the browser's language (i18n.init)
# Traces (sidebar widgets): the Phoenix server and project to pull from and push to, and the trace link template.
PHOENIX_URL = kept_widget("w.phoenix_url")  # None: rageval_ui.phoenix gives the default (PHOENIX_COLLECTOR_ENDPOINT or localhost)
PHOENIX_PROJECT = kept_widget("w.phoenix_project")
TRACE_URL = kept_widget("w.trace_url", "")  # e.g. {url}/redirects/traces/{trace_id}: links trace ids of rows without a trace_url

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
TRUST_RUN = "trust.labelled_run"  # the run chosen on the Trust page: the Prompts page's "vs people" panel follows it

LANDING_SAMPLES = {"ja": "ml_qa_ja.json", "en": "ml_qa_en.json"}  # the same 12 rows, one file per UI language
DEFAULT_SAMPLE = LANDING_SAMPLES["ja"]
LANDING = "dataset.landing"  # (UI language, content hash) of the landing sample, while the user has not picked data

DEFAULTS: dict[str, Any] = {
    **{key: value for key, value in KEPT_WIDGETS.items() if value is not None},
    EDITOR_VERSION: 0,
    SELECTED_RUN: None,
    INSPECT_SAMPLE: None,
    PROMPT_RESULTS: None,
}


def landing_sample(language: str) -> str:
    """The sample a session opens on: the seed dataset in the UI's language (an en-US browser gets English rows,
    so the offline reasons and the judge prompts are English too)."""
    return LANDING_SAMPLES.get(language, LANDING_SAMPLES["en"])


def init() -> None:
    """Put the sidebar's values back (``keep_widgets``), fill missing keys with their defaults and load the seed
    dataset in the UI language on the first run of a session. Until the user picks or edits data
    (``use_dataset``), the landing sample follows the language switch."""
    from rageval_ui import i18n

    keep_widgets()
    for key, value in DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = value
    if PINNED not in st.session_state:
        st.session_state[PINNED] = set()
    language = i18n.lang()
    if DATASET not in st.session_state or _landing_in_other_language(language):
        from rageval_ui import data

        loaded = data.load_sample_file(landing_sample(language))
        st.session_state[DATASET] = loaded
        st.session_state[PINNED] = set(data.default_pins(loaded))
        st.session_state[LANDING] = (language, loaded.content_hash)


def _landing_in_other_language(language: str) -> bool:
    """The dataset is still the landing sample (same content), loaded for the other UI language."""
    landing = st.session_state.get(LANDING)
    current = st.session_state.get(DATASET)
    return (landing is not None and landing[0] != language and current is not None
            and getattr(current, "content_hash", None) == landing[1])


def get(key: str) -> Any:
    """The value of ``key``, or its default when a page runs before ``init`` (e.g. under AppTest)."""
    return st.session_state.get(key, DEFAULTS.get(key))


def use_dataset(ws: Workset, pins: set[str] | None = None) -> None:
    """Make ``ws`` (a ``rageval_ui.data.Workset``) the working dataset, pinning ``pins`` (default: the quick-run rows),
    and start the Dataset editor afresh: pending edits belong to the old table."""
    from rageval_ui import data

    st.session_state[DATASET] = ws
    st.session_state.pop(LANDING, None)  # the user's data now: a language switch leaves it alone
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
