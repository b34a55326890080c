"""The store as every page finds it: unusable (said once, the page not run), read-only (a note, pages read), or fine.

Why here and not in each page: a corrupted store file, a RAGEVAL_HOME that is a file, or a store from a newer
program would otherwise end each page in its own traceback-shaped message. The router opens the store once per
rerun (a cheap check: this thread's connection is kept) before the page runs: an unusable store is said with the
core's message (which names the file and what to do, in the UI language) and the page is not run; a read-only
store is read, and every page says so, so a label or a run that cannot be saved is no surprise. Damage found only
later, by a page's own query, is turned into the same message by ``page_fault``.
"""

from __future__ import annotations

import streamlit as st

from rageval_core.core.errors import RagevalError, StoreError
from rageval_core.core.messages import say
from rageval_ui.i18n import core, t
from rageval_ui.safe_text import md_escape


def check() -> bool:
    """Open the workbench store; False (and an error shown) when it cannot be used, True otherwise (with a note
    on the page when it is read-only)."""
    from rageval_core.store.runs import Store

    try:
        store = Store()
        why = store.read_only_reason()
    except StoreError as exc:
        _problem(t("store.unusable"), exc)
        return False
    if why is not None:
        st.info(md_escape(core(say("store.read_only_note", path=store.path, why=why))), icon="🔒")
    return True


def page_fault(exc: BaseException) -> bool:
    """Show a store fault a page met (a damaged page found by a query, a write to a read-only store) as the
    store's message; False when ``exc`` is not one (the caller shows it as unexpected)."""
    from rageval_core.core import paths
    from rageval_core.store.db import store_fault

    if not isinstance(exc, StoreError):
        try:
            exc = store_fault(exc, paths.database_path()) or exc
        except RagevalError as home:  # no state folder either: say that
            exc = home
    if not isinstance(exc, StoreError):
        return False
    _problem(t("store.page_problem"), exc)
    return True


def _problem(message: str, exc: BaseException) -> None:
    from rageval_core.core.redact import redact

    st.error(md_escape(redact(f"{message} — {core(str(exc))}")), icon="⚠️")
