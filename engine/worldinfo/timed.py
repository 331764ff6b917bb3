"""Timed effects (docs/worldinfo.md#timed-effects): sticky, cooldown and delay, counted in chat messages.

The state is a JSON object keyed by entry (book, uid, content hash) that the caller passes in and
gets back. A record is `{"book", "uid", "kind": "sticky"|"cooldown", "start", "end", "cooldown"}`;
sticky is active while `start < chat_length < end`, cooldown blocks while `chat_length < end`. A
record whose `start` is not below the current chat length (a swipe, a deleted message) is dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.worldinfo.compiled import CompiledEntry


@dataclass(frozen=True, slots=True)
class TimedStatus:
    """What the state says about one entry at this chat length."""

    sticky: bool = False
    cooldown_until: int | None = None  # the chat length from which it may activate again


class TimedState:
    """The records in force for one assembly; `to_json()` is what the next call passes back."""

    def __init__(self, raw: Any, chat_length: int) -> None:
        self.chat_length = chat_length
        self.records: dict[str, dict[str, Any]] = {}
        if not isinstance(raw, dict):
            return
        for key, record in raw.items():
            clean = _clean(record)
            if clean is None or clean["start"] >= chat_length:
                continue
            if clean["kind"] == "sticky" and chat_length >= clean["end"]:
                # the sticky span is over: its cooldown (if any) starts where it ended
                if clean.get("cooldown"):
                    self.records[key] = {**clean, "kind": "cooldown", "end": clean["end"] + clean["cooldown"]}
                    if chat_length >= self.records[key]["end"]:
                        del self.records[key]
                continue
            if clean["kind"] == "cooldown" and chat_length >= clean["end"]:
                continue
            self.records[key] = clean

    def status(self, entry: CompiledEntry) -> TimedStatus:
        """Whether `entry` is sticky now, or on cooldown until some chat length."""
        record = self.records.get(entry.timer_key)
        if record is None:
            return TimedStatus()
        if record["kind"] == "sticky":
            return TimedStatus(sticky=True)
        return TimedStatus(cooldown_until=record["end"])

    def activated(self, entry: CompiledEntry) -> None:
        """Start the entry's sticky or cooldown timer (unless one is already running)."""
        if entry.timer_key in self.records:
            return
        e = entry.entry
        start = self.chat_length
        base = {"book": entry.book, "uid": e.uid, "start": start}
        if e.sticky:
            self.records[entry.timer_key] = {
                **base,
                "kind": "sticky",
                "end": start + e.sticky,
                "cooldown": e.cooldown or 0,
            }
        elif e.cooldown:
            self.records[entry.timer_key] = {
                **base,
                "kind": "cooldown",
                "end": start + e.cooldown,
                "cooldown": 0,
            }

    def to_json(self) -> dict[str, Any]:
        """The state to store (or return) for the next assembly in this channel."""
        return {key: dict(record) for key, record in sorted(self.records.items())}


def _clean(record: Any) -> dict[str, Any] | None:
    if not isinstance(record, dict) or record.get("kind") not in ("sticky", "cooldown"):
        return None
    numbers = {}
    for name in ("start", "end", "cooldown"):
        value = record.get(name, 0)
        if isinstance(value, bool) or not isinstance(value, int):
            return None
        numbers[name] = value
    return {
        "book": str(record.get("book", "")),
        "uid": record.get("uid") if isinstance(record.get("uid"), int) else 0,
        "kind": record["kind"],
        **numbers,
    }
