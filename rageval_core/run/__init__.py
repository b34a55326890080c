"""The evaluation runner, the project's one concurrency boundary: ``run(spec, llm, embedder, store, ...) -> Run``.

``spec`` (``RunSpec``, in ``spec``) is what the run is asked to do, built once by a front end; the providers
come built (``session.for_run.build_for_run`` gives a ``RunProviders``): nothing here builds one.

Split by job: ``plan`` (estimate, versions, what a resume skips), ``execute`` (slot gate, cancel, counters,
call log around the LLM), ``persist`` (results written as they finish, the ``Run`` read back from the
store), ``feed`` and ``rows`` (a dataset file read while the run goes: tasks from its rows as they are read,
the run's row table and identity written as the reader gets there) and ``loop`` (the thread pool that ties
them together).

The names below are imported from their modules on first use (PEP 562), so importing one module of the
package (``run.spec`` for a ``RunSpec``) does not load the whole runner.
"""

from __future__ import annotations

from rageval_core.core.lazy import lazy_attributes

__all__ = [
    "RETRYABLE_REASONS", "Estimate", "EstimateRow", "Progress", "ResultSink", "Run", "RunError", "RunProviders", "RunSpec",
    "SpecError", "TaskTag",
    "dataset_hash", "estimate", "load_run", "make_call_hook", "run", "scorer_versions",
]


__getattr__ = lazy_attributes(__name__, globals(), {
    "execute": ("TaskTag", "make_call_hook"),
    "loop": ("Progress", "load_run", "run"),
    "persist": ("ResultSink", "Run"),
    "spec": ("RunProviders", "RunSpec", "SpecError"),
    "plan": ("RETRYABLE_REASONS", "Estimate", "EstimateRow", "RunError", "dataset_hash", "estimate", "scorer_versions"),
})
