"""One generation in SillyTavern for a case: its data files written, the card imported through
SillyTavern's own endpoint, then the page driven in Debian's Chromium (Playwright, the browser found
at CHROMIUM or /usr/bin/chromium) until the recording endpoint holds the request."""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
import uuid
from http.cookiejar import CookieJar
from pathlib import Path
from typing import Any

from . import group, sillytavern
from .cases import Case
from .endpoint import MODEL, Recorder

PRESET_NAME = "fidelity"
BOOK_NAME = "fidelity-book"
CARD_FILE = "fidelity-card"
CHAT_NAME = "fidelity-chat"
UNLOCKED = 2_000_000  # tokens: nothing is trimmed unless the case sets a context
ENDPOINT_PORT = int(os.environ.get("TAVERNKEEP_ST_ENDPOINT_PORT") or 18742)
LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def capture(case: Case, recorder: Recorder, *, timeout: float = 180) -> list[dict[str, Any]]:
    """The messages SillyTavern sent for the case (role, content and name as it sent them)."""
    recorder.take()
    char = _prepare(case)
    _generate(case, timeout)
    for _ in range(100):
        bodies = recorder.take()
        if bodies:
            return [
                {k: m[k] for k in ("role", "content", "name") if k in m}
                for m in bodies[-1].get("messages", [])
            ]
        time.sleep(0.1)
    raise RuntimeError(f"SillyTavern sent no request for {case.id} ({char}).")


def _prepare(case: Case) -> str:
    data = sillytavern.DATA
    (data / "OpenAI Settings" / f"{PRESET_NAME}.json").write_text(
        json.dumps(case.preset_data(), ensure_ascii=False), encoding="utf-8"
    )
    book = data / "worlds" / f"{BOOK_NAME}.json"
    if case.lorebook:
        shutil.copyfile(case.path(case.lorebook), book)
    else:
        book.unlink(missing_ok=True)
    if case.group:
        group.prepare(case, _import_card)
        _settings(case)
        return case.char_name()
    _import_card(case.path(case.card), CARD_FILE)
    char = case.char_name()
    chats = data / "chats" / CARD_FILE
    shutil.rmtree(chats, ignore_errors=True)
    chats.mkdir(parents=True)
    lines: list[dict[str, Any]] = [
        {
            "user_name": case.user,
            "character_name": char,
            "create_date": "2026-01-01@00h00m00s",
            "chat_metadata": {"integrity": str(uuid.uuid4()), **group.authors_note(case)},
        }
    ]
    for n, message in enumerate(case.chat):
        mine = message["role"] == "user"
        lines.append(
            {
                "name": message.get("name") or (case.user if mine else char),
                "is_user": mine,
                "is_system": False,
                "send_date": f"January 1, 2026 12:{n:02d}pm",
                "mes": message["content"],
                "extra": {},
            }
        )
    (chats / f"{CHAT_NAME}.jsonl").write_text(
        "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8"
    )
    _settings(case)
    return char


def _import_card(path: Path, file_name: str) -> None:
    """The card at `path` imported through SillyTavern's own endpoint as `<file_name>.png`."""
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    with opener.open(sillytavern.url() + "/csrf-token", timeout=30) as response:
        token = json.load(response)["token"]
    boundary = "fidelity" + uuid.uuid4().hex
    body = b"".join(
        [
            f'--{boundary}\r\nContent-Disposition: form-data; name="file_type"\r\n\r\njson\r\n'.encode(),
            f'--{boundary}\r\nContent-Disposition: form-data; name="preserved_name"\r\n\r\n{file_name}\r\n'.encode(),
            f'--{boundary}\r\nContent-Disposition: form-data; name="avatar"; filename="card.json"\r\n'
            "Content-Type: application/json\r\n\r\n".encode(),
            path.read_bytes(),
            f"\r\n--{boundary}--\r\n".encode(),
        ]
    )
    request = urllib.request.Request(
        sillytavern.url() + "/api/characters/import",
        data=body,
        method="POST",
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "X-CSRF-Token": token},
    )
    with opener.open(request, timeout=60) as response:
        answer = json.load(response)
    if answer.get("file_name") != file_name:
        raise RuntimeError(f"SillyTavern did not import the card {path.name}: {answer}")


