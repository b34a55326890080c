"""pytest support: score rows or a dataset with the configured judge and assert thresholds, in a test suite.

``judge`` chooses the judge (``--rageval-provider`` / ``RAGEVAL_PROVIDER`` / a provider key in the environment)
and scores rows through the runner; ``assertions`` checks thresholds (the mean, or every row) and words each
failure with the row, the score and the judge's reason; ``plugin`` is the pytest plugin (entry point
``pytest11``: the ``rageval`` fixture, the ``rageval`` marker and the command-line options); ``summary`` is its
end-of-session table (what was judged, means beside thresholds, run ids, skips and why). ``fake_llm`` is the
local fake LLM server (OpenAI, Gemini, Anthropic wire formats) the project's tests and benches run the real SDKs
against, shipped for a user's own tests too.
"""

__all__ = ["assertions", "fake_llm", "judge", "plugin", "summary"]
