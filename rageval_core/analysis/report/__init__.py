"""A self-contained HTML report of one or more runs (``python -m rageval_core report RUN... --out report.html``).

``build`` gathers the sections from the store, ``svg`` draws the charts, ``html`` writes the page.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from rageval_core.analysis.report.build import RunReport, build_run
from rageval_core.analysis.report.html import render
from rageval_core.analysis.report.words import Words, language_of
from rageval_core.store.runs import Store
from rageval_core.core.types import Sample
from rageval_core.core.private import write_private_text

__all__ = ["RunReport", "Words", "build_run", "render", "report_html", "write_report"]


def report_html(store: Store, run_ids: Sequence[str], *, samples: Sequence[Sample] | None = None,
                sample_ids: Sequence[str] | None = None, top: int = 3, threshold: float = 0.5,
                iterations: int = 1000, title: str | None = None, language: str | None = None,
                translate: Callable[[str], str] | None = None) -> str:
    """The report of ``run_ids`` as one HTML string (chosen rows: ``sample_ids``, else the ``top`` most disagreeing),
    written in ``language``: "ja", "en" (the default), or "auto" for the data's language (English when unknown);
    ``translate`` puts the core's coded messages (trust notes) in that language (the UI passes its catalogue's)."""
    reports = [build_run(store, rid, samples=samples, sample_ids=sample_ids, top=top, threshold=threshold,
                         iterations=iterations) for rid in run_ids]
    data_language = next((r.language for r in reports if r.language), None) if language == "auto" else None
    chosen = language_of(None if language == "auto" else language, data_language)
    return render(reports, title=title, words=Words(chosen, translate))


def write_report(store: Store, run_ids: Sequence[str], out: str | Path, **kwargs: object) -> Path:
    """``report_html`` written to ``out`` (UTF-8)."""
    target = Path(out)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_private_text(target, report_html(store, run_ids, **kwargs))  # type: ignore[arg-type]
    return target
