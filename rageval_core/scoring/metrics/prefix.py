"""The part of each step's prompt that other calls of the run send too, for the estimate of what a provider's
prompt cache could serve (``llm.prompt_cache``).

Every template starts with its fixed instructions and examples and puts the row's texts after them, so every
call of one step (and language) begins with the same text: the template before its first row value (the
"lead"). A provider's cache matches exact prefixes, and two steps start with different instructions, so a
row's steps share nothing with each other; calls of one step on the same row with the same prompt (a judge's
repeats, answer relevancy's questions) share all of it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from rageval_core.core.tokens import TokenCounter, current_counter
from rageval_core.scoring.prompts import PromptTemplate, TemplateError, load_template

__all__ = ["lead_text", "lead_tokens", "repeated"]

_ROW = "\ue000row\ue000"  # private-use characters: in no template's own text


def lead_text(template: PromptTemplate, fixed: Mapping[str, Any] | None = None) -> str:
    """The text every call of ``template`` sends before its first row value (``fixed``: values that are the
    same on every call, such as a judge's rubric), its messages joined as ``render`` joins them."""
    fixed = {k: v for k, v in (fixed or {}).items() if k in template.variables}
    row = [name for name in template.variables if name not in fixed]
    text = template.render(**{**{name: _ROW for name in row}, **fixed})
    # a row value starts where its rendering does (an untrusted one with its opening tag, which may carry the
    # row's own item count), so the cut is at the first rendered row value, not at the marker inside it
    starts = [text.find(template.format_value(name, _ROW)) for name in row]
    found = [i for i in starts if i >= 0]
    return text[: min(found)] if found else text


def lead_tokens(task: str, language: str, **fixed: Any) -> int:
    """Tokens of a shipped step template's lead (by the counter the estimate counts with), with ``fixed`` values
    filled (answer relevancy's question count); 0 for an unknown template."""
    return _lead_tokens(task, language, current_counter(), **fixed)


@functools.lru_cache(maxsize=256)
def _lead_tokens(task: str, language: str, counter: TokenCounter, **fixed: Any) -> int:
    try:
        return counter.count(lead_text(load_template(task, language), fixed))
    except TemplateError:
        return 0


def repeated(input_tokens: int, lead: int, calls: int = 1) -> tuple[tuple[int, int], ...]:
    """``calls`` identical prompts of one step on one row: the first shares the lead with other rows' calls,
    each later one the whole prompt (as (input tokens, shared-prefix tokens) pairs)."""
    if calls <= 0:
        return ()
    lead = min(lead, input_tokens)
    return ((input_tokens, lead),) + ((input_tokens, input_tokens),) * (calls - 1)
