"""The batch engine's errors, importable without the engine (the CLI catches them around every run).

Both are ``ProviderError``s: a batch job is a provider call that did not produce completions, so the CLI maps
it to exit 2 with the rest of that branch (``BatchCancelled`` it turns into an interrupt, exit 130).
"""

from rageval_core.core.errors import ProviderError


class BatchError(ProviderError):
    """The batched run cannot go on (a job the provider failed, a status that never came, a loop of rounds)."""

    def __init__(self, message: str, *, kind: str = "batch") -> None:
        super().__init__(message, kind=kind)


class BatchCancelled(BatchError):
    """Ctrl-C while collecting or polling; jobs already submitted keep running at the provider."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="cancelled")
