"""The preset editor's server time on a 300-node preset (nemoengine-v10 from the shared corpus):
saving one node, and opening the preset's page.

    .venv/bin/python bench/editor_save.py [--runs N]

Sets up a throwaway SQLite database (or, when DATABASE_URL names a PostgreSQL server, what
production runs, a throwaway database on it: TEST_DATABASE_NAME, default bench_tk_editor, created and
dropped by the bench), alice its admin, nemoengine-v10 imported as the active preset. Then, with Django's test client, N saves of one
node (its text changed each time, as the editor's form posts it; the answer is the redirect back to
the preset), N openings of the preset's page after a save and of the node's edit form, wall-clock,
medians; and the save's service call alone (presets.editor.services.node_update). Target: a save <= 300 ms server time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TMP = tempfile.TemporaryDirectory(prefix="tk-editor-")
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": os.environ["DATABASE_URL"]
        if os.environ.get("DATABASE_URL", "").startswith("postgres")
        else f"sqlite:///{TMP.name}/editor.sqlite3",
        "DEBUG": "0",
        "SECURE_HTTPS": "0",
    }
)
os.environ.pop("REDIS_URL", None)
os.environ.setdefault("TEST_DATABASE_NAME", "bench_tk_editor")

from bench.corpus_path import CORPUS  # noqa: E402

TARGET_MS = 300
SERVER_ID = 777027
PRESET = "nemoengine-v10"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import setup_databases, teardown_databases
    from django.urls import reverse

    from core.actors import SYSTEM
    from engine.tokens import load_tables
    from presets.editor.services import node_update
    from presets.services import preset_import
    from servers.models import Role, Server
    from servers.services import membership_set

    throwaway = None
    if connection.vendor == "postgresql":
        throwaway = setup_databases(verbosity=0, interactive=False)
    else:
        call_command("migrate", verbosity=0)
    server = Server.objects.create(id=SERVER_ID, name="Editor bench")
    alice = get_user_model().objects.filter(username="editor-bench-alice").first()
    alice = alice or get_user_model().objects.create_user(username="editor-bench-alice", password="not used")
    membership_set(server=server, user=alice, role=Role.ADMIN, by=SYSTEM)
    try:
        path = CORPUS / "pm" / f"{PRESET}.json"
        preset = preset_import(server=server, raw=path.read_bytes(), filename=path.name, by=SYSTEM).preset
        nodes = list(preset.nodes.order_by("position"))
        node = next(n for n in nodes[len(nodes) // 2 :] if n.kind != "marker" and n.content)
        load_tables()  # a served worker loads them at start (assembly.warmup)
        client = Client()
        client.force_login(alice)
        client.handler.load_middleware()
        edit_url = reverse("presets:node-edit", args=[SERVER_ID, preset.pk, node.pk])
        page_url = reverse("presets:detail", args=[SERVER_ID, preset.pk])
        client.get(page_url)  # the page the admin saves from
        saves, opens, services, forms = [], [], [], []
        for run in range(args.runs):
            preset.refresh_from_db()
            form = {
                "name": node.name,
                "content": f"{node.content}\n(edit {run})",
                "role": node.role,
                "injection_position": str(node.injection_position),
                "injection_depth": str(node.injection_depth),
                "injection_order": str(node.injection_order),
                "version": str(preset.version),
            }
            start = time.perf_counter()
            response = client.post(edit_url, form)
            saves.append((time.perf_counter() - start) * 1000)
            if response.status_code != 302:
                sys.exit(f"the save answered HTTP {response.status_code}")
            start = time.perf_counter()
            client.get(page_url)
            opens.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            client.get(edit_url)
            forms.append((time.perf_counter() - start) * 1000)
            preset.refresh_from_db()
            start = time.perf_counter()
            node_update(
                preset=preset,
                node_id=node.pk,
                values={"content": f"{node.content}\n(service {run})"},
                base_version=preset.version,
                by=alice,
            )
            services.append((time.perf_counter() - start) * 1000)
        save = statistics.median(saves)
        print(
            f"editor of {PRESET} ({len(nodes)} nodes, {connection.vendor}), {args.runs} runs, medians, wall-clock ms"
        )
        print(f"  save one node (POST, answered with the redirect): {save:.0f} ms (first {saves[0]:.0f})")
        print(
            f"  the save's service call alone (edit_services.node_update): {statistics.median(services):.0f} ms"
        )
        print(f"  open the preset's page after a save: {statistics.median(opens):.0f} ms")
        print(f"  open a node's edit form: {statistics.median(forms):.0f} ms")
        print(f"  target: a save <= {TARGET_MS} ms server time, ratio {save / TARGET_MS:.2f}")
    finally:
        if throwaway is not None:
            connection.close()
            teardown_databases(throwaway, verbosity=0)
        TMP.cleanup()


if __name__ == "__main__":
    main()
