"""The bucket document (schema version 1, docs/assembly.md#the-bucket-document): parsed and validated into
frozen dataclasses.

Pure: no Django. `parse_buckets(data)` takes the decoded JSON and returns a `BucketDocument`, or raises
`BucketError` whose message is one sentence naming the field at fault. The schema is documented in
docs/assembly.md.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, overload
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import orjson

from .errors import EngineError
from .parts import Item, Message
from .stm import StmContext
from .vocabulary import GENERATION_TYPES, ROLES

SCHEMA_VERSION = 1

# The native tags in their fixed order (docs/assembly.md#native-order).
TAGS = (
    "SYSTEM_HUMANIZER_RULES",
    "SYSTEM_CHANNEL_PROMPT",
    "KNOWLEDGE_WORLD_INFO_BEFORE",
    "SYSTEM_PERSONA_PROMPT",
    "SYSTEM_PERSONALITY",
    "KNOWLEDGE_WORLD_INFO_AFTER",
    "KNOWLEDGE_SERVER_INFO",
    "KNOWLEDGE_SERVER_MEMORIES",
    "KNOWLEDGE_SERVER_EMOJIS",
    "KNOWLEDGE_SERVER_STICKERS",
    "KNOWLEDGE_USERS_IN_CONVERSATION",
    "KNOWLEDGE_SHORT_TERM_MEMORY",
    "KNOWLEDGE_SERVER_DOCUMENTS",
    "KNOWLEDGE_SERVER_CONDITIONING",
    "DIALOGUE_SAMPLE",
    "DIALOGUE_HISTORY",
)
TAG_ORDER = {tag: index for index, tag in enumerate(TAGS)}
SAMPLE_HEADER = "<START>"  # a sample dialogue's first line in `{{mesExamples}}`
HISTORY_ROLES = ("user", "assistant")
# A group chat's history also holds narrator lines: role system, with the narrator's name.
GROUP_HISTORY_ROLES = (*HISTORY_ROLES, "system")
MAX_HISTORY = 5000


class BucketError(EngineError, ValueError):
    """The document is not a valid bucket document; `message` is one sentence for the user."""


@dataclass(
    slots=True
)  # one per history message of every request: not frozen (4x cheaper to make); never changed
class HistoryMessage:
    role: str  # "user" | "assistant"
    name: str
    content: str
    timestamp: datetime | None = None


@dataclass(frozen=True, slots=True)
class SampleDialogue:
    user: str
    char: str
    # A character card's example block as written (its `<START>` block, speaker lines and all):
    # when set it is the dialogue, split into turns as SillyTavern splits it
    # (docs/assembly.md#what-sillytavern-118-corrected).
    block: str = ""


@dataclass(frozen=True, slots=True)
class ChannelPrompt:
    mode: str  # "append" | "replace"
    text: str


@dataclass(frozen=True, slots=True)
class StmLine:
    """One rendered short-term-memory item; `same_channel` marks the current channel's summary."""

    role: str
    text: str
    same_channel: bool = False


@dataclass(frozen=True, slots=True)
class TaggedItem:
    """A pre-built native item, for a bot that builds its own blocks (`items` in the document)."""

    tag: str
    role: str
    text: str
    fallback: bool = False
    name: str = ""


@dataclass(frozen=True, slots=True)
class Budget:
    context: int
    reply: int = 0

    @property
    def prompt(self) -> int:
        """Tokens the prompt may use: the context window minus the reply's reserve."""
        return self.context - self.reply


AUTHORS_NOTE_POSITIONS = ("in_chat", "after_main", "before_main")


@dataclass(frozen=True, slots=True)
class AuthorsNote:
    """SillyTavern's Author's Note for the chat (docs/assembly.md#what-sillytavern-118-corrected): its text,
    where it goes (in the chat at `depth` as `role`, or right after / before the main prompt), and every how
    many user messages."""

    text: str = ""
    position: str = "in_chat"
    depth: int = 4
    role: str = "system"
    interval: int = 1


@dataclass(frozen=True, slots=True)
class GroupTurn:
    """The bucket document's `group`: which group, which member speaks, and the chat's overrides
    (SillyTavern's per-chat scenario and example overrides; None when not set)."""

    name: str
    speaker: str
    scenario_override: str | None = None
    examples_override: str | None = None


