"""The server's regex setup per process: its own scripts compiled once, and its switches for preset
scripts (SPEC §9.1). One shared generation token per server (`regex:v1:gen:<server>`, replaced by
every write) says whether a process's copy is current, so a warm read is one small cache read and
no SQL. Cache-backend errors are misses (servers.resilient_cache); the database answers.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from dataclasses import dataclass, replace

from engine.regex import CompiledScript, RegexScript, ScriptError, compile_scripts, parse_script
from servers.resilient_cache import cache_get, cache_set

from .models import PresetScriptSwitch, ServerScript

GENERATION_SECONDS = 30 * 24 * 60 * 60
LOCAL_ENTRIES = 256


@dataclass(frozen=True, slots=True)
class ServerRegex:
    """What every request of a server needs: its own enabled scripts, compiled, in list order, and
    the switches it set for preset scripts (preset id → script key → on/off)."""

    scripts: tuple[CompiledScript, ...]
    switches: dict[int, dict[str, bool]]


_local: OrderedDict[int, tuple[str, ServerRegex]] = OrderedDict()
_lock = threading.Lock()


def _generation_key(server_id: int) -> str:
    return f"regex:v1:gen:{server_id}"


def server_regex(server_id: int) -> ServerRegex:
    """The server's regex setup, from this process's copy while the generation is unchanged."""
    generation = cache_get(_generation_key(server_id))
    if generation is None:
        generation = _new_generation(server_id)
    with _lock:
        known = _local.get(server_id)
        if known is not None and known[0] == generation:
            _local.move_to_end(server_id)
            return known[1]
    loaded = _load(server_id)
    with _lock:
        _local[server_id] = (generation, loaded)
        while len(_local) > LOCAL_ENTRIES:
            _local.popitem(last=False)
    return loaded


def invalidate(server_id: int) -> None:
    """Every process reloads the server's scripts and switches on its next read."""
    _new_generation(server_id)
    with _lock:
        _local.pop(server_id, None)


def clear_local() -> None:
    with _lock:
        _local.clear()


def _new_generation(server_id: int) -> str:
    generation = secrets.token_hex(8)
    cache_set(_generation_key(server_id), generation, GENERATION_SECONDS)
    return generation


def _load(server_id: int) -> ServerRegex:
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
    return ServerRegex(compile_scripts(scripts), switches)
