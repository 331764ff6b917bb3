"""The server's regex setup: its own scripts compiled once per process, and its switches for preset
scripts (docs/regex.md#scripts-and-their-engine).

A `servers.generational_cache` declaration (stamp `regex`): the shared cache holds the parsed scripts
and switches as plain data; each process keeps them compiled. A warm read is one small cache read and
no SQL. During a database outage the process's last copy, else the day-long stale copy, is served.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.regex import CompiledScript, RegexScript, ScriptError, compile_scripts, parse_script
from servers.generational_cache import GenerationalCache

from .models import PresetScriptSwitch, ServerScript

LOCAL_ENTRIES = 256


@dataclass(frozen=True, slots=True)
class ServerRegex:
    """What every request of a server needs: its own enabled scripts, compiled, in list order, and
    the switches it set for preset scripts (preset id → script key → on/off)."""

    scripts: tuple[CompiledScript, ...]
    switches: dict[int, dict[str, bool]]


@dataclass(frozen=True, slots=True)
class StoredRegex:
    """What the shared cache holds: the scripts parsed (not compiled) and the switches."""

    scripts: tuple[RegexScript, ...]
    switches: dict[int, dict[str, bool]]


def _load(server_id: int) -> StoredRegex:
    scripts: list[RegexScript] = []
    for row in ServerScript.objects.filter(server_id=server_id, enabled=True).order_by("position", "id"):
        try:
            # The row's `enabled` is the switch for the server's own scripts; the file's flag is not.
            scripts.append(replace(parse_script(row.data), disabled=False))
        except ScriptError:
            continue  # stored scripts were read once on the way in; a hand-edited row is skipped
    switches: dict[int, dict[str, bool]] = {}
    rows = PresetScriptSwitch.objects.filter(server_id=server_id)
    for preset_id, key, enabled in rows.values_list("preset_id", "script_key", "enabled"):
        switches.setdefault(preset_id, {})[key] = enabled
    return StoredRegex(tuple(scripts), switches)


def _compile(stored: StoredRegex) -> ServerRegex:
    return ServerRegex(compile_scripts(list(stored.scripts)), stored.switches)


SERVER: GenerationalCache[int, StoredRegex, ServerRegex] = GenerationalCache(
    name="regex:server",
    stamp="regex",
    load=_load,
    compile=_compile,
    local_entries=LOCAL_ENTRIES,
    valid=lambda plain: isinstance(plain, StoredRegex),
)


def server_regex(server_id: int) -> ServerRegex:
    """The server's regex setup, from this process's copy while the generation is unchanged."""
    return SERVER.get(server_id)


# What a write bumps (servers.writes.server_write) so that every process reloads the server's
# scripts and switches.
STAMP = SERVER.stamp


def clear_local() -> None:
    SERVER.clear_local()
