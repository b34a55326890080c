"""UI language: one catalogue per language (rageval_ui/locales/<lang>.json) and ``t(key, **kw)`` to read it.

The language is a sidebar widget (日本語 / English) whose first value is the browser's language
(``st.context.locale``, navigator.language; else the first request's Accept-Language header), English when the
browser says nothing. The landing dataset follows it (``rageval_ui.state.init``). Catalogue strings are
``str.format`` templates: placeholders in {braces}, literal braces doubled. tests/ui/test_i18n.py checks that
both catalogues have the same keys and placeholders and that every key the code asks for exists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import streamlit as st

from rageval_core.core import messages

LOCALES = Path(__file__).resolve().parent / "locales"
LANGUAGES = {"ja": "日本語", "en": "English"}
FALLBACK = "en"
LANG = "w.lang"  # sidebar widget key, kept across every navigation by rageval_ui.state.kept_widget


@cache
def catalogue(language: str) -> dict[str, str]:
    """The strings of one language, read once per process."""
    return json.loads((LOCALES / f"{language}.json").read_text(encoding="utf-8"))


def accept_language(header: str | None) -> str | None:
    """The language tag an Accept-Language header prefers most ("ja,en-US;q=0.9" → "ja"); None when it names none.
    Ties keep the header's order; "*" and q=0 entries are skipped."""
    best: tuple[float, int, str] | None = None
    for position, part in enumerate(str(header or "").split(",")):
        tag, _, params = part.strip().partition(";")
        tag = tag.strip()
        quality = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if not tag or tag == "*" or quality <= 0:
            continue
        if best is None or (-quality, position) < (-best[0], best[1]):
            best = (quality, position, tag)
    return None if best is None else best[2]


def _context_locale() -> str | None:
    """The browser's locale: navigator.language (``st.context.locale``), else the Accept-Language header of the
    session's first request (a client that sent no locale), else None (no browser, as under AppTest)."""
    try:
        locale = st.context.locale
    except Exception:  # noqa: BLE001 - outside a session (bare mode) there is no context to read
        return None
    if locale:
        return str(locale)
    try:
        return accept_language(st.context.headers.get("Accept-Language"))
    except Exception:  # noqa: BLE001 - last resort: no request headers to read (outside a browser session)
        return None


def browser_language() -> str:
    """"ja" when the browser asks for Japanese, else English (also when there is no browser, as under AppTest)."""
    return "ja" if str(_context_locale() or "").lower().startswith("ja") else FALLBACK


def lang() -> str:
    """The UI language of this session."""
    chosen = st.session_state.get(LANG)
    return chosen if chosen in LANGUAGES else browser_language()


def t(key: str, **kw: Any) -> str:
    """The text of ``key`` in the session's language (English when the key is missing there), filled with ``kw``."""
    text = catalogue(lang()).get(key)
    if text is None:
        text = catalogue(FALLBACK).get(key, key)
    return text.format(**kw)


def init() -> None:
    """Give the language widget its first value: the browser's language."""
    if st.session_state.get(LANG) not in LANGUAGES:
        st.session_state[LANG] = browser_language()


def render_switch(bound: dict[str, Any]) -> None:
    """The 日本語 / English switch at the top of the sidebar; ``bound`` is ``state.bind(LANG)`` (its key and the
    callback that keeps the choice across every navigation: this module sits below state)."""
    st.sidebar.radio("言語 / Language", list(LANGUAGES), format_func=LANGUAGES.get, horizontal=True, **bound)


def t_opt(key: str, default: str, **kw: Any) -> str:
    """Like ``t`` for keys built at run time (a provider id, a metric id): ``default`` when no catalogue has it."""
    text = catalogue(lang()).get(key) or catalogue(FALLBACK).get(key)
    return default if text is None else text.format(**kw)


_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def header(column: str) -> str:
    """A table column's heading in the UI language: ``th.<slug>`` ("created (UTC)" → ``th.created_utc``), else the
    column name itself. Frames keep their column names (tests, selections and edits key on them); only the shown
    heading changes, through ``column_config``."""
    slug = _NOT_SLUG.sub("_", str(column).lower()).strip("_")
    return t_opt(f"th.{slug}", str(column)) if slug else str(column)


def headers(table: Any) -> dict[str, str]:
    """``column_config`` for st.dataframe: every column's heading in the UI language. ``table`` is a frame, a
    Styler of one, or the column names."""
    frame = getattr(table, "data", table)  # a pandas Styler keeps its frame in .data
    columns: Iterable[Any] = getattr(frame, "columns", frame)
    return {str(c): header(str(c)) for c in columns}


def core(text: Any) -> str:
    """A message from rageval_core (``messages.say``, or the plain string it became on disk) in the UI language
    (``messages.render``: the core keeps its messages' Japanese beside their English)."""
    return messages.render(text, lang())
