"""The preview page's time for the five heaviest shared presets: a fresh process, Django's test
client and Chromium.

    .venv/bin/python bench/preview.py [--runs N] [--no-browser]

Sets up a throwaway SQLite database (one server, alice its admin, the five largest corpus presets
imported), then for each preset asks for its preview page (the default sample document):
- fresh process (cold): a new Python process, as a web worker starts: Django set up, the preset made
  the server's active one, the worker's warm-up (assembly.warmup.warm_process, what config.serve runs
  before it forks; the middleware built, as the WSGI app is when a worker loads it), then the first
  preview request and the median of N more; and the same first request in a fresh process without
  the warm-up;
- test client: the server-side time of the whole request in this process, first (cold: compiling
  the preset, counting every text's tokens) and warm (median of N), and the page's size;
- Chromium (Debian's, through Playwright) against the web server on 127.0.0.1: from the navigation's
  timing, the server's time to the first byte (requestStart -> responseStart, warm median) and the
  page ready for the user (DOMContentLoaded).
Target: the heaviest preset's server-side time <= 300 ms, the first request in a fresh process included.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TMP = tempfile.TemporaryDirectory(prefix="tk-preview-")
CHILD = "--child" in sys.argv
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": sys.argv[sys.argv.index("--child") + 1]
        if CHILD
        else f"sqlite:///{TMP.name}/preview.sqlite3",
        "DEBUG": "0",
        "SECURE_HTTPS": "0",
    }
)
os.environ.pop("REDIS_URL", None)

from bench.corpus_path import CORPUS  # noqa: E402
from bench.load_assemble import free_port, start_server, wait_until_up  # noqa: E402

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

    from core.actors import SYSTEM
    from presets.services import preset_import
    from servers.models import Role, Server
    from servers.services import membership_set

    server = Server.objects.create(id=SERVER_ID, name="Preview bench")
    alice = get_user_model().objects.create_user(username="alice", password=PASSWORD)
    membership_set(server=server, user=alice, role=Role.ADMIN, by=SYSTEM)
    imported = []
    for path in heaviest_presets():
        result = preset_import(
            server=server, raw=path.read_bytes(), filename=path.name, activate=False, by=SYSTEM
        )
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


def fresh_process(
    preset_id: int, runs: int, *, warm: bool, active: int | None = None
) -> tuple[float, float, float]:
    """(warm-up ms, first request ms, median of `runs` more) in a new process (see the docstring);
    `active`: the preset made active, when not the one previewed."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", os.environ["DATABASE_URL"], str(preset_id), str(runs)]
        + ([] if warm else ["--no-warm"])
        + ([] if active is None else ["--active", str(active)]),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    got = json.loads(out.stdout.strip().splitlines()[-1])
    return got["warmup"], got["first"], got["warm"]


def child(preset_id: int, runs: int, *, warm: bool, active: int | None) -> None:
    """The fresh process: make the preset (or `active`) active, warm up as a worker does, time the
    requests."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.test import Client

    from presets.models import Preset

    Preset.objects.filter(server_id=SERVER_ID).update(is_active=False)
    Preset.objects.filter(pk=active or preset_id).update(is_active=True)
    warmup_ms = 0.0
    if warm:
        from assembly.warmup import warm_process

        start = time.perf_counter()
        warm_process()
        warmup_ms = (time.perf_counter() - start) * 1000
    client = Client()
    client.force_login(get_user_model().objects.get(username="alice"))
    client.handler.load_middleware()  # a served worker builds its middleware when it loads the app
    times = []
    for _ in range(runs + 1):
        start = time.perf_counter()
        response = client.get(page_url(preset_id))
        times.append((time.perf_counter() - start) * 1000)
        if response.status_code != 200:
            sys.exit(f"the preview answered HTTP {response.status_code}")
    print(json.dumps({"warmup": warmup_ms, "first": times[0], "warm": statistics.median(times[1:])}))


def with_chromium(presets: list[tuple[str, int]], runs: int) -> dict[str, tuple[float, float]]:
    """Per preset: (time to first byte ms, DOMContentLoaded ms), warm medians."""
    import signal

    from playwright.sync_api import sync_playwright

    from devtools.chromium import CHROMIUM, CHROMIUM_ARGS

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
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    parser.add_argument("--no-warm", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--active", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(int(args.child[1]), int(args.child[2]), warm=not args.no_warm, active=args.active)
        return
    presets = setup()
    fresh = {name: fresh_process(preset_id, args.runs, warm=True) for name, preset_id in presets}
    other = presets[-1][1]  # the lightest of the five, active while another one is previewed
    inactive = {
        name: fresh_process(preset_id, 1, warm=True, active=other)[1]
        for name, preset_id in presets
        if preset_id != other
    }
    unwarmed = {name: fresh_process(preset_id, 1, warm=False)[1] for name, preset_id in presets}
    client = with_test_client(presets, args.runs)
    browser = {} if args.no_browser else with_chromium(presets, args.runs)
    print(f"preview page, default sample, {args.runs} warm runs (median); server-side ms")
    print("fresh process (the preset active): worker warm-up, then the first request and the warm median;")
    print("the first request when another preset is the active one; the first request without warm-up")
    print(
        f"{'preset':24} {'warm-up':>8} {'first':>8} {'warm':>8} {'first, not active':>18} {'first, no warm-up':>18}"
    )
    for name, _ in presets:
        warmup, first, warm = fresh[name]
        print(
            f"{name:24} {warmup:8.0f} {first:8.1f} {warm:8.1f} {inactive.get(name, float('nan')):18.0f} "
            f"{unwarmed[name]:18.0f}"
        )
    print("this process (after importing the presets):")
    print(
        f"{'preset':24} {'client first':>12} {'client warm':>12} {'page KB':>8} {'chromium TTFB':>14} {'chromium DCL':>13}"
    )
    for name, _ in presets:
        first, warm, size = client[name]
        ttfb, ready = browser.get(name, (float("nan"), float("nan")))
        print(f"{name:24} {first:12.1f} {warm:12.1f} {size / 1024:8.0f} {ttfb:14.1f} {ready:13.1f}")
    heaviest = presets[0][0]
    print(
        f"heaviest ({heaviest}): first request in a fresh process {fresh[heaviest][1]:.0f} ms "
        f"(ratio {fresh[heaviest][1] / TARGET_MS:.2f}), {inactive[heaviest]:.0f} ms when not the active preset "
        f"(ratio {inactive[heaviest] / TARGET_MS:.2f}); test client {client[heaviest][1]:.0f} ms warm"
        + (f", Chromium first byte {browser[heaviest][0]:.0f} ms" if browser else "")
        + f"   target <= {TARGET_MS} ms server-side"
    )
    TMP.cleanup()


if __name__ == "__main__":
    main()
