"""Where this assembly knowingly differs from what SillyTavern 1.18 would send
(docs/fidelity.md#the-deliberate-differences).

Each deliberate difference that applies to one assembly becomes one sentence, in the order of
docs/fidelity.md#the-deliberate-differences, so the preview can say "here, and why" rather than leave a
support person to find it. Only preset assemblies are compared: without a preset the prompt is the bot's own
layout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ..buckets import BucketDocument
from ..compiled import CompiledPreset
from ..macros import CompiledText, Macro, Scoped, has_angle_form, parse_roll
from .rearrange import ANCHORED_BLOCKS, PRE_HISTORY_BLOCKS

SERVER_ONLY_TAGS = frozenset((*ANCHORED_BLOCKS, *PRE_HISTORY_BLOCKS))  # no SillyTavern marker places them
RANDOM_MACROS = frozenset({"random", "roll", "pick"})
_NAMES_IN_TEXT = (-1, 0)  # names_behavior values under which SillyTavern sends user text bare
_SHOWN = 3  # macros quoted per sentence
MAX_DICE, MAX_SIDES = 100, 1000  # engine.macros' {{roll}} limits (docs/macros.md)


def differences(
    doc: BucketDocument,
    preset: CompiledPreset | None,
    tags: Iterable[str],
    *,
    style: str,
    injected: bool,
    blank_dropped: bool,
    sample_note: bool,
    authors_note_entries: bool,
    world_info_notes: Sequence[str] = (),
    card_book: bool = False,
) -> tuple[str, ...]:
    """The sentences of docs/fidelity.md#the-deliberate-differences that apply to this assembly (empty without
    a preset); `tags` are the tags of the messages sent, the history's aside (they are the chat's)."""
    if preset is None:
        return ()
    facts = _history_facts(doc)
    server_only = not SERVER_ONLY_TAGS.isdisjoint(tags)
    # The sentences depend on the preset (its memo holds them), the document's history facts and these
    # flags: a bot's calls repeat them, so the last answer is kept with what it was worked out from.
    key = (facts, style, injected, blank_dropped, sample_note, server_only, authors_note_entries,
           tuple(world_info_notes), card_book)  # fmt: skip
    kept = preset.memo.differences
    if kept is not None and kept[0] == key:
        same: tuple[str, ...] = kept[1]
        return same
    out = _chat_sentences(preset, facts, style, injected, blank_dropped, sample_note, server_only)
    piped = _piped_macros(preset)
    if piped:
        quoted = ", ".join(piped[:_SHOWN]) + (" …" if len(piped) > _SHOWN else "")
        out.append(
            f"SillyTavern 1.18 sends this macro as written (it reads the “|” in its arguments as a "
            f"filter and fails); the bot evaluates it: {quoted}."
        )
    if authors_note_entries:
        out.append(
            "World Info entries at the Author's Note positions are sent once; SillyTavern 1.18 repeats "
            "them when it evaluates World Info a second time."
        )
    if _dotted_reads(preset):
        out.append(
            "{{getvar}} with a dotted name reads into the variable's JSON value; SillyTavern 1.18 reads a "
            "variable of that exact name."
        )
    if _draws(preset):
        out.append(
            "{{random}}, {{roll}} and {{pick}} draw from the bot's seeded source, so the values differ "
            "from those SillyTavern 1.18 would draw."
        )
    clamped = _clamped_rolls(preset)
    if clamped:
        out.append(
            f"{{{{roll}}}} is limited to {MAX_DICE} dice of {MAX_SIDES} sides; SillyTavern 1.18 rolls any "
            f"number: {', '.join(clamped[:_SHOWN])}{' …' if len(clamped) > _SHOWN else ''}."
        )
    out.extend(world_info_notes)
    if card_book:
        out.append(
            "The card's embedded lorebook is scanned as its linked book; SillyTavern 1.18 scans it only "
            "once the card's lore has been imported and linked."
        )
    found = tuple(out)
    preset.memo.differences = (key, found)
    return found


def _chat_sentences(
    preset: CompiledPreset,
    facts: tuple[bool, bool, bool],
    style: str,
    injected: bool,
    blank_dropped: bool,
    sample_note: bool,
    server_only: bool,
) -> list[str]:
    """The sentences about the chat and the server's own blocks, the first of the list."""
    out: list[str] = []
    named_users, macros_in_chat, blank_in_chat = facts
    if preset.settings.names_behavior in _NAMES_IN_TEXT and named_users:
        out.append(
            "User messages carry the speaker's name in their text because a channel has many speakers; "
            "with this preset's names setting SillyTavern 1.18 sends them without it."
        )
    if macros_in_chat:
        out.append("Macros in chat messages are sent as written; SillyTavern 1.18 would evaluate them.")
    if style == "merge" and injected:
        out.append(
            "Depth injections are merged into history messages (merge style); SillyTavern 1.18 sends each "
            "as a message of its own (standalone style)."
        )
    if blank_dropped or blank_in_chat:
        out.append("A message holding only whitespace was left out; SillyTavern 1.18 sends it.")
    if sample_note:
        out.append("The note after the sample dialogues is the bot's own; SillyTavern 1.18 sends none.")
    if server_only:
        out.append(
            "The server's own blocks (server info, memories, emojis, stickers, users, short-term memory, "
            "documents, conditioning) have no SillyTavern 1.18 equivalent."
        )
    return out


