"""Every piece of text a Streamlit page shows, read from the AppTest element tree, and the shape rule that tells
English UI text from data: for the Japanese-UI tests (tests/ui/test_i18n_pages.py, test_i18n_figures.py) and
the report's language test.

The walk reads every element's protobuf message, so nothing a user can read is missed by a list of element
kinds: labels, help tooltips, placeholders, options (as formatted), captions, markdown, HTML blocks, metric
values, popover and expander labels, tab labels, table headings (``column_config`` labels, else the column
names) and table cells, and the titles inside Vega-Lite charts (with the chart's legend values).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from google.protobuf.message import Message

from tests.support.apptest import plain
from tests.support.html_tables import text as html_text

CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uff00-\uffef]")
WORD = re.compile(r"[A-Za-z]{3,}")
CAPITALISED = re.compile(r"^[A-Z][a-z]{2,}")
# Text that is English in every language: identifiers, file names and formats, product, model and statistic names.
ALLOWED = re.compile(
    r"`[^`]*`|https?://\S+|\[probe: [\w-]+\]|\$[A-Z_]+|\b(?:rubric5|binary(?:-strict)?|judge:[\w@:-]+|decomposed|offline|openai(?:-compatible)?|gemini|"
    r"replay|JSON|JSONL|CSV|HTML|Markdown|RAGAS|LLM|API|URL|AUROC|Gemini|OpenAI|Ollama|vLLM|llama\.cpp|LM Studio|"
    r"train|dev|test|true|false|null|faithfulness|"  # split names (as the Japanese UI writes them), JSON literals, a metric id
    r"Rogan[–-]Gladen|Spearman|Pearson|Holm|Krippendorff|Cohen|Fleiss|kappa|alpha|Wilson|bootstrap|TPR|TNR|"
    r"Authorization: Bearer|Azure OpenAI|Azure|Vertex AI|Anthropic|heuristic-v\d+|[\w.-]+\.(?:json|jsonl|csv|md|txt|html|yaml)|[a-z0-9]+(?:_[a-z0-9]+)+)\b"
)


# ids, dotted setting paths, URL templates, lists of field names: lower-case words or words joined by . _ : / @ {
_ID = r"(?:[a-z0-9{$][\w.:@/{}$-]*|[\w-]*[._:/@{][\w.:@/{}$-]*)"
IDS = re.compile(rf"^{_ID}(?:, {_ID})*$")


def english(text: str) -> bool:
    """UI text left in English: no kana / kanji, and English words once identifiers and names are set aside."""
    text = text.strip()
    if not text or CJK.search(text) or IDS.match(text) or text[:1] in "{[":  # JSON (settings, data) is data
        return False
    rest = ALLOWED.sub(" ", text)
    words = WORD.findall(rest)
    return len(words) >= 2 or bool(words and CAPITALISED.match(words[0]))


# Proto fields that hold no text a user reads as UI: ids, keys, values typed by the user or taken from the data,
# icons, URLs, code, serialised data (tables and charts have their own readers below).
SKIPPED_FIELDS = {
    "id", "form_id", "key", "value", "default", "set_value", "url", "icon", "page_script_hash", "data", "arrow_data",
    "styler", "spec", "datasets", "columns", "selection_mode", "theme", "mime", "file_name", "type", "body_code",
    "language", "page", "scope", "name", "uuid", "element_id", "accept_file", "format", "dataset", "target",
    "css_class", "image_url", "src", "markup", "vega_lite_theme", "height_config", "width_config", "text_alignment",
    "color", "help_url", "disabled", "height", "width", "alignment_config", "gap_config", "editing_mode",
    "column_order", "row_height", "flex_context", "layout", "min", "max", "step", "raw_value", "raw_values",
    "label_visibility", "query_param_key", "filter_mode",
}


def browser_placeholder(tag: str, proto: Any) -> str | None:
    """The placeholder the browser draws itself when a select box gives none (Streamlit's frontend, in English
    only): "No options to select" with no options, "Choose options" on an empty multiselect (a reader can always
    empty one), "Choose an option" on a select box with no value. None when the widget gives its own."""
    if tag not in ("selectbox", "multiselect") or proto.placeholder:
        return None
    if not proto.options:
        return "No options to select"
    if tag == "multiselect":
        return "Choose options"
    return None if proto.HasField("default") else "Choose an option"


def _strings(message: Message, path: str) -> Iterator[tuple[str, str]]:
    for field, value in message.ListFields():
        if field.name in SKIPPED_FIELDS:
            continue
        where = f"{path}.{field.name}"
        items = [value] if isinstance(value, (str, bytes, Message, int, float)) else list(value)  # repeated fields
        for item in items:
            if isinstance(item, Message):
                yield from _strings(item, where)
            elif isinstance(item, str) and item.strip():
                yield where, item


def _nodes(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _nodes(child)


def _vega_texts(spec: str) -> Iterator[str]:
    """Titles (chart, axes, legends) and the legend / axis values of a Vega-Lite spec: the names a reader sees."""
    def walk(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for k, v in node.items():
                if k == "title" and isinstance(v, str):
                    yield v
                elif k == "title" and isinstance(v, dict) and isinstance(v.get("text"), str):
                    yield v["text"]
                else:
                    yield from walk(v)
        elif isinstance(node, list):
            for v in node:
                yield from walk(v)
    try:
        yield from walk(json.loads(spec))
    except ValueError:
        return


def element_texts(at: Any, *, data_columns: frozenset[str] = frozenset(),
                  skip_tables: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """(where, text) of everything the page shows a reader, data columns of tables left out (``data_columns``:
    column names whose cells are the dataset's or a model's text; ``skip_tables``: key prefixes of tables that are
    the dataset itself, such as the Dataset page's editor)."""
    from streamlit.testing.v1.element_tree import Dataframe

    out: list[tuple[str, str]] = []
    for node in _nodes(at._tree):
        proto = getattr(node, "proto", None)
        kind = type(node).__name__
        if isinstance(node, Dataframe):
            if skip_tables and str(node.key or "").startswith(skip_tables):
                continue
            out += [("table.heading", h) for h in table_headings(node)]
            out += [(f"table.cell[{c}]", v) for c, v in table_cells(node, data_columns)]
            continue
        if proto is None or not isinstance(proto, Message):
            continue
        tag = getattr(node, "type", kind)
        if tag == "html":
            out.append(("html", html_text(proto.body)))
            continue
        if tag in ("arrow_vega_lite_chart", "vega_lite_chart"):
            out += [("chart", s) for s in _vega_texts(proto.spec)]
            continue
        if tag in ("code", "json"):  # code and stored JSON (a run's settings) are data
            continue
        if (default := browser_placeholder(tag, proto)) is not None:
            out.append((f"{tag}.placeholder (the browser's, none given: {proto.label})", default))
        for where, text in _strings(proto, tag):
            out.append((where, plain(text)))
    return out


def table_headings(frame: Any) -> list[str]:
    """The headings a table shows: its ``column_config`` labels, else its column names."""
    config = json.loads(frame.proto.columns or "{}")
    value = frame.value
    return [str((config.get(str(c)) or {}).get("label") or c) for c in value.columns] + (
        [str(value.index.name)] if value.index.name else [])


def table_cells(frame: Any, data_columns: frozenset[str]) -> Iterator[tuple[str, str]]:
    value = frame.value
    for column in value.columns:
        if str(column) in data_columns:
            continue
        for cell in value[column]:
            if isinstance(cell, str):
                yield str(column), cell
    for cell in value.index:
        if isinstance(cell, str):
            yield "index", cell


def english_word(text: str) -> bool:
    """Stricter, for table headings and cells (short, no sentence around them): any English word left once ids and
    names are set aside ("dev at 0.5", "hidden", "flagged")."""
    text = text.strip()
    if not text or CJK.search(text) or (IDS.match(text) and re.search(r"[._:/@{]", text)) or text[:1] in "{[":
        return False  # a plain lower-case word ("hidden") is not an id here: a cell or heading in English
    return bool(WORD.search(ALLOWED.sub(" ", text)))


def english_texts(at: Any, *, data_columns: frozenset[str] = frozenset(), kept: frozenset[str] = frozenset(),
                  skip_tables: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The page's English UI text: (where, text) of each piece the shape rule calls English (table headings and
    cells: any English word), ``kept`` texts aside."""
    return sorted({(w, s) for w, s in element_texts(at, data_columns=data_columns, skip_tables=skip_tables) if s not in kept and
                   (english_word(s) if w.startswith("table.") else english(s))})
