"""The columns of the ``results`` and ``call_log`` tables, defined once.

``runs.py`` creates the full tables from these lists and ``light_tables.py`` the pages' narrow copies
(every column but the large texts, clustered by run); two hand-written copies of the same column list had
to be kept equal by eye. A light copy takes each column's type and NOT NULL but no DEFAULT (the triggers
always copy a value), and its own key.
"""

from __future__ import annotations

import re

# (name, declaration) in the order of the full table; the order is the one older databases have.
RESULTS: tuple[tuple[str, str], ...] = (
    ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
    ("run_id", "TEXT NOT NULL"),
    ("sample_id", "TEXT NOT NULL"),
    ("scorer", "TEXT NOT NULL"),
    ("metric", "TEXT NOT NULL"),
    ("method", "TEXT NOT NULL"),
    ("value", "REAL"),
    ("unscored_reason", "TEXT"),
    ("reason", "TEXT"),
    ("raw_score", "REAL"),
    ("details", "TEXT NOT NULL"),
    ("provider", "TEXT"),
    ("model", "TEXT"),
    ("calls", "INTEGER NOT NULL DEFAULT 0"),
    ("cached_calls", "INTEGER NOT NULL DEFAULT 0"),
    ("input_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("output_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("cached_input_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("cost_usd", "REAL NOT NULL DEFAULT 0"),
    ("latency_s", "REAL NOT NULL DEFAULT 0"),
    ("created_at", "REAL NOT NULL"),
    ("repeat_index", "INTEGER NOT NULL DEFAULT 0"),
    ("details_pack", "BLOB"),  # the details, texts by reference (store.packing); NULL: written before, in details
)

CALL_LOG: tuple[tuple[str, str], ...] = (
    ("id", "INTEGER PRIMARY KEY AUTOINCREMENT"),
    ("run_id", "TEXT"),
    ("sample_id", "TEXT"),
    ("scorer", "TEXT"),
    ("method", "TEXT"),
    ("task", "TEXT"),
    ("request_key", "TEXT"),
    ("provider", "TEXT"),
    ("model", "TEXT"),
    ("prompt", "TEXT"),
    ("response", "TEXT"),
    ("input_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("output_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("cached_input_tokens", "INTEGER NOT NULL DEFAULT 0"),
    ("cost_usd", "REAL NOT NULL DEFAULT 0"),
    ("latency_s", "REAL NOT NULL DEFAULT 0"),
    ("cached", "INTEGER NOT NULL DEFAULT 0"),
    ("error", "TEXT"),
    ("ts", "REAL NOT NULL"),
    ("reask", "INTEGER NOT NULL DEFAULT 0"),
    ("structured_output", "TEXT"),
    ("prompt_parts", "TEXT"),  # the prompt's segment ids in ``texts`` (store.packing); NULL: inline in prompt
    ("response_id", "INTEGER"),  # the response's id in ``texts``; NULL: inline in response (or none)
)

# The light copies: which columns, in their order (the key columns first).
RESULT_LIGHT_COLUMNS = (
    "run_id", "repeat_index", "id", "sample_id", "scorer", "metric", "method", "value", "unscored_reason", "reason",
    "raw_score", "provider", "model", "calls", "cached_calls", "input_tokens", "output_tokens",
    "cached_input_tokens", "cost_usd", "latency_s",
)
CALL_LIGHT_COLUMNS = (
    "run_id", "id", "sample_id", "scorer", "method", "task", "request_key", "provider", "model", "input_tokens",
    "output_tokens", "cached_input_tokens", "cost_usd", "latency_s", "cached", "error", "ts", "reask",
    "structured_output",
)


def create_table(name: str, columns: tuple[tuple[str, str], ...]) -> str:
    """``CREATE TABLE IF NOT EXISTS`` for a full table."""
    body = ",\n".join(f"    {col} {decl}" for col, decl in columns)
    return f"CREATE TABLE IF NOT EXISTS {name} (\n{body}\n);"


def light_declaration(decl: str) -> str:
    """A column's declaration in a light copy: its type and NOT NULL, no DEFAULT; the id column (the full
    table's row key) becomes a plain ``INTEGER NOT NULL`` part of the copy's key."""
    if "PRIMARY KEY" in decl:
        return "INTEGER NOT NULL"
    return re.sub(r"\s+DEFAULT\s+\S+", "", decl)


def create_light_table(
    name: str, source: tuple[tuple[str, str], ...], names: tuple[str, ...], *, extra: tuple[str, ...] = (),
    not_null: tuple[str, ...] = (), key: tuple[str, ...],
) -> str:
    """``CREATE TABLE IF NOT EXISTS`` for a light copy of ``source``: the columns ``names`` (``not_null`` made
    NOT NULL where the full table allows NULL), then the untyped ``extra`` columns, keyed by ``key``."""
    decls = dict(source)
    lines = []
    for col in names:
        decl = light_declaration(decls[col])
        if col in not_null and "NOT NULL" not in decl:
            decl += " NOT NULL"
        lines.append(f"    {col} {decl}")
    lines += [f"    {col}" for col in extra]
    lines.append(f"    PRIMARY KEY ({', '.join(key)})")
    body = ",\n".join(lines)
    return f"CREATE TABLE IF NOT EXISTS {name} (\n{body}\n) WITHOUT ROWID;"