_ROLL = re.compile(r"\{\{\s*roll\s*(?:::|:|\s)\s*([^}]*)\}\}", re.IGNORECASE)
_DOTTED = re.compile(r"\{\{\s*get(?:global)?var\s*::\s*[^}:]*\.[^}]*\}\}", re.IGNORECASE)


def _clamped_rolls(preset: CompiledPreset) -> tuple[str, ...]:
    """The preset's `{{roll}}` formulas our engine clamps (docs/fidelity.md#the-deliberate-differences, item
    10), as written."""
    found = preset.memo.clamped
    if found is None:
        seen: dict[str, None] = {}
        for node in preset.nodes:
            if node.template is None or not node.node.enabled or "roll" not in node.template.macro_names:
                continue
            for match in _ROLL.finditer(node.template.source):
                spec = parse_roll(match.group(1))
                if spec is not None and spec.problem:
                    seen.setdefault(match.group(0)[:80], None)
        found = preset.memo.clamped = tuple(seen)
    return found


def _dotted_reads(preset: CompiledPreset) -> bool:
    """Whether an enabled node reads a variable with a dotted name
    (docs/fidelity.md#the-deliberate-differences, item 8)."""
    found = preset.memo.dotted
    if found is None:
        found = preset.memo.dotted = any(
            node.template is not None and node.node.enabled and _DOTTED.search(node.template.source)
            for node in preset.nodes
        )
    return bool(found)


def _history_facts(doc: BucketDocument) -> tuple[bool, bool, bool]:
    """(a user message has a name, a message holds macro syntax, a message is only whitespace),
    worked out once per document."""
    facts = doc.memo.history_facts
    if facts is None:
        history = doc.history
        facts = doc.memo.history_facts = (
            any(m.role == "user" and m.name for m in history),
            any("{{" in m.content or has_angle_form(m.content) for m in history),
            any(m.content and not m.content.strip() for m in history),
        )
    return facts


def _piped_macros(preset: CompiledPreset) -> tuple[str, ...]:
    """The preset's macros whose arguments hold a `|`, as written (worked out once per preset)."""
    found = preset.memo.piped
    if found is None:
        seen: dict[str, None] = {}
        for node in preset.nodes:
            if node.template is not None and node.node.enabled and "|" in node.template.source:
                for text in _macros_with_pipe(node.template):
                    seen.setdefault(text if len(text) <= 80 else text[:77] + "…", None)
        found = preset.memo.piped = tuple(seen)
    return found


def _macros_with_pipe(template: CompiledText) -> Iterable[str]:
    source = template.source

    def walk(parts: Iterable[object]) -> Iterable[str]:
        for part in parts:
            if isinstance(part, Macro):
                if part.args and part.name != "//" and "|" in source[part.start : part.end]:
                    yield source[part.start : part.end]
                for arg in part.args:
                    yield from walk(arg)
                yield from walk(part.body)
            elif isinstance(part, Scoped):
                yield from walk(part.parts)

    return walk(template.parts)


def _draws(preset: CompiledPreset) -> bool:
    found = preset.memo.draws
    if found is None:
        found = preset.memo.draws = any(
            node.template is not None and node.node.enabled and RANDOM_MACROS & node.template.macro_names
            for node in preset.nodes
        )
    return bool(found)
