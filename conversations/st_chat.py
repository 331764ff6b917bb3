"""Read a SillyTavern chat file (`.jsonl`) into messages with swipes, so a long chat can be replayed.

Pure: text in, frozen dataclasses out. The first line of an ST chat is its header (user and
character names, chat metadata); every other line is one message: `name`, `is_user`, `is_system`,
`send_date`, `mes`, optional `swipes` with `swipe_id`, and — in chats saved by Luker — recorded
variable ops in `extra.var_ops` (per swipe in `swipe_info[i].extra.var_ops`). System lines
(narrator notes, hidden messages) are skipped and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from core.errors import UserError
from engine.macros import Op, OpError, op_from_dict

MAX_CHAT_BYTES = 8 * 1024 * 1024
_DATE_FORMATS = ("%B %d, %Y %I:%M%p", "%B %d, %Y %I:%M %p", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d@%Hh%Mm%Ss")


class ChatFileError(UserError, ValueError):
    """A chat file that cannot be read; the message is one sentence for the user."""


@dataclass(frozen=True, slots=True)
class ChatSwipe:
    text: str
    ops: tuple[Op, ...] = ()  # ops the file already recorded (Luker); extraction adds the text's own


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: str  # "user" or "assistant"
    speaker: str
    timestamp: datetime | None
    swipes: tuple[ChatSwipe, ...]
    current: int  # index into swipes


@dataclass(frozen=True, slots=True)
class ChatFile:
    messages: tuple[ChatMessage, ...]
    warnings: tuple[str, ...] = ()


def read_st_chat(data: bytes | str, *, max_messages: int) -> ChatFile:
    """Parse an ST chat file; raise ChatFileError (one sentence) when it is not one."""
    if isinstance(data, bytes):
        if len(data) > MAX_CHAT_BYTES:
            raise ChatFileError(f"The chat file is larger than {MAX_CHAT_BYTES // (1024 * 1024)} MiB.")
        text = data.decode("utf-8-sig", errors="replace")
    else:
        text = data
    messages: list[ChatMessage] = []
    warnings: list[str] = []
    skipped = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as error:
            raise ChatFileError(f"Line {number} of the chat file is not JSON ({error.msg}).") from None
        if not isinstance(entry, dict):
            raise ChatFileError(f"Line {number} of the chat file is not a JSON object.")
        if "mes" not in entry:
            continue  # the header line (user_name, character_name, chat_metadata)
        if entry.get("is_system"):
            skipped += 1
            continue
        if len(messages) >= max_messages:
            raise ChatFileError(f"The chat has more than {max_messages} messages.")
        messages.append(_message(entry, number, warnings))
    if not messages:
        raise ChatFileError("The file holds no chat messages (is it a SillyTavern .jsonl chat?).")
    if skipped:
        warnings.append(f"{skipped} system message{'s' if skipped != 1 else ''} skipped.")
    return ChatFile(tuple(messages), tuple(warnings))


def _message(entry: dict[str, Any], number: int, warnings: list[str]) -> ChatMessage:
    mes = _string(entry.get("mes"))
    raw_swipes = entry.get("swipes")
    texts = [_string(item) for item in raw_swipes] if isinstance(raw_swipes, list) and raw_swipes else [mes]
    current = entry.get("swipe_id", 0)
    if not isinstance(current, int) or not 0 <= current < len(texts):
        current = texts.index(mes) if mes in texts else 0
    raw_infos = entry.get("swipe_info")
    infos = raw_infos if isinstance(raw_infos, list) else []
    swipes = []
    for index, swipe_text in enumerate(texts):
        info = infos[index] if index < len(infos) and isinstance(infos[index], dict) else {}
        extra = info.get("extra") if isinstance(info.get("extra"), dict) else None
        if extra is None and index == current and isinstance(entry.get("extra"), dict):
            extra = entry["extra"]
        swipes.append(ChatSwipe(swipe_text, _recorded_ops(extra, number, warnings)))
    return ChatMessage(
        role="user" if entry.get("is_user") else "assistant",
        speaker=_string(entry.get("name"))[:100],
        timestamp=_date(entry.get("send_date")),
        swipes=tuple(swipes),
        current=current,
    )


def _recorded_ops(extra: dict[str, Any] | None, number: int, warnings: list[str]) -> tuple[Op, ...]:
    items = extra.get("var_ops") if extra else None
    if not isinstance(items, list):
        return ()
    ops = []
    for item in items:
        try:
            ops.append(op_from_dict(item))
        except OpError as error:
            warnings.append(f"Line {number}: a recorded op was skipped ({error})")
    return tuple(ops)


def _string(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


def _date(value: Any) -> datetime | None:
    """ST's send_date: epoch milliseconds, ISO 8601, or its human format ("November 21, 2026 8:07pm")."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return None
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        moment = None
        for pattern in _DATE_FORMATS:
            try:
                moment = datetime.strptime(text, pattern)
                break
            except ValueError:
                continue
    if moment is None:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
