"""Session: the composition root. It builds providers from a ``ProviderConfig`` and runs a ``RunSpec``; nothing
below it builds a provider stack and runs it.

- ``for_run``: ``build_for_run`` (the run's stack with the store's call log, its embedder, each judge's stack)
  and ``build_and_run``.
- ``api``: the public Python API's ``evaluate``, ``trust`` and ``compare`` (re-exported by ``rageval_core``).
- ``prompt_grid``: two or more judge versions on the same rows, one run each, side by side (the Prompts page's grid).
- ``allocator``: process memory settings for a long run (glibc's arenas, SQLite's page caches), set by the CLI and
  the workbench before a run over HTTP.
"""

__all__ = ["allocator", "api", "for_run", "probes", "prompt_grid", "versus_run"]
