"""Read the run Compare would open next while the reader is still on another page.

The first open of a run in a server process reads it from SQLite and builds its page frame, category tables
and costs: about 0.3 s of a 1,000-row run's first Compare open on a quiet machine here, over a second at load 8,
when every later open takes a tenth of it. After a page has been drawn, a daemon thread does that reading for
the run Compare would show (the session's selected run, else the newest), if it is finished and not in the
process cache yet, so the time passes while the reader looks at the page they are on. A page that opens the run
meanwhile waits for the read in flight (``run_summary.cached`` builds each value once) instead of reading it a
second time beside it. A run still running is not read ahead: its results change with every task.

The pages' own imports are done ahead the same way, once per process (``import_pages``): the first open of
Compare imported about twenty modules it shares with no other page (Trust's comparison panel, the report's
statistics: 0.15 s of the server's time of a 1,000-row run's first open from History, load 2-4), Prompts and
the test-set builder more (0.4-0.5 s each).

``RAGEVAL_READ_AHEAD=0`` turns both off. Nothing they do can show on a page: an error is logged and forgotten.
"""

from __future__ import annotations

import ast
import logging
import os
import threading
from pathlib import Path
from types import CodeType
from typing import Any

import streamlit as st

from rageval_core.views import run_summary
from rageval_core.store.runs import RUNNING
from rageval_ui import nav, runs, state

ENV = "RAGEVAL_READ_AHEAD"
_log = logging.getLogger("rageval.ui.read_ahead")
_guard = threading.Lock()
_thread: threading.Thread | None = None
_last: tuple[Any, ...] | None = None  # (database, run, stamp, dataset) of the last read ahead started
_imports: threading.Thread | None = None
ROOT = Path(__file__).resolve().parents[1]


def enabled() -> bool:
    return os.environ.get(ENV, "1").strip() != "0"


def after_page() -> threading.Thread | None:
    """Start reading the run Compare would open next, unless it is read already, being read, or running; the
    thread started, if any (tests join it)."""
    global _thread, _last
    if not enabled():
        return None
    try:
        store = runs.store()
        selected = state.get(state.SELECTED_RUN)
        info = (store.get_run(selected) if selected else None) or next(iter(store.list_runs(limit=1)), None)
        if info is None or info.status == RUNNING:
            return None
        current = st.session_state.get(state.DATASET)
        at = run_summary.stamp(store, info.id)
        wanted = (str(store.path), info.id, at, getattr(current, "content_hash", None))
    except Exception:  # noqa: BLE001 - last resort: a read ahead never fails a page
        _log.debug("read ahead: choosing the run failed", exc_info=True)
        return None
    with _guard:
        if wanted == _last or (_thread is not None and _thread.is_alive()):
            return None
        if run_summary.is_cached(store, info.id, "costs", at):  # what it reads last: the page read the run itself
            _last = wanted
            return None
        _last = wanted
        _thread = threading.Thread(target=_read, args=(info.id, current), name="rageval-read-ahead", daemon=True)
        _thread.start()
        return _thread


def _read(run_id: str, current: Any) -> None:
    """What Compare's first open reads of the run: its frame, the category table of each method, the costs."""
    try:
        store = runs.store()  # this thread's own connection
        view = runs.load(run_id, current, store)
        if view is None:
            return
        for method in view.methods():
            view.category_table(method)
        run_summary.method_costs(store, run_id)
    except Exception:  # noqa: BLE001 - last resort: the page that opens the run reads it itself and reports what fails
        _log.debug("read ahead of run %s failed", run_id, exc_info=True)


def page_imports(path: Path) -> CodeType:
    """The import statements at the top level of a page file, compiled on their own (nothing else of the page
    runs: no element is drawn, no state is read)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    body = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
    return compile(ast.Module(body=body, type_ignores=[]), str(path), "exec")


def import_pages() -> threading.Thread | None:
    """Once per process, after the first page: a daemon thread importing what each page imports, Compare's
    first; the thread, or None when it was started already (or read ahead is off)."""
    global _imports
    if not enabled():
        return None
    with _guard:
        if _imports is not None:
            return None
        pages = [nav.COMPARE, *(spec for spec in nav.ALL if spec is not nav.COMPARE)]
        _imports = threading.Thread(target=_import, args=([ROOT / spec.path for spec in pages],),
                                    name="rageval-import-pages", daemon=True)
        _imports.start()
        return _imports


def _import(paths: list[Path]) -> None:
    for path in paths:
        try:
            exec(page_imports(path), {"__name__": f"rageval_import_ahead.{path.stem}"})  # noqa: S102 - the page's own import lines
        except Exception:  # noqa: BLE001 - last resort: the page itself imports them again and reports what fails
            _log.debug("importing ahead for %s failed", path, exc_info=True)
