"""Shared foundations: plain data types, ja/en text handling, coded messages, method labels, redaction, state paths
and private (0600) files.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "clock",
    "csvsafe",
    "errors",
    "jsonparse",
    "key_env",
    "lazy",
    "messages",
    "method_labels",
    "names",
    "paths",
    "private",
    "redact",
    "stats",
    "tasks",
    "termtext",
    "tokens",
    "text",
    "types",
    "versions",
]
