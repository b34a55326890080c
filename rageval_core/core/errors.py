"""The one exception tree of the workbench: every error a user can meet is a ``RagevalError``.

Four branches, one per kind of cause, so the CLI maps them to its exit codes and the UI catches the root:

- ``DataError``: a dataset, trace, document or label file that cannot be read as given (exit 2);
- ``ConfigError``: flags, a spec, a rubric, a template, a judges file or a mapping that does not hold (exit 2);
- ``ProviderError``: a call that did not produce a completion (one result unscored; a run that cannot go on at all
  ends with exit 2);
- ``StoreError``: the SQLite store cannot be opened, read or written as asked (exit 2; a store that failed while a
  run's results were being kept ends with exit 4, results not kept).

The classes beside the code that raises them subclass a branch (they import it from here):

- ``DataError``: ``DatasetError``, ``TraceFormatError`` (and, while a trace export is read, ``JsonSyntaxError``,
  ``LimitError``, ``SpanLimitError``), ``DocumentError``, ``ParseError`` (a model's answer holds no JSON object), the
  UI's ``TraceUploadRefused``;
- ``ConfigError``: ``UsageError``, ``RubricError``, ``TemplateError``, ``TemplateMismatchError``, ``JudgeConfigError``,
  ``MappingError``, ``SharesError``, ``SynthError``, ``RagError``, ``RunError`` (and its ``SpecError``),
  ``HeaderError`` (``RAGEVAL_EXTRA_HEADERS``), the UI's ``SetupError``;
- ``ProviderError``: ``BatchError`` (kind ``batch``) and ``BatchCancelled`` (kind ``cancelled``);
- ``StoreError``: ``StoreBusy`` (still locked after the bounded retries), ``StoreCorrupt`` (not a readable SQLite
  file), ``StoreReadOnly`` (a write to a store that cannot be written), ``StateDirError`` (RAGEVAL_HOME is a file),
  ``ResultsNotKept`` (results computed but not all kept: exit 4);
- the root itself: ``ScoreThresholdError`` (the pytest plugin's verdict, also an ``AssertionError``).

``DataError`` and ``ConfigError`` are ``ValueError`` too, so callers that caught ``ValueError`` still do.

Control-flow exceptions that never reach a user stay outside the tree on purpose, each with a comment saying why:
``Unscorable`` (a step that cannot score a row), ``NotStreamable`` and ``CsvAbort`` (a read that stops early and
records an issue), ``BadRequest`` (the fake LLM server's 400) and ``Deferred`` (a ``ProviderError`` that puts a
request into the next batch job).
``tests/core/test_error_tree.py`` scans the package and fails on any other class outside the tree.
"""

from __future__ import annotations


class RagevalError(Exception):
    """The root: anything the workbench raises for a user to read."""


class DataError(RagevalError, ValueError):
    """Input data that cannot be read as given: the message names the file, row and field."""


class ConfigError(RagevalError, ValueError):
    """A configuration that does not hold: flags, spec, rubric, template, judges file, column map."""


class UsageError(ConfigError):
    """A command line or call that asks for something impossible (a bad flag value, a missing option)."""


class StoreError(RagevalError):
    """The store cannot be opened, read or written as asked; the message names the file and what to do."""


class ResultsNotKept(StoreError):
    """Results were computed but the store could not keep them all (a full disk mid-run): exit 4. The message says
    what was lost, where the results are kept and how to resume."""


class ProviderError(RagevalError):
    """A call that did not produce a completion.

    ``kind`` is one of: missing_key, auth, bad_request, rate_limit, timeout, server, connection,
    unreachable (the host's fail-fast breaker is open: not sent), malformed_response, replay_miss, cancelled, batch (a
    batch job that failed), deferred (batch control flow). ``retryable`` tells the retry wrapper whether to try again; ``retry_after`` is the wait the server asked for, in seconds. Messages never contain keys.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status: int | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.status = status
        self.retry_after = retry_after
        self.retryable = retryable
        self.structured_output: str | None = None  # the structured-output level the failed request was sent with

    @property
    def unscored_reason(self) -> str:
        """The unscored reason a metric records when this error ends its step."""
        return {
            "timeout": "timeout", "replay_miss": "replay_miss", "unreachable": "provider_unreachable", "cancelled": "cancelled",
        }.get(self.kind, "provider_error")
