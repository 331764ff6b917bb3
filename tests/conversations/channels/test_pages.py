"""The stored channel pages (docs/channels.md#pages): who sees what, forgetting asks first, the
preview from a channel as it stands now."""

from __future__ import annotations

import pytest
from django.urls import reverse

from conversations.models import ChannelConversation, ChannelMessage
from core.actors import SYSTEM
from servers.directory import DirectoryChannel, DirectoryMember
from servers.models import AuditEvent
from servers.services import directory_replace

from .conftest import ASKER, TAVERN

pytestmark = pytest.mark.django_db


@pytest.fixture
def tavern(bot, lantern):
    directory_replace(
        server_id=lantern.pk,
        channels=[DirectoryChannel(id=int(TAVERN), name="tavern", parent=None, private=False)],
        members=[DirectoryMember(id=int(ASKER), display_name="Mira of the Hills")],
        by=SYSTEM,
    )
    bot.post("1000", "Hello <b>keeper</b>", role="user")
    bot.post("1001", "Welcome. {{setvar::hp::50}}")
    return int(TAVERN)


def test_carol_and_bob_read_the_channel_by_name_with_ops_and_variables(client, carol, bob, lantern, tavern):
    for person in (carol, bob):
        client.force_login(person)
        page = client.get(reverse("conversations:channel", args=[lantern.pk, tavern])).content.decode()
        assert "#tavern" in page and "Mira of the Hills" in page
        assert "setvar hp = 50" in page and "<code>hp</code>" in page
        assert "Hello &lt;b&gt;keeper&lt;/b&gt;" in page  # what members write is inert


def test_the_list_names_the_channel_and_counts_its_messages(client, carol, lantern, tavern):
    client.force_login(carol)
    page = client.get(reverse("conversations:channels", args=[lantern.pk])).content.decode()
    assert "#tavern" in page and reverse("conversations:channel", args=[lantern.pk, tavern]) in page


def test_forgetting_a_channel_asks_first_and_then_forgets_and_records_it(client, bob, lantern, tavern):
    client.force_login(bob)
    url = reverse("conversations:channel-forget", args=[lantern.pk, tavern])
    client.post(url, {})
    assert ChannelConversation.objects.filter(channel_id=tavern).exists()
    response = client.post(url, {"confirm": "yes"})
    assert response.status_code == 302
    assert not ChannelConversation.objects.filter(channel_id=tavern).exists()
    event = AuditEvent.objects.get(action="channel.forget")
    assert event.actor_label == "bob"
    listed = client.get(reverse("conversations:channels", args=[lantern.pk])).content.decode()
    assert f"forgot channel {tavern} (2 messages)" in listed


def test_carol_forgets_a_member_from_the_channel_page(client, carol, lantern, tavern):
    client.force_login(carol)
    client.post(
        reverse("conversations:member-forget", args=[lantern.pk]),
        {"member": ASKER, "confirm": "yes", "back": str(tavern)},
    )
    assert list(ChannelMessage.objects.values_list("discord_id", flat=True)) == [1001]


def test_only_admins_and_moderators_change_the_rules(client, carol, bob, lantern):
    url = reverse("conversations:channel-rules", args=[lantern.pk])
    client.force_login(carol)
    assert client.post(url, {"keep_messages": "5", "keep_days": "1"}).status_code == 403
    client.force_login(bob)
    client.post(url, {"keep_messages": "5", "keep_days": "1", "user_writes": "on"})
    assert AuditEvent.objects.get(action="channel.settings").detail["after"]["keep_messages"] == 5


def test_charlie_cannot_see_or_forget_the_lantern_guilds_channel(client, charlie, lantern, tavern):
    client.force_login(charlie)
    assert client.get(reverse("conversations:channel", args=[lantern.pk, tavern])).status_code == 404
    forget = reverse("conversations:channel-forget", args=[lantern.pk, tavern])
    assert client.post(forget, {"confirm": "yes"}).status_code == 404
    assert ChannelConversation.objects.filter(channel_id=tavern).exists()


def test_the_preview_starts_from_the_channel_as_it_stands_now(client, carol, lantern, tavern):
    client.force_login(carol)
    page = client.get(
        reverse("assembly:preview", args=[lantern.pk]), {"channel": str(tavern)}
    ).content.decode()
    assert "Welcome." in page and "Hello &lt;b&gt;keeper&lt;/b&gt;" in page
    assert "Hello <b>keeper</b>" not in page


def test_a_threads_parent_sent_with_its_messages_is_the_one_every_page_and_answer_names(
    client, carol, bot, lantern, tavern
):
    thread = "111222333444555777"
    bot.post("2000", "A quest board in a thread", role="user", channel=thread, parent=TAVERN)
    answer = bot.call("GET", f"channels/{thread}/conversation", None).json()
    assert answer["parent"] == TAVERN
    client.force_login(carol)
    page = client.get(reverse("conversations:channel", args=[lantern.pk, int(thread)])).content.decode()
    assert "(thread of #tavern)" in page
    listed = client.get(reverse("conversations:channels", args=[lantern.pk])).content.decode()
    assert "(thread of #tavern)" in listed
