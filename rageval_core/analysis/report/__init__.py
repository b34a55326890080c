"""The parts of the self-contained HTML report (``python -m rageval_core report RUN... --out report.html``): ``build``
gathers the sections from the store, ``svg`` draws the charts, ``html`` writes the page in ``words``' language. The
report itself, opened by each run's one-screen trust answer, is ``views.report.report_html`` / ``write_report``.
"""

from __future__ import annotations

from rageval_core.analysis.report.build import RunReport, build_run
from rageval_core.analysis.report.html import render
from rageval_core.analysis.report.words import Words, language_of

__all__ = ["RunReport", "Words", "build_run", "language_of", "render"]
