"""The pieces an assembly is made of: sources, parts, items, messages and omissions.

Every part of the output knows where it came from (`Source`) and whether identity macros may be
resolved in it (`trusted`: preset text and server-configured text only, never end-user text).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NotRequired, TypedDict

# The JSON shapes of the assemble answer (docs/bot.md), as `to_dict` writes them.


class SourceJson(TypedDict):
    """Where a message's text came from; which keys besides `kind` depends on the kind."""

    kind: str
    tag: NotRequired[str]  # native
    book: NotRequired[str]  # world_info
    uid: NotRequired[int]  # world_info
    comment: NotRequired[str]  # world_info
    identifier: NotRequired[str]  # node
    name: NotRequired[str]  # node and the other kinds
    field: NotRequired[str]  # card


class TransformJson(TypedDict):
    kind: str
    script: str
    id: str


class MessageJson(TypedDict):
    role: str
    content: str
    name: NotRequired[str]
    sources: list[SourceJson]
    transforms: NotRequired[list[TransformJson]]


class OmissionJson(TypedDict):
    what: str
    reason: str
    source: NotRequired[SourceJson]


@dataclass(frozen=True, slots=True)
class Source:
    kind: str  # "native" | "node" | "assembler" | "preset_setting" | "card" (name = the card's field) | "world_info"
    tag: str = ""
    identifier: str = ""
    name: str = ""  # world_info: the entry's comment
    book: str = ""  # world_info: the lorebook
    uid: int = -1  # world_info: the entry's uid
    # Sources are hashed for every part of every message (deduplication): hashed once, when made.
    _hash: int = field(init=False, repr=False, compare=False, default=0)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "_hash", hash((self.kind, self.tag, self.identifier, self.name, self.book, self.uid))
        )

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Source], tuple[str, str, str, str, str, int]]:
        # Rebuilt through __init__: string hashes differ between processes, so `_hash` never travels.
        return Source, (self.kind, self.tag, self.identifier, self.name, self.book, self.uid)

    def to_dict(self) -> SourceJson:
        """The JSON shape of docs/assembly.md#output-cli-api (docs/worldinfo.md#placement for World Info)."""
        if self.kind == "native":
            return {"kind": "native", "tag": self.tag}
        if self.kind == "world_info":
            return {"kind": "world_info", "book": self.book, "uid": self.uid, "comment": self.name}
        if self.kind == "node":
            return {"kind": "node", "identifier": self.identifier, "name": self.name}
        if self.kind == "card":
            return {"kind": "card", "field": self.name}
        return {"kind": self.kind, "name": self.name}

    @property
    def label(self) -> str:
        """A short human label, for the preview."""
        if self.kind == "native":
            return block_label(self.tag)
        if self.kind == "node":
            return f"{self.name or self.identifier} ({self.identifier})"
        if self.kind == "card":
            return f"card: {self.name}"
        if self.kind == "world_info":
            return f"World Info: {self.book} #{self.uid}" + (f" ({self.name})" if self.name else "")
        if self.kind == "assembler" and self.name == "authors_note":
            return "Author's Note"
        return f"{self.kind.replace('_', ' ')}: {self.name}"


# What each of the server's own blocks is, in the admin's words: omission sentences say "the …", the
# preview labels a part with it ("Server's system prompt"), the tag itself stays in a tooltip.
BLOCK_NAMES = {
    "SYSTEM_SCENARIO": "the scenario",
    "USER_PERSONA": "the user's persona description",
    "SYSTEM_HUMANIZER_RULES": "the server's system prompt",
    "SYSTEM_CHANNEL_PROMPT": "the channel prompt",
    "KNOWLEDGE_WORLD_INFO_BEFORE": "the World Info placed before the character",
    "KNOWLEDGE_WORLD_INFO_AFTER": "the World Info placed after the character",
    "SYSTEM_PERSONA_PROMPT": "the persona prompt",
    "SYSTEM_PERSONALITY": "the personality attributes",
    "KNOWLEDGE_SERVER_INFO": "the server info",
    "KNOWLEDGE_SERVER_MEMORIES": "the server memories",
    "KNOWLEDGE_SERVER_EMOJIS": "the emoji list",
    "KNOWLEDGE_SERVER_STICKERS": "the sticker list",
    "KNOWLEDGE_USERS_IN_CONVERSATION": "the users in the conversation",
    "KNOWLEDGE_SHORT_TERM_MEMORY": "the short-term memory",
    "KNOWLEDGE_SERVER_DOCUMENTS": "the retrieved documents",
    "KNOWLEDGE_SERVER_CONDITIONING": "the conditioning guidance",
    "DIALOGUE_SAMPLE": "the sample dialogues",
    "DIALOGUE_HISTORY": "the conversation history",
}


def block_label(tag: str) -> str:
    """`SYSTEM_HUMANIZER_RULES` -> "Server's system prompt"; an unknown tag as it is."""
    name = BLOCK_NAMES.get(tag)
    if name is None:
        return tag
    name = name.removeprefix("the ")
    return name[:1].upper() + name[1:]


def native_source(tag: str) -> Source:
    source = _NATIVE_SOURCES.get(tag)
    if source is None:
        source = _NATIVE_SOURCES[tag] = Source(kind="native", tag=tag)
    return source


_NATIVE_SOURCES: dict[str, Source] = {}  # one shared (frozen) source per tag


def node_source(identifier: str, name: str) -> Source:
    return Source(kind="node", identifier=identifier, name=name)


