"""The Groups page: everyone reads, alice (admin) creates, edits and deletes groups and gives a
channel a group with plain forms; bob reads only; charlie sees nothing of the Lantern Guild."""

from __future__ import annotations

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from groups import selectors, services
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db


def test_alice_creates_a_group_with_a_plain_form_in_the_order_she_numbers(
    client, alice, lantern, party_cards
):
    client.force_login(alice)
    blank = client.get(reverse("groups:new", args=[lantern.pk])).content.decode()
    assert all(f'data-card="{name}"' in blank for name in party_cards)
    ids = {name: card.pk for name, card in party_cards.items()}
    form = {
        "name": "Party",
        f"member-{ids['Mira']}": "on",
        f"position-{ids['Mira']}": "2",
        f"member-{ids['Old Tom']}": "on",
        f"position-{ids['Old Tom']}": "1",
        f"muted-{ids['Old Tom']}": "on",
        "mode": "join_exclude_muted",
        "join_prefix": "[<FIELDNAME>]",
        "strategy": "pooled",
    }
    answer = client.post(reverse("groups:new", args=[lantern.pk]), form)
    assert answer.status_code == 302 and answer["Location"] == reverse("groups:list", args=[lantern.pk])
    group = selectors.engine_group(lantern.pk, "Party")
    assert group is not None
    assert [(m.name, m.muted) for m in group.members] == [("Old Tom", True), ("Mira", False)]
    assert (group.mode, group.strategy, group.join_prefix) == (
        "join_exclude_muted",
        "pooled",
        "[<FIELDNAME>]",
    )
    page = client.get(reverse("groups:list", args=[lantern.pk])).content.decode()
    assert "Party" in page and "Old Tom" in page and "muted" in page


def test_a_refused_form_says_why_and_keeps_what_was_typed(client, alice, lantern, party_cards):
    client.force_login(alice)
    answer = client.post(
        reverse("groups:new", args=[lantern.pk]), {"name": "Empty party", "join_prefix": "kept"}
    )
    assert answer.status_code == 400
    body = answer.content.decode()
    assert "Name at least one member" in body and "Empty party" in body and "kept" in body
    assert not selectors.groups_for(lantern)


def test_alice_edits_a_group_and_its_channels_stay(client, alice, lantern, party_cards, committed):
    group = services.group_save(server=lantern, name="Party", members=["Mira", "Tomas"], by=SYSTEM)
    services.channel_group_set(server=lantern, channel_id=77, group=group, by=SYSTEM)
    client.force_login(alice)
    page = client.get(reverse("groups:edit", args=[lantern.pk, group.pk])).content.decode()
    assert f'name="member-{party_cards["Mira"].pk}" checked' in page
    with committed(execute=True):
        answer = client.post(
            reverse("groups:edit", args=[lantern.pk, group.pk]),
            {f"member-{party_cards['Tomas'].pk}": "on", "strategy": "list", "name": "Renamed?"},
        )
    assert answer.status_code == 302
    stored = selectors.engine_group(lantern.pk, "Party")
    assert stored is not None
    assert [m.name for m in stored.members] == ["Tomas"] and stored.strategy == "list"
    assert selectors.channel_group(lantern.pk, 77) == "Party"


def test_alice_gives_a_channel_a_group_and_takes_it_back(client, alice, lantern, party_cards, committed):
    group = services.group_save(server=lantern, name="Party", members=["Mira"], by=SYSTEM)
    client.force_login(alice)
    with committed(execute=True):
        client.post(
            reverse("groups:channel-set", args=[lantern.pk]), {"channel": "77", "group": str(group.pk)}
        )
    assert selectors.channel_group(lantern.pk, 77) == "Party"
    with committed(execute=True):
        client.post(reverse("groups:channel-set", args=[lantern.pk]), {"channel": "77", "group": ""})
    assert selectors.channel_group(lantern.pk, 77) is None
    answer = client.post(
        reverse("groups:channel-set", args=[lantern.pk]), {"channel": "general"}, follow=True
    )
    assert "is not a channel id" in answer.content.decode()
    assert AuditEvent.objects.filter(action__startswith="group.channel").count() == 2


