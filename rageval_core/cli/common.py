"""What every CLI command shares: exit codes, usage errors, stderr messages, plain-text tables, the
provider options and the run store."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import TYPE_CHECKING, Any, Callable, Sequence, TextIO

from rageval_core.core.errors import UsageError  # noqa: F401  (re-exported: every command raises it)
from rageval_core.core.redact import redact
from rageval_core.core.termtext import terminal_text

if TYPE_CHECKING:
    from rageval_core.store.runs import RunInfo, Store

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3
EXIT_NOT_KEPT = 4  # results computed but not kept by the store (a full disk mid-run): never success
EXIT_INTERRUPTED = 130


class ProgressBar:
    """A one-line bar on a TTY (redrawn at most 10×/s), or a line per 10 % when stderr is a file or pipe — and,
    there, also a line every ``every_s`` seconds that saw progress, since a 10 % step of a 100,000-row run can
    take an hour."""

    def __init__(
        self, stream: TextIO, width: int = 28, clock: Callable[[], float] = time.monotonic, every_s: float = 30.0
    ) -> None:
        self.stream = stream
        self.width = width
        self.clock = clock
        self.every_s = every_s
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self._last_draw = 0.0
        self._last_step = -1
        self._last_line: tuple[float, int] | None = None  # (when, done) of the last plain line

    def __call__(self, p: Any) -> None:
        frac = p.fraction
        eta = "?" if p.eta_s is None else f"{p.eta_s:4.0f}s"
        tokens = p.input_tokens + p.output_tokens
        text = (
            f"{p.done}/{'' if getattr(p, 'total_known', True) else '~'}{p.total} tasks  calls {p.calls} (+{p.cached_calls} cached"
            + (f", {p.errors} errors" if p.errors else "")
            + f")  tokens {tokens}  ${p.cost_usd:.4f}  left {eta}"
        )
        if self.tty:
            now = self.clock()
            if self._last_draw and now - self._last_draw < 0.1 and p.done < p.total:
                return
            self._last_draw = now
            filled = int(round(frac * self.width))
            self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {text}\x1b[K")
            if p.done >= p.total:
                self.stream.write("\n")
        else:
            step = int(frac * 10)
            now = self.clock()
            due = self._last_line is not None and now - self._last_line[0] >= self.every_s and p.done != self._last_line[1]
            if step == self._last_step and not due:
                return
            self._last_step = step
            self._last_line = (now, p.done)
            self.stream.write(f"progress {frac * 100:3.0f}%  {text}\n")
        self.stream.flush()


def open_store(args: argparse.Namespace, *, writes: str | None = None):
    """The store of ``--db`` (default: the state folder's). A read-only one is read with a note on stderr; with
    ``writes`` (the command, when it must keep results there) it is refused up front (exit 2) instead."""
    from rageval_core.core.messages import say
    from rageval_core.store.runs import Store

    store = Store(args.db) if getattr(args, "db", None) else Store()
    if writes is not None:
        store.require_writable(writes)
    why = store.read_only_reason()
    if why is not None:
        err(f"note: {say('store.read_only_note', path=store.path, why=why)}")
    return store


def echo(msg: Any = "") -> None:
    """Print to stdout through the redaction step (a message may quote a key, a header token or a credentialed
    URL) with control characters from data neutralised (``terminal_text``); every CLI print goes through
    ``echo`` or ``err`` (tests/cli/test_cli_output.py checks)."""
    print(terminal_text(redact(msg), multiline=True), flush=True)


def err(msg: Any) -> None:
    """Print to stderr, redacted and neutralised like ``echo``."""
    print(terminal_text(redact(msg), multiline=True), file=sys.stderr, flush=True)


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    cells = [[terminal_text(h) for h in headers]] + [[terminal_text(c) for c in r] for r in rows]
    widths = [max(text_width(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        lines.append("  ".join(c + " " * (widths[i] - text_width(c)) for i, c in enumerate(row)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def text_width(text: str) -> int:
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def money(value: float | None) -> str:
    return "?" if value is None else f"{value:.4f}"


def short(value: Any, width: int = 40) -> str:
    text = "-" if value is None else str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def find_run(store: Store, run_id: str) -> RunInfo:
    info = store.find_run(run_id)
    if info is None:
        matches = [r.id for r in store.list_runs() if r.id.startswith(run_id)]
        if len(matches) > 1:
            raise UsageError(f"run id {run_id!r} is ambiguous: {', '.join(matches[:5])}{' …' if len(matches) > 5 else ''}")
        raise UsageError(f"no run {run_id!r} (see `runs list`)")
    return info


def add_provider_args(
    parser: argparse.ArgumentParser, *, provider_required: bool = True, default_provider: str | None = None
) -> None:
    """The provider options of every command that calls a model (evaluate, synth, rag, trust DATA): one
    configuration works for all of them (read back by ``provider_config``). With ``default_provider`` the
    flag is optional and falls back to it."""
    required = provider_required and default_provider is None
    parser.add_argument("--provider", required=required, default=default_provider,
                        help="offline, gemini, openai, openai-compatible, azure-openai, vertex, anthropic, replay"
                        + (f" (default {default_provider})" if default_provider else ""))
    parser.add_argument("--model", help="model name (default: the provider's default, e.g. gemini-2.5-flash, gpt-4o-mini); "
                        "azure-openai: the chat deployment's name")
    parser.add_argument("--base-url", help="OpenAI-compatible server or gateway, e.g. http://127.0.0.1:8080/v1; azure-openai: "
                        "the resource endpoint (default AZURE_OPENAI_ENDPOINT); anthropic: default ANTHROPIC_BASE_URL")
    parser.add_argument("--embedding-model", help="the provider's embedding model (e.g. nomic-embed-text on Ollama); "
                        "azure-openai: the embedding deployment's name")
    parser.add_argument("--api-version", help="azure-openai: the API version (default OPENAI_API_VERSION, else 2024-10-21)")
    parser.add_argument("--project", help="vertex: the Google Cloud project (default GOOGLE_CLOUD_PROJECT)")
    parser.add_argument("--location", help="vertex: the region, e.g. us-central1 (default GOOGLE_CLOUD_LOCATION, else global)")
    parser.add_argument("--embeddings", choices=("auto", "provider", "offline"), default="auto",
                        help="auto (default): the provider's embeddings when it has an embedding model, else the bundled "
                        "offline encoder (said in the output, the run settings and the export); provider: refuse "
                        "without --embedding-model; offline: always the bundled encoder")
    parser.add_argument("--replay-log", help="JSON Lines call log to answer from (--provider replay)")
    parser.add_argument("--record-log", help="append every provider call to this JSON Lines log (replayable)")
    parser.add_argument("--rpm", type=float, help="requests per minute limit (e.g. 10 for Gemini's free tier)")
    parser.add_argument("--tpm", type=float, help="tokens per minute limit")
    parser.add_argument("--embedding-rpm", type=float,
                        help="a separate requests-per-minute limit for embeddings (default: they count against --rpm)")
    parser.add_argument("--embedding-tpm", type=float, help="a separate tokens-per-minute limit for embeddings")
    parser.add_argument("--fail-fast", type=int, default=5, metavar="N",
                        help="give a host up after N connection failures in a row (default 5): the rest is unscored "
                        "provider_unreachable")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per model call (default 60)")
    parser.add_argument("--max-retries", type=int, default=4, help="retries on 429, 408, 5xx and timeouts (default 4)")


# How check_config names each setting in CLI messages: the flags (never the workbench's sidebar fields).
CLI_NAMES: dict[str, str | None] = {
    "base_url": "--base-url",
    "model": "--model",
    "embedding_model": "--embedding-model",
    "replay_log": "--replay-log PATH",
    "timeout": "--timeout",
    "max_retries": "--max-retries",
    "concurrency": "--concurrency",
    "rpm": "--rpm",
    "tpm": "--tpm",
    "embedding_rpm": "--embedding-rpm",
    "embedding_tpm": "--embedding-tpm",
    "fail_fast": "--fail-fast",
    "api_version": "--api-version",
    "project": "--project",
    "location": "--location",
    "api_key": None,  # keys come from the environment only
}


def provider_config(args: argparse.Namespace) -> Any:
    from rageval_core.providers.config import PROVIDERS, ProviderConfig, check_config

    if args.provider not in PROVIDERS:
        raise UsageError(f"unknown provider {args.provider!r}; known: {', '.join(PROVIDERS)}")
    cfg = ProviderConfig(
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        embedding_model=args.embedding_model,
        embeddings=getattr(args, "embeddings", None) or "auto",
        concurrency=args.concurrency,
        cache=not args.no_cache,
        replay_log=args.replay_log,
        record_log=args.record_log,
        rpm=args.rpm,
        tpm=args.tpm,
        embedding_rpm=getattr(args, "embedding_rpm", None),
        embedding_tpm=getattr(args, "embedding_tpm", None),
        fail_fast=getattr(args, "fail_fast", 5),
        timeout_s=args.timeout,
        max_retries=args.max_retries,
        api_version=getattr(args, "api_version", None),
        project=getattr(args, "project", None),
        location=getattr(args, "location", None),
    )
    problems = check_config(cfg, names=CLI_NAMES)
    if problems:
        raise UsageError("provider configuration: " + " ".join(problems))
    return cfg
