"""Embeddings for answer relevancy, answer correctness and retrieval: Gemini and OpenAI (batched, cached,
through llm's transport, never the reverse) and the bundled offline encoder (USE multilingual v3 in pure numpy,
``use_model`` / ``use_kernel``; its names in ``encoders``, which imports nothing).

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "cache",
    "encoders",
    "gemini",
    "openai_embed",
    "use_kernel",
    "use_model",
]
