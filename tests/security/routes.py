"""Every URL of the project, walked from the resolver, with what each method needs
(docs/presets.md#who-may-do-what).

A pattern the walk finds that is neither in PAGES, API nor ALLOWED_UNCHECKED fails the matrix
test, so a new view cannot escape it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from devtools.factories import DEFAULT_BUCKETS
from servers.permissions import Action

from .conftest import World, card_bytes, lorebook_bytes, preset_bytes

LOGIN_ONLY = "login-only"  # any signed-in user; shows nothing server-specific
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")

# name -> {method: what it needs}; a method not listed must answer 405 or obey the GET rule.
PAGES: dict[str, dict[str, Action | str]] = {
    "servers:home": {"GET": LOGIN_ONLY},
    "servers:server": {"GET": Action.READ_SERVER},
    "servers:tokens": {"GET": Action.MANAGE_TOKENS, "POST": Action.MANAGE_TOKENS},
    "servers:tokenizer": {"POST": Action.MANAGE_SAMPLING},
    "servers:token-revoke": {"POST": Action.MANAGE_TOKENS},
    "servers:audit": {"GET": Action.READ_AUDIT},
    "presets:help": {"GET": LOGIN_ONLY},
    "presets:list": {"GET": Action.READ_PRESETS},
    "presets:upload": {"GET": Action.MANAGE_PRESETS, "POST": Action.MANAGE_PRESETS},
    "presets:detail": {"GET": Action.READ_PRESETS},
    "presets:activate": {"POST": Action.MANAGE_PRESETS},
    "presets:deactivate": {"POST": Action.MANAGE_PRESETS},
    "presets:rename": {"POST": Action.MANAGE_PRESETS},
    "presets:delete": {"POST": Action.MANAGE_PRESETS},
    "presets:style": {"POST": Action.MANAGE_PRESETS},
    "presets:download": {"GET": Action.MANAGE_PRESETS},
    "presets:nodes-bulk": {"POST": Action.MANAGE_PRESETS},
    "presets:node-toggle": {"POST": Action.MANAGE_PRESETS},
    "presets:sampling": {"GET": Action.READ_SAMPLING, "POST": Action.MANAGE_SAMPLING},
    "characters:list": {"GET": Action.READ_CARDS},
    "characters:upload": {"POST": Action.MANAGE_CARDS},
    "characters:detail": {"GET": Action.READ_CARDS},
    "characters:activate": {"POST": Action.MANAGE_CARDS},
    "characters:deactivate": {"POST": Action.MANAGE_CARDS},
    "characters:delete": {"POST": Action.MANAGE_CARDS},
    "characters:avatar": {"GET": Action.READ_CARDS},
    "characters:download-json": {"GET": Action.READ_CARDS},
    "characters:download-png": {"GET": Action.READ_CARDS},
    "presets:node-add": {"GET": Action.MANAGE_PRESETS, "POST": Action.MANAGE_PRESETS},
    "presets:nodes-reorder": {"POST": Action.MANAGE_PRESETS},
    "presets:node": {"GET": Action.READ_PRESETS},
    "presets:node-edit": {"GET": Action.MANAGE_PRESETS, "POST": Action.MANAGE_PRESETS},
    "presets:node-duplicate": {"POST": Action.MANAGE_PRESETS},
    "presets:node-delete": {"POST": Action.MANAGE_PRESETS},
    "presets:node-move": {"POST": Action.MANAGE_PRESETS},
    "presets:versions": {"GET": Action.READ_PRESETS},
    "presets:version-diff": {"GET": Action.READ_PRESETS},
    "presets:version-download": {"GET": Action.MANAGE_PRESETS},
    "presets:rollback": {"POST": Action.MANAGE_PRESETS},
    "presets:channel-set": {"POST": Action.MANAGE_PRESETS},
    "lorebooks:list": {"GET": Action.READ_LOREBOOKS},
    "lorebooks:upload": {"GET": Action.MANAGE_LOREBOOKS, "POST": Action.MANAGE_LOREBOOKS},
    "lorebooks:settings": {"POST": Action.MANAGE_LOREBOOKS},
    "lorebooks:detail": {"GET": Action.READ_LOREBOOKS},
    "lorebooks:activate": {"POST": Action.MANAGE_LOREBOOKS},
    "lorebooks:deactivate": {"POST": Action.MANAGE_LOREBOOKS},
    "lorebooks:delete": {"POST": Action.MANAGE_LOREBOOKS},
    "lorebooks:download": {"GET": Action.MANAGE_LOREBOOKS},
    "lorebooks:entries-bulk": {"POST": Action.MANAGE_LOREBOOKS},
    "lorebooks:entry-toggle": {"POST": Action.MANAGE_LOREBOOKS},
    "memory:review": {"GET": Action.REVIEW_STM},
    "memory:bypass": {"POST": Action.MANAGE_PRIVACY},
    "memory:receive": {"POST": Action.MANAGE_CROSS_SERVER_MEMORY},
    "memory:channel-private": {"POST": Action.MANAGE_PRIVACY},
    "assembly:preview": {"GET": Action.VIEW_PREVIEW},
    "assembly:preview-render": {"POST": Action.VIEW_PREVIEW},
    "assembly:sample-save": {"POST": Action.EDIT_SAMPLES},
    "assembly:sample-delete": {"POST": Action.EDIT_SAMPLES},
    "conversations:conversations": {"GET": Action.VIEW_PREVIEW, "POST": Action.EDIT_SAMPLES},
    "conversations:conversation-import": {"POST": Action.EDIT_SAMPLES},
    "conversations:conversation": {"GET": Action.VIEW_PREVIEW},
    "conversations:conversation-rename": {"POST": Action.EDIT_SAMPLES},
    "conversations:conversation-delete": {"POST": Action.EDIT_SAMPLES},
    "conversations:message-add": {"POST": Action.EDIT_SAMPLES},
    "conversations:message-edit": {"POST": Action.EDIT_SAMPLES},
    "conversations:message-continue": {"POST": Action.EDIT_SAMPLES},
    "conversations:message-delete": {"POST": Action.EDIT_SAMPLES},
    "conversations:swipe-add": {"POST": Action.EDIT_SAMPLES},
    "conversations:swipe-select": {"POST": Action.EDIT_SAMPLES},
    "conversations:swipe-delete": {"POST": Action.EDIT_SAMPLES},
    "conversations:ops-save": {"POST": Action.EDIT_SAMPLES},
    "conversations:channels": {"GET": Action.REVIEW_STM},
    "conversations:channel": {"GET": Action.REVIEW_STM},
    "conversations:channel-rules": {"POST": Action.MANAGE_PRIVACY},
    "conversations:channel-forget": {"POST": Action.FORGET_CHANNELS},
    "conversations:member-forget": {"POST": Action.FORGET_CHANNELS},
    "regex_scripts:list": {"GET": Action.READ_REGEX},
    "regex_scripts:upload": {"POST": Action.MANAGE_REGEX},
    "regex_scripts:add": {"POST": Action.MANAGE_REGEX},
    "regex_scripts:tester": {"GET": Action.VIEW_PREVIEW, "POST": Action.VIEW_PREVIEW},
    "regex_scripts:edit": {"GET": Action.MANAGE_REGEX, "POST": Action.MANAGE_REGEX},
    "regex_scripts:toggle": {"POST": Action.MANAGE_REGEX},
    "regex_scripts:move": {"POST": Action.MANAGE_REGEX},
    "regex_scripts:delete": {"POST": Action.MANAGE_REGEX},
    "regex_scripts:preset": {"GET": Action.READ_REGEX},
    "regex_scripts:preset-toggle": {"POST": Action.MANAGE_REGEX},
    "groups:list": {"GET": Action.READ_GROUPS},
    "groups:new": {"GET": Action.MANAGE_GROUPS, "POST": Action.MANAGE_GROUPS},
    "groups:edit": {"GET": Action.MANAGE_GROUPS, "POST": Action.MANAGE_GROUPS},
    "groups:delete": {"POST": Action.MANAGE_GROUPS},
    "groups:channel-set": {"POST": Action.MANAGE_GROUPS},
    "groups:note-save": {"POST": Action.MANAGE_GROUPS},
    "groups:authors-note-save": {"POST": Action.MANAGE_GROUPS},
}

# name -> methods the bearer-token API accepts.
API: dict[str, tuple[str, ...]] = {
    "presets:api-list": ("GET", "POST"),
    "presets:api-active": ("GET",),
    "characters:api-active-card": ("GET",),
    "lorebooks:api-list": ("GET", "POST"),
    "memory:api-turns": ("POST",),
    "memory:api-summary": ("POST", "PUT"),
    "memory:api-entries": ("GET",),
    "memory:api-opt-in": ("POST",),
    "memory:api-directory": ("GET", "POST"),
    "assembly:api-assemble": ("POST",),
    "regex_scripts:api-clean": ("POST",),
    "groups:api-list": ("GET",),
    "groups:api-detail": ("GET", "PUT", "DELETE"),
    "groups:api-channel": ("GET", "PUT", "DELETE"),
    "groups:api-next": ("POST",),
    "groups:api-notes": ("POST",),
    "conversations:api-channel-messages": ("POST",),
    "conversations:api-channel-message": ("PATCH", "DELETE"),
    "conversations:api-channel-swipes": ("POST",),
    "conversations:api-channel-swipe-current": ("PUT",),
    "conversations:api-channel-swipe": ("DELETE",),
    "conversations:api-channel-conversation": ("GET", "DELETE"),
    "conversations:api-member-messages": ("DELETE",),
    "servers:api-channel-tool": ("POST",),
}

# Patterns the walk does not exercise, each with its reason.
ALLOWED_UNCHECKED: dict[str, str] = {
    "admin:": "Django's own admin: staff-only, outside the role table (superusers only in practice)",
    "login": "the sign-in form itself (throttling has its own test)",
    "logout": "signing out changes only the caller's own session",
    "characters:public-avatar": "public by design: a card's picture for webhooks, no session, reached only "
    "through a signed URL; tests/groups/test_avatars.py refuses a forged signature, a deleted card and "
    "another server's ids",
}

# Kwargs naming a global row, not one scoped to the server in the URL.
GLOBAL_KWARGS = {"user_id": "a Discord user is global; the opt-in is the user's own, relayed by any bot"}


@dataclass(frozen=True)
class Route:
    name: str
    route: str
    kwargs: tuple[str, ...]


def _walk(patterns: list[Any], prefix: str, namespace: str | None) -> Iterator[Route]:
    for entry in patterns:
        if isinstance(entry, URLResolver):
            inner = ":".join(filter(None, [namespace, entry.namespace])) if entry.namespace else namespace
            yield from _walk(entry.url_patterns, prefix + str(entry.pattern), inner)
        elif isinstance(entry, URLPattern):
            name = f"{namespace}:{entry.name}" if namespace else str(entry.name)
            route = prefix + str(entry.pattern)
            kwargs = tuple(re.findall(r"<(?:\w+:)?(\w+)>", route) + re.findall(r"\(\?P<(\w+)>", route))
            yield Route(name=name, route=route, kwargs=kwargs)


def all_routes() -> list[Route]:
    """Every URL pattern of the project, namespaced names included."""
    return list(_walk(get_resolver().url_patterns, "", None))


def is_allowed_unchecked(name: str) -> bool:
    return any(name == key or (key.endswith(":") and name.startswith(key)) for key in ALLOWED_UNCHECKED)


def _bucket_text() -> str:
    return DEFAULT_BUCKETS.read_text()


def page_data(name: str, world: World) -> dict[str, Any]:
    """POST form data that lets an allowed request do its real work (not stop at a missing field)."""
    chat = '{"user_name":"U","character_name":"C"}\n{"name":"U","is_user":true,"mes":"hi"}\n'
    data: dict[str, Callable[[], dict[str, Any]]] = {
        "servers:tokens": lambda: {"name": "walk token"},
        "servers:tokenizer": lambda: {"encoding": "cl100k_base"},
        "presets:upload": lambda: {
            "file": SimpleUploadedFile("walk.json", preset_bytes("Walk"), "application/json"),
            "activate": "on",
        },
        "presets:rename": lambda: {"name": "Walked"},
        "characters:upload": lambda: {
            "file": SimpleUploadedFile("walk.png", card_bytes("Walk card"), "image/png"),
            "activate": "on",
        },
        "presets:style": lambda: {"style": "standalone"},
        "presets:nodes-bulk": lambda: {"enabled": "0", "confirmed": "1"},
        "presets:delete": lambda: {"confirmed": "1"},
        "presets:node-delete": lambda: {"confirmed": "1"},
        "lorebooks:delete": lambda: {"confirmed": "1"},
        "groups:delete": lambda: {"confirmed": "1"},
        "characters:delete": lambda: {"confirmed": "1"},
        "servers:token-revoke": lambda: {"confirmed": "1"},
        "conversations:conversation-delete": lambda: {"confirmed": "1"},
        "conversations:message-delete": lambda: {"confirmed": "1"},
        "conversations:swipe-delete": lambda: {"confirmed": "1"},
        "presets:sampling": lambda: {"mode": "merged", "provider": "anthropic", "value-temperature": "0.8"},
        "presets:node-add": lambda: {"name": "Walked in", "content": "Hello {{user}}."},
        "presets:node-edit": lambda: {"name": "Walked", "content": "Edited text."},
        "presets:node-move": lambda: {"direction": "up"},
        "presets:rollback": lambda: {"to": "1"},
        "presets:channel-set": lambda: {"channel": str(world.channel_id), "preset": str(world.preset_id)},
        "lorebooks:upload": lambda: {
            "file": SimpleUploadedFile("walk lore.json", lorebook_bytes("Walk"), "application/json"),
            "activate": "on",
        },
        "lorebooks:settings": lambda: {
            "scan_depth": "3",
            "budget_percent": "20",
            "budget_cap": "0",
            "context_size": "8000",
            "max_recursion": "0",
            "min_activations": "0",
            "min_activations_depth_max": "0",
            "recursive": "1",
            "strategy": "evenly",
        },
        "lorebooks:entries-bulk": lambda: {"enabled": "0", "confirmed": "1"},
        "lorebooks:entry-toggle": lambda: {"enabled": "0"},
        "memory:bypass": lambda: {"bypass": "on"},
        "memory:receive": lambda: {"receive": "on"},
        "memory:channel-private": lambda: {"private": "on"},
        "assembly:preview-render": lambda: {"document": _bucket_text()},
        "assembly:sample-save": lambda: {"name": "walk sample", "document": _bucket_text()},
        "assembly:sample-delete": lambda: {"name": world.bucket_name, "confirmed": "1"},
        "regex_scripts:delete": lambda: {"confirmed": "1"},
        "conversations:conversations": lambda: {"name": "walk chat"},
        "conversations:conversation-import": lambda: {
            "chat": SimpleUploadedFile("walk.jsonl", chat.encode(), "application/jsonl")
        },
        "conversations:conversation-rename": lambda: {"name": "walked chat"},
        "conversations:message-add": lambda: {"role": "user", "text": "walk {{setvar::k::v}}"},
        "conversations:message-edit": lambda: {"text": "edited"},
        "conversations:message-continue": lambda: {"text": " more"},
        "conversations:swipe-add": lambda: {"text": "another"},
        "conversations:channel-rules": lambda: {
            "user_writes": "on",
            "keep_messages": "100",
            "keep_days": "7",
        },
        "conversations:channel-forget": lambda: {"confirm": "yes"},
        "conversations:member-forget": lambda: {"member": str(world.discord_user_id), "confirm": "yes"},
        "regex_scripts:upload": lambda: {
            "file": SimpleUploadedFile(
                "walk.json", b'{"findRegex": "/walk/g", "placement": [2]}', "application/json"
            )
        },
        "regex_scripts:add": lambda: {"findRegex": "/walk/g", "placement": ["2"], "substituteRegex": "0"},
        "regex_scripts:tester": lambda: {"text": "walk", "kind": "reply"},
        "regex_scripts:edit": lambda: {"findRegex": "/walked/g", "placement": ["2"], "substituteRegex": "0"},
        "regex_scripts:toggle": lambda: {"enabled": "0"},
        "regex_scripts:move": lambda: {"direction": "up"},
        "regex_scripts:preset-toggle": lambda: {"key": "walk-script", "enabled": "0"},
        "groups:new": lambda: {"name": "walk group", f"member-{world.card_id}": "on"},
        "groups:edit": lambda: {f"member-{world.card_id}": "on", "strategy": "list"},
        "groups:channel-set": lambda: {"channel": str(world.channel_id), "group": str(world.group_id)},
        "groups:note-save": lambda: {
            "channel": str(world.channel_id),
            "card": str(world.card_id),
            "text": "walked",
        },
        "groups:authors-note-save": lambda: {"channel": str(world.channel_id), "text": "walked"},
        "conversations:ops-save": lambda: {
            "swipe": str(world.swipe_id),
            "rows": "1",
            "op-0": "setvar",
            "key-0": "k",
            "value-0": "v",
        },
    }
    return data[name]() if name in data else {}


def api_body(name: str, world: World) -> tuple[bytes, str, str]:
    """(body, content type, query string) for an API call that does its real work."""
    turn = {
        "channel": world.channel_id,
        "user": world.discord_user_id,
        "messages": [{"role": "user", "name": "U", "content": "hi"}],
    }
    bodies: dict[str, tuple[Any, str]] = {
        "presets:api-list": (preset_bytes("Api"), "?name=api+walk"),
        "lorebooks:api-list": (lorebook_bytes("Api"), "?name=api+walk"),
        "memory:api-turns": (turn, ""),
        "memory:api-summary": ({"channel": turn["channel"], "user": turn["user"], "summary": "walked"}, ""),
        "memory:api-opt-in": ({"opt_in": True}, ""),
        "memory:api-directory": (
            {"channels": [{"id": str(world.channel_id), "name": "walk"}], "members": []},
            "",
        ),
        "assembly:api-assemble": (json.loads(_bucket_text()), ""),
        "regex_scripts:api-clean": ({"text": "walk <think>x</think>"}, ""),
        "groups:api-detail": ({"members": [world.card_name]}, ""),
        "groups:api-channel": ({"group": world.group_name}, ""),
        "servers:api-channel-tool": ({"formula": "2d6"}, ""),
        "groups:api-next": ({"messages": [{"role": "user", "name": "U", "content": "hi"}], "seed": 1}, ""),
        "groups:api-notes": ({"channel": world.channel_id, "member": world.card_id, "text": "walked"}, ""),
        "conversations:api-channel-messages": ({"id": "77", "role": "assistant", "content": "walk"}, ""),
        "conversations:api-channel-message": ({"content": "walked"}, ""),
        "conversations:api-channel-swipes": ({"content": "walked again"}, ""),
        "conversations:api-channel-swipe-current": ({"index": 0}, ""),
    }
    body, query = bodies.get(name, (b"", ""))
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    return raw, "application/json", query


def route_url(name: str, world: World, *, objects: World | None = None) -> str:
    route = _routes_by_name()[name]
    source = (objects or world).kwargs()
    kwargs = {key: (world.kwargs()[key] if key == "server_id" else source[key]) for key in route.kwargs}
    return reverse(name, kwargs=kwargs)


@cache
def _routes_by_name() -> dict[str, Route]:
    return {route.name: route for route in all_routes()}
