"""RAG Eval Workbench core: datasets, prompts, providers, metrics, judges, runner, store and CLI.

Nothing below this package imports streamlit; the UI in ``pages/`` and ``ui/`` calls into it.
"""

__version__ = "0.1.0"
