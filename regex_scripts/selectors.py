"""Reads for regex scripts: the scripts one request runs, and the rows the pages and the CLI list."""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, replace
from typing import Any

from django.db.models import Count, Subquery

from characters import cache as card_cache
from engine import CompiledPreset, MiB, text_cache
from engine.cards import Card
from engine.macros import MacroEnv
from engine.regex import (
    DEFAULT_REASONING_PREFIX,
    DEFAULT_REASONING_SUFFIX,
    Cleaned,
    CompiledScript,
    RegexRequest,
    RegexScript,
    ScriptError,
    clean_reply,
    clean_user_message,
    compile_script,
    parse_find_regex,
    parse_script,
    script_keys,
    switched,
)
from presets import cache as preset_cache
from presets import selectors as preset_selectors
from presets.selectors import PresetNotFound

from .cache import server_regex
from .models import PresetScriptSwitch, ServerScript


@dataclass(frozen=True, slots=True)
class ScriptSet:
    """The scripts a request runs, in order (the server's own, then the preset's), and the reasoning
    delimiters (the preset's, else `<think>`/`</think>`)."""

    scripts: tuple[CompiledScript, ...]
    reasoning_prefix: str = DEFAULT_REASONING_PREFIX
    reasoning_suffix: str = DEFAULT_REASONING_SUFFIX


def script_set(server_id: int, preset: CompiledPreset | None, card: Card | None = None) -> ScriptSet:
    """What runs for the server with `preset` (None: only the server's own scripts) and its active
    `card` (its scripts run last, docs/regex.md#scripts-and-their-engine). Cached: no SQL when the server's
    regex generation and the preset are unchanged."""
    own = server_regex(server_id)
    card_scripts = card_compiled_scripts(card)
    if preset is None:
        return ScriptSet((*own.scripts, *card_scripts))
    preset_scripts = switched(preset.regex_scripts, own.switches.get(preset.preset_id, {}))
    prefix, suffix = preset.reasoning
    return ScriptSet(
        (*own.scripts, *preset_scripts, *card_scripts),
        prefix or DEFAULT_REASONING_PREFIX,
        suffix or DEFAULT_REASONING_SUFFIX,
    )


def card_compiled_scripts(card: Card | None) -> tuple[CompiledScript, ...]:
    """The card's own scripts, compiled once per distinct script list (not per request)."""
    if card is None or not card.regex_scripts:
        return ()
    return _compiled_card_scripts(json.dumps(card.regex_scripts, sort_keys=True, ensure_ascii=False))


@text_cache(max_entries=64, max_bytes=32 * MiB, weight=4)
def _compiled_card_scripts(scripts_json: str) -> tuple[CompiledScript, ...]:
    compiled = []
    for data in json.loads(scripts_json):
        try:
            script = parse_script(data)
        except ScriptError:
            continue  # not a script object: a card's extensions may hold anything
        compiled.append(compile_script(script))
    return tuple(c for c in compiled if not c.script.disabled)


@dataclass(frozen=True, slots=True)
class ScriptRow:
    """One script as the pages and `regex list` show it."""

    key: str
    compiled: CompiledScript
    enabled: bool
    row: ServerScript | None = None  # the server's own scripts only

    @property
    def script(self) -> RegexScript:
        return self.compiled.script

    @property
    def pattern(self) -> str:
        return parse_find_regex(self.script.find_regex)[0]

    @property
    def flags(self) -> str:
        return parse_find_regex(self.script.find_regex)[1]

    @property
    def placement_labels(self) -> list[str]:
        return [PLACEMENT_LABELS.get(p, str(p)) for p in sorted(self.script.placement)]

    @property
    def mode(self) -> str:
        flags = (self.script.markdown_only, self.script.prompt_only)
        return {
            (True, True): "display + prompt",
            (True, False): "display only",
            (False, True): "prompt only",
        }.get(flags, "stored")

    def to_dict(self, source: str, preset: str | None) -> dict[str, object]:
        script = self.script
        return {
            "source": source,
            "preset": preset,
            "key": self.key,
            "id": script.id,
            "script": script.label,
            "findRegex": script.find_regex,
            "pattern": self.pattern,
            "flags": self.flags,
            "placement": sorted(script.placement),
            "markdownOnly": script.markdown_only,
            "promptOnly": script.prompt_only,
            "minDepth": script.min_depth,
            "maxDepth": script.max_depth,
            "enabled": self.enabled,
            "active": self.compiled.active,
            "reason": self.compiled.inactive,
        }


