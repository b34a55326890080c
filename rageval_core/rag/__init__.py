"""The RAG systems under test: the small built-in pipeline, test-set generation and calls to your own RAG.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "simple",
    "synth",
    "your_rag",
]
