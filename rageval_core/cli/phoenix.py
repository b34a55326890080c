"""``phoenix pull`` / ``phoenix push``: a live round trip with a running Arize Phoenix server.

``pull`` writes a dataset from a project's traces (newest ``--limit`` traces whose root started in the window, one row
per RAG answer, rebuilt as ``import-traces`` rebuilds a Phoenix export); ``push`` sends a stored run's results back
as span annotations on each trace's root span, replacing the ones an earlier push sent. The API key of a Phoenix
with authentication comes from ``PHOENIX_API_KEY`` only (there is no flag for it) and is never printed.
Exit 0 done; 2 the server cannot be read or refuses, or nothing could be pulled / sent."""

from __future__ import annotations

import argparse
from typing import Any

from rageval_core.cli.common import EXIT_BAD_INPUT, EXIT_OK, UsageError, echo, err, find_run, open_store
from rageval_core.cli.dataset_report import LISTED
from rageval_core.core.termtext import terminal_text


def cmd_pull(args: argparse.Namespace) -> int:
    from rageval_core.cli.traces import write_imported
    from rageval_core.data.phoenix.client import PhoenixClient
    from rageval_core.data.phoenix.config import PhoenixError
    from rageval_core.data.phoenix.pull import parse_when, pull_traces
    from rageval_core.data.traces import TraceFormatError, load_map

    if args.limit < 1:
        raise UsageError(f"--limit must be at least 1 (got {args.limit})")
    try:
        trace_map = load_map(args.map) if args.map else None
        client = PhoenixClient(args.url, timeout=args.timeout)
        pulled = pull_traces(client, args.project, since=parse_when(args.since), until=parse_when(args.until),
                             limit=args.limit, trace_url=None if args.no_links else args.trace_url, trace_map=trace_map)
    except (PhoenixError, TraceFormatError) as exc:
        err(f"error: {terminal_text(str(exc))}")
        return EXIT_BAD_INPUT
    return write_imported(pulled.result, pulled.summary(), args.out)


def cmd_push(args: argparse.Namespace) -> int:
    from rageval_core.analysis.phoenix_push import push_annotations, run_annotations
    from rageval_core.data.phoenix.client import PhoenixClient
    from rageval_core.data.phoenix.config import PhoenixError

    if not args.identifier.strip():
        raise UsageError("--identifier must not be empty")
    store = open_store(args)
    info = find_run(store, args.run)
    samples = None
    if args.data:
        from rageval_core.data.datasets import load_dataset

        samples = {s.id: s for s in load_dataset(args.data).samples}
    try:
        annotations = run_annotations(store, info.id, samples=samples, identifier=args.identifier)
        report = push_annotations(PhoenixClient(args.url, timeout=args.timeout), args.project, annotations)
    except PhoenixError as exc:
        err(f"error: {terminal_text(str(exc))}")
        return EXIT_BAD_INPUT
    for trace_id in report.missing_traces[:LISTED]:
        err(f"  not in the project: trace {terminal_text(trace_id)}")
    if len(report.missing_traces) > LISTED:
        err(f"  … and {len(report.missing_traces) - LISTED} more")
    echo(f"run {info.id} → {report.summary()}")
    return EXIT_OK


def _server_args(p: argparse.ArgumentParser) -> None:
    from rageval_core.data.phoenix.config import API_KEY_ENV, DEFAULT_TIMEOUT_S, default_project, default_url

    p.add_argument("--url", default=default_url(), help="the Phoenix server (default PHOENIX_ENDPOINT or "
                   "PHOENIX_COLLECTOR_ENDPOINT, else http://localhost:6006); a collector URL ending /v1/traces works too. "
                   f"A Phoenix with authentication takes its key from {API_KEY_ENV} (environment only)")
    p.add_argument("--project", default=default_project(),
                   help="project name or id (default PHOENIX_PROJECT or PHOENIX_PROJECT_NAME, else default)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds per request (default 30)")


def add_command(sub: Any) -> None:
    """Register ``phoenix pull | push``."""
    from rageval_core.data.phoenix.config import DEFAULT_IDENTIFIER, DEFAULT_LIMIT, DEFAULT_LINK

    group = sub.add_parser("phoenix", help="pull traces from a running Phoenix into a dataset; push a run's scores back "
                           "as span annotations")
    psub = group.add_subparsers(dest="phoenix_command", required=True)
    pull = psub.add_parser(
        "pull", help="a dataset from a Phoenix project's traces",
        description="Read the newest --limit traces of a Phoenix project whose root span started in the window (REST "
        "API, page by page) and write one dataset row per RAG answer, as import-traces does for an export; incomplete "
        "traces are skipped and counted by reason. Each row links to its trace in Phoenix. Exit 0 with at least one "
        "row, 2 when the server cannot be read or nothing could be imported.")
    _server_args(pull)
    pull.add_argument("--since", help="window start: a duration back from now (30m, 24h, 7d, 2w) or an ISO 8601 "
                      "date / time (UTC without an offset); default: no start")
    pull.add_argument("--until", help="window end (exclusive), same forms; default: now")
    pull.add_argument("--limit", type=int, default=DEFAULT_LIMIT, help=f"at most N traces, newest first (default {DEFAULT_LIMIT})")
    pull.add_argument("--trace-url", default=DEFAULT_LINK, metavar="TEMPLATE",
                      help="link of each row's trace: {trace_id}, and {url}, {project}, {project_id} filled from the "
                      f"server (default {DEFAULT_LINK}, Phoenix's trace page)")
    pull.add_argument("--no-links", action="store_true", help="write no trace_url column")
    pull.add_argument("--map", metavar="FILE", help="JSON file saying which span attribute holds each field (docs/traces.md)")
    pull.add_argument("--out", required=True, metavar="DATA", help="dataset to write (.json, .jsonl or .csv)")
    pull.set_defaults(func=cmd_pull)

    push = psub.add_parser(
        "push", help="a run's results as span annotations on each trace's root span",
        description="Send every result of a stored run to Phoenix as a span annotation on the root span of the row's "
        "trace: name <metric>·<method>, score, label pass / fail at the run's calibrated threshold (none without one; "
        "unscored rows labelled unscored), explanation = the reason, annotator CODE for the offline judge and LLM "
        "otherwise. Pushing again updates the same annotations (Phoenix keeps one per name, span and identifier).")
    push.add_argument("run", help="run id or a unique prefix (see `runs list`)")
    _server_args(push)
    push.add_argument("--identifier", default=DEFAULT_IDENTIFIER,
                      help=f"Phoenix annotation identifier (default {DEFAULT_IDENTIFIER}); another value keeps this "
                      "push's annotations beside earlier ones instead of replacing them")
    push.add_argument("--data", metavar="DATA", help="the dataset the run was made on, for its trace_id column "
                      "(default: the run's own file when unchanged, else the row ids are the trace ids)")
    push.set_defaults(func=cmd_push)


__all__ = ["add_command", "cmd_pull", "cmd_push"]
