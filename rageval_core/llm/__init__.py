"""The LLM side: one request / completion / error type (``base``), the providers (``gemini_provider`` and
``vertex_provider`` on it, ``openai_provider`` and ``azure_provider`` on it, ``anthropic_provider``, all on the
shared ``api_provider`` base, ``offline`` with its judge and reasons, ``replay``),
keys, prices, what a prompt cache could save (``prompt_cache``), structured-output levels, the redaction boundary, the wrappers (timeout, concurrency, usage,
call log); ``transport`` holds what every request goes through. The stacks are built in ``providers``
(above ``llm`` and ``embeddings``), never here.
Providers and their flags: docs/providers.md.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "anthropic_provider",
    "api_provider",
    "azure_provider",
    "base",
    "gemini_provider",
    "keys",
    "openai_provider",
    "pricing",
    "prompt_cache",
    "redacting",
    "replay",
    "structured",
    "token_count",
    "transport",
    "vertex_provider",
    "wrappers",
]
