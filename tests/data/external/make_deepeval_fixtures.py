"""Write the DeepEval fixtures with DeepEval's own writer (run inside a virtual environment with deepeval, never
the project's; see docs/datasets.md "Files from other tools"):

    python -m venv /work/venvs/deepeval
    /work/venvs/deepeval/bin/pip install deepeval==4.3.1 pandas
    DEEPEVAL_TELEMETRY_OPT_OUT=YES /work/venvs/deepeval/bin/python tests/data/external/make_deepeval_fixtures.py

Files: ``EvaluationDataset(goldens=...).save_as(fmt, ...)`` for json, jsonl and csv (deepeval_goldens.*). Each golden
holds input, actual_output, expected_output, retrieval_context and additional_metadata (the row's id and category);
the first row also has a DeepEval ``context`` (its ideal context, which is not what was retrieved). DeepEval joins
contexts with "|" in CSV and JSONL cells, so the last row's context holding a "|" comes back as two (DeepEval's own
loaders split it the same way). Versions go to versions.json under "deepeval".
"""

from __future__ import annotations

import os
import sys
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "YES")

from rows import record_versions, source_rows  # noqa: E402


def main() -> None:
    from deepeval.dataset import EvaluationDataset, Golden

    goldens = []
    for n, row in enumerate(source_rows()):
        goldens.append(Golden(
            input=row["question"], actual_output=row["answer"], expected_output=row["ground_truth"],
            retrieval_context=row["contexts"], context=[row["ground_truth"]] if n == 0 else None,
            additional_metadata={"id": row["id"], "category": row["category"]},
        ))
    dataset = EvaluationDataset(goldens=goldens)
    for fmt in ("json", "jsonl", "csv"):
        dataset.save_as(fmt, str(HERE), file_name="deepeval_goldens")
    record_versions("deepeval", {"deepeval": version("deepeval"), "python": sys.version.split()[0]})


if __name__ == "__main__":
    main()
