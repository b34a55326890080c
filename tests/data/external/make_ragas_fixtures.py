"""Write the ragas fixtures with ragas's own writers (run inside a virtual environment with ragas, never the
project's; see docs/datasets.md "Files from other tools"):

    python -m venv /work/venvs/ragas
    /work/venvs/ragas/bin/pip install ragas==0.4.3 langchain-openai langchain-community==0.4.1
    RAGAS_DO_NOT_TRACK=true /work/venvs/ragas/bin/python tests/data/external/make_ragas_fixtures.py

Files (the rows of rows.py; ragas keeps no id):
- ragas_to_jsonl.jsonl        EvaluationDataset.to_jsonl
- ragas_to_list.json          json.dump(EvaluationDataset.to_list())
- ragas_to_csv.csv            EvaluationDataset.to_csv (csv.DictWriter: list cells written as Python reprs)
- ragas_to_pandas.csv         EvaluationDataset.to_pandas().to_csv() (the index as a first, unnamed column)
- ragas_results.csv           evaluate(...).to_pandas().to_csv(): the four seed metrics scored by ragas against the
                              project's fake OpenAI server (rageval_core/testing/fake_llm/), so the scores are ragas's
                              arithmetic over schema-valid fake verdicts, not meaningful judgements; the last row's
                              answer is given no statements, so its faithfulness is NaN (an empty cell)
Versions go to versions.json under "ragas".
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
sys.path[:0] = [str(HERE), str(ROOT)]
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")
warnings.filterwarnings("ignore")

from rows import record_versions, source_rows  # noqa: E402


def ragas_rows() -> list[dict]:
    return [
        {"user_input": r["question"], "retrieved_contexts": r["contexts"], "response": r["answer"], "reference": r["ground_truth"]}
        for r in source_rows()
    ]


def main() -> None:
    from ragas import EvaluationDataset

    dataset = EvaluationDataset.from_list(ragas_rows())
    dataset.to_jsonl(HERE / "ragas_to_jsonl.jsonl")
    (HERE / "ragas_to_list.json").write_text(json.dumps(dataset.to_list(), ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    dataset.to_csv(HERE / "ragas_to_csv.csv")
    dataset.to_pandas().to_csv(HERE / "ragas_to_pandas.csv")
    write_results(dataset)
    record_versions("ragas", {name: version(name) for name in ("ragas", "pandas", "langchain-openai", "langchain-community")}
                    | {"python": sys.version.split()[0]})


def responder(request):  # type: ignore[no-untyped-def]
    """The fake server's schema-valid answers, except that the tricky row's answer yields no statements, so ragas
    leaves its faithfulness unscored (NaN, an empty cell in the CSV) as it does for a real answer without claims."""
    from rageval_core.testing.fake_llm import default_responder

    answer = default_responder(request)
    if isinstance(answer, dict) and "statements" in answer and "early-stopping" in request.prompt:
        return {**answer, "statements": []}
    return answer


def write_results(dataset) -> None:  # type: ignore[no-untyped-def]
    from langchain_openai import ChatOpenAI, OpenAIEmbeddings
    from ragas import RunConfig, evaluate
    from ragas.embeddings import LangchainEmbeddingsWrapper
    from ragas.llms import LangchainLLMWrapper
    from ragas.metrics import answer_correctness, answer_relevancy, context_precision, faithfulness

    from rageval_core.testing.fake_llm import FakeLLMServer

    with FakeLLMServer(responder=responder) as server:
        llm = LangchainLLMWrapper(ChatOpenAI(base_url=server.openai_base_url, api_key="x", model="fake-judge", max_retries=0))
        emb = LangchainEmbeddingsWrapper(OpenAIEmbeddings(base_url=server.openai_base_url, api_key="x", model="fake-embed",
                                                          check_embedding_ctx_length=False))
        result = evaluate(dataset, metrics=[faithfulness, answer_relevancy, context_precision, answer_correctness], llm=llm,
                          embeddings=emb, run_config=RunConfig(max_workers=4, max_retries=1), show_progress=False)
    result.to_pandas().to_csv(HERE / "ragas_results.csv")


if __name__ == "__main__":
    main()
