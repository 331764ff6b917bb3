"""The preview page's time for the five heaviest shared presets: Django's test client and Chromium.

    .venv/bin/python bench/preview.py [--runs N] [--no-browser]

Sets up a throwaway SQLite database (one server, alice its admin, the five largest corpus presets
imported), then for each preset asks for its preview page (the default sample document):
- test client: the server-side time of the whole request in this process, first (cold: compiling
  the preset, counting every text's tokens) and warm (median of N), and the page's size;
- Chromium (Debian's, through Playwright) against the web server on 127.0.0.1: from the navigation's
  timing, the server's time to the first byte (requestStart -> responseStart, warm median) and the
  page ready for the user (DOMContentLoaded).
Target: the heaviest preset's warm server-side time <= 300 ms.
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
TMP = tempfile.TemporaryDirectory(prefix="tk-preview-")
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": f"sqlite:///{TMP.name}/preview.sqlite3",
        "DEBUG": "0",
        "SECURE_HTTPS": "0",
    }
)
os.environ.pop("REDIS_URL", None)

from corpus_path import CORPUS  # noqa: E402
from load_assemble import free_port, start_server, wait_until_up  # noqa: E402

TARGET_MS = 300
HEAVIEST = 5
PASSWORD = "correct horse battery"
SERVER_ID = 777002


def heaviest_presets() -> list[Path]:
    """The corpus presets, most prompt text first (as in the reference file's `chars`)."""
    from engine.st_format import ImportRefused, parse_preset

    sizes = {}
    for path in CORPUS.glob("pm/*.json"):
        try:
            parsed = parse_preset(path.read_bytes(), filename=path.name)
        except ImportRefused:
            continue
        sizes[path] = sum(len(node.content) for node in parsed.nodes)
    return sorted(sizes, key=sizes.__getitem__, reverse=True)


def setup() -> list[tuple[str, int]]:
    """The database, alice and the presets; returns (file name, preset id) for the five imported."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    from django.contrib.auth import get_user_model

    from presets.services import preset_import
    from servers.models import Role, Server
    from servers.services import membership_set

    server = Server.objects.create(id=SERVER_ID, name="Preview bench")
    alice = get_user_model().objects.create_user(username="alice", password=PASSWORD)
    membership_set(server=server, user=alice, role=Role.ADMIN)
    imported = []
    for path in heaviest_presets():
        result = preset_import(server=server, raw=path.read_bytes(), filename=path.name, activate=False)
        imported.append((path.stem, result.preset.pk))
        if len(imported) == HEAVIEST:
            break
    return imported


def page_url(preset_id: int) -> str:
    return f"/servers/{SERVER_ID}/preview/?preset={preset_id}"


def with_test_client(presets: list[tuple[str, int]], runs: int) -> dict[str, tuple[float, float, int]]:
    """Per preset: (first request ms, warm median ms, page bytes)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username="alice"))
    out = {}
    for name, preset_id in presets:
        times = []
        for _ in range(runs + 1):
            start = time.perf_counter()
            response = client.get(page_url(preset_id))
            times.append((time.perf_counter() - start) * 1000)
            if response.status_code != 200:
                sys.exit(f"{name}: the preview answered HTTP {response.status_code}")
        out[name] = (times[0], statistics.median(times[1:]), len(response.content))
    return out


def with_chromium(presets: list[tuple[str, int]], runs: int) -> dict[str, tuple[float, float]]:
    """Per preset: (time to first byte ms, DOMContentLoaded ms), warm medians."""
    import signal

    from playwright.sync_api import sync_playwright

    sys.path.insert(0, str(ROOT / "tests" / "browser"))
    from conftest import CHROMIUM, CHROMIUM_ARGS  # type: ignore[import-not-found]

    port = free_port()
    server = start_server(port, workers=1, env=dict(os.environ))
    out = {}
    try:
        wait_until_up(port, time.monotonic() + 30)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
            page = browser.new_context(base_url=f"http://127.0.0.1:{port}").new_page()
            page.goto("/login/")
            page.fill("input[name=username]", "alice")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_load_state("networkidle")
            for name, preset_id in presets:
                first_byte, ready = [], []
                for _ in range(runs + 1):
                    page.goto(page_url(preset_id), wait_until="load")
                    timing = page.evaluate(
                        "() => { const t = performance.getEntriesByType('navigation')[0];"
                        " return [t.responseStart - t.requestStart, t.domContentLoadedEventEnd - t.startTime]; }"
                    )
                    first_byte.append(timing[0])
                    ready.append(timing[1])
                out[name] = (statistics.median(first_byte[1:]), statistics.median(ready[1:]))
            browser.close()
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-browser", action="store_true")
    args = parser.parse_args()
    presets = setup()
    client = with_test_client(presets, args.runs)
    browser = {} if args.no_browser else with_chromium(presets, args.runs)
    print(f"preview page, default sample, {args.runs} warm runs (median); server-side ms")
    print(
        f"{'preset':24} {'client first':>12} {'client warm':>12} {'page KB':>8} {'chromium TTFB':>14} {'chromium DCL':>13}"
    )
    for name, _ in presets:
        first, warm, size = client[name]
        ttfb, ready = browser.get(name, (float("nan"), float("nan")))
        print(f"{name:24} {first:12.1f} {warm:12.1f} {size / 1024:8.0f} {ttfb:14.1f} {ready:13.1f}")
    heaviest = presets[0][0]
    print(
        f"heaviest ({heaviest}): test client {client[heaviest][1]:.0f} ms warm"
        + (f", Chromium first byte {browser[heaviest][0]:.0f} ms" if browser else "")
        + f"   target <= {TARGET_MS} ms server-side"
    )
    TMP.cleanup()


if __name__ == "__main__":
    main()
