"""Generation types (docs/assembly.md#generation-types-and-prefill) and the Anthropic prefill
(docs/assembly.md#generation-types-and-prefill): what each kind of turn changes.

Two moments. Before anything is scanned or placed, `without_replaced_reply` drops the reply a swipe
or regenerate replaces. After the preset has arranged the prompt, `closing_items` adds what the
turn asks for at the very end: the continued message (and the continue nudge), the impersonation
prompt, the quiet prompt, and for Anthropic the assistant prefill. Their texts are macro-rendered
with the preset's variables, in the order they are sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..buckets import BucketDocument, HistoryMessage
from ..macros import MacroEnv, RenderOutput, render_texts, resolve_identity
from ..parts import Item, Notes, Part, Source, native_source, setting_source
from ..st_format import PromptSettings

REPLACING = ("swipe", "regenerate")  # the newest assistant message is being replaced
PREFILL_PROVIDER = "anthropic"


def with_send_if_empty(doc: BucketDocument, settings: PromptSettings | None, notes: Notes) -> BucketDocument:
    """The document with the preset's `send_if_empty` as the user's newest message when a normal
    generation follows the character's message, as SillyTavern 1.18 sends it (docs/assembly.md): its
    identity macros filled in, before World Info scans the history."""
    text = settings.send_if_empty.strip() if settings is not None else ""
    if not text or doc.generation_type != "normal" or not doc.history or doc.history[-1].role != "assistant":
        return doc
    notes.warn(
        "The chat ends with the character's message: the preset's send_if_empty is sent as the user's."
    )
    said = resolve_identity(text, user=doc.user_name, char=doc.char_name)
    return replace(doc, history=(*doc.history, HistoryMessage(role="user", name=doc.user_name, content=said)))


def without_replaced_reply(doc: BucketDocument, notes: Notes) -> BucketDocument:
    """The document a swipe or regenerate assembles: without the newest assistant message."""
    if doc.generation_type not in REPLACING:
        return doc
    newest = next(
        (i for i in range(len(doc.history) - 1, -1, -1) if doc.history[i].role == "assistant"), None
    )
    if newest is None:
        notes.warn(
            f"A {doc.generation_type} replaces the newest assistant message, but the history has none."
        )
        return doc
    notes.omit(
        "The newest assistant message.",
        f"A {doc.generation_type} replaces it, so it is left out before World Info scans the history "
        "or anything is placed.",
        native_source("DIALOGUE_HISTORY"),
    )
    return replace(doc, history=doc.history[:newest] + doc.history[newest + 1 :])


@dataclass(frozen=True, slots=True)
class Closing:
    """What the turn adds at the end, and the variable state after rendering its prompts."""

    items: tuple[Item, ...]
    render: RenderOutput | None  # None when there was nothing to render
    prefill: Item | None = None  # the Anthropic prefill, to add with `after`

    def after(self, items: Sequence[Item]) -> list[Item]:
        """`items` followed by the closing items; a prefill joins an assistant message that ends
        them (a blank line between), else it is a final assistant message of its own."""
        out = [*items, *self.items]
        if self.prefill is None:
            return out
        if out and out[-1].role == "assistant":
            out[-1] = out[-1].with_parts((*out[-1].parts, Part("\n\n", (), False), *self.prefill.parts))
        else:
            out.append(self.prefill)
        return out


def closing_items(
    doc: BucketDocument,
    settings: PromptSettings,
    *,
    continued: Item | None,
    continued_text: str | None = None,
    provider: str | None,
    env: MacroEnv,
    seed: int,
    variables: Mapping[str, Any],
    global_variables: Mapping[str, Any],
    notes: Notes,
) -> Closing:
    """The items the generation type appends after everything the preset arranged
    (docs/assembly.md#generation-types-and-prefill).

    `continued` is the newest history item, taken out of the history for a continue; `continued_text`
    its message's own text (without the `Name: ` the history shows), for `{{lastChatMessage}}`.
    """
    kind = doc.generation_type
    prefill_on = kind == "continue" and settings.continue_prefill
    prompts: list[tuple[str, str]] = []
    if kind == "continue" and continued is not None and not prefill_on:
        prompts.append(("continue_nudge_prompt", settings.continue_nudge_prompt))
    elif kind == "impersonate":
        prompts.append(("impersonation_prompt", settings.impersonation_prompt))
    elif kind == "quiet":
        prompts.append(("quiet_prompt", doc.quiet_prompt))
    prefill_name = "assistant_impersonation" if kind == "impersonate" else "assistant_prefill"
    prefill_text = getattr(settings, prefill_name)
    if prefill_text.strip() and kind != "quiet" and not (prefill_on and continued is None):
        if provider == PREFILL_PROVIDER:
            prompts.append((prefill_name, prefill_text))
        else:
            notes.omit(
                f"The preset's {prefill_name.replace('_', ' ')}.",
                f"Only the Anthropic provider takes a prefill; {provider or 'no provider'} was asked for.",
                setting_source(prefill_name),
            )
    render = None
    texts: dict[str, str] = {}
    if prompts:
        if continued is not None:
            # {{lastChatMessage}} is the continued message's raw text, trimmed (SillyTavern 1.18's
            # openai.js continue nudge takes the chat message itself, never the history's "Name: text")
            text = continued.text if continued_text is None else continued_text
            env = replace(env, last_chat_message=text.strip())
        render = render_texts(
            prompts,
            env=env,
            seed=seed,
            variables=variables,
            global_variables=global_variables,
        )
        for warning in render.warnings:
            notes.warn(warning)
        texts = {segment.key: segment.text for segment in render.segments}
    prefill = texts.get(prefill_name, "").rstrip()
    if prefill and not prefill_on:
        prefill_item = Item(tag="", role="assistant", parts=(_part(prefill, setting_source(prefill_name)),))
        return Closing(tuple(_items(prefill_on, continued, texts, prefill_name)), render, prefill_item)
    return Closing(tuple(_items(prefill_on, continued, texts, prefill_name)), render)


def _items(prefill_on: bool, continued: Item | None, texts: dict[str, str], prefill_name: str) -> list[Item]:
    out: list[Item] = []
    if continued is not None:
        if prefill_on:  # it stays the last message, sent as the assistant's own start
            parts = continued.parts
            prefill = texts.get(prefill_name, "").rstrip()
            if prefill:
                parts = (_part(prefill + "\n\n", setting_source(prefill_name)), *parts)
            return [replace(continued, role="assistant", parts=parts)]
        out.append(continued)
    for key in ("continue_nudge_prompt", "impersonation_prompt", "quiet_prompt"):
        if texts.get(key, "").strip():
            source = setting_source(key) if key != "quiet_prompt" else Source(kind="assembler", name=key)
            out.append(Item(tag="", role="system", parts=(_part(texts[key], source),)))
    return out


def _part(text: str, source: Source) -> Part:
    return Part(text=text, sources=(source,), trusted=True)
