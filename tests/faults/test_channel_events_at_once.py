"""Events for one stored channel at the same moment, on the real PostgreSQL with real threads
(docs/channels.md#events): Discord's order kept, the same id stored once."""

from __future__ import annotations

import random

import pytest

from conversations.channels.services import message_post
from conversations.models import ChannelConversation, ChannelMessage

from .test_concurrency import at_once

pytestmark = [pytest.mark.services, pytest.mark.django_db(transaction=True)]
CHANNEL = 1_234_567_890_123_456_789


def post(lantern, message_id: int, content: str):
    return lambda: message_post(
        server_id=lantern.pk, channel_id=CHANNEL, message_id=message_id, role="assistant", content=content
    )


def test_the_same_id_from_four_retries_at_once_is_stored_once(lantern):
    results = at_once(*(post(lantern, 5000, "{{incvar::turn}} Hello.") for _ in range(4)))
    assert not [r for r in results if isinstance(r, Exception)], results
    assert sorted(r.created for r in results) == [False, False, False, True]
    assert ChannelMessage.objects.count() == 1 and ChannelConversation.objects.count() == 1
    assert ChannelConversation.objects.get().variables == {"turn": 1}


def test_events_arriving_at_once_in_any_order_keep_discords_order(lantern):
    letters = "abcdef"
    calls = [post(lantern, 6000 + i, f"{{{{addvar::log::{letter}}}}}") for i, letter in enumerate(letters)]
    random.Random(7).shuffle(calls)
    results = at_once(*calls)
    assert not [r for r in results if isinstance(r, Exception)], results
    assert list(ChannelMessage.objects.order_by("discord_id").values_list("discord_id", flat=True)) == list(
        range(6000, 6006)
    )
    assert ChannelConversation.objects.get().variables == {"log": "abcdef"}
