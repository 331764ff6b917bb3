"""Build small lorebooks and run World Info activation on them."""

from __future__ import annotations

from typing import Any, cast

import pytest

from engine.worldinfo import (
    Activation,
    ActivationRequest,
    ScanMessage,
    ScanTexts,
    WorldInfoSettings,
    activate,
    compile_book,
)
from engine.worldinfo.fields import normalise_entry


def words(text: str) -> int:
    """A simple token counter for tests: one token per whitespace-separated word."""
    return len(text.split())


def book(*entries: dict[str, Any], name: str = "Lore", character: bool = False):
    parsed = []
    for index, raw in enumerate(entries):
        problems: list[str] = []
        parsed.append(normalise_entry(raw, raw.get("uid", index), problems.append))
        assert not problems, problems
    return compile_book(name, parsed, is_character=character)


def history(*texts: str, name: str = "Ann") -> tuple[ScanMessage, ...]:
    return tuple(ScanMessage(name=name, text=text, number=i + 1) for i, text in enumerate(texts))


def run(
    books,
    messages: tuple[str, ...] | tuple[ScanMessage, ...] = (),
    *,
    count=words,
    texts: dict[str, str] | None = None,
    **options: Any,
) -> Activation:
    if not isinstance(books, (list, tuple)):
        books = [books]
    scan = (
        cast("tuple[ScanMessage, ...]", messages)  # messages of the scan's own type, as given
        if messages and isinstance(messages[0], ScanMessage)
        else history(*cast("tuple[str, ...]", messages))
    )
    settings = WorldInfoSettings(**options.pop("settings", {}))
    request = ActivationRequest(
        books=books,
        texts=ScanTexts(history=scan, **(texts or {})),
        settings=settings,
        names=options.pop("names", {"user": "Ann", "char": "Mira"}),
        chat_length=options.pop("chat_length", len(scan)),
        **options,
    )
    return activate(request, count_tokens=count)


def uids(result: Activation) -> list[int]:
    return [a.entry.uid for a in result.activated]


def reasons(result: Activation) -> dict[int, str]:
    return {s.entry.uid: s.reason for s in result.skipped}


@pytest.fixture
def wi_run():
    return run
