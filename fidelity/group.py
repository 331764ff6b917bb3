"""A group case in SillyTavern (docs/groups.md): its member cards imported through SillyTavern's own
endpoint (each under its card's name, so World Info's character filters name it as our side does),
the group file and one group chat written into the data folder, then the page driven in Debian's
Chromium: the preset selected, the group opened and one generation forced for the speaker."""

from __future__ import annotations

import json
import uuid
from typing import Any

from . import sillytavern
from .cases import Case

GROUP_ID = "1767225600000"
GROUP_NAME = "Fidelity Party"
CHAT_ID = "fidelity-group-chat"
MODES = {"swap": 0, "join_exclude_muted": 1, "join_include_muted": 2}  # SillyTavern's numbers
NARRATOR_AVATAR = "img/five.png"


def prepare(case: Case, import_card: Any) -> None:
    """The members imported (`import_card(path, file_name)`), the group and its chat written."""
    data = sillytavern.DATA
    avatars = {}
    for ref, name in zip(case.group["cards"], case.member_names(), strict=True):
        import_card(case.path(ref), name)
        avatars[name] = f"{name}.png"
    folder = data / "groups"
    folder.mkdir(exist_ok=True)
    for old in folder.glob("*.json"):
        if json.loads(old.read_text(encoding="utf-8")).get("name") == GROUP_NAME:
            old.unlink()
    group = case.group
    record = {
        "id": GROUP_ID,
        "name": GROUP_NAME,
        "members": list(avatars.values()),
        "avatar_url": NARRATOR_AVATAR,
        "allow_self_responses": False,
        "activation_strategy": 0,
        "generation_mode": MODES[group.get("mode", "swap")],
        "disabled_members": [avatars[name] for name in group.get("muted", ())],
        "fav": False,
        "chat_id": CHAT_ID,
        "chats": [CHAT_ID],
        "auto_mode_delay": 5,
        "generation_mode_join_prefix": group.get("join_prefix", ""),
        "generation_mode_join_suffix": group.get("join_suffix", ""),
        "hideMutedSprites": False,
    }
    (folder / f"{GROUP_ID}.json").write_text(
        json.dumps(record, indent=1, ensure_ascii=False), encoding="utf-8"
    )
    _chat(case, avatars)


# SillyTavern's Author's Note positions and roles, by our bucket document's names
NOTE_POSITIONS = {"after_main": 0, "in_chat": 1, "before_main": 2}
NOTE_ROLES = {"system": 0, "user": 1, "assistant": 2}


def authors_note(case: Case) -> dict[str, Any]:
    """The chat metadata SillyTavern keeps its Author's Note in (a character's chat or a group's)."""
    note = case.authors_note
    if not note:
        return {}
    return {
        "note_prompt": note.get("text", ""),
        "note_interval": note.get("interval", 1),
        "note_position": NOTE_POSITIONS[note.get("position", "in_chat")],
        "note_depth": note.get("depth", 4),
        "note_role": NOTE_ROLES[note.get("role", "system")],
    }


def _chat(case: Case, avatars: dict[str, str]) -> None:
    metadata: dict[str, Any] = {"integrity": str(uuid.uuid4()), **authors_note(case)}
    if case.group.get("scenario_override"):
        metadata["scenario"] = case.group["scenario_override"]
    if case.group.get("examples_override"):
        metadata["mes_example"] = case.group["examples_override"]
    lines: list[dict[str, Any]] = [
        {
            "user_name": "unused",
            "character_name": "unused",
            "create_date": "2026-01-01@00h00m00s",
            "chat_metadata": metadata,
        }
    ]
    for n, message in enumerate(case.chat):
        role = message["role"]
        name = message.get("name") or case.user
        line: dict[str, Any] = {
            "name": name,
            "is_user": role == "user",
            "is_system": False,
            "send_date": f"January 1, 2026 12:{n:02d}pm",
            "mes": message["content"],
            "extra": {"type": "narrator"} if role == "system" else {},
        }
        if role == "assistant" and name in avatars:
            line["original_avatar"] = avatars[name]
            line["force_avatar"] = f"/thumbnail?type=avatar&file={avatars[name]}"
        elif role == "system":
            line["force_avatar"] = NARRATOR_AVATAR
        lines.append(line)
    folder = sillytavern.DATA / "group chats"
    folder.mkdir(exist_ok=True)
    (folder / f"{CHAT_ID}.jsonl").write_text(
        "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n", encoding="utf-8"
    )


# Runs in the page, as drive.PAGE does for one character: opens the group and its chat, then
# generates once for the speaker (SillyTavern's `force_chid`, as a bot picks who answers).
PAGE = (
    r"""
async ({preset, context, reply, endpoint, model, group, groupId, chat, speaker, generation}) => {
"""
    + sillytavern.CONNECT
    + r"""  await ctx().executeSlashCommandsWithOptions(`/go ${group}`);
  for (let i = 0; i < 100 && !ctx().groupId; i++) await sleep(50);
  await sleep(200);
  await ctx().openGroupChat(groupId, chat);
  for (let i = 0; i < 100 && ctx().getCurrentChatId() !== chat; i++) await sleep(50);
  await sleep(200);
  const index = ctx().characters.findIndex(c => c.avatar === speaker);
  if (index < 0) throw new Error('the speaker is not loaded');
  await ctx().generate(generation, { force_chid: index });
  return ctx().chat.length;
}
"""
)


def page_arguments(case: Case) -> dict[str, Any]:
    return {
        "group": GROUP_NAME,
        "groupId": GROUP_ID,
        "chat": CHAT_ID,
        "speaker": f"{case.group['speaker']}.png",
        "generation": case.generation,
    }