PLACEMENT_LABELS = {1: "user input", 2: "AI output", 3: "slash command", 5: "World Info", 6: "reasoning"}


def server_script_rows(server_id: int) -> list[ScriptRow]:
    """The server's own list, in running order, enabled or not."""
    rows = []
    for row in ServerScript.objects.filter(server_id=server_id).order_by("position", "id"):
        try:
            script = parse_script(row.data)
        except ScriptError as exc:
            script = RegexScript(id=str(row.pk), name=str(row), find_regex="")
            compiled = CompiledScript(script, None, None, exc.message)
        else:
            compiled = compile_script(replace(script, disabled=False))
        rows.append(ScriptRow(key=str(row.pk), compiled=compiled, enabled=row.enabled, row=row))
    return rows


def preset_script_rows(preset: CompiledPreset) -> list[ScriptRow]:
    """The preset's scripts in file order, each with this server's on/off choice."""
    switches = dict(
        PresetScriptSwitch.objects.filter(preset_id=preset.preset_id).values_list("script_key", "enabled")
    )
    keys = script_keys([compiled.script for compiled in preset.regex_scripts])
    return [
        ScriptRow(key=key, compiled=compiled, enabled=switches.get(key, not compiled.script.disabled))
        for key, compiled in zip(keys, preset.regex_scripts, strict=True)
    ]


def server_script(server_id: int, script_id: int) -> ServerScript | None:
    return ServerScript.objects.filter(server_id=server_id, pk=script_id).first()


def preset_named(server_id: int, name: str | None) -> CompiledPreset | None:
    """The named preset of the server, or the active one when `name` is None (None: no preset)."""
    if name is None:
        return preset_cache.get_active_preset(server_id)
    found = preset_selectors.preset_id_of(server_id, name=name)
    if found is None:
        raise PresetNotFound(f"This server has no preset named {name!r}.")
    return preset_cache.get_preset(found)


def clean_for_server(
    *,
    server_id: int,
    text: str,
    user_message: bool = False,
    preset_name: str | None = None,
    impersonate: bool = False,
    reasoning: str | None = None,
    seed: int | None = None,
    user: str = "User",
    char: str = "Assistant",
) -> Cleaned:
    """A model reply (or a user message) cleaned by the server's scripts and its active (or named)
    preset's (docs/regex.md#where-they-run). Raises PresetNotFound."""
    preset = preset_named(server_id, preset_name)
    scripts = script_set(server_id, preset, card_cache.get_active_card(server_id))
    request = RegexRequest(
        seed=secrets.randbelow(2**31) if seed is None else seed,
        user=user,
        char=char,
        env=MacroEnv(server_id=server_id),
    )
    if user_message:
        return clean_user_message(scripts.scripts, text, request)
    return clean_reply(
        scripts.scripts,
        text,
        request,
        reasoning=reasoning,
        impersonate=impersonate,
        reasoning_prefix=scripts.reasoning_prefix,
        reasoning_suffix=scripts.reasoning_suffix,
    )


def enabled_server_scripts(server: Any) -> Subquery:
    """How many of the server's own scripts are on, as an expression for a query over the servers
    (`server`: an OuterRef to the server's id); NULL when none is."""
    enabled = ServerScript.objects.filter(server_id=server, enabled=True).order_by().values("server_id")
    return Subquery(enabled.annotate(count=Count("pk")).values("count"))
