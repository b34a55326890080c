"""What the UI says of an error it did not expect (no ``st.*`` call: helper threads use it too).

A user's error is a ``RagevalError`` (``rageval_core.core.errors``) and the UI shows its own message where it
happened. Anything else is a bug: its traceback goes to the server log, and the page shows the error's text, never
a Python class name or a traceback.
"""

from __future__ import annotations

import logging

from rageval_ui.i18n import t

_log = logging.getLogger("rageval.ui")


def unexpected_error(exc: BaseException) -> str:
    """Log ``exc`` with its traceback and return what a page shows of it: its text, or a line saying the server
    log has it when the error has no text (a bare ``KeyError()``)."""
    _log.log(logging.ERROR, "unexpected error", exc_info=exc)  # (not .error: the i18n check reads that as st.error)
    return str(exc) or t("common.unexpected")
