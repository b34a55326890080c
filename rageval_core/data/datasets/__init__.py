"""Load, validate and save RAG datasets (JSON, JSONL, CSV, pandas tables).

A dataset is a list of ``Sample`` rows. Files use the seed's field names (question, contexts, answer, ground_truth),
ragas's (user_input, retrieved_contexts, response, reference), DeepEval's (input, retrieval_context, actual_output,
expected_output) or those of Phoenix's helper frames (input, context, output), read as those tools write them
(``dialects``), or any names through a ``ColumnMap``; everything else in a row is kept in ``metadata``, and another
tool's earlier scores (a ragas results file's metric columns) in ``external_scores``. Validation never stops at the first problem: each
one becomes an ``Issue`` with file, 1-based row and field, good rows load and bad rows are listed,
so a partly broken file can still be evaluated and the user sees exactly what to fix. Loading never
raises; the limits (``MAX_FILE_BYTES``, ``MAX_STREAM_BYTES``, ``MAX_DEPTH``) are in docs/datasets.md.

One module per job: ``decoding`` (bytes → text), ``formats`` (text → records per format), ``rows``
(records → samples and issues), ``streaming`` (large JSONL / CSV files read row by row), ``live`` (a JSONL file
evaluated while it is read), ``hashing`` (the content hash), ``writers`` (samples → files),
``tables`` (the editor's table and back), ``loader`` (the entry point that ties them together).

The content hash is computed from the normalised samples, so loading the same data twice (or after a
save round trip in the same format) always yields the same hash; human labels and runs are keyed by it.
"""

from __future__ import annotations

from rageval_core.data.datasets.column_map import MAPPABLE, ColumnMap, parse_column_map
from rageval_core.data.datasets.formats import EXTENSIONS, FIELD_ALIASES, WRAPPER_KEYS
from rageval_core.data.datasets.hashing import dataset_hash, sample_payload
from rageval_core.data.datasets.loader import detect_dataset_language, file_columns, load_dataset, read_records
from rageval_core.data.datasets.model import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_STREAM_BYTES,
    NAMINGS,
    DatasetError,
    Format,
    Issue,
    LoadedDataset,
    Naming,
    Severity,
)
from rageval_core.data.datasets.rows import RowReader
from rageval_core.data.datasets.tables import TABLE_COLUMNS, contexts_to_cell, dataframe_to_samples, samples_to_dataframe
from rageval_core.data.datasets.values import CONTEXT_SEPARATOR, split_contexts_cell
from rageval_core.data.datasets.writers import DEEPEVAL_NAMES, RAGAS_NAMES, dumps_dataset, dumps_rows, format_of, row_dict, save_dataset


def parse_contexts_cell(cell: str) -> list[str]:
    """Contexts in one text cell (CSV, table editor): a JSON list (nested lists flattened), ``|||``-separated,
    or one per line; blank items dropped."""
    return RowReader("cell", text_cells=True)._context_items(0, split_contexts_cell(cell) or [])


__all__ = [
    "CONTEXT_SEPARATOR",
    "DEEPEVAL_NAMES",
    "MAPPABLE",
    "NAMINGS",
    "ColumnMap",
    "dumps_rows",
    "file_columns",
    "format_of",
    "parse_column_map",
    "row_dict",
    "EXTENSIONS",
    "FIELD_ALIASES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "MAX_STREAM_BYTES",
    "RAGAS_NAMES",
    "TABLE_COLUMNS",
    "WRAPPER_KEYS",
    "DatasetError",
    "Format",
    "Issue",
    "LoadedDataset",
    "Naming",
    "Severity",
    "contexts_to_cell",
    "dataframe_to_samples",
    "dataset_hash",
    "detect_dataset_language",
    "dumps_dataset",
    "load_dataset",
    "parse_contexts_cell",
    "read_records",
    "sample_payload",
    "samples_to_dataframe",
    "save_dataset",
]
