"""The preview's result as HTML: the assembly of a sample, the budget, both message lists and the
variables, rendered. It is the costly part of the preview page (a 5,000-node preset renders 2.7 MB,
most of its time in templates), so the views have it made in a child process (core/offload.py); it
needs nothing of the request. A preview within the SMALL_PREVIEW_ bounds is made in the request's
thread instead: its work is known to be small, and no child need start or be scheduled for it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.db.models import OuterRef
from django.db.models.functions import Coalesce
from django.template.loader import render_to_string

from characters.selectors import active_card_size
from conversations.channels.selectors import for_speaker, stored_chat
from conversations.selectors import preview_inputs
from core import offload
from lorebooks.selectors import active_size
from presets.selectors import preset_size
from regex_scripts.selectors import enabled_server_scripts
from servers.models import Server

from .preview import Preview, PreviewOptions, preview_assembly

RESULT = "assembly/preview.html#result"

# A preview within all of these is made in the web thread, not a child (docs/reliability.md, "Small
# work in the web thread"): a few tens of milliseconds of CPU, less than a child's scheduling costs
# it at its lower priority on a busy machine. Bytes are characters of the texts as stored.
SMALL_PREVIEW_NODES = 100  # the preset's prompts
SMALL_PREVIEW_ENTRIES = 100  # World Info entries of the active lorebooks together
SMALL_PREVIEW_SCRIPTS = 16  # the server's own regex scripts (the preset's are in its file's size)
SMALL_PREVIEW_BYTES = 64 * 1024  # the sample, the preset's file, the lorebooks' and the card's, together


@dataclass(frozen=True, slots=True)
class PreviewResult:
    html: str
    error: str = ""  # the preview's one sentence when it has none to show
    stopped: bool = False  # the render passed its wall limit (OFFLOAD_WALL_SECONDS) and was stopped


def preview_result(*, server: Server, document: Any, options: PreviewOptions) -> PreviewResult:
    """The rendered preview of `document` (a decoded bucket document) for the server."""
    preview = _preview(server, document, options)
    return PreviewResult(html=_html(server, preview), error=preview.error)


def offloaded_preview_result(
    *, server: Server, document: Any, options: PreviewOptions, error: str = ""
) -> PreviewResult:
    """`preview_result` made in a child process (inline when offloading is off), or the result that
    shows `error` (a sample that did not decode: nothing to compute) or says the render was stopped."""
    if error:
        return PreviewResult(html=_html(server, Preview(error=error)), error=error)
    if offload.workers() and is_small_preview(server.pk, document, options):
        return offload.run_here(preview_result, server=server, document=document, options=options)
    try:
        return offload.run(preview_result, server=server, document=document, options=options)
    except offload.OffloadUnavailable as exc:
        return PreviewResult(html=_html(server, Preview(error=exc.message)), error=exc.message, stopped=True)


def is_small_preview(server_id: int, document: Any, options: PreviewOptions) -> bool:
    """Whether the preview of the sample as sent (no stored conversation, channel, group or memory)
    draws on no more than the SMALL_PREVIEW_ bounds: its work is then known to be small. One query."""
    if options.channel is not None or options.conversation is not None or options.group:
        return False
    if not isinstance(document, dict) or "stm_context" in document or "group" in document:
        return False
    sample = len(json.dumps(document, ensure_ascii=False))
    if sample > SMALL_PREVIEW_BYTES:
        return False
    size = _sizes(server_id, options.preset)
    return (
        size["nodes"] <= SMALL_PREVIEW_NODES
        and size["entries"] <= SMALL_PREVIEW_ENTRIES
        and sample + size["preset_text"] + size["books_text"] + size["card_text"] <= SMALL_PREVIEW_BYTES
        and size["scripts"] <= SMALL_PREVIEW_SCRIPTS
    )


def _sizes(server_id: int, preset: str) -> dict[str, int]:
    """What a preview of the server with the `preset` choice draws on, read in one query: the
    preset's prompts and file, the active lorebooks' entries and files, the active card's file and
    the server's own scripts that are on (0 for what is not there)."""
    server = OuterRef("pk")
    nodes, preset_text = preset_size(server, preset)
    entries, books_text = active_size(server)
    sizes = {
        "nodes": nodes,
        "preset_text": preset_text,
        "entries": entries,
        "books_text": books_text,
        "card_text": active_card_size(server),
        "scripts": enabled_server_scripts(server),
    }
    row = Server.objects.filter(pk=server_id).values(**{k: Coalesce(v, 0) for k, v in sizes.items()}).first()
    return row or dict.fromkeys(sizes, 0)


def _html(server: Server, preview: Preview) -> str:
    return render_to_string(RESULT, {"preview": preview, "server": server})


def _preview(server: Server, document: Any, options: PreviewOptions) -> Preview:
    """The preview, with a chosen sample conversation's history and variables replacing the sample's."""
    if options.channel is not None:
        stored = stored_chat(server.pk, options.channel)
        if stored is None:
            return Preview(error="This server stores no conversation for that channel.")
        return preview_assembly(
            server_id=server.pk,
            document=document,
            options=options,
            history=for_speaker(stored.history, options.speaker.strip() or None if options.group else None),
            variables=stored.variables,
        )
    if options.conversation is None:
        return preview_assembly(server_id=server.pk, document=document, options=options)
    inputs = preview_inputs(server.pk, options.conversation, options.message)
    if inputs is None:
        return Preview(error="This server has no such sample conversation.")
    history, variables = inputs
    return preview_assembly(
        server_id=server.pk, document=document, options=options, history=history, variables=variables
    )
