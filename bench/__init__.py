"""Benchmarks that print figures (never timed assertions in tests): ``python -m bench.<name>`` from the repository
root, or ``python bench/<name>.py`` (each script puts the root on ``sys.path`` first).

Benches import each other as ``bench.<name>`` (never as top-level modules), so the import-cycle and layer tests
see every edge; nothing here imports ``tests`` (the fake LLM server they share is ``rageval_core.testing.fake_llm``).
docs/benchmarks.md lists every bench with its dated figures.
"""
