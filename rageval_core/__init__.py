"""RAG Eval Workbench core: no streamlit import anywhere below here; the UI (``rageval_ui``) calls into it.

The public API, for notebooks and scripts (``docs/python-api.md``)::

    import rageval_core as r
    run = r.evaluate(r.load_dataset("sample_data/ml_qa_en.json"), metrics=["faithfulness"])
    run.mean("faithfulness"), run.results[0]        # a Score: value and reason, or unscored with the reason
    r.trust(run), r.compare(run)                    # agreement with human labels; decomposed vs a judge

The names in ``__all__`` are that API (pinned by tests/project/test_public_api.py: added or removed on purpose
only); each is imported from its module on first use (PEP 562), so ``import rageval_core`` loads nothing else and
the CLI's start-up stays cheap. The packages, in the order data flows through them (``rageval_core.<package>``):

- ``core``: plain data types, ja/en text, coded messages, the error tree, redaction, state paths
- ``data``: datasets and documents; ``rag``: the systems under test (built-in RAG, test sets, your own RAG)
- ``store``: SQLite runs, results, call log, labels
- ``llm`` (provider adapters, ``llm.transport``: guard, rate limit, retry, cache) and ``embeddings``, below
  ``offline`` (the offline judge) and ``providers`` (configuration, and the one place stacks are built)
- ``scoring``: metrics, one-call judges, rubrics, step tasks and prompt templates
- ``run``: the runner and batch APIs; ``analysis``: compare, tallies, export, report, trust statistics;
  ``views``: read models for pages and tables
- ``session``: the composition root (providers built and a run run) and the API above; ``cli``: the command line
- ``testing``: the pytest plugin (score rows with the configured judge, assert thresholds)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rageval_core.core.lazy import lazy_attributes

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "DataError",
    "Evaluation",
    "LoadedDataset",
    "MethodComparison",
    "ProviderConfig",
    "ProviderError",
    "RagevalError",
    "RunComparison",
    "RunSpec",
    "Sample",
    "Score",
    "Store",
    "StoreError",
    "TrustReport",
    "Usage",
    "__version__",
    "compare",
    "evaluate",
    "load_dataset",
    "trust",
]

if TYPE_CHECKING:  # what type checkers and editors see; at run time ``__getattr__`` imports each on first use
    from rageval_core.analysis.trust.report import TrustReport
    from rageval_core.core.errors import ConfigError, DataError, ProviderError, RagevalError, StoreError
    from rageval_core.core.types import Sample, Usage
    from rageval_core.data.datasets.loader import load_dataset
    from rageval_core.data.datasets.model import LoadedDataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.run.spec import RunSpec
    from rageval_core.session.api import Evaluation, MethodComparison, RunComparison, Score, compare, evaluate, trust
    from rageval_core.store.runs import Store

__getattr__ = lazy_attributes(__name__, globals(), {
    "analysis.trust.report": ("TrustReport",),
    "core.errors": ("ConfigError", "DataError", "ProviderError", "RagevalError", "StoreError"),
    "core.types": ("Sample", "Usage"),
    "data.datasets.loader": ("load_dataset",),
    "data.datasets.model": ("LoadedDataset",),
    "providers.config": ("ProviderConfig",),
    "run.spec": ("RunSpec",),
    "session.api": ("Evaluation", "MethodComparison", "RunComparison", "Score", "compare", "evaluate", "trust"),
    "store.runs": ("Store",),
})
