"""Loads the rageval pytest plugin for a clone that is not pip-installed (an installed package registers it
through its ``pytest11`` entry point, under this same name, so it is never loaded twice)."""

pytest_plugins = ["rageval_core.testing.plugin"]
