"""Other tools' dataset files, read as those tools read them back.

A row's keys say which tool wrote it (its ``Dialect``):

- DeepEval (``actual_output``, ``expected_output`` or ``retrieval_context``): ``input`` is the question,
  ``retrieval_context`` the contexts, and a text cell of contexts (CSV, and JSONL as ``save_as`` writes it) is joined
  with "|" as DeepEval joins and splits it. Its ``context`` is the *ideal* context, not what was retrieved: kept as
  metadata beside ``retrieval_context``. ``additional_metadata`` (a JSON object, a JSON text in CSV) is opened into
  the row's metadata; its ``id`` is the row's id when the row has none (our DeepEval files keep the id there, so it
  survives a load and ``save_as`` in DeepEval).
- Phoenix's helper frames (``input``, ``output`` and ``context``: ``get_input_output_context``): the passages of
  ``context`` are joined by a blank line; ``context.trace_id`` / ``context.span_id`` become ``trace_id`` / ``span_id``.
- ragas (``user_input``, ``retrieved_contexts``, ``response`` or ``reference``): a column named after a ragas metric
  (``faithfulness``, ``factual_correctness(mode=f1)``, ...) is that metric's earlier score, kept as the external score
  ``ragas:<metric>``, never as metadata and never as one of our methods.

Any row may carry external scores as ``<source>:<metric>`` keys (``ragas:faithfulness``): how our own files write
them back.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

Dialect = Literal["seed", "ragas", "deepeval", "phoenix"]

DEEPEVAL_KEYS = frozenset({"actual_output", "expected_output", "retrieval_context"})
RAGAS_KEYS = frozenset({"user_input", "retrieved_contexts", "response", "reference"})
PHOENIX_KEYS = frozenset({"input", "output", "context"})
DEEPEVAL_SEPARATOR = "|"
BLANK_LINE = "\n\n"  # as a separator: passages split on a line that is empty or only spaces
_BLANK_LINE_RE = re.compile(r"\n[ \t]*\n")
_DEEPEVAL_MARKER = re.compile(r"^deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)$", re.DOTALL)
PHOENIX_IDS = {"context.trace_id": "trace_id", "context.span_id": "span_id"}

# The metric names ragas 0.4.3 writes as result columns (``Metric.name`` of ragas.metrics and ragas.metrics.collections;
# a mode may follow in parentheses: ``factual_correctness(mode=f1)``).
RAGAS_METRICS = frozenset({
    "agent_goal_accuracy", "answer_accuracy", "answer_correctness", "answer_relevancy", "answer_similarity",
    "bleu_score", "chrf_score", "context_entity_recall", "context_precision", "context_recall", "context_relevance",
    "context_utilization", "data_compare_score", "datacompy_score", "domain_specific_rubrics", "exact_match",
    "factual_correctness", "faithful_rate", "faithfulness", "faithfulness_with_hhem", "id_based_context_precision",
    "id_based_context_recall", "instance_specific_rubrics", "llm_context_precision_with_reference",
    "llm_context_precision_without_reference", "llm_sql_equivalence_with_reference", "multi_modal_faithfulness",
    "multi_modal_relevance", "noise_sensitivity", "non_llm_context_precision_with_reference", "non_llm_context_recall",
    "non_llm_string_similarity", "nv_accuracy", "nv_context_relevance", "nv_response_groundedness", "quoted_spans_alignment",
    "relevance_rate", "response_groundedness", "rouge_score", "semantic_similarity", "sql_semantic_equivalence",
    "string_present", "summary_score", "tool_call_accuracy", "tool_call_f1", "topic_adherence",
})
EXTERNAL_SOURCES = ("ragas", "deepeval", "phoenix")
_EXTERNAL_KEY = re.compile(r"^(?P<source>" + "|".join(EXTERNAL_SOURCES) + r"):(?P<metric>\S.*)$")


def dialect_of(keys: Iterable[Any]) -> Dialect:
    """Which tool's names a row uses (DeepEval before ragas, Phoenix's frame last; else the seed's)."""
    lowered = {str(k).strip().lower() for k in keys}
    if lowered & DEEPEVAL_KEYS:
        return "deepeval"
    if lowered & RAGAS_KEYS:
        return "ragas"
    if PHOENIX_KEYS <= lowered:
        return "phoenix"
    return "seed"


