"""Pure heuristics behind the offline provider (no I/O, no model loading of their own).

They score claims with a fitted logistic model over coverage, cosine and missing-number / name features
(``support``, ``model``, fitted by ``fit`` from bench/fit_offline.py), veto contradicted claims
(``contradiction``; negation and its scope in ``polarity``, antonyms in ``antonyms``; ``units``; numbers written
as words or kanji numerals read as digits by ``numerals``), and build every other evaluation
step from that (``steps``).
The offline provider (``rageval_core.offline.provider``) wraps them in the LLM protocol; metrics may call
``checks`` directly to mark rows the heuristic cannot score. Answer relevancy offline is ``relevancy`` (with
``answer_types``); ``generate`` and ``question_types`` build test-set questions and RAG answers extractively.

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "answer_types",
    "antonyms",
    "checks",
    "contradiction",
    "encoder",
    "fit",
    "generate",
    "injection",
    "judge",
    "limits",
    "model",
    "numerals",
    "polarity",
    "prefetch",
    "provider",
    "question_types",
    "reasons",
    "relevancy",
    "steps",
    "support",
    "units",
]
