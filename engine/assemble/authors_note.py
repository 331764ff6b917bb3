"""SillyTavern's Author's Note (docs/assembly.md#what-sillytavern-118-corrected): the document's note, with
World Info's Author's Note entries around it, in the chat at the note's depth and role, or as a message beside
the main prompt.

SillyTavern 1.18 adds the note (and those entries) only every `interval` user messages; its in-chat
text is the top entries, the note and the bottom entries joined with newlines (engine.assemble.injection)."""

from __future__ import annotations

from dataclasses import replace

from ..buckets import AuthorsNote, BucketDocument
from ..parts import Injection, Item, Notes, Part, assembler_source
from ..worldinfo import AN_BOTTOM_INDEX, CARD_DEPTH_INDEX, INJECTION_INDEX, INJECTION_ORDER
from .rearrange import Arrangement

SOURCE = assembler_source("authors_note")
TEXT_INDEX = AN_BOTTOM_INDEX - 1  # between the note's top entries and its bottom ones


def applies(note: AuthorsNote, doc: BucketDocument) -> bool:
    """Whether SillyTavern adds the note to this generation (every `interval` user messages)."""
    users = 1 if note.interval == 1 else sum(1 for m in doc.history if m.role == "user")
    if users <= 0 or note.interval <= 0:
        return False
    left = users % note.interval if users >= note.interval else note.interval - users
    return left == 0


def is_note_entry(inj: Injection) -> bool:
    """A World Info entry at the Author's Note's top or bottom position."""
    return inj.source.kind == "world_info" and INJECTION_INDEX <= inj.index < CARD_DEPTH_INDEX


def place_authors_note(arrangement: Arrangement, doc: BucketDocument, text: str, notes: Notes) -> None:
    """Put the note (`text`, its macros rendered) and World Info's note entries where the document's
    note says; drop both, with the reason, when this generation is not one the interval picks."""
    if not arrangement.injections and not text.strip():
        return  # no note and no entry (most assemblies)
    note = doc.authors_note
    entries = [inj for inj in arrangement.injections if is_note_entry(inj)]
    others = [inj for inj in arrangement.injections if not is_note_entry(inj)]
    if not text.strip() and not entries:
        return
    if not applies(note, doc):
        arrangement.injections[:] = others
        notes.omit(
            "The Author's Note and its World Info entries.",
            f"It is added every {note.interval} user messages, and this generation is not one of them.",
            SOURCE,
        )
        return
    if note.position == "in_chat":
        moved = [replace(inj, depth=note.depth, role=note.role) for inj in entries]
        if text.strip():
            moved.append(Injection(text, note.depth, INJECTION_ORDER, TEXT_INDEX, note.role, SOURCE))
        arrangement.injections[:] = [*others, *moved]
        return
    arrangement.injections[:] = others
    top = "\n".join(inj.text for inj in entries if inj.index < AN_BOTTOM_INDEX)
    bottom = "\n".join(inj.text for inj in entries if inj.index >= AN_BOTTOM_INDEX)
    joined = "\n".join((top, text, bottom)).strip()
    if not joined:
        return
    sources = tuple(dict.fromkeys([*(inj.source for inj in entries), *((SOURCE,) if text.strip() else ())]))
    item = Item(tag="", role=note.role, parts=(Part(joined, sources, True),))
    for run in (arrangement.before, arrangement.after):
        # the preset's main prompt, else (native assembly, or no enabled main) the server's system prompt
        at = [i for i, it in enumerate(run) if _is_main(it, "node")] or [
            i for i, it in enumerate(run) if _is_main(it, "native")
        ]
        if at:
            run.insert(at[-1] + 1 if note.position == "after_main" else at[0], item)
            return
    notes.omit("The Author's Note.", "It goes beside the main prompt, and nothing here is one.", SOURCE)


def _is_main(item: Item, kind: str) -> bool:
    wanted = ("identifier", "main") if kind == "node" else ("tag", "SYSTEM_HUMANIZER_RULES")
    return any(
        s.kind == kind and getattr(s, wanted[0]) == wanted[1] for part in item.parts for s in part.sources
    )
