"""Reads for presets: lists, node lists with filters, and the rows the compiled preset is built from."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet, Subquery, Value
from django.db.models.functions import Length

from core import offload
from core.errors import UserError
from engine.regex import PresetScripts, scripts_of_preset
from engine.st_format import PresetNode as StNode
from engine.st_format import PromptSettings
from servers.generational_cache import GenerationalCache
from servers.models import Server

from .models import NodeKind, Preset, PresetNode
from .regex_source import regex_source_of_text


class PresetNotFound(UserError, LookupError):
    """A preset named (or given by id) that the server does not have; `message` is one sentence."""

    status = 404  # the API's answer


# Shapes whose nodes the importer made from text (docs/import.md#story-strings), not a Prompt Manager order.
CONVERTED_SHAPES = ("text_completion", "system_prompt")

# What the node list can be narrowed to, besides the three node kinds.
NODE_FILTERS = ("marker", "content", "comment", "depth", "enabled", "disabled")
ST_NODE_FIELDS = (
    "identifier",
    "name",
    "kind",
    "role",
    "content",
    "enabled",
    "injection_position",
    "injection_depth",
    "injection_order",
    "injection_trigger",
    "forbid_overrides",
    "prefix",
    "suffix",
)


def presets_for(server: Server | int) -> list[Preset]:
    """The server's presets by name, without their (possibly megabyte-sized) stored text."""
    server_id = server.pk if isinstance(server, Server) else server
    return list(Preset.objects.filter(server_id=server_id).defer("stored_text").order_by("name", "id"))


def preset_of(server: Server, preset_id: int) -> Preset | None:
    """One preset of the server (stored text deferred), or None."""
    return server.presets.defer("stored_text").filter(pk=preset_id).first()


def preset_named(server: Server, name: str) -> Preset | None:
    """The server's preset with this exact name (stored text deferred), or None."""
    return server.presets.defer("stored_text").filter(name=name).first()


def preset_id_of(server_id: int, *, preset_id: int | None = None, name: str | None = None) -> int | None:
    """The id of the server's preset with that id or name, or None when it has none."""
    rows = Preset.objects.filter(server_id=server_id)
    rows = rows.filter(pk=preset_id) if preset_id is not None else rows.filter(name=name)
    return rows.values_list("pk", flat=True).first()


def nodes_for(preset: Preset, *, query: str = "", kind: str = "") -> QuerySet[PresetNode]:
    """The preset's nodes in prompt order, narrowed by a name/identifier search and a kind filter."""
    nodes = PresetNode.objects.filter(preset=preset).order_by("position")
    query = query.strip()
    if query:
        nodes = nodes.filter(Q(name__icontains=query) | Q(identifier__icontains=query))
    if kind in (NodeKind.MARKER, NodeKind.CONTENT, NodeKind.COMMENT):
        nodes = nodes.filter(kind=kind)
    elif kind == "depth":
        nodes = nodes.filter(injection_position=1).exclude(kind=NodeKind.MARKER)
    elif kind == "enabled":
        nodes = nodes.filter(enabled=True)
    elif kind == "disabled":
        nodes = nodes.filter(enabled=False)
    return nodes


def toggleable(nodes: QuerySet[PresetNode]) -> QuerySet[PresetNode]:
    """The nodes of `nodes` a user may switch on or off (not comments, not chatHistory)."""
    return nodes.exclude(kind=NodeKind.COMMENT).exclude(identifier="chatHistory")


def node_counts(preset: Preset) -> dict[str, int]:
    """Live counts for the node list header: nodes, toggleable and enabled-toggleable."""
    rows = list(PresetNode.objects.filter(preset=preset).values_list("kind", "identifier", "enabled"))
    switchable = [
        enabled for kind, identifier, enabled in rows if kind != "comment" and identifier != "chatHistory"
    ]
    return {"nodes": len(rows), "toggleable": len(switchable), "enabled": sum(switchable)}


def st_nodes(preset_id: int) -> list[StNode]:
    """The stored nodes of a preset as the importer's dataclasses, in prompt order."""
    rows = PresetNode.objects.filter(preset_id=preset_id).order_by("position").values_list(*ST_NODE_FIELDS)
    return [st_node_from_row(row) for row in rows]


def st_node_from_row(row: tuple) -> StNode:
    """One node from a row of ST_NODE_FIELDS values."""
    values = dict(zip(ST_NODE_FIELDS, row, strict=True))
    values["injection_trigger"] = tuple(values["injection_trigger"] or ())
    return StNode(**values)


