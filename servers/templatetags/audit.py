"""How an audit event's action reads on the audit page: our storage words give way to the admin's."""

from __future__ import annotations

from django import template

register = template.Library()

# The stored action codes stay as they are (filters, exports); only the page shows these words.
_SHOWN = {"sample_bucket.": "sample."}


@register.filter
def action_words(action: str) -> str:
    """`sample_bucket.create` reads `sample.create`; every other action as stored."""
    for stored, shown in _SHOWN.items():
        if action.startswith(stored):
            return shown + action.removeprefix(stored)
    return action
