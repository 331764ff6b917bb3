"""The data a lorebook import produces: entries, the summary and the parsed book.

Pure frozen dataclasses: no Django, no I/O. Field names follow SillyTavern's World Info file
(camelCase in `to_st()`), so an export is the file SillyTavern itself would write.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

from ..errors import EngineError

POSITIONS = {
    0: "before char",
    1: "after char",
    2: "Author's Note top",
    3: "Author's Note bottom",
    4: "@depth",
    5: "example messages top",
    6: "example messages bottom",
    7: "outlet",
}


class LorebookRefused(EngineError):
    """The upload is not an importable lorebook; `message` is one sentence to show as is."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


# `extra` key: the uid an entry shared in its file with an earlier entry (SillyTavern sends one of them)
SHARED_UID = "sharedUid"


@dataclass(frozen=True, slots=True)
class CharacterFilter:
    """SillyTavern's `characterFilter`: activate only for (or never for) these character names/tags."""

    names: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    is_exclude: bool = False

    @property
    def active(self) -> bool:
        """True when the filter restricts anything."""
        return bool(self.names or self.tags)


@dataclass(frozen=True, slots=True)
class Entry:
    """One World Info entry, normalised (docs/worldinfo.md#import). `extra` keeps the fields we do not
    read."""

    uid: int
    key: tuple[str, ...] = ()
    keysecondary: tuple[str, ...] = ()
    comment: str = ""
    content: str = ""
    constant: bool = False
    selective: bool = True
    selective_logic: int = 0
    disable: bool = False
    order: int = 100
    position: int = 0
    depth: int = 4
    role: int | None = 0  # null in a file is kept (SillyTavern reads it as system)
    probability: int = 100
    use_probability: bool = True
    group: str = ""
    group_override: bool = False
    group_weight: int = 100
    use_group_scoring: bool | None = None
    scan_depth: int | None = None
    case_sensitive: bool | None = None
    match_whole_words: bool | None = None
    exclude_recursion: bool = False
    prevent_recursion: bool = False
    delay_until_recursion: int = 0
    sticky: int | None = None
    cooldown: int | None = None
    delay: int | None = None
    ignore_budget: bool = False
    triggers: tuple[str, ...] = ()
    outlet_name: str = ""
    character_filter: CharacterFilter = field(default_factory=CharacterFilter)
    match_persona_description: bool = False
    match_character_description: bool = False
    match_character_personality: bool = False
    match_character_depth_prompt: bool = False
    match_scenario: bool = False
    match_creator_notes: bool = False
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def enabled(self) -> bool:
        """True unless the entry is switched off (`disable`)."""
        return not self.disable

    @property
    def groups(self) -> tuple[str, ...]:
        """The inclusion group labels (comma-separated in the file), trimmed, empty ones dropped."""
        return tuple(label.strip() for label in self.group.split(",") if label.strip())

    @property
    def has_timed_effect(self) -> bool:
        """True when the entry uses sticky, cooldown or delay."""
        return bool(self.sticky or self.cooldown or self.delay)

    @property
    def st_uid(self) -> int:
        """The uid SillyTavern knows the entry by: the one it shares with an earlier entry of its file,
        when the file gave one uid to several entries (the importer gave it a new one, docs/worldinfo.md)."""
        shared = self.extra.get(SHARED_UID)
        return shared if type(shared) is int else self.uid

    @property
    def label(self) -> str:
        """How the entry is named to a user: its comment, else its first key, else its uid."""
        return self.comment.strip() or (self.key[0] if self.key else "") or f"entry {self.uid}"

    def to_st(self) -> dict[str, Any]:
        """The entry as SillyTavern writes it in a World Info file (unknown fields kept)."""
        out: dict[str, Any] = dict(self.extra)
        out.update(
            {
                "uid": self.uid,
                "key": list(self.key),
                "keysecondary": list(self.keysecondary),
                "comment": self.comment,
                "content": self.content,
                "constant": self.constant,
                "selective": self.selective,
                "selectiveLogic": self.selective_logic,
                "disable": self.disable,
                "order": self.order,
                "position": self.position,
                "depth": self.depth,
                "role": self.role,
                "probability": self.probability,
                "useProbability": self.use_probability,
                "group": self.group,
                "groupOverride": self.group_override,
                "groupWeight": self.group_weight,
                "useGroupScoring": self.use_group_scoring,
                "scanDepth": self.scan_depth,
                "caseSensitive": self.case_sensitive,
                "matchWholeWords": self.match_whole_words,
                "excludeRecursion": self.exclude_recursion,
                "preventRecursion": self.prevent_recursion,
                "delayUntilRecursion": self.delay_until_recursion,
                "sticky": self.sticky,
                "cooldown": self.cooldown,
                "delay": self.delay,
                "ignoreBudget": self.ignore_budget,
                "triggers": list(self.triggers),
                "outletName": self.outlet_name,
                "characterFilter": {
                    "isExclude": self.character_filter.is_exclude,
                    "names": list(self.character_filter.names),
                    "tags": list(self.character_filter.tags),
                },
                "matchPersonaDescription": self.match_persona_description,
                "matchCharacterDescription": self.match_character_description,
                "matchCharacterPersonality": self.match_character_personality,
                "matchCharacterDepthPrompt": self.match_character_depth_prompt,
                "matchScenario": self.match_scenario,
                "matchCreatorNotes": self.match_creator_notes,
            }
        )
        return out


@dataclass(frozen=True, slots=True)
class LorebookSummary:
    """What an import found (docs/worldinfo.md#import); `to_dict()` is the CLI/API JSON."""

    entries: int
    enabled: int
    constant: int
    positions: dict[str, int]
    regex_keys: int
    regex_keys_failed: tuple[str, ...] = ()
    timed: int = 0
    groups: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    source: str = "world_info"

    def to_dict(self) -> dict[str, Any]:
        """The summary as a JSON-serialisable dict."""
        d = asdict(self)
        for key in ("regex_keys_failed", "groups", "warnings"):
            d[key] = list(d[key])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LorebookSummary:
        """A summary from `to_dict()` output; unknown keys are ignored."""
        names = {f.name for f in fields(cls)}
        kw = {k: v for k, v in d.items() if k in names}
        for key in ("regex_keys_failed", "groups", "warnings"):
            kw[key] = tuple(kw.get(key) or ())
        return cls(**kw)


@dataclass(frozen=True, slots=True)
class ParsedLorebook:
    """A successfully imported lorebook, ready to store."""

    name: str
    entries: tuple[Entry, ...]
    summary: LorebookSummary
    text: str  # the upload as decoded text, kept for download
