"""Reading an export file: its size checked before it is read, its bytes as text, the text as leaves
(``stream``), which format they are (``detect_format``, from the first leaves) and the reader for it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from rageval_core.data.traces.langfuse import LangfuseReader, is_langfuse_leaf
from rageval_core.data.traces.limits import MAX_BYTES, BadValue
from rageval_core.data.traces.model import FORMATS, TraceFormatError
from rageval_core.data.traces.openinference import SpanDictReader, is_span_dict
from rageval_core.data.traces.otlp import OtlpReader, is_otlp_leaf
from rageval_core.data.traces.phoenix import PhoenixReader, is_phoenix_leaf
from rageval_core.data.traces.spans import ReadContext, Reader, where
from rageval_core.data.traces.stream import Leaf

READERS: dict[str, Callable[[ReadContext], Reader]] = {
    "otel": OtlpReader,
    "openinference": SpanDictReader,
    "phoenix": PhoenixReader,
    "langfuse": LangfuseReader,
}
PEEK = 20  # leaves looked at to tell the format


def too_big(size: int, file: str) -> TraceFormatError | None:
    """The refusal of a file over ``MAX_BYTES`` (said before reading a byte of it), or ``None``."""
    if size > MAX_BYTES:
        return TraceFormatError(f"{file}: {size:,} bytes, over the {MAX_BYTES:,}-byte limit for a trace export "
                                "(export a shorter time window, or split the file)")
    return None


def read_text(path: Path, file: str) -> str:
    """A file's text: its size checked first (``stat``), then read and decoded as UTF-8 (a BOM dropped)."""
    try:
        refused = too_big(path.stat().st_size, file)
        if refused is not None:
            raise refused
        with path.open("rb") as handle:
            data = handle.read(MAX_BYTES + 1)  # a file that grew since stat is still bounded
    except OSError as exc:
        raise TraceFormatError(f"{file}: cannot read ({exc.strerror or exc})") from None
    return decode(data, file)


def decode(data: bytes, file: str) -> str:
    """Bytes as text; ``TraceFormatError`` for a file over the limit or not UTF-8."""
    refused = too_big(len(data), file)
    if refused is not None:
        raise refused
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"{file}: not UTF-8 text (byte {exc.start}); trace exports are JSON") from None


def _leaf_format(leaf: Leaf) -> str | None:
    if is_otlp_leaf(leaf):
        return "otel"
    if is_phoenix_leaf(leaf):
        return "phoenix"
    if not leaf.path and is_span_dict(leaf.value):
        return "openinference"
    if is_langfuse_leaf(leaf):
        return "langfuse"
    return None


def detect_format(leaves: Iterator[Leaf], file: str) -> tuple[str, list[Leaf]]:
    """The format of the first recognisable leaf and the leaves read to find it (to be read again);
    ``TraceFormatError`` when none of the first ``PEEK`` is."""
    seen: list[Leaf] = []
    for leaf in leaves:
        seen.append(leaf)
        got = _leaf_format(leaf)
        if got is not None:
            return got, seen
        if len(seen) >= PEEK:
            break
    bad = next((leaf for leaf in seen if isinstance(leaf.value, BadValue)), None)
    detail = f" ({where(bad)}: {bad.value.reason})" if bad is not None else ""
    raise TraceFormatError(
        f"{file}: not a trace export this reads{detail} (OTLP JSON with resourceSpans, OpenInference / Phoenix spans "
        f"with context.span_id, Langfuse traces or observations); pass --format {{{','.join(FORMATS)}}} to say which"
    )
