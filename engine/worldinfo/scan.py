"""What one entry's keys are tested against (docs/worldinfo.md#what-is-scanned), and where a key was found
(docs/worldinfo.md#the-explanation)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.worldinfo.compiled import CompiledEntry, Key, resolve_key
from engine.worldinfo.keys import Haystack, key_matches
from engine.worldinfo.settings import WorldInfoSettings

_WORDS = re.compile(r"[A-Za-z0-9_]+")

# entry flag → (request field, how the explanation names it), in the order SillyTavern 1.18 appends
# them to the scan text (docs/worldinfo.md)
FLAG_TEXTS = (
    ("match_persona_description", "user_persona", "persona description"),
    ("match_character_description", "persona_prompt", "persona text"),
    ("match_character_personality", "personality", "personality"),
    ("match_character_depth_prompt", "depth_prompt", "depth prompt"),
    ("match_scenario", "scenario", "scenario"),
    ("match_creator_notes", "creator_notes", "creator notes"),
)
# SillyTavern 1.18 starts every piece of its scan text (each message, each flagged text, each
# recursion step's text) with this character, so `^` in a regex key never matches a piece's start.
MARK = "\x01"


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
    user_persona: str = ""
    persona_prompt: str = ""
    personality: str = ""
    scenario: str = ""
    depth_prompt: str = ""
    creator_notes: str = ""


class Text:
    """A haystack with its word sets (built on first use), so a one-word whole-word key is a set lookup."""

    __slots__ = ("_chars", "_parts", "_prefixes", "_words", "_words_lowered", "hay")

    def __init__(self, hay: Haystack, parts: tuple[Text, ...] = ()) -> None:
        self.hay = hay
        self._parts = parts
        self._words: frozenset[str] | None = None
        self._words_lowered: frozenset[str] | None = None
        self._prefixes: frozenset[str] | None = None
        self._chars: frozenset[str] | None = None

    @property
    def prefixes(self) -> frozenset[str]:
        """The first four characters of every lower-cased word of four or more."""
        if self._prefixes is None:
            if self._parts:
                self._prefixes = frozenset().union(*(p.prefixes for p in self._parts))
            else:
                self._prefixes = frozenset(w[:4] for w in self.words_lowered if len(w) >= 4)
        return self._prefixes

    @property
    def chars(self) -> frozenset[str]:
        """Every character of the lower-cased text."""
        if self._chars is None:
            if self._parts:
                self._chars = frozenset().union(*(p.chars for p in self._parts))
            else:
                self._chars = frozenset(self.hay.lowered)
        return self._chars

    @property
    def words(self) -> frozenset[str]:
        """The runs of [A-Za-z0-9_] in the text, as written."""
        if self._words is None:
            if self._parts:
                self._words = frozenset().union(*(p.words for p in self._parts))
            else:
                self._words = frozenset(_WORDS.findall(self.hay.raw))
        return self._words

    @property
    def words_lowered(self) -> frozenset[str]:
        """The runs of [A-Za-z0-9_] in the lower-cased text."""
        if self._words_lowered is None:
            if self._parts:
                self._words_lowered = frozenset().union(*(p.words_lowered for p in self._parts))
            else:
                self._words_lowered = frozenset(_WORDS.findall(self.hay.lowered))
        return self._words_lowered

    @classmethod
    def of(cls, raw: str) -> Text:
        """The text `raw`."""
        return cls(Haystack(raw, raw.lower()))

    @classmethod
    def join(cls, parts: list[Text]) -> Text:
        """The parts joined by newlines (a newline is never part of a word, so the word sets unite)."""
        if len(parts) == 1:
            return parts[0]
        hay = Haystack("\n".join(p.hay.raw for p in parts), "\n".join(p.hay.lowered for p in parts))
        return cls(hay, tuple(parts))


_EMPTY = Text(Haystack("", ""))


@dataclass(slots=True)
class Scanner:
    """Builds (and reuses within one pass) the scan text of each entry, and tests keys against it."""

    texts: ScanTexts
    settings: WorldInfoSettings
    names: dict[str, str]
    skew: int = 0
    recursion: list[str] = field(default_factory=list)
    timeouts: list[str] = field(default_factory=list)
    _cache: dict[tuple[int, tuple[str, ...], bool], Text] = field(
        default_factory=dict
    )  # by _text's arguments
    _keys: dict[str, Key] = field(default_factory=dict)
    _lines: list[str] = field(default_factory=list)
    _stopped: set[str] = field(default_factory=set)
    _line_texts: dict[int, Text] = field(default_factory=dict)
    _pieces: dict[str, Text] = field(default_factory=dict)
    _seen: int = 0
    _added: Text | None = None
    # Kept across passes: the newest lines joined per depth, and the recursion text joined so far
    # (each pass joins what it adds to it), so a pass only builds the word sets of new text.
    _depths: dict[int, Text] = field(default_factory=dict)
    _recursed: Text | None = None

    def __post_init__(self) -> None:
        newest_first = reversed(self.texts.history)
        if self.settings.include_names:
            lines = [f"{m.name}: {m.text}" if m.name else m.text for m in newest_first]
        else:
            lines = [m.text for m in newest_first]
        self._lines = [line.strip() for line in lines]  # SillyTavern trims each scanned message

    def new_pass(self) -> None:
        """Forget the texts of the last pass (the recursion buffer or the skew changed)."""
        self._cache.clear()
        new = [self._piece(t) for t in self.recursion[self._seen :]]
        self._added = Text.join(new or [_EMPTY])
        if new:
            self._recursed = (
                self._added if self._recursed is None else Text.join([self._recursed, self._added])
            )
        self._seen = len(self.recursion)

    def added_text(self) -> Text:
        """The recursion text added since the previous pass."""
        assert self._added is not None  # new_pass runs before every pass
        return self._added

    def depth_for(self, ce: CompiledEntry) -> int:
        """How many of the newest messages this entry scans."""
        own = ce.entry.scan_depth
        return own if own is not None else self.settings.scan_depth + self.skew

    def default_text(self, *, recursion: bool) -> Text:
        """The scan text of an entry with no scan depth or match flags of its own."""
        return self._text(self.settings.scan_depth + self.skew, (), recursion)

    def text_for(self, ce: CompiledEntry, *, recursion: bool) -> Text:
        """The entry's scan text: recent messages, flagged server texts, then earlier entries' text."""
        flags = tuple(attr for attr, _, _ in FLAG_TEXTS if getattr(ce.entry, attr)) if ce.has_flags else ()
        return self._text(self.depth_for(ce), flags, recursion)

    def _text(self, depth: int, flags: tuple[str, ...], recursion: bool) -> Text:
        key = (depth, flags, recursion)
        text = self._cache.get(key)
        if text is None:
            # Joining joined texts gives the same text (newline-joined) and reuses their word sets.
            # A scan depth of 0 or less scans nothing at all, not even the flagged texts.
            parts = []
            if depth > 0:
                lines = self._lines_text(depth)
                parts.append(lines if lines is not None else self._piece(MARK))
                for attr, source, _ in FLAG_TEXTS:
                    if attr in flags and getattr(self.texts, source):
                        parts.append(self._piece(MARK + getattr(self.texts, source)))
                if recursion and self.recursion:
                    parts.append(self._recursion_text())
            text = Text.join(parts) if parts else _EMPTY
            self._cache[key] = text
        return text

    def _lines_text(self, depth: int) -> Text | None:
        """The newest `depth` lines joined (None when that is no line)."""
        count = min(max(depth, 0), len(self._lines))
        if not count:
            return None
        text = self._depths.get(count)
        if text is None:
            text = self._depths[count] = Text.join([self._line_text(i) for i in range(count)])
        return text

    def _recursion_text(self) -> Text:
        """Every recursion piece so far, joined."""
        if self._seen != len(self.recursion) or self._recursed is None:  # pieces added mid-pass
            return Text.join([self._piece(t) for t in self.recursion])
        return self._recursed

    def rules(self, ce: CompiledEntry) -> tuple[bool, bool]:
        """(case sensitive, whole words) for this entry: its own flags, else the server's settings."""
        entry = ce.entry
        case = entry.case_sensitive if entry.case_sensitive is not None else self.settings.case_sensitive
        whole = entry.match_whole_words
        return case, whole if whole is not None else self.settings.match_whole_words

    def matches(
        self, ce: CompiledEntry, key: Key, text: Text, rules: tuple[bool, bool] | None = None
    ) -> bool:
        """Whether `key` occurs in `text` under the entry's (else the server's) case and word rules."""
        case, whole = rules or self.rules(ce)
        if key.word is not None and whole:
            return (key.word in text.words) if case else (key.word_lowered in text.words_lowered)
        if key.compiled is None:
            key = resolve_key(key, self.names, self._keys)
        compiled = key.compiled
        if compiled is None or not compiled.text:
            return False
        entry = ce.entry
        if compiled.text in self._stopped:
            return False
        found = key_matches(compiled, text.hay, case_sensitive=case, whole_words=whole)
        if found is None:  # stopped by the time bound: reported once, not retried in this assembly
            self._stopped.add(compiled.text)
            self.timeouts.append(f"{ce.book} uid {entry.uid} key {compiled.text}")
            return False
        return found

    def add_recursion(self, ce: CompiledEntry, content: str, *, first: bool) -> None:
        """Add an activated entry's text to the recursion buffer (`first`: the first of its pass, whose
        text starts the pass's piece); its entry's own text keeps its word sets for the book version
        (built once, not per request)."""
        if first:
            self.recursion.append(MARK + content)
            return
        self.recursion.append(content)
        if content not in self._pieces and content == ce.text:
            text = ce.memo.get("scan_text")
            if text is None:
                text = ce.memo["scan_text"] = Text.of(content)
            self._pieces[content] = text

    def _piece(self, raw: str) -> Text:
        text = self._pieces.get(raw)
        if text is None:
            text = self._pieces[raw] = Text.of(raw)
        return text

    def _line_text(self, index: int) -> Text:
        text = self._line_texts.get(index)
        if text is None:
            text = self._line_texts[index] = Text.of(MARK + self._lines[index])
        return text

    def where(self, ce: CompiledEntry, key: Key, *, recursion: bool) -> str:
        """Where `key` was found, for the explanation: `in message N`, `in persona text`, `in recursion`."""
        history = self.texts.history
        for index in range(min(max(self.depth_for(ce), 0), len(history))):
            if self.matches(ce, key, self._line_text(index)):
                return f"in message {history[-1 - index].number}"
        for attr, source, label in FLAG_TEXTS:
            if getattr(ce.entry, attr) and self.matches(ce, key, Text.of(MARK + getattr(self.texts, source))):
                return f"in {label}"
        if recursion and self.recursion:
            return "in recursion"
        return "in recent messages"
