"""Fixtures for sample conversations: a conversation on the Lantern Guild and a way to add messages."""

from __future__ import annotations

import pytest

from conversations import services
from conversations.models import SampleConversation


@pytest.fixture
def dungeon(lantern, alice) -> SampleConversation:
    return services.conversation_create(server=lantern, name="Dungeon run", by=alice)


@pytest.fixture
def say(dungeon, alice):
    """say(text, role="assistant") appends a message to the dungeon conversation and returns it."""

    def add(text: str, role: str = "assistant", speaker: str = "Narrator"):
        message, _ = services.message_add(
            conversation=dungeon, role=role, speaker=speaker, text=text, by=alice
        )
        return message

    return add
