"""RAG Eval Workbench — the router: page config, the shared sidebar, navigation over rageval_ui/app_pages/.

Two ways in, one router: ``streamlit run app.py`` in a clone (the top-level app.py calls ``main``), and
``rageval ui`` after ``pip install``, which runs this file. Everything else lives in rageval_ui/app_pages/ (one
thin file per page) and the modules beside this one.
"""

from __future__ import annotations

import streamlit as st

from rageval_ui import charts  # noqa: F401 - altair (about 0.5 s to import) once per process on the first page, not on Compare
from rageval_ui import i18n, nav, read_ahead, sidebar, state, store_check, widgets


def main() -> None:
    """One rerun of the workbench (Streamlit runs the main script again on every interaction)."""
    st.set_page_config(page_title="RAG Eval Workbench", page_icon="🔎", layout="wide")
    state.init()
    i18n.init()
    specs = list(nav.ALL)
    pages = [
        st.Page(spec.path, title=spec.title, icon=spec.icon, url_path=spec.url_path, default=(spec is specs[0]))
        for spec in specs
    ]
    i18n.render_switch(state.bind(i18n.LANG))  # a click reruns the script with the new language already in session state
    current = st.navigation(pages)
    if not store_check.check():  # a corrupted store, a RAGEVAL_HOME that is a file: said once, no page run on it
        return
    sidebar.render()
    widgets.run_page(current)
    read_ahead.after_page()  # the run Compare would open next, read while this page is looked at
    read_ahead.import_pages()  # once per process: every page's imports, Compare's first


if __name__ == "__main__":  # `rageval ui` / `streamlit run rageval_ui/app.py`
    main()
