"""Version diffs shaped for the templates (templates/presets/_diff.html)."""

from __future__ import annotations

from typing import Any

from engine.versions import VersionDiff


def diff_view(diff: VersionDiff) -> dict[str, Any]:
    """A version diff shaped for templates/presets/_diff.html."""

    def rows(identifiers: tuple[str, ...], note: Any = None) -> list[dict[str, str]]:
        return [
            {"identifier": i, "name": diff.names.get(i, i), "note": note(i) if note else ""}
            for i in identifiers
        ]

    groups = [
        {"key": "added", "title": "Added", "rows": rows(diff.added)},
        {"key": "removed", "title": "Removed", "rows": rows(diff.removed)},
        {"key": "moved", "title": "Moved", "rows": rows(diff.moved)},
        {
            "key": "toggled",
            "title": "Switched on or off",
            "rows": rows(diff.toggled, lambda i: "now on" if diff.enabled_after.get(i) else "now off"),
        },
    ]
    changes = [
        {
            "identifier": change.identifier,
            "name": change.name,
            "fields": change.fields,
            "pairs": [(field, change.before[field], change.after[field]) for field in change.before],
            "text": change.text,
        }
        for change in diff.changes
    ]
    return {
        "empty": diff.is_empty,
        "groups": [group for group in groups if group["rows"]],
        "settings": diff.settings,
        "changes": changes,
    }
