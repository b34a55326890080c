"""The HTML report opened by the one-screen trust answer: ``analysis.report`` gathers and draws the runs; this view puts
each run's answer (``views.trust_answer``, in the report's language) first, as on the Trust page.

The answer reads the run's saved trust report (the ``trust`` CLI's) when it holds agreement figures, else computes
one from the run's rows and labels (nothing saved, no test look counted). A report computed here also fills the
report's own trust section, so the answer and the figures under it agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from rageval_core.analysis.report import RunReport, Words, build_run, language_of, render
from rageval_core.analysis.trust.run_report import run_report
from rageval_core.core.private import write_private_text
from rageval_core.core.types import Sample
from rageval_core.store.runs import Store
from rageval_core.views.trust_answer import trust_answer
from rageval_core.views.trust_answer_text import html as answer_html

def trust_of(store: Store, rep: RunReport, *, samples: Sequence[Sample] | None = None, threshold: float = 0.5,
             iterations: int = 1000) -> dict[str, Any]:
    """The run's trust report as JSON: the saved one when it has agreement figures, else one computed now (kept on
    ``rep`` for the report's trust section when it found labels)."""
    if rep.trust and rep.trust.get("agreement"):
        return rep.trust
    computed = run_report(store, rep.info.id, samples=samples, threshold=threshold, iterations=iterations,
                          look=None).to_dict()
    if computed.get("agreement"):
        rep.trust = {**computed, "sections": {**((rep.trust or {}).get("sections") or {}), **computed["sections"]}}
    return computed


def opening(store: Store, reports: Sequence[RunReport], w: Words, *, samples: Sequence[Sample] | None = None,
            threshold: float = 0.5, iterations: int = 1000) -> str:
    """Each run's one-screen answer, in ``w``'s language; a run's name heads its block when the report holds several."""
    blocks = []
    for rep in reports:
        answer = trust_answer(trust_of(store, rep, samples=samples, threshold=threshold, iterations=iterations))
        block = answer_html(answer, w.language, metric_label=w.metric)
        if len(reports) > 1:
            block = block.replace("</h2>", f" — {escape(rep.info.name or rep.info.id)}</h2>", 1)
        blocks.append(block)
    return "".join(blocks)


def report_html(store: Store, run_ids: Sequence[str], *, samples: Sequence[Sample] | None = None,
                sample_ids: Sequence[str] | None = None, top: int = 3, threshold: float = 0.5, iterations: int = 1000,
                title: str | None = None, language: str | None = None) -> str:
    """The report of ``run_ids`` as one HTML string (chosen rows: ``sample_ids``, else the ``top`` most disagreeing),
    opened by each run's trust answer and written in ``language``: "ja", "en" (the default), or "auto" for the data's
    language (English when unknown), the core's coded messages (trust notes) included."""
    reports = [build_run(store, rid, samples=samples, sample_ids=sample_ids, top=top, threshold=threshold,
                         iterations=iterations) for rid in run_ids]
    data_language = next((r.language for r in reports if r.language), None) if language == "auto" else None
    w = Words(language_of(None if language == "auto" else language, data_language))
    first = opening(store, reports, w, samples=samples, threshold=threshold, iterations=iterations)
    return render(reports, title=title, words=w, opening=first)


def write_report(store: Store, run_ids: Sequence[str], out: str | Path, **kwargs: Any) -> Path:
    """``report_html`` written to ``out`` (UTF-8, private to the user)."""
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_private_text(target, report_html(store, run_ids, **kwargs))
    return target


__all__ = ["opening", "report_html", "trust_of", "write_report"]
