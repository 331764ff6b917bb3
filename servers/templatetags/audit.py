"""How an audit event reads on the audit page and the server home: the admin's words for the stored
action and details (the stored codes stay as they are for filters and exports, and are shown in a
tooltip for support staff), and channel and member names from the directory instead of raw ids."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()

# The thing an action is about (everything before its last dot), and what was done (the last part).
_SUBJECTS = {
    "preset": "Preset",
    "preset.node": "Preset node",
    "preset.nodes": "Preset nodes",
    "preset.channel": "Channel preset",
    "preset.sampling": "Sampler settings",
    "lorebook": "Lorebook",
    "lorebook.entries": "Lorebook entries",
    "card": "Character card",
    "regex": "Regex script",
    "regex.preset": "Preset regex script",
    "channel": "Channel conversation",
    "conversation": "Sample conversation",
    "sample_bucket": "Sample",
    "stm": "Short-term memory",
    "membership": "Membership",
    "token": "API token",
    "server": "Server",
    "group": "Group",
    "group.channel": "Channel group",
    "group.note": "Member note",
    "group.authors_note": "Author's Note",
}
_DONE = {
    "import": "imported",
    "replace": "replaced",
    "activate": "made active",
    "deactivate": "made inactive",
    "delete": "deleted",
    "rename": "renamed",
    "add": "added",
    "duplicate": "copied",
    "edit": "edited",
    "enable": "switched on",
    "disable": "switched off",
    "entries_enable": "entries switched on",
    "entries_disable": "entries switched off",
    "move": "moved",
    "reorder": "reordered",
    "rollback": "rolled back",
    "set": "set",
    "clear": "cleared",
    "create": "created",
    "revoke": "revoked",
    "remove": "taken away",
    "settings": "settings changed",
    "forget": "forgotten",
    "member_forget": "member forgotten",
    "update": "changed",
    "directory": "directory pushed by the bot",
    "tokenizer": "tokenizer changed",
    "opt_in": "cross-server memory turned on by a member",
    "opt_out": "cross-server memory turned off by a member",
    "receive_on": "other servers' memories let in",
    "receive_off": "other servers' memories shut out",
    "channel_public": "channel made public",
    "channel_private": "channel made private",
    "bypass_on": "privacy bypass turned on",
    "bypass_off": "privacy bypass turned off",
    "note": "member note written",
    "trigger": "member asked to answer next",
    "authors_note": "Author's Note written",
    "dice": "dice rolled",
    "private_context": "private context kept for a member",
    "recall": "earlier messages recalled",
}
_KEYS = {
    "shape": "format",
    "nodes": "nodes",
    "active": "made active",
    "was_active": "was active",
    "entries": "entries",
    "spec": "card format",
    "from": "from",
    "to": "to",
    "version": "version",
    "reason": "why",
    "style": "injection style",
    "channels": "channels",
    "members": "members",
    "before": "before",
    "after": "after",
    "private": "private",
    "stm_privacy_bypass": "privacy bypass",
    "cross_server_opt_in": "cross-server memory",
    "identifier": "node id",
    "changed": "changed",
    "channel": "channel",
    "channel_id": "channel",
    "user": "member",
    "user_id": "member",
    "role": "role",
    "script": "script",
    "direction": "direction",
    "mode": "settings from",
    "provider": "provider",
    "name": "name",
    "group": "group",
    "member": "member",
    "muted": "muted",
    "join_prefix": "join prefix",
    "join_suffix": "join suffix",
    "strategy": "who speaks next",
    "allow_self_responses": "may answer itself",
    "chars": "characters",
    "formula": "dice",
    "rolls": "rolled",
    "total": "total",
    "query": "looked for",
    "found": "found",
    "messages": "messages",
    "user_writes": "members' write macros",
    "keep_messages": "messages kept per channel",
    "keep_days": "days kept",
}
# A group's settings: its generation mode is stored as `mode` (as the sampler choice's is), so a
# detail with a strategy reads `mode` as the group's; texts a group may leave empty are left out.
_GROUP_MODE_LABEL = "generation mode"
_LEFT_OUT_WHEN_EMPTY = frozenset({"muted", "join_prefix", "join_suffix"})
_VALUES = {
    "prompt_manager": "Prompt Manager preset",
    "legacy": "system-prompt preset",
    "o200k_base": "OpenAI's current tokenizer",
    "cl100k_base": "OpenAI's older tokenizer",
}
_GROUP_VALUES = {
    "swap": "swap character cards",
    "join_exclude_muted": "join character cards (exclude muted)",
    "join_include_muted": "join character cards (include muted)",
    "natural": "natural order",
    "list": "list order",
    "pooled": "pooled order",
    "manual": "manual",
}


@register.filter
def action_words(action: str) -> str:
    """`preset.nodes.reorder` reads "Preset nodes reordered"; an unknown action readably spaced."""
    subject, _, done = action.rpartition(".")
    subject_words = _SUBJECTS.get(subject, subject.replace("_", " ").replace(".", " ").capitalize())
    done_words = _DONE.get(done, done.replace("_", " "))
    return f"{subject_words} {done_words}".strip()


@register.filter
def detail_words(detail: dict[str, Any], names: Any) -> list[tuple[str, str, str]]:
    """(label, value, stored form) per detail: `active: True` reads "made active: yes", a channel or
    member its name from the directory (`#cellar`) when the bot has named it."""
    channels = getattr(names, "channels", None) or {}
    members = getattr(names, "members", None) or {}
    shown = []
    for key, value in (detail or {}).items():
        stored = f"{key}: {value}"
        if key == "script_json":
            continue  # the script's whole JSON: its name is already shown
        if key in _LEFT_OUT_WHEN_EMPTY and value in ("", [], None):
            continue
        label = _KEYS.get(key, key.replace("_", " "))
        if key in ("mode", "strategy") and "strategy" in (detail or {}):
            label = _GROUP_MODE_LABEL if key == "mode" else label
            shown.append((label, _GROUP_VALUES.get(str(value), str(value)), stored))
            continue
        if key in ("user", "user_id") and not str(value).isdigit():
            shown.append(("user", str(value), stored))  # a dashboard account (a membership), not a Discord id
            continue
        shown.append((label, _value_words(key, value, channels, members), stored))
    return shown


def _value_words(key: str, value: Any, channels: dict[int, str], members: dict[int, str]) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None or value == "":
        return "none"
    if key in ("channel", "channel_id", "user", "user_id"):
        try:
            name = (channels if key.startswith("channel") else members).get(int(value), "")
        except (TypeError, ValueError):
            name = ""
        if name:
            return f"#{name}" if key.startswith("channel") else name
        return f"{'channel' if key.startswith('channel') else 'member'} {value}"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value[:10]) + (
            f" and {len(value) - 10} more" if len(value) > 10 else ""
        )
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in list(value.items())[:10])
    return _VALUES.get(str(value), str(value))
