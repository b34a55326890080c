"""RAG Eval Workbench core: no streamlit import anywhere below here; the UI (``rageval_ui/app_pages/``, ``ui/``) calls into it.

The packages, in the order data flows through them:

- ``core``: plain data types, ja/en text, coded messages, redaction, state paths
- ``data``: datasets and documents; ``rag``: the systems under test (built-in RAG, test sets, your own RAG)
- ``llm`` (provider adapters, ``llm.transport``: guard, rate limit, retry, cache) and ``embeddings``, below
  ``providers`` (configuration, and the one place stacks and embedders are built)
- ``scoring``: metrics, one-call judges, rubrics, step tasks and prompt templates; ``offline``: the offline judge
- ``run``: the runner and batch APIs; ``store``: SQLite runs, results, call log, labels
- ``analysis``: compare, tallies, export, report, trust statistics; ``cli``: the command line
- ``testing``: the pytest plugin (score rows with the configured judge, assert thresholds)
"""

__version__ = "0.1.0"

__all__ = ["__version__", "analysis", "cli", "core", "data", "embeddings", "llm", "offline", "providers", "rag", "run",
           "scoring", "session", "store", "testing", "views"]
