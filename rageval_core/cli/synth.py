"""CLI: ``synth`` (document → synthetic QA test set) and ``rag`` (test set + documents → RAG outputs).

The synthetic-QA article's pipeline from the command line, with the same exit codes as ``evaluate``::

    python -m rageval_core synth DOC.md --provider offline --per-section 3 --out testset.json
    python -m rageval_core synth DOC.md --provider offline --types fact=0.4,reasoning=0.3,multi_chunk=0.2,out_of_scope=0.1 --out testset.json
    python -m rageval_core rag testset.json --docs DOC.md --provider offline --k 2 --out rag_outputs.json
    python -m rageval_core evaluate rag_outputs.json --provider offline --judge binary --out results.json

Exit 0 done (some sections may have failed: they are listed on stderr and in the file); 2 nothing usable
(unreadable document or test set, bad provider configuration, every section failed, ``--strict`` with a
failed section or answer). Keys come from the environment only and are never printed.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rageval_core.cli.common import err, echo

EXIT_OK = 0
EXIT_BAD_INPUT = 2


def _err(msg: str) -> None:
    err(msg)


def _add_options(p: argparse.ArgumentParser, *, default_provider: str | None = "offline") -> None:
    """``evaluate``'s provider options (so the same configuration works for all three commands; offline unless
    said, as everywhere), then chunking, ``--strict`` and ``--template``."""
    from rageval_core.cli.common import add_provider_args

    add_provider_args(p, provider_required=False, default_provider=default_provider)
    p.add_argument("--concurrency", type=int, default=1, help="calls in flight (default 1; 4 for --endpoint / --callable)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the response cache")
    p.add_argument("--chunk-size", type=int, help="characters per chunk (default ja 300, en 800)")
    p.add_argument("--chunk-overlap", type=int, help="characters carried between chunks (default ja 60, en 150)")
    p.add_argument("--strict", action="store_true", help="exit 2 when any section or answer failed")
    p.add_argument("--template", metavar="FILE", help="an edited synth_qa / rag_answer template (prompt engine format)")


def _llm(args: argparse.Namespace) -> Any:
    from rageval_core.cli.common import provider_config as _provider_config
    from rageval_core.providers.registry import build_llm

    cfg = _provider_config(args)
    db = getattr(args, "db", None)
    return cfg, build_llm(cfg, db_path=db)


def _documents(paths: list[str]) -> list[Any]:
    from rageval_core.cli.common import UsageError
    from rageval_core.data.documents import DocumentError, read_document

    docs = []
    for path in paths:
        try:
            docs.append(read_document(path))
        except DocumentError as exc:
            raise UsageError(str(exc)) from None
    names = [d.name for d in docs]
    if len(set(names)) != len(names):
        raise UsageError("two documents share a file name; chunk ids and provenance need distinct names")
    return docs


def _template_text(args: argparse.Namespace) -> str | None:
    from rageval_core.cli.common import UsageError

    if not args.template:
        return None
    try:
        return Path(args.template).read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise UsageError(f"--template {args.template!r}: cannot read the file: {exc.strerror or exc}") from None


def _check_chunking(args: argparse.Namespace) -> None:
    from rageval_core.cli.common import UsageError

    if args.chunk_size is not None and args.chunk_size < 20:
        raise UsageError("--chunk-size must be at least 20 characters")
    if args.chunk_overlap is not None and (args.chunk_overlap < 0 or (args.chunk_size and args.chunk_overlap >= args.chunk_size)):
        raise UsageError("--chunk-overlap must be >= 0 and smaller than --chunk-size")


def cmd_synth(args: argparse.Namespace) -> int:
    """Generate a test set from one document and write it as JSON."""
    from rageval_core.cli.common import UsageError
    from rageval_core.data.documents import chunk_document
    from rageval_core.llm.base import ProviderError
    from rageval_core.rag.synth import SharesError, SynthError, generate_testset, parse_shares

    out = Path(args.out)
    if out.suffix.lower() != ".json":
        raise UsageError(f"--out {args.out!r}: a test set is written as .json")
    _check_chunking(args)
    try:
        shares = parse_shares(args.types) if args.types else None
    except SharesError as exc:
        raise UsageError(f"--types: {exc}") from None
    template = _template_text(args)
    (doc,) = _documents([args.document])
    try:
        _, llm = _llm(args)
    except ProviderError as exc:
        raise UsageError(str(exc)) from None

    def progress(done: int, total: int, heading: str) -> None:
        if not args.quiet:
            _err(f"section {done}/{total}: {heading}")

    chunks = chunk_document(doc, size=args.chunk_size, overlap=args.chunk_overlap)
    try:
        testset = generate_testset(doc, llm, per_section=args.per_section, shares=shares, chunks=chunks, template=template,
                                   progress=progress)
    except SynthError as exc:
        raise UsageError(str(exc)) from None
    testset.save(out)
    ok = sum(1 for s in testset.sections if s.status == "ok")
    dupes = sum(s.duplicates for s in testset.sections)
    label = " (offline heuristic questions, no language model)" if testset.offline else ""
    counts = testset.counts()
    types = ", ".join(f"{t} {n}" for t, n in counts["type"].items())
    flags = ", ".join(f"{n} {f}" for f, n in counts["flag"].items() if f != "near_duplicate") or "none"
    echo(
        f"{len(testset.items)} questions ({types}) from {ok}/{len(testset.sections)} sections of {doc.name} "
        f"by {testset.generator['provider']}/{testset.generator['model']}{label}; {dupes} near-duplicate(s) set aside "
        f"as rejected; flagged for review: {flags} → {out}"
    )
    short = [f"{s.index} {t} {s.by_type.get(t, 0)}/{n}" for s in testset.sections for t, n in s.asked.items()
             if s.status == "ok" and s.by_type.get(t, 0) + s.duplicates < n]
    if short and not args.quiet:
        _err("  fewer pairs than asked (section type kept/asked): " + "; ".join(short))
    failed = [s for s in testset.sections if s.status in ("failed", "empty")]
    for s in failed:
        _err(f"  section {s.index} {s.heading!r}: {s.status}: {s.reason}")
    if not testset.items:
        _err("nothing generated: every section failed or returned no pairs")
        return EXIT_BAD_INPUT
    if args.strict and failed:
        _err(f"--strict: {len(failed)} section(s) without questions")
        return EXIT_BAD_INPUT
    return EXIT_OK


def cmd_rag(args: argparse.Namespace) -> int:
    """Answer every test-set question with retrieval over the documents; write an evaluation dataset."""
    from rageval_core.cli.common import UsageError
    from rageval_core.data.datasets import EXTENSIONS, save_dataset
    from rageval_core.llm.base import ProviderError
    from rageval_core.providers.registry import build_embedder
    from rageval_core.rag.simple import RagError, run_rag
    from rageval_core.rag.synth import SynthError, load_testset

    out = Path(args.out)
    if out.suffix.lower() not in EXTENSIONS:
        raise UsageError(f"--out {args.out!r}: use .json, .jsonl or .csv")
    if args.k < 1:
        raise UsageError("--k must be at least 1")
    _check_chunking(args)
    template = _template_text(args)
    try:
        testset = load_testset(args.testset)
    except SynthError as exc:
        raise UsageError(str(exc)) from None
    if not testset.items:
        raise UsageError(f"{args.testset}: no questions")
    if args.endpoint or args.callable:
        return _rag_with_system(args, testset.items, out)
    if args.header or args.map:
        raise UsageError("--header and --map go with --endpoint (or --map with --callable)")
    if not args.docs:
        raise UsageError("give --endpoint URL or --callable MOD:FN (your RAG system), or --docs DOC [--provider P] "
                         "(the built-in pipeline; offline unless --provider says otherwise)")
    args.provider = args.provider or "offline"
    docs = _documents(args.docs)
    try:
        cfg, llm = _llm(args)
        embedder = build_embedder(cfg, db_path=getattr(args, "db", None))
    except ProviderError as exc:
        raise UsageError(str(exc)) from None

    def progress(done: int, total: int) -> None:
        if not args.quiet and (done == total or done % 10 == 0):
            _err(f"answered {done}/{total}")

    try:
        result = run_rag(
            testset.items, docs, llm, embedder, k=args.k, chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap,
            include_heading=not args.no_heading, template=template, progress=progress,
        )
    except RagError as exc:
        raise UsageError(str(exc)) from None
    save_dataset(result.samples, out)
    hit = "-" if result.hit_rate is None else f"{result.hit_rate:.3f}"
    label = " (offline heuristic: extractive answers, no language model)" if result.offline else ""
    echo(
        f"{len(result.samples)} answers by {result.provider}/{result.model}{label}; top-{result.k} of {result.chunks} chunks "
        f"by {result.embedder}; retrieval hit rate {hit}; {result.errors} failed → {out}"
    )
    return _answers_outcome(result.samples, args.strict, out)


def _rag_with_system(args: argparse.Namespace, items: list[Any], out: Path) -> int:
    """``rag --endpoint`` / ``--callable``: the user's system answers every question through the provider stack."""
    from rageval_core.cli.common import UsageError
    from rageval_core.data.datasets import save_dataset
    from rageval_core.providers.config import ProviderConfig
    from rageval_core.rag.your_rag import CallableRAG, EndpointRAG, MappingError, RagMapping, answer_with_system, load_mapping, system_stack

    if args.endpoint and args.callable:
        raise UsageError("give --endpoint or --callable, not both")
    if args.docs or args.provider:
        raise UsageError("--docs and --provider are for the built-in pipeline; with --endpoint / --callable your system "
                         "retrieves and answers (pick the judge's provider in 'evaluate')")
    if args.header and not args.endpoint:
        raise UsageError("--header goes with --endpoint")
    try:
        mapping = load_mapping(args.map) if args.map else RagMapping()
        system: Any = (EndpointRAG(args.endpoint, mapping=mapping, headers=args.header or [], timeout_s=args.timeout)
                       if args.endpoint else CallableRAG(args.callable, mapping=mapping))
    except (MappingError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    concurrency = args.concurrency if args.concurrency and args.concurrency > 1 else 4
    cfg = ProviderConfig(concurrency=concurrency, cache=not args.no_cache, rpm=args.rpm, tpm=args.tpm,
                         timeout_s=args.timeout, max_retries=args.max_retries, record_log=args.record_log)
    llm = system_stack(system, cfg, db_path=getattr(args, "db", None))

    def progress(done: int, total: int) -> None:
        if not args.quiet and (done == total or done % 10 == 0):
            _err(f"answered {done}/{total}")

    result = answer_with_system(items, llm, system.descriptor, concurrency=concurrency, progress=progress)
    save_dataset(result.samples, out)
    lat = result.latency
    latency = "-" if lat["median_s"] is None else f"median {lat['median_s']:.3f} s, p95 {lat['p95_s']:.3f} s"
    echo(f"{len(result.samples) - result.errors} of {len(result.samples)} question(s) answered by {result.system} "
         f"{result.name}; {result.errors} failed; "
          f"{result.cached} from the cache; latency {latency} → {out}")
    return _answers_outcome(result.samples, args.strict, out)


def _answers_outcome(samples: list[Any], strict: bool, out: Path) -> int:
    """List the questions that got no answer (the first 20, then a count) and pick the exit code: 2 when
    none was answered, or any failed under ``--strict``."""
    failed = [s for s in samples if s.metadata.get("rag_error")]
    for s in failed[:20]:
        _err(f"  {s.id}: {s.metadata['rag_error']}")
    if len(failed) > 20:
        _err(f"  … {len(failed) - 20} more (each row's rag_error in {out})")
    if samples and len(failed) == len(samples):
        _err("nothing answered: every question failed")
        return EXIT_BAD_INPUT
    if strict and failed:
        _err(f"--strict: {len(failed)} question(s) without an answer")
        return EXIT_BAD_INPUT
    return EXIT_OK


def add_commands(sub: Any) -> None:
    """Register ``synth`` and ``rag`` on the main parser's subparsers."""
    sy = sub.add_parser("synth", help="generate a synthetic QA test set from a Markdown/text document")
    sy.add_argument("document", help="document (.md, .markdown, .txt); sections are cut at headings")
    sy.add_argument("--per-section", type=int, default=3, help="questions per section (default 3, at most 20)")
    sy.add_argument("--types", metavar="SHARES",
                    help="question type shares, e.g. fact=0.4,reasoning=0.3,multi_chunk=0.2,out_of_scope=0.1 "
                    "(default: fact only); the total stays per-section x sections")
    sy.add_argument("--out", required=True, help="test set file (.json)")
    sy.add_argument("--quiet", action="store_true", help="no progress lines")
    _add_options(sy)
    sy.set_defaults(func=cmd_synth)

    rg = sub.add_parser(
        "rag",
        help="answer a test set with your RAG system (--endpoint, --callable) or the built-in pipeline (--docs)",
        description="Answer every test-set question and write an evaluation dataset for 'evaluate'. Your system: "
        "--endpoint URL (POST {\"question\": ...}, reads answer and contexts; --map FILE changes the paths; "
        "--header 'Authorization: Bearer $MY_RAG_TOKEN' reads $NAME from the environment at call time, never stored) "
        "or --callable package.module:function. Or the built-in retrieve-and-answer pipeline: --docs DOC --provider P.",
    )
    rg.add_argument("testset", help="test set from 'synth' (or a JSON list of {question, answer} as in the synthetic-QA article)")
    rg.add_argument("--endpoint", metavar="URL", help="your RAG server: each question is POSTed as JSON")
    rg.add_argument("--header", action="append", metavar="'NAME: VALUE'",
                    help="request header for --endpoint (repeatable); $NAME in the value is read from the environment")
    rg.add_argument("--map", metavar="FILE", help="JSON (or YAML) mapping of request and reply paths (docs/synth.md: Your own RAG system)")
    rg.add_argument("--callable", metavar="MOD:FN", help="your RAG as Python: fn(question[, metadata]) -> dict or (answer, contexts)")
    rg.add_argument("--docs", action="append", help="built-in pipeline: document to retrieve from (repeatable)")
    rg.add_argument("--k", type=int, default=2, help="chunks retrieved per question (default 2, as in the synthetic-QA article)")
    rg.add_argument("--no-heading", action="store_true", help="embed chunks without their section heading")
    rg.add_argument("--out", required=True, help="RAG outputs as a dataset (.json, .jsonl, .csv) for 'evaluate'")
    rg.add_argument("--quiet", action="store_true", help="no progress lines")
    _add_options(rg, default_provider=None)  # None: --provider is for the built-in pipeline only (offline there by default)
    rg.set_defaults(func=cmd_rag)
