"""Large stored runs for page timings: ``clone_run`` copies an evaluated run to any number of rows, in SQL, so it
lives in the store (``rageval_core.store.clone``)."""

from __future__ import annotations

from rageval_core.store.clone import clone_run

__all__ = ["clone_run"]
