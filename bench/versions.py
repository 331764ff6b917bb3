"""Preset versions: storage for a 300-node preset with 100 versions, and the time an edit takes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/tavernkeep bench/../.venv/bin/python bench/versions.py

Imports the corpus's largest ~300-node preset (nemoengine-v10, 323 nodes), then makes 99 more
versions: content edits of one node, toggles, moves, a duplicate and a rollback, in a fixed mix.
Prints the bytes versions take (manifests, stored uploads, node blobs) against the 10 MB target,
what storing each version's whole node list compressed would have taken instead, and median
edit times. Uses a throwaway database (TEST_DATABASE_NAME, default bench_tk_versions).
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("TEST_DATABASE_NAME", "bench_tk_versions")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_databases, teardown_databases  # noqa: E402

from bench.corpus_path import CORPUS  # noqa: E402
from core.actors import SYSTEM, Agent  # noqa: E402
from presets import services  # noqa: E402
from presets.editor import services as edit_services  # noqa: E402
from presets.models import PresetNode, PresetNodeBlob, PresetVersion  # noqa: E402
from presets.versions import selectors as versions  # noqa: E402
from servers.services import server_ensure  # noqa: E402

PRESET = CORPUS / "pm" / "nemoengine-v10.json"
VERSIONS = 100
TARGET_BYTES = 10 * 1024 * 1024
SERVER_ID = 9_000_000_002


def stored_bytes(preset_id: int) -> tuple[int, int, int]:
    """Bytes of manifests, stored uploads and node blobs of the preset's versions."""
    manifests = sources = 0
    for manifest, source in PresetVersion.objects.filter(preset_id=preset_id).values_list(
        "manifest", "source"
    ):
        manifests += len(manifest)
        sources += len(source or b"")
    blobs = sum(
        len(data)
        for data in PresetNodeBlob.objects.filter(preset_id=preset_id).values_list("data", flat=True)
    )
    return manifests, sources, blobs


def whole_list_bytes(preset) -> int:
    """What zlib'd JSON of every version's whole node list would take (the alternative we measured)."""
    import json

    total = 0
    for row in versions.versions_of(preset):
        state = versions.version_state(preset, row.number)
        total += len(zlib.compress(json.dumps([n.to_dict() for n in state.nodes]).encode(), 6))
    return total


def main() -> None:
    old = setup_databases(verbosity=0, interactive=False)
    try:
        server = server_ensure(server_id=SERVER_ID, by=SYSTEM)
        preset = services.preset_import(
            server=server, raw=PRESET.read_bytes(), filename=PRESET.name, by=SYSTEM
        ).preset
        rng = random.Random(16)
        timings: dict[str, list[float]] = {"edit": [], "toggle": [], "move": [], "rollback": []}
        while preset.version < VERSIONS:
            ids = list(PresetNode.objects.filter(preset=preset, kind="content").values_list("pk", flat=True))
            node_id = rng.choice(ids)
            step = preset.version % 10
            started = time.perf_counter()
            if step in (0, 1, 2, 3, 4):
                node = PresetNode.objects.get(pk=node_id)
                edit_services.node_update(
                    preset=preset,
                    node_id=node_id,
                    values={"content": node.content + f"\nEdit {preset.version}: keep it short."},
                    base_version=preset.version,
                    by=Agent("bench"),
                )
                kind = "edit"
            elif step in (5, 6):
                node = PresetNode.objects.get(pk=node_id)
                services.node_set_enabled(node=node, enabled=not node.enabled, by=Agent("bench"))
                kind = "toggle"
            elif step in (7, 8):
                edit_services.node_move(
                    preset=preset, node_id=node_id, steps=rng.choice((-3, 2)), base_version=None, by=SYSTEM
                )
                kind = "move"
            else:
                edit_services.preset_rollback(preset=preset, to=preset.version - 4, by=Agent("bench"))
                kind = "rollback"
            timings[kind].append(time.perf_counter() - started)
            preset.refresh_from_db()
        manifests, sources, blobs = stored_bytes(preset.pk)
        total = manifests + sources + blobs
        alternative = whole_list_bytes(preset)
        print(
            f"preset: {PRESET.name}, {preset.node_count} nodes, {preset.version} versions ({connection.vendor})"
        )
        print(
            f"manifests {manifests / 1024:.0f} kB, stored uploads {sources / 1024:.0f} kB, node blobs {blobs / 1024:.0f} kB"
        )
        print(f"total {total / 1024 / 1024:.2f} MB = {total / TARGET_BYTES:.1%} of the 10 MB target")
        print(f"whole node list compressed per version instead: {alternative / 1024 / 1024:.2f} MB")
        for kind, samples in timings.items():
            if samples:
                print(f"{kind}: median {statistics.median(samples) * 1000:.1f} ms over {len(samples)}")
    finally:
        teardown_databases(old, verbosity=0)


if __name__ == "__main__":
    main()
