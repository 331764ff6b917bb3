"""A lorebook compiled once per version (keys parsed, decorators split off), evaluated per request."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from engine.worldinfo.gc_pause import paused_gc
from engine.worldinfo.keys import CompiledKey, compile_key
from engine.worldinfo.model import Entry

KNOWN_DECORATORS = ("@@activate", "@@dont_activate")
_IDENTITY = re.compile(r"\{\{\s*(?:char|user)\s*\}\}|<USER>|<BOT>|<CHAR>", re.IGNORECASE)
_WORD_KEY = re.compile(r"[A-Za-z0-9_]+")


def split_decorators(content: str) -> tuple[tuple[str, ...], str]:
    """(decorators, text): the known `@@` lines at the top of the content, and the rest.

    A line starting `@@@` is an escaped decorator: it stays in the text with one `@` removed.
    """
    lines = content.split("\n")
    found: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index].strip()
        if line.startswith("@@@"):
            lines[index] = lines[index].replace("@@@", "@@", 1)
            break
        if line in KNOWN_DECORATORS:
            found.append(line)
            index += 1
            continue
        break
    if not found:
        return (), "\n".join(lines)
    return tuple(found), "\n".join(lines[index:])


@dataclass(frozen=True, slots=True)
class Key:
    """A key as written, and its compiled form unless it holds identity macros (then per request)."""

    source: str
    compiled: CompiledKey | None
    word: str | None  # set when the key is one run of [A-Za-z0-9_]: a whole-word test is a set lookup
    word_lowered: str | None = None


def _key(source: str) -> Key:
    if _IDENTITY.search(source):
        return Key(source, None, None)
    text = source.strip()
    compiled = compile_key(text)
    word = text if not compiled.is_regex and _WORD_KEY.fullmatch(text) else None
    return Key(source, compiled, word, word.lower() if word else None)


@dataclass(frozen=True, slots=True)
class CompiledEntry:
    """One entry ready to evaluate: its keys compiled, its decorators split off its text."""

    book: str
    entry: Entry
    primary: tuple[Key, ...]
    secondary: tuple[Key, ...]
    decorators: tuple[str, ...]
    text: str  # the content without its decorator lines
    timer_key: str  # SillyTavern keys timed effects by content: editing the content restarts them
    is_character: bool
    has_flags: bool = False  # some match* flag adds a server text to this entry's scan
    plain_keys: bool = False  # no regex or macro primary key: a match never spans two scanned pieces
    groups: tuple[str, ...] = ()  # the inclusion group labels
    # What requests derive from the entry and keep for its book version (its text's word sets)
    memo: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def uid(self) -> int:
        """The entry's uid in its book."""
        return self.entry.uid


@dataclass(frozen=True, slots=True)
class CompiledBook:
    """A lorebook's entries, compiled; `is_character` marks a character card's own book."""

    name: str
    entries: tuple[CompiledEntry, ...]
    is_character: bool = False


def compile_book(
    name: str, entries: tuple[Entry, ...] | list[Entry], *, is_character: bool = False
) -> CompiledBook:
    """The book `name` compiled for evaluation (done once per stored version and cached)."""
    with paused_gc():
        return _compile_book(name, entries, is_character=is_character)


def _compile_book(name: str, entries: tuple[Entry, ...] | list[Entry], *, is_character: bool) -> CompiledBook:
    compiled = []
    for entry in entries:
        decorators, text = split_decorators(entry.content)
        primary = tuple(_key(k) for k in entry.key if k.strip())
        digest = hashlib.blake2b(entry.content.encode(), digest_size=6).hexdigest()
        compiled.append(
            CompiledEntry(
                book=name,
                entry=entry,
                primary=primary,
                secondary=tuple(_key(k) for k in entry.keysecondary if k.strip()),
                decorators=decorators,
                text=text,
                timer_key=f"{name}\x1f{entry.uid}\x1f{digest}",
                is_character=is_character,
                plain_keys=all(k.compiled is not None and not k.compiled.is_regex for k in primary),
                groups=entry.groups,
                has_flags=any(
                    (
                        entry.match_persona_description,
                        entry.match_character_description,
                        entry.match_character_personality,
                        entry.match_scenario,
                        entry.match_character_depth_prompt,
                        entry.match_creator_notes,
                    )
                ),
            )
        )
    return CompiledBook(name=name, entries=tuple(compiled), is_character=is_character)


def switch_entries(book: CompiledBook, switches: Mapping[int, bool]) -> CompiledBook:
    """The book with entries switched on (True) or off (False) by uid: only their `disable` flag
    changes, so their compiled keys and text are kept (the same result as compiling them again)."""
    if not any(
        ce.entry.uid in switches and switches[ce.entry.uid] == ce.entry.disable for ce in book.entries
    ):
        return book
    with paused_gc():
        entries = tuple(
            replace(ce, entry=replace(ce.entry, disable=not switches[ce.entry.uid]), memo={})
            if ce.entry.uid in switches and switches[ce.entry.uid] == ce.entry.disable
            else ce
            for ce in book.entries
        )
    return replace(book, entries=entries)


def resolve_key(key: Key, names: dict[str, str], cache: dict[str, Key]) -> Key:
    """The key with `{{char}}`/`{{user}}` replaced for this request (compiled keys pass through)."""
    if key.compiled is not None:
        return key
    text = _IDENTITY.sub(lambda m: _identity(m.group(0), names), key.source)
    resolved = cache.get(text)
    if resolved is None:
        resolved = _key(text) if not _IDENTITY.search(text) else Key(text, compile_key(text.strip()), None)
        cache[text] = resolved
    return resolved


def _identity(token: str, names: dict[str, str]) -> str:
    lowered = token.lower()
    if "user" in lowered:
        return names.get("user", "")
    return names.get("char", "")
