"""What else uses a card, as the question before deleting it names it (docs/presets.md#asking-first).
Groups sit above cards (docs/architecture.md, "Layers"), so the groups app adds its sentence here from
its `AppConfig.ready()`: each entry takes (server id, card id) and returns sentences."""

from __future__ import annotations

from collections.abc import Callable

from core.hooks import Hook

CARD_USES: Hook[Callable[[int, int], list[str]]] = Hook("what uses a card")


def card_uses(server_id: int, card_id: int) -> list[str]:
    """Every sentence the apps above have about what uses the card."""
    return [line for describe in CARD_USES for line in describe(server_id, card_id)]
