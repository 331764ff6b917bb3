"""Warming a web process before it serves: the token tables, the active presets (compiled), their
servers' sampling choices, regex scripts and World Info, and what the preview page needs (its
template compiled, one preview of each warmed server's active preset).

Without it the first assemble request of a fresh process pays for loading the encoding tables
(about 1.5 s) and compiling its server's preset (up to 0.1 s per large preset). The web server
(config/serve.py) calls `warm_process` once in its parent process, before it forks the workers, so
every worker, at start or as a replacement, begins with the tables and the compiled presets in
memory. It is never called by migrations or management commands. Failures are logged and never
stop the server: a cold cache is only slower.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("tavernkeep.warmup")


def warm_process(*, presets: int | None = None, close_connections: bool = True) -> None:
    """Load the default encoding's tables, compile the most recently changed active presets (at most
    `presets`, default: as many as a process keeps), assemble and preview the default sample with each
    once, and compile those servers' other presets for the preview (as many as it keeps).

    `close_connections` closes the database connections it opened (before the web server forks)."""
    # Imported here: importing this module must not need Django to be set up.
    from django.conf import settings
    from django.db import connections
    from django.template.loader import get_template
    from django.urls import resolve, reverse

    from engine import assemble, load_tables, parse_buckets
    from presets import cache as preset_cache
    from presets import selectors as preset_selectors
    from presets.sampling import cache as sampling_cache
    from regex_scripts import cache as regex_cache

    from .preview import PreviewOptions, preview_assembly
    from .selectors import default_document

    start = time.perf_counter()
    limit = settings.ST_PRESET_LOCAL_ENTRIES if presets is None else presets
    warmed = 0
    try:
        resolve(reverse("assembly:api-assemble", args=[1]))  # imports every view module (about 0.4 s)
        load_tables()
        get_template("assembly/preview.html")  # compiled once, its tag libraries imported
        doc = parse_buckets(default_document())
        assemble(doc)
        server_ids = list(preset_selectors.servers_with_an_active_preset(limit))
        for server_id in server_ids:
            preset = preset_cache.get_active_preset(server_id)
            sampling_cache.get_sampling_choice(server_id)
            regex_cache.server_regex(server_id)
            if preset is not None:
                assemble(doc, preset=preset, server_id=server_id)
                # the preview: the server's World Info and card, the native side, the rows
                preview_assembly(server_id=server_id, document=default_document(), options=PreviewOptions())
                warmed += 1
        # the presets those servers preview besides their active one, as many as the preview keeps
        for preset_id in preset_selectors.inactive_preset_ids(server_ids, limit=preset_cache.PREVIEW_ENTRIES):
            preset_cache.get_preset(preset_id)
    except Exception:  # a warm-up must never keep the server from starting
        log.warning("warm-up stopped early; requests will warm the caches instead", exc_info=True)
    finally:
        if close_connections:
            connections.close_all()  # a forked worker must not share the master's connections
    log.info(
        "warmed the token tables and %d active presets in %.0f ms",
        warmed,
        (time.perf_counter() - start) * 1000,
    )


def warm_child() -> None:
    """An offload child's warm-up (core/offload.py, `OFFLOAD_WARM_UP`): what every preview, preset
    page and regex test needs whatever its server (the token tables, the views imported, the
    preview's template compiled), no server's presets: a child serves any server."""
    warm_process(presets=0)
