"""The trust reports' defaults, in a module that imports nothing.

Why apart from ``rageval_core.analysis.trust``: the CLI's parser shows them as option defaults, and importing that
package (numpy and the statistics) cost every command ~0.1 s before its first request.
"""

DEFAULT_THRESHOLD = 0.5  # a score at or above it is a pass
DEFAULT_ITERATIONS = 1000  # bootstrap resamples of an interval
QUEUE_MODES = ("label_next", "filter", "random")  # how the annotation queue picks rows