def ragas_metric(key: str) -> bool:
    """True for a ragas result column name: a metric name, optionally followed by its mode in parentheses."""
    base = key.strip().lower().split("(", 1)[0]
    return base in RAGAS_METRICS


def external_key(key: str, dialect: Dialect) -> str | None:
    """The external score a column holds (``ragas:faithfulness``), or None for any other column."""
    found = _EXTERNAL_KEY.match(key.strip())
    if found:
        return f"{found['source']}:{found['metric'].strip()}"
    if dialect == "ragas" and ragas_metric(key):
        return f"ragas:{key.strip()}"
    return None


def score_value(value: Any) -> tuple[float | None, bool]:
    """(the score, True) for a number, a numeric text or an empty / NaN cell (None: the tool left it unscored);
    (None, False) for anything else, which the caller reports."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None, True
    if isinstance(value, bool):
        return None, False
    if isinstance(value, (int, float)):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None, False
    else:
        return None, False
    if math.isnan(number):
        return None, True
    return (number, True) if math.isfinite(number) else (None, False)


def context_separator(dialect: Dialect, key: str) -> str | None:
    """How this tool joins a row's contexts into one text: "|" for DeepEval's context fields, a blank line for
    Phoenix's ``context``; None where the file's text holds a list by the general rules."""
    name = key.strip().lower()
    if dialect == "deepeval" and name in ("retrieval_context", "context"):
        return DEEPEVAL_SEPARATOR
    if dialect == "phoenix" and name == "context":
        return BLANK_LINE
    return None


def split_text(text: str, separator: str) -> list[str]:
    """``text`` split on ``separator`` (``BLANK_LINE``: a line empty or only spaces), items stripped; DeepEval's
    ``deepeval_source=...,deepeval_context=...`` items give their context."""
    parts = _BLANK_LINE_RE.split(text) if separator == BLANK_LINE else text.split(separator)
    out = []
    for part in parts:
        marker = _DEEPEVAL_MARKER.match(part.strip())
        out.append((marker["context"] if marker else part).strip())
    return out


def deepeval_record(record: Mapping[str, Any], core_names: Iterable[str]) -> dict[str, Any]:
    """A DeepEval row as DeepEval reads it: its ``context`` text split on "|" (as its loaders split it), and its
    ``additional_metadata`` object (or JSON text) opened into the row: those keys join the row unless the row has
    them already or they name a core field (``id`` excepted); what is left stays under ``additional_metadata``."""
    record = dict(record)
    for name, value in record.items():
        if str(name).strip().lower() == "context" and isinstance(value, str) and value.strip() and not value.strip().startswith("["):
            record[name] = split_text(value.strip(), DEEPEVAL_SEPARATOR)
    key = next((k for k in record if str(k).strip().lower() == "additional_metadata"), None)
    if key is None:
        return record
    nested = record[key]
    if isinstance(nested, str) and nested.strip().startswith("{"):
        try:
            nested = json.loads(nested)
        except ValueError:
            return record
    if not isinstance(nested, Mapping):
        return record
    taken = {str(k).strip().lower() for k in record}
    core = {c for c in core_names if c != "id"}
    out = {k: v for k, v in record.items() if k != key}
    rest = {}
    for name, value in nested.items():
        lowered = str(name).strip().lower()
        if lowered in taken or lowered in core:
            rest[name] = value
        else:
            out[str(name)] = value
    if rest:
        out[key] = rest
    return out


def rename_phoenix_ids(record: Mapping[str, Any]) -> dict[str, Any]:
    """Phoenix's ``context.trace_id`` / ``context.span_id`` as ``trace_id`` / ``span_id`` (the keys trace links read)."""
    out = dict(record)
    for old, new in PHOENIX_IDS.items():
        if old in out and new not in out:
            out[new] = out.pop(old)
    return out
