"""Names of the core's ids in the UI language, for every page that shows them (the ids stay the stored values and
the CLI's words)."""

from __future__ import annotations

from rageval_ui.i18n import t


def probe_labels() -> dict[str, str]:
    """Each probe's name ("verbosity" → 水増し in 日本語; the English names are the ids ``--probes`` takes)."""
    return {"verbosity": t("probe.verbosity"), "order": t("probe.order"), "answer_injection": t("probe.answer_injection"),
            "context_injection": t("probe.context_injection"), "language": t("probe.language")}


def probe_name(probe: str) -> str:
    """A probe's name; an id with none (a probe this UI does not know) as it is."""
    return probe_labels().get(probe, probe)