def test_alice_deletes_a_group(client, alice, lantern, party_cards):
    group = services.group_save(server=lantern, name="Party", members=["Mira"], by=SYSTEM)
    client.force_login(alice)
    assert (
        client.post(reverse("groups:delete", args=[lantern.pk, group.pk]), {"confirmed": "1"}).status_code
        == 302
    )
    assert not selectors.groups_for(lantern)


def test_bob_reads_the_groups_and_the_members_notes_but_cannot_change_them(client, bob, lantern, party_cards):
    group = services.group_save(server=lantern, name="Party", members=["Mira"], by=SYSTEM)
    services.member_note_set(
        server=lantern,
        group_name="Party",
        channel_id=77,
        member="Mira",
        text="Mira owes <b>Tomas</b>.",
        by=SYSTEM,
    )
    client.force_login(bob)
    page = client.get(reverse("groups:list", args=[lantern.pk])).content.decode()
    assert "Party" in page and "New group" not in page and "Delete" not in page
    assert "Mira owes &lt;b&gt;Tomas&lt;/b&gt;." in page
    assert client.get(reverse("groups:new", args=[lantern.pk])).status_code == 403
    assert client.post(reverse("groups:delete", args=[lantern.pk, group.pk])).status_code == 403
    assert selectors.groups_for(lantern)


def test_charlie_cannot_see_or_touch_the_lantern_guilds_groups(client, charlie, lantern, party_cards):
    group = services.group_save(server=lantern, name="Party", members=["Mira"], by=SYSTEM)
    client.force_login(charlie)
    assert client.get(reverse("groups:list", args=[lantern.pk])).status_code == 404
    assert client.post(reverse("groups:delete", args=[lantern.pk, group.pk])).status_code == 404
    assert selectors.groups_for(lantern)


def test_card_names_with_markup_are_shown_as_text(client, alice, lantern, committed):
    from .conftest import add_card

    add_card(lantern, "<b>Bold</b>")
    services.group_save(server=lantern, name="<i>Party</i>", members=["<b>Bold</b>"], by=SYSTEM)
    client.force_login(alice)
    page = client.get(reverse("groups:list", args=[lantern.pk])).content.decode()
    assert "<b>Bold</b>" not in page and "&lt;b&gt;Bold&lt;/b&gt;" in page and "<i>Party</i>" not in page


def test_bob_reviews_a_channels_memory_and_reads_the_group_members_notes_kept_there(
    client, bob, lantern, party_cards, committed
):
    with committed(execute=True):
        services.group_save(server=lantern, name="Party", members=["Mira", "Tomas"], by=SYSTEM)
    with committed(execute=True):
        services.member_note_set(
            server=lantern, group_name="Party", channel_id=77, member="Tomas",
            text="<b>Tomas</b> hides the key.", by=SYSTEM,
        )  # fmt: skip
        services.member_note_set(
            server=lantern, group_name="Party", channel_id=78, member="Mira",
            text="Mira owes the bard.", by=SYSTEM,
        )  # fmt: skip
    client.force_login(bob)
    here = client.get(reverse("memory:review", args=[lantern.pk]) + "?channel=77&user=5").content.decode()
    assert 'data-testid="stm-member-notes"' in here
    assert "&lt;b&gt;Tomas&lt;/b&gt; hides the key." in here and "<b>Tomas</b>" not in here
    assert "Mira owes the bard." not in here  # another channel's note stays with that channel
    elsewhere = client.get(
        reverse("memory:review", args=[lantern.pk]) + "?channel=79&user=5"
    ).content.decode()
    assert 'data-testid="stm-member-notes"' not in elsewhere
