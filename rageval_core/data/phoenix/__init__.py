"""A running Arize Phoenix server as a source of traces and a place to send scores back: ``client`` (its REST API
over the standard library's ``urllib``: timeouts, cursor pages, the API key from ``PHOENIX_API_KEY`` only) and
``pull`` (spans of a project and time window → the rows ``data.traces`` rebuilds from them). Sending a run's
results as span annotations is ``analysis.phoenix_push`` (it reads the run store, a layer above this one).

Submodules are imported where they are used; this file imports nothing.
"""

__all__ = [
    "client",
    "config",
    "pull",
]
