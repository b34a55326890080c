"""The decomposed metrics (RAGAS-style, one module per metric) and the one-call judge, on one ``Scorer`` seam
(``base``). ``scoring`` is the pure math, ``steps`` the render-call-parse around it, ``claims`` the claim
extraction shared within a run, ``registry`` the metrics by id; ``judge``, ``judge_parse`` and
``judge_template`` make the one-call judge; ``prefix`` is the part of each step's prompt other calls share
(for the estimate of the provider's prompt cache). How each metric is computed: docs/metrics.md.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "answer_correctness",
    "answer_relevancy",
    "base",
    "claims",
    "context_precision",
    "context_recall",
    "context_relevance",
    "faithfulness",
    "judge",
    "judge_parse",
    "judge_template",
    "offline_checks",
    "prefix",
    "registry",
    "scoring",
    "steps",
]