def card_source(field: str) -> Source:
    return Source(kind="card", name=field)


def world_info_source(book: str, uid: int, comment: str) -> Source:
    return Source(kind="world_info", name=comment, book=book, uid=uid)


def assembler_source(name: str) -> Source:
    source = _ASSEMBLER_SOURCES.get(name)
    if source is None:
        source = Source(kind="assembler", name=name)
        if len(_ASSEMBLER_SOURCES) < 256:  # the assembler's own names: a handful
            _ASSEMBLER_SOURCES[name] = source
    return source


_ASSEMBLER_SOURCES: dict[str, Source] = {}  # one shared (frozen) source per name


def setting_source(name: str) -> Source:
    """A part made from a preset setting (docs/assembly.md#generation-types-and-prefill: `assistant_prefill`,
    `impersonation_prompt`…)."""
    source = _SETTING_SOURCES.get(name)
    if source is None:
        source = Source(kind="preset_setting", name=name)
        if len(_SETTING_SOURCES) < 256:  # the settings' names: a few dozen
            _SETTING_SOURCES[name] = source
    return source


_SETTING_SOURCES: dict[str, Source] = {}  # one shared (frozen) source per setting


@dataclass(frozen=True, slots=True)
class Transform:
    """Something that rewrote a part after it was built: a regex script (docs/regex.md#where-they-run)."""

    script: str
    id: str
    kind: str = "regex"

    def to_dict(self) -> TransformJson:
        return {"kind": self.kind, "script": self.script, "id": self.id}


# Part, Item and Message are made for every piece of every assembly, so they are not frozen: a
# frozen dataclass sets each field through object.__setattr__, four times slower to construct.
# Treat them as values all the same: copy (`with_parts`), never change one in place.


@dataclass(slots=True)
class Part:
    """A piece of a message's text; parts are concatenated as they are."""

    text: str
    sources: tuple[Source, ...]
    trusted: bool  # identity macros and `{random}` forms are resolved in it at the end
    transforms: tuple[Transform, ...] = ()
    original: str | None = None  # the text before the transforms (the preview's before/after)


@dataclass(slots=True)
class Item:
    """One native item (docs/assembly.md#native-order) or one emitted preset node, before it becomes a
    message."""

    tag: str  # a native tag, or "" for preset content and assembler items
    role: str
    parts: tuple[Part, ...]
    fallback: bool = False  # the built-in system prompt
    group: int = -1  # sample dialogues: the pair it belongs to
    history: bool = False
    same_channel: bool = False  # STM: the current channel's summary
    name: str = ""  # the message's `name` field (sample dialogue turns, names in completion)
    # False: never joined with its neighbours (SillyTavern's separators,
    # docs/assembly.md#what-sillytavern-118-corrected)
    squash: bool = True

    @property
    def text(self) -> str:
        return "".join(part.text for part in self.parts)

    def with_parts(self, parts: tuple[Part, ...]) -> Item:
        """A copy with other parts (every other field kept; cheaper than `dataclasses.replace`)."""
        return Item(
            self.tag,
            self.role,
            parts,
            self.fallback,
            self.group,
            self.history,
            self.same_channel,
            self.name,
            self.squash,
        )


def single(tag: str, role: str, text: str, source: Source, *, trusted: bool, **extra: Any) -> Item:
    """An item of one part."""
    return Item(tag=tag, role=role, parts=(Part(text=text, sources=(source,), trusted=trusted),), **extra)


@dataclass(slots=True)
class Message:
    """One message of the output, in the neutral shape."""

    role: str
    content: str
    sources: tuple[Source, ...]
    tag: str = ""
    history: bool = False
    pieces: tuple[
        tuple[Source, str], ...
    ] = ()  # each part's final text with its first source (the preview's budget bar)
    transforms: tuple[Transform, ...] = ()
    originals: tuple[str, ...] = ()  # the changed parts' texts before their transforms
    name: str = ""  # the provider's `name` field, when the message has one

    def to_dict(self) -> MessageJson:
        sources = [s.to_dict() for s in self.sources]
        out: MessageJson = (
            {"role": self.role, "content": self.content, "name": self.name, "sources": sources}
            if self.name
            else {"role": self.role, "content": self.content, "sources": sources}
        )
        if self.transforms:  # only what a regex script changed carries them (docs/regex.md#where-they-run)
            out["transforms"] = [t.to_dict() for t in self.transforms]
        return out


@dataclass(frozen=True, slots=True)
class Injection:
    """A depth-injected text waiting for its place in the history (docs/assembly.md#depth-injection)."""

    text: str
    depth: int
    order: int
    index: int  # node order; tail directives sort after every node
    role: str
    source: Source


@dataclass(frozen=True, slots=True)
class Omission:
    """Something the assembler left out, and why (both sentences)."""

    what: str
    reason: str
    source: Source | None = None

    def to_dict(self) -> OmissionJson:
        out: OmissionJson = {"what": self.what, "reason": self.reason}
        if self.source is not None:
            out["source"] = self.source.to_dict()
        return out


@dataclass(slots=True)
class Notes:
    """Warnings and omissions gathered along the way (mutable while one assembly runs)."""

    warnings: list[str] = field(default_factory=list)
    omitted: list[Omission] = field(default_factory=list)

    def warn(self, sentence: str) -> None:
        if sentence not in self.warnings:
            self.warnings.append(sentence)

    def omit(self, what: str, reason: str, source: Source | None = None) -> None:
        self.omitted.append(Omission(what=what, reason=reason, source=source))
