"""What one entry's keys are tested against (SPEC §7.3), and where a key was found (§7.8)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.worldinfo.compiled import CompiledEntry, Key, resolve_key
from engine.worldinfo.keys import Haystack, key_matches
from engine.worldinfo.settings import WorldInfoSettings

_WORDS = re.compile(r"[A-Za-z0-9_]+")

# entry flag → (request field, how the explanation names it)
FLAG_TEXTS = (
    ("match_character_description", "persona_prompt", "persona text"),
    ("match_character_personality", "personality", "personality"),
    ("match_scenario", "scenario", "scenario"),
    ("match_character_depth_prompt", "depth_prompt", "depth prompt"),
    ("match_creator_notes", "creator_notes", "creator notes"),
)


@dataclass(frozen=True, slots=True)
class ScanMessage:
    """One history message as scanned: the speaker's name, its text, its 1-based number in the history."""

    name: str
    text: str
    number: int


@dataclass(frozen=True, slots=True)
class ScanTexts:
    """The texts an assembly scans: history (oldest first) and the server texts the `match*` flags add."""

    history: tuple[ScanMessage, ...] = ()
    persona_prompt: str = ""
    personality: str = ""
    scenario: str = ""
    depth_prompt: str = ""
    creator_notes: str = ""


@dataclass(slots=True)
class Text:
    """A haystack with its word set, so a one-word whole-word key is a set lookup."""

    hay: Haystack
    words: frozenset[str]
    words_lowered: frozenset[str]

    @classmethod
    def of(cls, raw: str) -> Text:
        lowered = raw.lower()
        return cls(Haystack(raw, lowered), frozenset(_WORDS.findall(raw)), frozenset(_WORDS.findall(lowered)))


@dataclass(slots=True)
class Scanner:
    """Builds (and reuses within one pass) the scan text of each entry, and tests keys against it."""

    texts: ScanTexts
    settings: WorldInfoSettings
    names: dict[str, str]
    skew: int = 0
    recursion: list[str] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)
    _cache: dict[tuple, Text] = field(default_factory=dict)
    _keys: dict[str, Key] = field(default_factory=dict)
    _lines: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        newest_first = reversed(self.texts.history)
        if self.settings.include_names:
            self._lines = [f"{m.name}: {m.text}" if m.name else m.text for m in newest_first]
        else:
            self._lines = [m.text for m in newest_first]

    def new_pass(self) -> None:
        """Forget the texts of the last pass (the recursion buffer or the skew changed)."""
        self._cache.clear()

    def depth_for(self, ce: CompiledEntry) -> int:
        """How many of the newest messages this entry scans."""
        own = ce.entry.scan_depth
        return own if own is not None else self.settings.scan_depth + self.skew

    def text_for(self, ce: CompiledEntry, *, recursion: bool) -> Text:
        """The entry's scan text: recent messages, flagged server texts, then earlier entries' text."""
        depth = self.depth_for(ce)
        flags = tuple(attr for attr, _, _ in FLAG_TEXTS if getattr(ce.entry, attr))
        key = (depth, flags, recursion)
        text = self._cache.get(key)
        if text is None:
            parts = self._lines[: max(depth, 0)] if depth > 0 else []
            parts = list(parts)
            for attr, source, _ in FLAG_TEXTS:
                if attr in flags:
                    parts.append(getattr(self.texts, source))
            if recursion:
                parts.extend(self.recursion)
            text = Text.of("\n".join(parts))
            self._cache[key] = text
        return text

    def matches(self, ce: CompiledEntry, key: Key, text: Text) -> bool:
        """Whether `key` occurs in `text` under the entry's (else the server's) case and word rules."""
        key = resolve_key(key, self.names, self._keys)
        compiled = key.compiled
        if compiled is None or not compiled.text:
            return False
        entry = ce.entry
        case = entry.case_sensitive if entry.case_sensitive is not None else self.settings.case_sensitive
        whole = (
            entry.match_whole_words
            if entry.match_whole_words is not None
            else self.settings.match_whole_words
        )
        if key.word is not None and whole:
            return (key.word in text.words) if case else (compiled.lowered in text.words_lowered)
        found = key_matches(compiled, text.hay, case_sensitive=case, whole_words=whole)
        if found is None:
            self.timeouts.append(f"{ce.book} uid {entry.uid} key {compiled.text}")
            return False
        return found

    def where(self, ce: CompiledEntry, key: Key, *, recursion: bool) -> str:
        """Where `key` was found, for the explanation: `in message N`, `in persona text`, `in recursion`."""
        depth = self.depth_for(ce)
        newest_first = list(reversed(self.texts.history))[: max(depth, 0)]
        for index, message in enumerate(newest_first):
            if self.matches(ce, key, Text.of(self._lines[index])):
                return f"in message {message.number}"
        for attr, source, label in FLAG_TEXTS:
            if getattr(ce.entry, attr) and self.matches(ce, key, Text.of(getattr(self.texts, source))):
                return f"in {label}"
        if recursion and self.recursion:
            return "in recursion"
        return "in recent messages"
