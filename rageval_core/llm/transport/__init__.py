"""What every provider request goes through: guard, rate limit, retry, response cache, clock.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "cache",
    "callpool",
    "gemini_http",
    "guard",
    "http_errors",
    "httpx_lib",
    "ratelimit",
    "retry",
    "sdk_clients",
    "vertex_auth",
    "warm",
]
