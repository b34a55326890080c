"""Token prices and cost: an editable table (``prices.json`` next to this file) plus the user's overrides.

Prices are per 1M tokens (input, output, cached input) and the table records the date they were
checked, because provider prices change and a stale price must be visible, not silent. Users override
or add models in ``<state folder>/prices.json`` (same shape, ``models`` only is enough) or through
``PriceTable.set_price`` + ``save_overrides`` from the UI. Unknown models (local servers) cost 0 and are
reported as unpriced.

A name ``<provider>:<model>`` prices that model on that provider only (``azure-openai:my-gpt4o-deployment``,
``vertex:gemini-2.5-flash``, ``openai-compatible:openrouter/anthropic/claude-haiku-4.5``): an Azure deployment
is named by its owner, and a cloud may price a model unlike its maker's API. ``for_provider`` lays those entries
over the plain names. ``cache_write`` is what writing a prompt prefix into the cache costs where a provider bills
it (Anthropic: 1.25x the input rate for the 5-minute cache).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rageval_core.core import paths
from rageval_core.core.types import Usage
from rageval_core.core.private import write_private_text

DEFAULT_PRICES_PATH = Path(__file__).with_name("prices.json")
OVERRIDES_NAME = "prices.json"


@dataclass(frozen=True)
class ModelPrice:
    """USD per 1M tokens."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None

    def cost(self, usage: Usage) -> float:
        """Cost of ``usage``; cached input tokens are billed at the cached rate (input rate if none), and the input
        written into the provider's cache (``usage.cache_write_tokens``) at the cache-write rate."""
        cached = min(usage.cached_input_tokens, usage.input_tokens)
        cached_rate = self.input if self.cached_input is None else self.cached_input
        written = min(max(0, usage.cache_write_tokens), usage.input_tokens - cached)
        write_rate = self.input if self.cache_write is None else self.cache_write
        plain = usage.input_tokens - cached - written
        return (plain * self.input + cached * cached_rate + written * write_rate + usage.output_tokens * self.output) / 1_000_000


class PriceTable:
    """Model → ``ModelPrice`` with the date the defaults were checked and which entries the user overrode."""

    def __init__(self, models: Mapping[str, ModelPrice], *, checked: str | None = None, overridden: set[str] | None = None) -> None:
        self.models = dict(models)
        self.checked = checked
        self.overridden = set(overridden or ())

    @classmethod
    def load(cls, path: str | Path | None = None, *, overrides: str | Path | None | bool = True) -> PriceTable:
        """The default table (or ``path``) merged with the user's overrides file when it exists.

        ``overrides=True`` reads ``<state folder>/prices.json``; a path reads that file; False skips it.
        """
        data = json.loads(Path(path or DEFAULT_PRICES_PATH).read_text(encoding="utf-8"))
        table = cls(_parse_models(data.get("models", {})), checked=data.get("checked"))
        if overrides is not False:
            target = _overrides_path() if overrides is True else Path(str(overrides))
            if target.is_file():
                extra = json.loads(target.read_text(encoding="utf-8"))
                for name, price in _parse_models(extra.get("models", extra)).items():
                    table.set_price(name, price)
        return table

    def lookup(self, model: str) -> ModelPrice | None:
        """Exact name first, then the longest known prefix (``gpt-4o-mini-2024-07-18`` → ``gpt-4o-mini``)."""
        name = model.removeprefix("models/")
        if name in self.models:
            return self.models[name]
        best = max((k for k in self.models if name.startswith(k)), key=len, default=None)
        return self.models[best] if best is not None else None

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD for ``usage`` on ``model``, or None when the model has no price."""
        price = self.lookup(model)
        return None if price is None else price.cost(usage)

    def for_provider(self, provider: str | None) -> PriceTable:
        """The table as ``provider`` bills: its ``<provider>:<model>`` entries laid over the plain names (and
        the other providers' scoped entries left out)."""
        plain = {name: p for name, p in self.models.items() if ":" not in name}
        prefix = f"{provider}:" if provider else None
        scoped = {name[len(prefix):]: p for name, p in self.models.items() if prefix and name.startswith(prefix)}
        overridden = {n for n in self.overridden if ":" not in n} | {n[len(prefix):] for n in self.overridden if prefix and n.startswith(prefix)}
        return PriceTable({**plain, **scoped}, checked=self.checked, overridden=overridden)

    def scoped_only(self, provider: str) -> PriceTable:
        """Only the ``<provider>:<model>`` entries, by model name (what a user priced for an otherwise free
        provider, e.g. a gateway behind openai-compatible)."""
        prefix = f"{provider}:"
        return PriceTable({n[len(prefix):]: p for n, p in self.models.items() if n.startswith(prefix)}, checked=self.checked)

    def scaled(self, factor: float) -> PriceTable:
        """Every price times ``factor`` (batch APIs bill half the synchronous price)."""
        models = {
            name: ModelPrice(p.input * factor, p.output * factor, None if p.cached_input is None else p.cached_input * factor,
                             None if p.cache_write is None else p.cache_write * factor)
            for name, p in self.models.items()
        }
        return PriceTable(models, checked=self.checked, overridden=self.overridden)

    def set_price(self, model: str, price: ModelPrice) -> None:
        self.models[model] = price
        self.overridden.add(model)

    def overrides_dict(self) -> dict[str, Any]:
        return {"models": {name: asdict(self.models[name]) for name in sorted(self.overridden)}}

    def save_overrides(self, target: str | Path | None = None) -> Path:
        """Write the user's overrides (only those) to the state folder."""
        path = Path(target) if target is not None else paths.home() / OVERRIDES_NAME
        write_private_text(path, json.dumps(self.overrides_dict(), indent=2, ensure_ascii=False) + "\n")
        return path

    def rows(self) -> list[dict[str, Any]]:
        """One row per model for an editable table in the UI."""
        return [
            {"model": name, **asdict(price), "overridden": name in self.overridden}
            for name, price in sorted(self.models.items())
        ]


def _overrides_path() -> Path:
    """Where the user's overrides live, without creating the state folder just to look."""
    root = os.environ.get("RAGEVAL_HOME")
    return (Path(root) if root else Path.cwd() / ".rageval") / OVERRIDES_NAME


def _parse_models(models: Mapping[str, Any]) -> dict[str, ModelPrice]:
    out: dict[str, ModelPrice] = {}
    for name, entry in models.items():
        if not isinstance(entry, Mapping):
            raise TypeError(f"price of {name!r} must be an object with input/output")
        cached, write = entry.get("cached_input"), entry.get("cache_write")
        out[str(name)] = ModelPrice(float(entry["input"]), float(entry["output"]), None if cached is None else float(cached),
                                    None if write is None else float(write))
    return out


def load_prices() -> PriceTable:
    """The table the workbench uses: defaults plus the user's overrides."""
    return PriceTable.load()
