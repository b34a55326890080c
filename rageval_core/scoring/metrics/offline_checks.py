"""Rows the offline heuristic cannot check, marked before any call.

A lexical judge cannot tell whether a bare "yes" / "はい" is supported by the contexts, so on the
offline provider such an answer is unscored ``uncheckable`` instead of a made-up 0 or 1. A real
LLM can judge it, so the check applies only when the provider is ``offline``. The rule itself is the
offline helper's (``rageval_core.offline``), so metrics and the offline judge agree on which rows.
"""

from __future__ import annotations

from rageval_core.scoring.metrics.base import EvalContext
from rageval_core.scoring.metrics.steps import Unscorable, msg
from rageval_core.core.types import Sample, Unscored

OFFLINE_PROVIDER = "offline"


def is_offline(ctx: EvalContext) -> bool:
    return getattr(ctx.llm, "provider", None) == OFFLINE_PROVIDER


def check_answer(sample: Sample, ctx: EvalContext, language: str) -> None:
    """Raise ``uncheckable`` for an answer the offline heuristic cannot verify (bare yes / no)."""
    if not is_offline(ctx):
        return
    from rageval_core.offline.checks import is_bare_yes_no

    if is_bare_yes_no(sample.answer or ""):
        raise Unscorable(
            Unscored.UNCHECKABLE,
            msg(
                language,
                "a bare yes/no answer cannot be checked lexically by the offline heuristic",
                "「はい／いいえ」だけの回答はオフラインの字句ヒューリスティックでは検証できません",
            ),
        )
