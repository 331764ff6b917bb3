"""The import summary as the preset page shows it: counts first, then groups of findings, each said
once (a warning the page lists in full elsewhere is left out of the warnings) and each a list."""

from __future__ import annotations

from dataclasses import dataclass

from engine.st_format import HTML_WARNING, ImportSummary


@dataclass(frozen=True, slots=True)
class SummaryGroup:
    key: str
    title: str
    intro: str
    items: tuple[str, ...]
    code: bool = False  # the items are field or macro names
    warn: bool = False


def summary_groups(summary: ImportSummary) -> tuple[SummaryGroup, ...]:
    """The non-empty groups, most pressing first, every list without repeats."""
    warnings = [w for w in summary.warnings if not (summary.html_nodes and w.startswith(HTML_WARNING))]
    groups = (
        SummaryGroup("warnings", "Warnings", "", _once(warnings), warn=True),
        SummaryGroup(
            "html",
            "Nodes with HTML",
            "Discord shows HTML tags as plain text.",
            _once(summary.html_nodes),
            warn=True,
        ),
        SummaryGroup("hidden", "Server blocks this preset hides", "", _once(summary.hidden_blocks)),
        SummaryGroup(
            "macros",
            "Macros we do not support",
            "Left in the text as written.",
            _once(summary.unsupported_macros),
            code=True,
        ),
        SummaryGroup(
            "sampler",
            "Sampler settings",
            "Sent to the model as the server chooses (see below).",
            _once(getattr(summary, "sampler_settings", ())),
            code=True,
        ),
        SummaryGroup(
            "kept",
            "Kept but not applied",
            "Stored with the preset (you can download them) but not used by the bot.",
            _once(summary.kept_not_applied),
            code=True,
        ),
        SummaryGroup(
            "secrets",
            "Secrets removed",
            "Blanked before storing.",
            _once(summary.secrets_blanked),
            code=True,
        ),
        SummaryGroup("notes", "Notes", "", _once(summary.notes)),
    )
    return tuple(group for group in groups if group.items)


def _once(items: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
