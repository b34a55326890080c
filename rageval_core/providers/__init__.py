"""Providers: the one home of provider configuration and construction, above ``llm`` and ``embeddings``.

- ``config``: ``ProviderConfig`` (one provider or judge configuration, frozen), the provider table,
  ``check_config`` and ``embedding_choice`` — data and checks only, no SDK imported.
- ``registry``: ``build_llm`` (the wrapper stack) and ``build_embedder``.
- ``for_run``: ``build_for_run`` — everything a run needs built (the run's stack with the store's call log,
  its embedder, each judge's stack), handed to ``rageval_core.run.run``, which never builds providers.

``llm`` (adapters and transport) and ``embeddings`` never import this package.
"""

__all__ = ["config", "registry", "tokens"]
