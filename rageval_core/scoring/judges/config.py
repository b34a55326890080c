"""Judge configurations: several models judging the same rows in one run.

A configuration is provider + model (+ base URL) + method (a rubric for a one-call judge, or
``decomposed`` with its metrics) + sampling settings, plus its own rate limits and key variable, so a
slow free-tier provider never throttles a local server. A list of them comes from a YAML or JSON file
(``--judges FILE``) or from the workbench's saved configurations. Keys never appear here: a
configuration may name the environment variable that holds its key (``api_key_env``), nothing more.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Mapping, Sequence

from rageval_core.core.messages import say
from rageval_core.core.types import DECOMPOSED
from rageval_core.core.errors import ConfigError

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/]{0,63}$")
_SECRET_KEYS = ("api_key", "apikey", "key", "token", "secret", "password")
_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,63}$")  # what api_key_env may name (never a lower-case or odd string)
_TEXT_FIELDS = ("model", "base_url", "api_key_env", "embedding_model", "provider", "method", "id", "api_version", "project", "location")
MAX_JUDGES_BYTES = 1_000_000  # a judges file is a few entries; a bigger one is a mistake or an attack
MAX_DEPTH = 8  # a list of flat entries (and a metrics list) needs 3
MAX_VALUES = 10_000  # walked before anything else: YAML aliases can make a small file a huge tree


class JudgeConfigError(ConfigError):
    """A judges file or entry that cannot be used (the message names the entry and the field). ``problems``
    holds each problem as the core said it (``messages.say``), so a UI can show them in its language."""

    def __init__(self, *problems: str) -> None:
        super().__init__("; ".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class JudgeConfig:
    """One judge: who judges (provider, model, base URL), how (method, metrics), with what sampling and limits."""

    id: str
    provider: str = "offline"
    model: str | None = None
    base_url: str | None = None
    method: str = "rubric5"  # a rubric preset id or file, "judge:<id>", or "decomposed"
    metrics: tuple[str, ...] = ()  # decomposed only
    temperature: float | None = None
    seed: int | None = None
    max_output_tokens: int | None = None
    rpm: float | None = None
    tpm: float | None = None
    concurrency: int | None = None
    timeout_s: float | None = None
    api_key_env: str | None = None  # the NAME of an environment variable holding this judge's key
    embedding_model: str | None = None
    api_version: str | None = None  # azure-openai
    project: str | None = None  # vertex
    location: str | None = None  # vertex
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @property
    def decomposed(self) -> bool:
        return self.method == DECOMPOSED

    @property
    def rubric(self) -> str:
        """The rubric preset or file of a one-call judge (``judge:rubric5`` → ``rubric5``)."""
        return self.method[len("judge:"):] if self.method.startswith("judge:") else self.method

    @property
    def sampling(self) -> dict[str, Any]:
        return {k: v for k, v in (("temperature", self.temperature), ("seed", self.seed),
                                   ("max_output_tokens", self.max_output_tokens)) if v is not None}

    def to_dict(self) -> dict[str, Any]:
        """What a run records about the judge (no key; ``api_key_env`` is a variable name)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        out["metrics"] = list(self.metrics)
        return {k: v for k, v in out.items() if v not in (None, [], ())}

    def provider_config(self, base: Any = None, environ: Mapping[str, str] | None = None) -> Any:
        """The ``ProviderConfig`` of this judge. Cache, retries, timeouts and replay settings not given here
        come from ``base`` (the run's own configuration); the key from ``api_key_env`` or the provider's usual
        environment variables, held in memory only."""
        from rageval_core.providers.config import ProviderConfig

        env = os.environ if environ is None else environ
        inherit = {} if base is None else {k: getattr(base, k) for k in ("timeout_s", "max_retries", "cache", "concurrency", "replay_log")}
        if base is not None and base.provider != self.provider:
            inherit.pop("replay_log", None)
        key = env.get(self.api_key_env) if self.api_key_env else None
        if base is not None and key is None and base.provider == self.provider and base.api_key:
            key = base.api_key  # the same provider as the sidebar: its key applies
        own = {k: v for k, v in (("concurrency", self.concurrency), ("timeout_s", self.timeout_s)) if v is not None}
        place = {k: getattr(self, k) for k in ("api_version", "project", "location")}
        if base is not None and base.provider == self.provider:  # the sidebar's Azure version / Vertex project apply
            place = {k: v if v is not None else getattr(base, k, None) for k, v in place.items()}
        return ProviderConfig(provider=self.provider, model=self.model, base_url=self.base_url, api_key=key,
                              embedding_model=self.embedding_model, rpm=self.rpm, tpm=self.tpm, **place, **{**inherit, **own})


