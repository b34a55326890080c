"""Provider batch APIs as the engine of a run: the OpenAI Batch API and Gemini batch mode.

A run too large or too rate-limited for one machine is evaluated in rounds. Each round runs every
(row, scorer) task with a stand-in model that answers what earlier rounds' batch jobs returned and
*collects* every request it cannot answer yet; the collected requests go out as one batch job per round;
its answers are stored in the ``batch_answers`` ledger. A multi-step metric (claims, then verdicts) needs
one round per step, so the rounds repeat until nothing is left to collect. The last pass is an ordinary
run (``run.run``) whose model answers only from the ledger: results, call log and cost are written as
for a synchronous run, priced at the batch rate (``BATCH_DISCOUNT``).

Batch answers are keyed by the response cache's key, which is also each request's ``custom_id`` (OpenAI)
or ``metadata.key`` (Gemini): a job's results map back to requests without any other state, so a process
that dies after submitting resumes by rerunning the command (the ledger remembers the job) or by naming
the job (``--batch-job``). Per-request errors in a job are stored and end that one result unscored, like
any provider error. Embeddings are not batched: they go to the embedding API as usual and are cached.

Modules: ``backends`` (the two SDKs' job calls), ``store.batch_ledger`` (jobs and answers in SQLite), ``answers``
(the stand-in models), ``engine`` (the rounds).
"""

from typing import Any

from rageval_core.run.batch.errors import BatchCancelled, BatchError

__all__ = ["BATCH_DISCOUNT", "BatchCancelled", "BatchError", "run_batched"]


def __getattr__(name: str) -> Any:
    """``run_batched`` and ``BATCH_DISCOUNT`` from the engine, imported on first use: every ``evaluate``
    imports this package for its errors, and only a ``--batch`` run needs the engine."""
    if name in ("BATCH_DISCOUNT", "run_batched"):
        from rageval_core.run.batch import engine

        return getattr(engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
