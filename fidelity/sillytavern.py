"""SillyTavern 1.18 for the harness: installed from the npm registry into a cache directory outside
the repository, configured for 127.0.0.1 only (no accounts, no downloads, no browser), started and
stopped by its process id."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

VERSION = "1.18.0"
HOME = Path(
    os.environ.get("TAVERNKEEP_ST_HOME") or Path.home() / ".cache" / "tavernkeep" / f"sillytavern-{VERSION}"
)
APP = HOME / "app"
DATA = APP / "data" / "default-user"
PIDFILE = HOME / "server.pid"
LOG = HOME / "server.log"
PORT = int(os.environ.get("TAVERNKEEP_ST_PORT") or 18741)

# config.yaml settings: (section or "", key) -> value written as YAML
CONFIG = {
    ("", "listen"): "false",
    ("listenAddress", "ipv4"): "127.0.0.1",
    ("listenAddress", "ipv6"): "'[::1]'",
    ("", "port"): str(PORT),
    ("browserLaunch", "enabled"): "false",
    ("", "whitelistMode"): "false",
    ("", "basicAuthMode"): "false",
    ("", "enableUserAccounts"): "false",
    ("logging", "enableAccessLog"): "false",
    ("extensions", "autoUpdate"): "false",
    ("models", "autoDownload"): "false",
    ("", "enableDownloadableTokenizers"): "false",
}


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def url() -> str:
    return f"http://127.0.0.1:{PORT}"


def installed() -> bool:
    package = APP / "package.json"
    return package.is_file() and json.loads(package.read_text())["version"] == VERSION


def install() -> None:
    """`npm pack sillytavern@VERSION`, unpacked into HOME/app, its production dependencies installed."""
    if installed():
        return
    HOME.mkdir(parents=True, exist_ok=True)
    say(f"Installing SillyTavern {VERSION} from the npm registry into {HOME} …")
    with tempfile.TemporaryDirectory(dir=HOME) as scratch:
        subprocess.run(["npm", "pack", f"sillytavern@{VERSION}", "--silent"], cwd=scratch, check=True)
        archive = next(Path(scratch).glob("sillytavern-*.tgz"))
        shutil.rmtree(APP, ignore_errors=True)
        with tarfile.open(archive) as tar:
            tar.extractall(scratch, filter="data")
        shutil.move(str(Path(scratch) / "package"), APP)
    subprocess.run(
        ["npm", "install", "--omit=dev", "--no-audit", "--no-fund", "--silent"], cwd=APP, check=True
    )
    configure()


def configure() -> None:
    """APP/config.yaml: SillyTavern's default configuration with the CONFIG keys changed."""
    lines = (APP / "default" / "config.yaml").read_text(encoding="utf-8").splitlines()
    parents = ["", ""]  # the keys that open the current level-0 and level-1 sections
    done = set()
    for index, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        level = (len(line) - len(line.lstrip())) // 2
        key = line.strip().split(":", 1)[0]
        target = ("", key) if level == 0 else (parents[level - 1] if level <= 2 else "", key)
        if level < 2:
            parents[level] = key
        if target in CONFIG and target not in done:
            lines[index] = "  " * level + f"{key}: {CONFIG[target]}"
            done.add(target)
    missing = set(CONFIG) - done
    if missing:
        raise SystemExit(f"SillyTavern's config.yaml has changed: {sorted(missing)} not found.")
    (APP / "config.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def running() -> bool:
    try:
        os.kill(int(PIDFILE.read_text()), 0)
    except (OSError, ValueError):
        return False
    return True


def start(timeout: float = 600) -> None:
    """Start the server (the first start builds its front end: a minute or two) and wait for it."""
    if not running():
        configure()  # written afresh each start: the ports and switches are the harness's
        with LOG.open("wb") as log:
            process = subprocess.Popen(
                ["node", "server.js"], cwd=APP, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        PIDFILE.write_text(str(process.pid))
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url() + "/csrf-token", timeout=5):
                return
        except OSError:
            if not running():
                raise SystemExit(f"SillyTavern stopped while starting; see {LOG}") from None
            time.sleep(2)
    raise SystemExit(f"SillyTavern did not answer within {timeout:.0f} s; see {LOG}")


def stop() -> None:
    if running():
        os.killpg(int(PIDFILE.read_text()), signal.SIGTERM)
    PIDFILE.unlink(missing_ok=True)


# The part of a page script both drives share: wait for SillyTavern, select the preset, unlock and
# set the context and reply sizes, and connect the Custom source to the recording endpoint.
CONNECT = r"""  const ctx = () => SillyTavern.getContext();
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  await new Promise(r => ctx().eventSource.once(ctx().eventTypes.APP_READY, r));
  await ctx().executeSlashCommandsWithOptions(`/preset ${preset}`);
  for (let i = 0; i < 100 && ctx().chatCompletionSettings.preset_settings_openai !== preset; i++) await sleep(50);
  await sleep(200);
  $('#oai_max_context_unlocked').prop('checked', true).trigger('input');
  await sleep(50);
  $('#openai_max_context').val(context).trigger('input');
  $('#openai_max_tokens').val(reply).trigger('input');
  await sleep(50);
  $('#chat_completion_source').val('custom').trigger('change');
  $('#custom_api_url_text').val(endpoint).trigger('input');
  $('#custom_model_id').val(model).trigger('input');
  $('#api_button_openai').trigger('click');
  for (let i = 0; i < 200 && ctx().onlineStatus === 'no_connection'; i++) await sleep(50);
"""
