"""What each section of the ``trust`` command sees (``TrustContext``), in a module of its own so the sections
kept in other modules (``trust_checks``) import it without importing the command itself."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rageval_core.cli.common import EXIT_OK

if TYPE_CHECKING:
    from rageval_core.analysis.trust.report import TrustReport


@dataclass
class TrustContext:
    """What a section sees: the parsed flags, the store, the run, its samples (when known) and the report."""

    args: argparse.Namespace
    store: Any
    run_id: str
    report: TrustReport
    samples: list[Any] | None = None
    exit_code: int = EXIT_OK
    notes: list[str] = field(default_factory=list)
