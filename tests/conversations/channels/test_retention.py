"""Per-server retention of stored channel messages (docs/channels.md#retention-and-forgetting)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from conversations.channels.services import ChannelError, settings_set
from conversations.models import ChannelMessage
from conversations.tasks import expire_channel_messages
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_messages_past_the_count_expire_oldest_first_and_the_variables_stay(bot, lantern, alice, stored_ids):
    settings_set(server=lantern, user_writes=False, keep_messages=2, keep_days=30, by=alice)
    bot.post("1000", "{{setvar::gold::10}}")
    bot.post("1001", "{{addvar::gold::5}}")
    bot.post("1002", "{{addvar::gold::1}}")
    expire_channel_messages()
    assert stored_ids(bot.conversation()) == ["1001", "1002"]
    assert bot.variables() == {"gold": 16}
    bot.call("DELETE", "channels/111222333444555666/messages/1002")
    assert bot.variables() == {"gold": 15}  # the expired setvar still counts, from the base


def test_messages_older_than_the_days_expire_with_the_default_of_30(bot, stored_ids):
    bot.post("1000", "old")
    bot.post("1001", "new")
    ChannelMessage.objects.filter(discord_id=1000).update(created_at=timezone.now() - timedelta(days=31))
    expire_channel_messages()
    assert stored_ids(bot.conversation()) == ["1001"]


def test_a_retention_change_is_audited_with_before_and_after(lantern, alice):
    settings_set(server=lantern, user_writes=True, keep_messages=100, keep_days=7, by=alice)
    event = AuditEvent.objects.get(action="channel.settings")
    assert event.detail["before"] == {"user_writes": False, "keep_messages": 500, "keep_days": 30}
    assert event.detail["after"] == {"user_writes": True, "keep_messages": 100, "keep_days": 7}


def test_limits_out_of_range_are_refused(lantern, alice):
    with pytest.raises(ChannelError):
        settings_set(server=lantern, user_writes=False, keep_messages=0, keep_days=30, by=alice)
