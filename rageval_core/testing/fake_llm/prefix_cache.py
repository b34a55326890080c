"""The fake server's prompt-prefix cache: cached input tokens reported the way OpenAI and Gemini report them.

Why: hosted providers bill a prompt's cached prefix at a lower rate and say how much was cached (OpenAI
``usage.prompt_tokens_details.cached_tokens``, Gemini ``usageMetadata.cachedContentTokenCount``); the runner
reads, prices and shows those figures, and benches need a server that produces them from the prompts it sees.

The rule modelled is OpenAI's: a prompt of at least ``min_tokens`` (1,024) tokens whose first blocks of
``block_tokens`` (128) tokens were sent before, to the same model, is cached for the longest such run of blocks,
when that run is itself at least ``min_tokens`` long (hits come as 1,024, 1,152, 1,280, ... tokens; a shared
prefix shorter than the minimum is not cached, as ``rageval_core.llm.prompt_cache`` estimates it). Tokens are the fake server's count (4 characters a token).
``min_tokens=0`` models a local server that reuses any cached prefix (llama.cpp's slot cache).
"""

from __future__ import annotations

import hashlib
import threading

CHARS_PER_TOKEN = 4


class PrefixCache:
    """Prefixes seen per model, at block boundaries; ``lookup_and_add`` gives a prompt's cached tokens."""

    def __init__(self, *, min_tokens: int = 1024, block_tokens: int = 128, max_entries: int = 2_000_000) -> None:
        if block_tokens < 1:
            raise ValueError("block_tokens must be at least 1")
        self.min_tokens = int(min_tokens)
        self.block_tokens = int(block_tokens)
        self.max_entries = max_entries
        self._seen: set[bytes] = set()
        self._lock = threading.Lock()

    def _key(self, model: str, prefix: str) -> bytes:
        return hashlib.blake2b(f"{model}\x00{prefix}".encode("utf-8"), digest_size=16).digest()

    def lookup_and_add(self, model: str, prompt: str, prompt_tokens: int) -> int:
        """Cached tokens of ``prompt`` (0 below ``min_tokens``), then remember its prefixes for later requests."""
        step = self.block_tokens * CHARS_PER_TOKEN
        blocks = len(prompt) // step
        keys = [self._key(model, prompt[: k * step]) for k in range(1, blocks + 1)]
        with self._lock:
            hit = 0
            for k, key in enumerate(keys, start=1):
                if key not in self._seen:
                    break
                hit = k
            if len(self._seen) + len(keys) <= self.max_entries:
                self._seen.update(keys)
        cached = min(hit * self.block_tokens, prompt_tokens)
        return 0 if prompt_tokens < self.min_tokens or cached < self.min_tokens else cached