def parse_judges(data: Any, *, source: str = "judges") -> list[JudgeConfig]:
    """Judge configurations from decoded YAML / JSON: a list, or ``{"judges": [...]}``. Every problem is
    reported at once; ids must be unique (they label the results)."""
    _check_shape(data, source)
    items = data.get("judges") if isinstance(data, Mapping) else data
    if not isinstance(items, list) or not items:
        raise JudgeConfigError(say("judges.not_list", source=source))
    known = {f.name for f in fields(JudgeConfig)} - {"extra"}
    problems: list[str] = []
    out: list[JudgeConfig] = []
    for n, item in enumerate(items, 1):
        where = {"source": source, "n": n}  # each message says "<source>: judge <n>: …" (parsed back unambiguously)
        if not isinstance(item, Mapping):
            problems.append(say("judges.not_mapping", **where, type=type(item).__name__))
            continue
        secret = [k for k in item if str(k).lower() in _SECRET_KEYS]
        if secret:
            problems.append(say("judges.secret_key", **where, keys=", ".join(map(str, secret))))
            continue
        unknown = sorted(set(map(str, item)) - known)
        if unknown:
            problems.append(say("judges.unknown_fields", **where, fields=", ".join(unknown), known=", ".join(sorted(known))))
            continue
        try:
            out.append(_one(item, where))
        except JudgeConfigError as exc:
            problems.extend(exc.problems)
        except (TypeError, ValueError) as exc:
            problems.append(str(exc))
    ids = [j.id for j in out]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        problems.append(say("judges.duplicate_id", source=source, ids=", ".join(dupes)))
    if problems:
        raise JudgeConfigError(*problems)
    return out


def _check_shape(data: Any, source: str) -> None:
    """Refuse a decoded file nested deeper than ``MAX_DEPTH`` or holding more than ``MAX_VALUES`` values (a
    YAML alias bomb expands to billions), walking at most that many before giving up."""
    stack, seen = [(data, 1)], 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if depth > MAX_DEPTH or seen > MAX_VALUES:
            raise JudgeConfigError(say("judges.too_deep", source=source, depth=MAX_DEPTH, nodes=f"{MAX_VALUES:,}"))
        if isinstance(value, Mapping):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)


def _one(item: Mapping[str, Any], where: Mapping[str, Any]) -> JudgeConfig:
    from rageval_core.providers.config import PROVIDERS

    for name in _TEXT_FIELDS:
        value = item.get(name)
        if value is not None and not isinstance(value, str):
            raise JudgeConfigError(say("judges.not_text", **where, name=name, type=type(value).__name__))
    env_name = item.get("api_key_env")
    if env_name is not None and not _ENV_NAME.match(env_name):
        raise JudgeConfigError(say("judges.bad_env_name", **where, name=repr(env_name[:80])))

    provider = str(item.get("provider") or "offline")
    if provider not in PROVIDERS:
        raise JudgeConfigError(say("judges.unknown_provider", **where, provider=repr(provider), known=", ".join(PROVIDERS)))
    method = str(item.get("method") or "rubric5")
    metrics = item.get("metrics") or ()
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",") if m.strip()]
    if method == DECOMPOSED and not metrics:
        raise JudgeConfigError(say("judges.decomposed_needs_metrics", **where))
    if method != DECOMPOSED and metrics:
        raise JudgeConfigError(say("judges.metrics_only_decomposed", **where))
    model = item.get("model")
    default_id = str(model or PROVIDERS[provider].default_model or provider)
    jid = str(item.get("id") or default_id)
    if not _ID.match(jid):
        raise JudgeConfigError(say("judges.bad_id", **where, id=repr(jid)))

    def num(name: str, kind: type) -> Any:
        value = item.get(name)
        if value is None:
            return None
        if isinstance(value, bool):
            raise JudgeConfigError(say("judges.not_number", **where, name=name))
        try:
            return kind(value)
        except (TypeError, ValueError):
            raise JudgeConfigError(say("judges.not_number_got", **where, name=name, value=repr(value))) from None

    return JudgeConfig(
        id=jid, provider=provider, model=None if model is None else str(model),
        base_url=item.get("base_url"), method=method, metrics=tuple(str(m) for m in metrics),
        temperature=num("temperature", float), seed=num("seed", int), max_output_tokens=num("max_output_tokens", int),
        rpm=num("rpm", float), tpm=num("tpm", float), concurrency=num("concurrency", int), timeout_s=num("timeout_s", float),
        api_key_env=item.get("api_key_env"), embedding_model=item.get("embedding_model"),
        api_version=item.get("api_version"), project=item.get("project"), location=item.get("location"),
    )


def load_judges(path: str | Path) -> list[JudgeConfig]:
    """Judge configurations from a ``.yaml`` / ``.yml`` or ``.json`` file."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_JUDGES_BYTES:
            raise JudgeConfigError(say("judges.too_large", source=str(path), size=f"{size:,}", limit=f"{MAX_JUDGES_BYTES:,}"))
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise JudgeConfigError(say("judges.not_valid", path=str(path), format="UTF-8 text", error=str(exc))) from None
    except OSError as exc:
        raise JudgeConfigError(f"{path}: {exc.strerror or exc}") from None
    try:
        if p.suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except Exception as exc:  # noqa: BLE001 - yaml and json raise their own error types
        kind = "YAML" if p.suffix.lower() in (".yaml", ".yml") else "JSON"
        raise JudgeConfigError(say("judges.not_valid", path=str(path), format=kind, error=str(exc))) from None
    return parse_judges(data, source=str(path))


def dump_judges(judges: Sequence[JudgeConfig]) -> str:
    """A JSON list the workbench saves and ``--judges`` reads back."""
    return json.dumps([j.to_dict() for j in judges], ensure_ascii=False, indent=2)
