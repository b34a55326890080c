"""RAG Eval Workbench — the router: page config, the shared sidebar, navigation over app_pages/.

Start with ``streamlit run app.py``. Everything else lives in app_pages/ (one thin file per page) and ui/.
"""

from __future__ import annotations

import streamlit as st

from ui import charts  # noqa: F401 - altair (about 0.5 s to import) once per process on the first page, not on Compare
from ui import i18n, nav, read_ahead, sidebar, state, widgets

st.set_page_config(page_title="RAG Eval Workbench", page_icon="🔎", layout="wide")
state.init()
i18n.init()

SPECS = list(nav.ALL)
pages = [
    st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path, default=(spec is SPECS[0]))
    for spec in SPECS
]
i18n.render_switch()  # a click reruns the script with the new language already in session state
current = st.navigation(pages)
sidebar.render()
widgets.run_page(current)
read_ahead.after_page()  # the run Compare would open next, read while this page is looked at
read_ahead.import_pages()  # once per process: every page's imports, Compare's first