def servers_with_an_active_preset(limit: int) -> list[int]:
    """The servers whose active preset changed most recently first (the web server warms them)."""
    rows = Preset.objects.filter(is_active=True).order_by("-updated_at").values_list("server_id", flat=True)
    return list(rows[:limit])


def active_preset_row(server_id: int) -> Preset | None:
    """The server's active preset (stored text deferred), or None when assembly is native."""
    return Preset.objects.defer("stored_text").filter(server_id=server_id, is_active=True).first()


def active_preset_name(server_id: int) -> tuple[int, str] | None:
    """(pk, name) of the server's active preset, for the server's home page."""
    return Preset.objects.filter(server_id=server_id, is_active=True).values_list("pk", "name").first()


def regex_scripts(preset: Preset | int) -> PresetScripts:
    """The regex scripts the preset's file ships (`extensions.regex_scripts`), in file order, from
    the part of the file kept at import (the stored text is not parsed again)."""
    preset_id = preset if isinstance(preset, int) else preset.pk
    if isinstance(preset, int):
        source = Preset.objects.filter(pk=preset).values_list("regex_source", flat=True).first()
    else:
        source = preset.regex_source
    if source is None:  # a row stored before the scripts were kept apart
        text = Preset.objects.filter(pk=preset_id).values_list("stored_text", flat=True).first()
        source = regex_source_of_text(text or "")
    return scripts_of_preset(source)


def prompt_settings(preset: Preset) -> PromptSettings:
    """The preset's prompt-shaping settings as the importer's dataclass."""
    converted = preset.shape in CONVERTED_SHAPES  # also for presets stored before the setting existed
    return PromptSettings.from_dict({**(preset.settings or {}), "converted": converted})


def enabled_tokens(preset: Preset, encoding: str | None = None) -> int | None:
    """The tokens of every enabled node together, in `encoding` (see PresetNode.tokens); None when the
    count passed its wall limit and was stopped. Counted once per change of the server's presets
    (the `presets` stamp every preset write bumps, servers/generational_cache.py) in a child process
    (core/offload.py: thousands of nodes are seconds of work when their counts are not cached yet),
    so showing the page again reads one number (docs/presets.md#the-enabled-nodes-tokens)."""
    return ENABLED_TOKENS.get((preset.server_id, preset.pk, encoding or ""))


def _enabled_tokens_in_a_child(key: tuple[int, int, str]) -> int | None:
    _server_id, preset_id, encoding = key
    try:
        return offload.run(enabled_tokens_counted, preset_id=preset_id, encoding=encoding or None)
    except offload.OffloadUnavailable:
        return None


ENABLED_TOKENS: GenerationalCache[tuple[int, int, str], int | None, int | None] = GenerationalCache(
    name="presets:enabled-tokens",
    stamp="presets",
    load=_enabled_tokens_in_a_child,
    server_of=lambda key: key[0],
    stale=False,  # a count is not worth a day-long copy; during an outage the page says it is unknown
    outage=lambda: None,
    keep=lambda plain: plain is not None,  # a count that was stopped is tried again next time
    valid=lambda plain: isinstance(plain, int),
)


def enabled_tokens_counted(*, preset_id: int, encoding: str | None = None) -> int:
    """`enabled_tokens`, counted here."""
    nodes = list(
        PresetNode.objects.filter(preset_id=preset_id, enabled=True).only(
            "kind", "content", "prefix", "suffix"
        )
    )
    for node in nodes:
        node.encoding = encoding
    return sum(node.tokens for node in nodes)


def inactive_preset_ids(server_ids: list[int], *, limit: int) -> list[int]:
    """The servers' presets that are not active, most recently changed first (the preview's warm-up)."""
    rows = Preset.objects.filter(server_id__in=server_ids, is_active=False).order_by("-updated_at")
    return list(rows.values_list("pk", flat=True)[:limit])


def preset_size(server: Any, choice: str) -> tuple[Subquery | Value, Subquery | Value]:
    """(nodes, characters of its stored file) of the preset a preview's `choice` names, as two
    expressions for a query over the servers (`server`: an OuterRef to the server's id): "native"
    (none), a preset id, else the active one; NULL when there is none (the preview says so)."""
    if choice == "native":
        return Value(0), Value(0)
    rows = Preset.objects.filter(server_id=server)
    rows = rows.filter(pk=int(choice)) if choice.isdigit() else rows.filter(is_active=True)
    sized = rows.annotate(size=Length("stored_text"))
    return Subquery(rows.values("node_count")[:1]), Subquery(sized.values("size")[:1])
