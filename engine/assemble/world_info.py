"""World Info's step: activate, render and place the server's lorebooks before the preset's nodes are
rendered (docs/worldinfo.md#placement)."""

from __future__ import annotations

from ..buckets import SAMPLE_HEADER
from ..cards import Card
from ..parts import Transform
from ..regex import apply_to_entries
from ..tokens import count_text
from ..worldinfo import EntryRewrite, contribute
from .native import macro_env
from .state import State


def world_info(state: State) -> None:
    books = state.request.world_info
    if books is None:
        return
    doc, encoding = state.doc, state.request.encoding
    contribution = contribute(
        books,
        doc,
        state.items,
        env=macro_env(doc, state.items, server_id=state.request.server_id),
        seed=state.seed,
        count_tokens=lambda text: count_text(text, encoding),
        sample_header="" if state.preset is not None else SAMPLE_HEADER,
        rewrite_entries=_entry_scripts(state),
        rewritten_history={index: text for index, (text, _by) in state.rewritten.items()},
        card_texts=_card_scan_texts(state.card),
    )
    for warning in contribution.warnings:
        state.notes.warn(warning)
    if state.preset is None:
        for name in contribution.outlets:
            state.notes.warn(
                f"World Info outlet “{name}” has entries but native assembly has no {{{{outlet::…}}}} to read it."
            )
    state.items = contribution.items
    state.world_info = contribution


def _entry_scripts(state: State) -> EntryRewrite | None:
    """The promptOnly World Info regex scripts (placement 5) as a rewrite of activated entries: their
    texts after the scripts, and the scripts that changed each."""
    if not state.regex_scripts:
        return None
    request = state.regex_request()

    def rewrite(
        entries: list[tuple[str, int | None]],
    ) -> tuple[list[str], dict[int, tuple[Transform, ...]]]:
        result = apply_to_entries(state.regex_scripts, entries, request)
        for failure in result.failures:
            if not failure.inactive:
                state.notes.warn(
                    f"Regex script “{failure.script}” did not run on World Info: {failure.error}"
                )
        changed = {
            index: tuple(Transform(s.label, s.id) for s in scripts)
            for index, scripts in result.changed_by.items()
        }
        return list(result.texts), changed

    return rewrite


def _card_scan_texts(card: Card | None) -> dict[str, str]:
    """The card texts World Info's `match*` flags scan besides the document's (docs/worldinfo.md)."""
    if card is None:
        return {}
    depth = card.depth_prompt.prompt if card.depth_prompt is not None else ""
    return {"depth_prompt": depth, "creator_notes": card.creator_notes.replace("\r", "")}