def _settings(case: Case) -> None:
    path = sillytavern.DATA / "settings.json"
    settings = json.loads(path.read_text(encoding="utf-8"))
    settings.update({"firstRun": False, "username": case.user, "main_api": "openai"})
    settings.update({"active_character": None, "active_group": None})
    settings.setdefault("oai_settings", {}).update(
        {
            "chat_completion_source": "custom",
            "custom_url": f"http://127.0.0.1:{ENDPOINT_PORT}/v1",
            "custom_model": MODEL,
            "bind_preset_to_connection": False,
            "stream_openai": False,
            # another preset selected at load, so selecting the case's loads its file afresh
            "preset_settings_openai": "Default",
        }
    )
    power = settings.setdefault("power_user", {})
    power.update({"auto_connect": False, "auto_load_chat": False, "pin_examples": False})
    power.update({"persona_description": case.persona, "persona_description_position": 0})
    avatar = power.get("user_avatar") or "user-default.png"
    power.setdefault("personas", {})[avatar] = case.user
    power.setdefault("persona_descriptions", {})[avatar] = {"description": case.persona, "position": 0}
    extensions = settings.setdefault("extension_settings", {})
    extensions.setdefault("preset_allowed_regex", {})["openai"] = [PRESET_NAME]
    # SillyTavern keeps global variables in its settings: each case starts without the last one's
    extensions["variables"] = {"global": {}}
    wi = case.wi
    settings["world_info_settings"] = {
        **settings.get("world_info_settings", {}),
        "world_info": {"globalSelect": [BOOK_NAME] if case.lorebook else []},
        "world_info_depth": wi["depth"],
        "world_info_budget": wi["budget"],
        "world_info_budget_cap": wi["budget_cap"],
        "world_info_recursive": wi["recursive"],
        "world_info_match_whole_words": wi["whole_words"],
        "world_info_include_names": wi["include_names"],
        "world_info_case_sensitive": wi["case_sensitive"],
        "world_info_max_recursion_steps": wi["max_recursion"],
        "world_info_min_activations": wi["min_activations"],
        "world_info_min_activations_depth_max": wi["min_activations_depth_max"],
        "world_info_character_strategy": 1,
        "world_info_use_group_scoring": wi["group_scoring"],
    }
    path.write_text(json.dumps(settings, indent=4, ensure_ascii=False), encoding="utf-8")


# Runs in the page: selects the preset, sets the context, connects to the endpoint, opens the chat
# and generates once. SillyTavern.getContext() is its public scripting face.
PAGE = (
    r"""
async ({preset, context, reply, endpoint, model, card, chat, generation, quiet}) => {
"""
    + sillytavern.CONNECT
    + r"""  const index = ctx().characters.findIndex(c => c.avatar === card + '.png');
  if (index < 0) throw new Error('the card is not loaded');
  await ctx().selectCharacterById(index);
  await sleep(200);
  await ctx().openCharacterChat(chat);
  await sleep(200);
  // a dry run SillyTavern makes on its own (token counts) may have set chat variables: a fresh chat has none
  if (ctx().chatMetadata) ctx().chatMetadata.variables = {};
  if (generation === 'quiet') {
    await ctx().generate('quiet', { quiet_prompt: quiet });
  } else {
    await ctx().generate(generation);
  }
  return ctx().chatCompletionSettings.openai_max_context;
}
"""
)


def _generate(case: Case, timeout: float) -> None:
    from playwright.sync_api import sync_playwright  # a dev dependency, only the live harness needs it

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=os.environ.get("CHROMIUM", "/usr/bin/chromium"),
            headless=True,
            args=["--disable-background-networking", "--disable-component-update", "--no-first-run"],
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.route("**/*", _loopback_only)
            page.set_default_timeout(timeout * 1000)
            page.goto(sillytavern.url() + "/", wait_until="domcontentloaded")
            page.wait_for_function("() => window.SillyTavern && window.SillyTavern.getContext")
            common = {
                "preset": PRESET_NAME,
                "context": case.context or UNLOCKED,
                "reply": case.reply if case.context else 300,
                "endpoint": f"http://127.0.0.1:{ENDPOINT_PORT}/v1",
                "model": MODEL,
            }
            if case.group:
                page.evaluate(group.PAGE, {**common, **group.page_arguments(case)})
                return
            page.evaluate(
                PAGE,
                {
                    **common,
                    "card": CARD_FILE,
                    "chat": CHAT_NAME,
                    "generation": case.generation,
                    "quiet": case.quiet_prompt,
                },
            )
        finally:
            browser.close()


def _loopback_only(route: Any) -> None:
    request_url = route.request.url
    host = request_url.split("/")[2].rsplit(":", 1)[0] if "://" in request_url else ""
    if host in LOOPBACK or request_url.startswith(("data:", "blob:")):
        route.continue_()
    else:
        route.abort()
