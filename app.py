"""RAG Eval Workbench: ``streamlit run app.py``. The router and every page live in the ``rageval_ui`` package
(``rageval_ui/app.py``), so that an installed workbench (``rageval ui``) runs the same code as a clone."""

from rageval_ui.app import main

main()
