"""The batch engine's errors, importable without the engine (the CLI catches them around every run)."""


class BatchError(Exception):
    """The batched run cannot go on (a job the provider failed, a status that never came, a loop of rounds)."""


class BatchCancelled(BatchError):
    """Ctrl-C while collecting or polling; jobs already submitted keep running at the provider."""
