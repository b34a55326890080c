"""Several judge configurations in one run (``config``, ``saved``, ``bound``), the jury over their scores
(``jury`` is pure math, ``jury_run`` stores it on a run) and their agreement with each other (``agreement``).

Submodules are imported where they are used; this file imports nothing, so importing one part stays cheap.
"""

__all__ = [
    "bound",
    "config",
    "jury",
    "jury_run",
    "saved",
]
