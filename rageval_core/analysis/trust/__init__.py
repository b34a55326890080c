"""Can I trust this score? Agreement with human labels, intervals, the corrected estimate and what to
label next.

``stats``, ``estimate`` and ``ranking`` are pure math (no I/O); ``labels`` merges human labels from rows
already in memory; ``report`` assembles the typed report of one run. The ``*_run`` / ``*_report`` modules
(``run_report``, ``calibration_run``, ``split_run``, ``compare_run``, ``annotator_report``) read a run and its labels
through the store; the statistics themselves live in ``rageval_core.core.stats``.
"""

from rageval_core.analysis.trust.estimate import CorrectedEstimate, MeanEstimate, corrected_estimate
from rageval_core.analysis.trust.ranking import LabelCandidate, label_next
from rageval_core.core.stats import (
    Confusion,
    auroc,
    balanced_accuracy,
    best_threshold,
    binarize,
    bootstrap_ci,
    cohen_kappa,
    confusion,
    pairwise_agreement,
    pearson,
    spearman,
)

__all__ = [
    "Confusion",
    "CorrectedEstimate",
    "LabelCandidate",
    "MeanEstimate",
    "auroc",
    "balanced_accuracy",
    "best_threshold",
    "binarize",
    "bootstrap_ci",
    "cohen_kappa",
    "confusion",
    "corrected_estimate",
    "label_next",
    "pairwise_agreement",
    "pearson",
    "spearman",
]
