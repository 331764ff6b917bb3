"""Retake the README's screenshots: the preview, the upload summary, the memory review, the
presets list, the preset editor, a lorebook's entries and the audit log, at 1366 px and 390 px, into
docs/img/.

    .venv/bin/python docs/screenshots.py
    .venv/bin/python docs/screenshots.py --width 390 --suffix=-before   # e.g. docs/img/editor-390-before.png

Builds a throwaway demo (SQLite in a temporary folder, `demo_data`, nemoengine-v10 from the shared
corpus as the active preset), serves it as `make run` does (config.serve, DEBUG=0) on a free port, and
drives Debian's Chromium through Playwright as alice.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "img"
BIN = Path(sys.executable).parent
CORPUS = Path(os.environ.get("TAVERNKEEP_CORPUS") or ROOT.parent / "shared" / "corpus")
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
WIDTHS = {1366: 900, 390: 844}  # viewport width: height
FIND_REVIEW = (
    "from memory.models import StmEntry; e = StmEntry.objects.filter(server_id=1001).first(); "
    "print(f'{e.channel_id} {e.user_id}')"
)


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until_up(url: str) -> None:
    for _ in range(100):
        try:
            urllib.request.urlopen(url, timeout=1)
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"The demo server did not answer at {url}.")


def shoot(base: str, review: str, *, widths: dict[int, int], suffix: str, only: set[str]) -> list[Path]:
    from playwright.sync_api import sync_playwright

    pages = {
        "preview": "/servers/1001/preview/",
        "upload-summary": "/servers/1001/presets/{nemo}/?imported=1",
        "memory-review": f"/servers/1001/memory/?{review}",
        "presets": "/servers/1001/presets/",
        "editor": "/servers/1001/presets/{nemo}/",
        "lorebook-entries": "{lorebook}",
        "audit-log": "/servers/1001/audit/",
    }
    if only:
        pages = {name: path for name, path in pages.items() if name in only}
    taken = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless=new", "--no-sandbox"])
        for width, height in widths.items():
            page = browser.new_page(base_url=base, viewport={"width": width, "height": height})
            page.goto("/login/")
            page.fill("input[name=username]", "alice")
            page.fill("input[name=password]", "tavern-demo")
            page.click("button[type=submit]")
            page.wait_for_load_state("networkidle")
            page.goto("/servers/1001/presets/")
            nemo_href = page.get_by_role("link", name="nemoengine-v10").first.get_attribute("href")
            assert nemo_href is not None, "the demo's presets list links nemoengine-v10"
            nemo = nemo_href.rstrip("/").split("/")[-1]
            page.goto("/servers/1001/lorebooks/")
            lorebook = page.get_by_role("link", name="Eldoria").first.get_attribute("href")
            for name, path in pages.items():
                page.goto(path.format(nemo=nemo, lorebook=lorebook))
                page.wait_for_load_state("networkidle")
                if name == "upload-summary":
                    page.locator("#summary").scroll_into_view_if_needed()
                if name == "preview":
                    page.locator("#result").scroll_into_view_if_needed()
                if name in ("editor", "lorebook-entries"):
                    page.evaluate("() => document.querySelector('#nodes, #entries').scrollIntoView()")
                target = OUT / f"{name}-{width}{suffix}.png"
                page.screenshot(path=str(target))
                taken.append(target)
            page.close()
        browser.close()
    return taken


def main() -> None:
    parser = argparse.ArgumentParser(description="Retake the README's screenshots into docs/img/.")
    parser.add_argument("--width", type=int, choices=sorted(WIDTHS), help="Only this viewport width.")
    parser.add_argument("--suffix", default="", help="Appended to each file name, e.g. -before.")
    parser.add_argument("--only", default="", help="Comma-separated page names, e.g. presets,editor.")
    args = parser.parse_args()
    widths = {args.width: WIDTHS[args.width]} if args.width else WIDTHS
    only = {name for name in args.only.split(",") if name}
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tk-shots-") as tmp:
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{tmp}/demo.sqlite3",
            "DEBUG": "0",
            "SECURE_HTTPS": "0",
        }
        env.pop("REDIS_URL", None)
        manage(env, "migrate", "--noinput", "-v0")
        manage(env, "demo_data")
        preset = CORPUS / "pm" / "nemoengine-v10.json"
        manage(env, "preset", "import", str(preset), "--server", "1001", "--json")
        lorebook = CORPUS / "worldinfo" / "st-Eldoria-newer.json"
        manage(env, "lorebook", "import", str(lorebook), "--server", "1001", "--name", "Eldoria", "--json")
        channel, user = manage(env, "shell", "-c", FIND_REVIEW).split()[-2:]
        # #cellar gets its own preset, so the audit log shows a channel named as the picker names it.
        manage(
            env,
            "preset",
            "channel",
            "--server",
            "1001",
            "--channel",
            "900000000000000005",
            "--preset",
            "nemoengine-v10",
            "--json",
        )
        port = free_port()
        server = subprocess.Popen(
            [
                str(BIN / "python"),
                "-m",
                "config.serve",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                "1",
            ],
            cwd=ROOT,
            env=env,
            start_new_session=True,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            wait_until_up(base + "/login/")
            review = f"channel={channel}&user={user}"
            for path in shoot(base, review, widths=widths, suffix=args.suffix, only=only):
                print(path.relative_to(ROOT))
        finally:
            server.terminate()
            server.wait(timeout=10)


if __name__ == "__main__":
    main()