@dataclass(slots=True)
class DocumentMemo:
    """What the engine works out from one document alone and keeps with it for its next assemblies: one
    attribute per thing kept, with the module that fills it. The assembler's and World Info's own types
    sit above this module, so those values are typed `Any` and their comments name the type; `names`
    below is a preset's names_behavior."""

    # engine/assemble/native.py
    items: dict[tuple[Any, str, int], tuple[Item, ...]] = field(
        default_factory=dict
    )  # by (stm, header, names)
    kept: set[int] = field(default_factory=set)  # ids of the items kept alive here (engine/assemble/reuse.py)
    reuse: Any = None  # Reuse
    blocks: tuple[tuple[Item, ...], dict[str, tuple[Item, ...]]] | None = None  # the last items, by tag
    messages: dict[int, dict[int, Message]] = field(default_factory=dict)  # by names: any seed's
    seeded_messages: dict[int, tuple[int, dict[int, Message]]] = field(
        default_factory=dict
    )  # the last seed's
    history_runs: dict[int, Any] = field(default_factory=dict)  # HistoryRun by names
    envs: dict[tuple[int, int], tuple[tuple[Item, ...], Any]] = field(default_factory=dict)  # MacroEnv
    # engine/assemble/placing.py: the history run's items as a list when it holds no system message
    # (else None), by names
    plain_history: dict[int, list[Item] | None] = field(default_factory=dict)
    # and the last arranged history (a kept walk's tuple) found to be that list, by names
    plain_arranged: dict[int, tuple[Item, ...]] = field(default_factory=dict)
    # engine/assemble/preset.py: the preset's native blocks and tags, by (id of the items, id of the card)
    preset_blocks: dict[tuple[int, int], Any] = field(default_factory=dict)
    # engine/assemble/rearrange.py: the last walk (and its snapshot) by id of the plan
    walks: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    # engine/assemble/examples.py: a sample dialogue's messages by (id of the item, separator, user, char, members)
    examples: dict[tuple[Any, ...], tuple[Item, list[Item]]] = field(default_factory=dict)
    # ... and a whole run's items made into messages, by (separator, user, char, members, ids of the items)
    example_runs: dict[tuple[Any, ...], tuple[tuple[Item, ...], tuple[Item, ...]]] = field(
        default_factory=dict
    )
    # engine/assemble/differences.py: the history's facts
    history_facts: tuple[bool, bool, bool] | None = None
    # engine/assemble/kept_tail.py: the tail's last inputs, and what it made for them (None: not kept)
    tail: tuple[Any, Any] | None = None
    # engine/worldinfo/contribution.py: the texts the keys are tested against (ScanTexts), by card texts
    world_info_scan: dict[tuple[tuple[str, str], ...], Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class BucketDocument:
    """A validated bucket document; every field has the empty default of
    docs/assembly.md#the-bucket-document."""

    version: int = SCHEMA_VERSION
    user_name: str = "User"
    char_name: str = "Assistant"
    system_prompt: str | None = None
    channel_prompt: ChannelPrompt | None = None
    persona_prompt: str = ""
    personality: tuple[str, ...] = ()
    server_info: str = ""
    server_memories: tuple[str, ...] = ()
    emojis: tuple[str, ...] = ()
    stickers: tuple[str, ...] = ()
    users_in_conversation: str = ""
    documents: tuple[str, ...] = ()
    conditioning: str = ""
    sample_dialogues: tuple[SampleDialogue, ...] = ()
    history: tuple[HistoryMessage, ...] = ()
    short_term_memory: tuple[StmLine, ...] = ()
    tail_directives: tuple[str, ...] = ()
    stm_context: StmContext | None = None
    budget: Budget | None = None
    impersonation: bool = False
    now: datetime | None = None
    timezone: str = "UTC"
    seed: int | None = None
    variables: dict[str, Any] = field(default_factory=dict)
    global_variables: dict[str, Any] = field(default_factory=dict)
    items: tuple[TaggedItem, ...] | None = None
    generation_type: str = "normal"
    # appended last for a quiet generation (docs/assembly.md#generation-types-and-prefill)
    quiet_prompt: str = ""
    scenario: str = ""
    user_persona: str = ""  # the speaking user's persona description (SillyTavern's personaDescription)
    model: str = ""  # the model the request goes to ({{model}}, docs/macros.md)
    authors_note: AuthorsNote = AuthorsNote()
    chat_length: int | None = None  # messages in the channel so far; None = the history's length
    world_info_state: dict[str, Any] = field(default_factory=dict)
    group: GroupTurn | None = None  # a group chat: which group and which member speaks (docs/groups.md)
    group_tools: bool = False  # declare the group tools in the provider body (docs/groups.md)
    # A character card's example messages as written (prepared), for {{mesExamplesRaw}}; None when the
    # sample dialogues did not come from a card (the macro then gives them in {{mesExamples}}'s form).
    sample_dialogues_raw: str | None = None
    # What the engine derives from the document once and shares between its assemblies (the
    # history's items and messages, engine.assemble.native); a `replace()`d document starts empty.
    memo: DocumentMemo = field(default_factory=DocumentMemo, init=False, repr=False, compare=False)


def decode_json(raw: bytes | str, *, what: str = "The bucket document") -> Any:
    """JSON text (UTF-8, an optional BOM) decoded; BucketError names the line and column otherwise.

    `what` opens the sentence ("The request body", "the bucket file", …).
    """
    if isinstance(raw, bytes) and not _may_exceed_64_bits(raw):
        # orjson reads a bot's request in a third of the standard decoder's time. What it refuses
        # (a BOM, NaN, bytes that are not UTF-8, a lone surrogate, very deep nesting) goes on to the
        # standard decoder below, which accepts or refuses it in its own words, as before.
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
        else:
            if _UNSTORABLE_ESCAPE_BYTES.search(raw):
                refuse_unstorable_text(data, what=what)
            return data
    try:
        text = raw.decode("utf-8-sig") if isinstance(raw, bytes) else raw
    except UnicodeDecodeError:
        raise BucketError(f"{what} is not UTF-8 text.") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BucketError(
            f"{what} is not valid JSON (line {exc.lineno}, column {exc.colno}): {exc.msg}."
        ) from None
    except RecursionError:  # the decoder recurses once per level of nesting
        raise BucketError(f"{what} is nested too deeply to be read.") from None
    refuse_unstorable_text(data, text=text, what=what)
    return data


# JSON can spell two things no text column or encoder accepts: NUL (`\u0000`) and a lone half of a
# surrogate pair (`\ud800` alone). Raw bytes cannot carry either (a NUL byte is not allowed in a
# JSON string, a surrogate is not UTF-8), so only these escapes need looking for.
UNSTORABLE_ESCAPE = re.compile(r"\\u(?:0000|d[89a-f][0-9a-f]{2})", re.IGNORECASE)
UNSTORABLE_CHAR = re.compile("[\x00\ud800-\udfff]")
_UNSTORABLE_ESCAPE_BYTES = re.compile(UNSTORABLE_ESCAPE.pattern.encode(), re.IGNORECASE)
# A number of 19 digits or more outside a string may not fit in 64 bits, where orjson reads it as a
# float and the standard decoder as the exact integer: such a body takes the standard decoder. Digits
# are found by translating them all to "0" (a regular expression over the body cost more than the
# whole orjson read); a run in a string (a Discord id) follows a quote and is left alone.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19
_BEFORE_A_NUMBER = frozenset(b"- \t\r\n")
_OPENS_A_VALUE = frozenset(b":[,")


def _may_exceed_64_bits(raw: bytes) -> bool:
    digits = raw.translate(_DIGITS_AS_ZERO)
    at = digits.find(_NINETEEN_DIGITS)
    while at != -1:
        before = at - 1
        while before >= 0 and digits[before] in _BEFORE_A_NUMBER:
            before -= 1
        if before < 0 or digits[before] in _OPENS_A_VALUE:
            return True
        end = at + len(_NINETEEN_DIGITS)
        while end < len(digits) and digits[end] == 0x30:
            end += 1
        at = digits.find(_NINETEEN_DIGITS, end)
    return False


def refuse_unstorable_text(data: Any, *, text: str | None = None, what: str = "The request body") -> None:
    """BucketError naming the first field whose text (or key) holds NUL or a lone surrogate.

    With the JSON `text` given, a document without either escape is not walked (the common case).
    """
    if text is not None and not UNSTORABLE_ESCAPE.search(text):
        return
    found = _first_unstorable(data, "")
    if found is not None:
        path, char = found
        kind = "a NUL character (\\u0000)" if char == "\x00" else f"a lone surrogate (\\u{ord(char):04x})"
        where = f"`{path}`" if path else "the top-level value"
        raise BucketError(f"{what}: {where} contains {kind}, which cannot be stored as text.")


def _first_unstorable(value: Any, path: str) -> tuple[str, str] | None:
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        node, where = stack.pop()
        if isinstance(node, str):
            bad = UNSTORABLE_CHAR.search(node)
            if bad:
                return where, bad.group()
        elif isinstance(node, dict):
            for key, child in reversed(list(node.items())):
                inner = f"{where}.{key}" if where else str(key)
                bad = UNSTORABLE_CHAR.search(key)
                if bad:
                    return (f"{where} key {key!r}" if where else f"key {key!r}"), bad.group()
                stack.append((child, inner))
        elif isinstance(node, list):
            stack.extend((child, f"{where}[{i}]") for i, child in reversed(list(enumerate(node))))
    return None


def parse_buckets(data: Any) -> BucketDocument:
    """The validated document; raises BucketError (one sentence naming the field) when it is not valid."""
    if not isinstance(data, dict):
        raise BucketError("The bucket document must be a JSON object.")
    version = data.get("version", SCHEMA_VERSION)
    if version != SCHEMA_VERSION:
        raise BucketError(f"Unsupported bucket document version {version!r}: this server reads version 1.")
    names = _object(data, "names") or {}
    history = _list(data, "history")
    if len(history) > MAX_HISTORY:
        raise BucketError(f"`history` has {len(history)} messages; at most {MAX_HISTORY} are accepted.")
    items = data.get("items")
    return BucketDocument(
        user_name=_text(names, "user", "names.user") or "User",
        char_name=_text(names, "char", "names.char") or "Assistant",
        system_prompt=_optional_text(data, "system_prompt"),
        channel_prompt=_channel_prompt(data.get("channel_prompt")),
        persona_prompt=_text(data, "persona_prompt"),
        personality=_texts(data, "personality"),
        server_info=_text(data, "server_info"),
        server_memories=_texts(data, "server_memories"),
        emojis=_texts(data, "emojis"),
        stickers=_texts(data, "stickers"),
        users_in_conversation=_text(data, "users_in_conversation"),
        documents=_texts(data, "documents"),
        conditioning=_text(data, "conditioning"),
        sample_dialogues=tuple(_sample(entry, i) for i, entry in enumerate(_list(data, "sample_dialogues"))),
        history=_history_of(history, grouped=data.get("group") is not None),
        short_term_memory=tuple(
            _stm_line(entry, i) for i, entry in enumerate(_list(data, "short_term_memory"))
        ),
        tail_directives=_texts(data, "tail_directives"),
        stm_context=_stm_inputs(data.get("stm_context")),
        budget=_budget(data.get("budget")),
        impersonation=_bool(data, "impersonation"),
        now=_moment(data.get("now"), "now"),
        timezone=_timezone(data.get("timezone")),
        seed=_seed(data.get("seed")),
        variables=_object(data, "variables") or {},
        global_variables=_object(data, "global_variables") or {},
        items=None
        if items is None
        else tuple(_item(entry, i) for i, entry in enumerate(_list(data, "items"))),
        generation_type=_generation_type(data.get("generation_type")),
        quiet_prompt=_text(data, "quiet_prompt"),
        scenario=_text(data, "scenario"),
        user_persona=_text(data, "user_persona"),
        model=_text(data, "model"),
        authors_note=_authors_note(data.get("authors_note")),
        chat_length=_int(data.get("chat_length"), "chat_length", optional=True),
        world_info_state=_object(data, "world_info_state") or {},
        group=_group(data.get("group")),
        group_tools=_bool(data, "group_tools"),
    )


def _generation_type(value: Any) -> str:
    if value is None:
        return "normal"
    if not isinstance(value, str) or value not in GENERATION_TYPES:
        raise BucketError("`generation_type` must be one of " + ", ".join(GENERATION_TYPES) + ".")
    return value


def _text(data: dict[str, Any], key: str, label: str | None = None) -> str:
    value = data.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BucketError(f"`{label or key}` must be a string.")
    return value


def _optional_text(data: dict[str, Any], key: str) -> str | None:
    return None if data.get(key) is None else _text(data, key)


def _list(data: dict[str, Any], key: str) -> list[Any]:
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise BucketError(f"`{key}` must be a list.")
    return value


def _texts(data: dict[str, Any], key: str) -> tuple[str, ...]:
    values = _list(data, key)
    for index, value in enumerate(values):
        if not isinstance(value, str):
            raise BucketError(f"`{key}[{index}]` must be a string.")
    return tuple(values)


def _object(data: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = data.get(key)
    if value is not None and not isinstance(value, dict):
        raise BucketError(f"`{key}` must be an object.")
    return value


def _bool(data: dict[str, Any], key: str) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        raise BucketError(f"`{key}` must be true or false.")
    return value


def _entry(entry: Any, label: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise BucketError(f"`{label}` must be an object.")
    return entry


def _role(entry: dict[str, Any], label: str, allowed: tuple[str, ...]) -> str:
    role = entry.get("role")
    if not isinstance(role, str) or role not in allowed:
        choices = " or ".join(f'"{r}"' for r in allowed)
        raise BucketError(f"`{label}.role` must be {choices}.")
    return role


def _channel_prompt(value: Any) -> ChannelPrompt | None:
    if value is None:
        return None
    entry = _entry(value, "channel_prompt")
    mode = entry.get("mode", "append")
    if mode not in ("append", "replace"):
        raise BucketError('`channel_prompt.mode` must be "append" or "replace".')
    return ChannelPrompt(mode=mode, text=_text(entry, "text", "channel_prompt.text"))


def _sample(value: Any, index: int) -> SampleDialogue:
    label = f"sample_dialogues[{index}]"
    entry = _entry(value, label)
    return SampleDialogue(
        user=_text(entry, "user", f"{label}.user"), char=_text(entry, "char", f"{label}.char")
    )


def _history_of(history: list[Any], *, grouped: bool) -> tuple[HistoryMessage, ...]:
    """The history's messages; a group document's may also be narrator lines (role system, named)."""
    if not grouped:
        return tuple(_history(entry, i) for i, entry in enumerate(history))
    messages = tuple(_history(entry, i, GROUP_HISTORY_ROLES) for i, entry in enumerate(history))
    for index, message in enumerate(messages):
        if message.role == "system" and not message.name.strip():
            raise BucketError(f"`history[{index}].name` must name the narrator of a system message.")
    return messages


def history_messages(entries: list[Any]) -> tuple[HistoryMessage, ...]:
    """History entries read once, as a document's `history` reads them (any role a group's history
    may hold): a caller that sends the same history again (a stored conversation) may put these
    in the document instead of the entries, and they are taken as they are."""
    return tuple(_history(entry, i, GROUP_HISTORY_ROLES) for i, entry in enumerate(entries))


def _history(value: Any, index: int, roles: tuple[str, ...] = HISTORY_ROLES) -> HistoryMessage:
    if value.__class__ is HistoryMessage:  # read before (history_messages): only its role to check
        _role({"role": value.role}, f"history[{index}]", roles)
        return value  # type: ignore[no-any-return]
    if value.__class__ is dict and value.get("timestamp") is None:
        # The usual message, checked without building the labels only an error needs.
        role, name, content = value.get("role"), value.get("name"), value.get("content")
        name = "" if name is None else name
        content = "" if content is None else content
        if role in roles and name.__class__ is str and content.__class__ is str:
            return HistoryMessage(role, name, content)
    label = f"history[{index}]"
    entry = _entry(value, label)
    return HistoryMessage(
        role=_role(entry, label, roles),
        name=_text(entry, "name", f"{label}.name"),
        content=_text(entry, "content", f"{label}.content"),
        timestamp=_moment(entry.get("timestamp"), f"{label}.timestamp"),
    )


def _stm_line(value: Any, index: int) -> StmLine:
    label = f"short_term_memory[{index}]"
    entry = _entry(value, label)
    same = entry.get("same_channel", False)
    if not isinstance(same, bool):
        raise BucketError(f"`{label}.same_channel` must be true or false.")
    return StmLine(
        role=_role(entry, label, ROLES), text=_text(entry, "text", f"{label}.text"), same_channel=same
    )


def _item(value: Any, index: int) -> TaggedItem:
    label = f"items[{index}]"
    entry = _entry(value, label)
    tag = entry.get("tag")
    if tag not in TAGS:
        raise BucketError(f"`{label}.tag` must be one of the native tags, such as SYSTEM_HUMANIZER_RULES.")
    fallback = entry.get("fallback", False)
    if not isinstance(fallback, bool):
        raise BucketError(f"`{label}.fallback` must be true or false.")
    return TaggedItem(
        tag=tag,
        role=_role(entry, label, ROLES),
        text=_text(entry, "text", f"{label}.text"),
        fallback=fallback,
        name=_text(entry, "name", f"{label}.name"),
    )


@overload
def _int(value: Any, label: str) -> int: ...
@overload
def _int(value: Any, label: str, *, optional: bool) -> int | None: ...
def _int(value: Any, label: str, *, optional: bool = False) -> int | None:
    if value is None and optional:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise BucketError(f"`{label}` must be a whole number.")


@overload
def _discord_id(value: Any, label: str) -> int: ...
@overload
def _discord_id(value: Any, label: str, *, optional: bool) -> int | None: ...
def _discord_id(value: Any, label: str, *, optional: bool = False) -> int | None:
    """A Discord id sent as a JSON number or, as discord.js sends it, a string of digits (64-bit)."""
    if value is None and optional:
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63:
        return value
    raise BucketError(f"`{label}` must be a Discord id: a positive whole number, as a string or a number.")


def _stm_inputs(value: Any) -> StmContext | None:
    if value is None:
        return None
    entry = _entry(value, "stm_context")
    provider = entry.get("provider") or ""
    if not isinstance(provider, str):
        raise BucketError("`stm_context.provider` must be a string.")
    lineage = entry.get("lineage") or ""
    if not isinstance(lineage, str):
        raise BucketError("`stm_context.lineage` must be a string.")
    return StmContext(
        channel=_discord_id(entry.get("channel"), "stm_context.channel"),
        user=_discord_id(entry.get("user"), "stm_context.user"),
        parent_channel=_discord_id(entry.get("parent_channel"), "stm_context.parent_channel", optional=True),
        lineage=lineage,
        has_tools=_bool(entry, "has_tools"),
        provider=provider,
        long_term_intent=_bool(entry, "long_term_intent"),
    )


def _authors_note(value: Any) -> AuthorsNote:
    if value is None:
        return AuthorsNote()
    entry = _entry(value, "authors_note")
    position = entry.get("position", "in_chat")
    if position not in AUTHORS_NOTE_POSITIONS:
        raise BucketError("`authors_note.position` must be one of " + ", ".join(AUTHORS_NOTE_POSITIONS) + ".")
    depth = _int(entry.get("depth", 4), "authors_note.depth")
    interval = _int(entry.get("interval", 1), "authors_note.interval")
    if not 0 <= depth <= 10_000 or not 0 <= interval <= 10_000:
        raise BucketError("`authors_note.depth` and `authors_note.interval` must be between 0 and 10000.")
    return AuthorsNote(
        text=_text(entry, "text", "authors_note.text"),
        position=position,
        depth=depth,
        role=_role(entry, "authors_note", ROLES) if "role" in entry else "system",
        interval=interval,
    )


def _group(value: Any) -> GroupTurn | None:
    if value is None:
        return None
    entry = _entry(value, "group")
    name = _text(entry, "name", "group.name").strip()
    speaker = _text(entry, "speaker", "group.speaker").strip()
    if not name:
        raise BucketError("`group.name` must name one of the server's groups.")
    if not speaker:
        raise BucketError("`group.speaker` must name the member who speaks.")
    return GroupTurn(
        name=name,
        speaker=speaker,
        scenario_override=_optional_text(entry, "scenario_override"),
        examples_override=_optional_text(entry, "examples_override"),
    )


def _budget(value: Any) -> Budget | None:
    if value is None:
        return None
    entry = _entry(value, "budget")
    context = _int(entry.get("context"), "budget.context")
    reply = _int(entry.get("reply", 0), "budget.reply")
    if context <= 0 or reply < 0 or reply >= context:
        raise BucketError("`budget.context` must be positive and larger than `budget.reply`.")
    return Budget(context=context, reply=reply)


def _moment(value: Any, label: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise BucketError(f"`{label}` must be an ISO 8601 date and time, such as 2026-11-21T20:07:30Z.")
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        raise BucketError(
            f"`{label}` must be an ISO 8601 date and time, such as 2026-11-21T20:07:30Z."
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _timezone(value: Any) -> str:
    if value is None or value == "":
        return "UTC"
    if not isinstance(value, str):
        raise BucketError("`timezone` must be an IANA time zone name, such as Europe/Berlin.")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise BucketError(f"`timezone` {value!r} is not a known IANA time zone name.") from None
    return value


def _seed(value: Any) -> int | None:
    seed = _int(value, "seed", optional=True)
    if seed is not None and not 0 <= seed < 2**63:
        raise BucketError("`seed` must be a non-negative whole number below 2^63.")
    return seed


def format_sample(user: str, char: str, header: str = SAMPLE_HEADER) -> str:
    """One sample dialogue pair in the `{{mesExamples}}` format (docs/assembly.md#the-bucket-document)."""
    lines = [header] if header else []
    if user.strip():
        lines.append(f"{{{{user}}}}: {user}")
    if char.strip():
        lines.append(f"{{{{char}}}}: {char}")
    return "\n".join(lines) if len(lines) > (1 if header else 0) else ""
