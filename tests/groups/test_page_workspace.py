"""The Groups page, finished (issue 48 item 5): channels by name, members' notes and the channels'
Author's Notes written on the page, "Preview as <member>", readable audit entries, refusals with a
message, and a card's deletion naming the groups it leaves."""

from __future__ import annotations

import html

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from groups import selectors, services
from memory import services as memory_services
from servers.directory import DirectoryChannel
from servers.models import AuditEvent

pytestmark = pytest.mark.django_db

CELLAR = 1234567890123456790


@pytest.fixture
def party(lantern, party_cards, committed):
    with committed(execute=True):
        group = services.group_save(
            server=lantern, name="Party", members=["Mira", "Tomas", "Old Tom"], muted=["Old Tom"], by=SYSTEM
        )
    return group


@pytest.fixture
def cellar(lantern):
    memory_services.directory_push(
        server_id=lantern.pk,
        channels=[DirectoryChannel(id=CELLAR, name="cellar", parent=None, private=False)],
        members=[],
        by=SYSTEM,
    )


def text(answer) -> str:
    """The page as a reader sees its words (entities such as &#x27; decoded)."""
    return html.unescape(answer.content.decode())


def page_text(client, lantern) -> str:
    return text(client.get(reverse("groups:list", args=[lantern.pk])))


def test_the_page_names_the_channels_in_the_confirmation_the_channels_column_and_the_notes(
    client, alice, lantern, party, cellar, committed
):
    client.force_login(alice)
    with committed(execute=True):
        answer = client.post(
            reverse("groups:channel-set", args=[lantern.pk]),
            {"channel": str(CELLAR), "group": str(party.pk)},
            follow=True,
        )
        services.member_note_set(
            server=lantern,
            group_name="Party",
            channel_id=CELLAR,
            member="Mira",
            text="Owes Tomas.",
            by=SYSTEM,
        )
    said = text(answer)
    assert "#cellar now uses the group “Party”." in said
    page = page_text(client, lantern)
    row = page.split('data-group="')[1].split("</tr>")[0]
    assert "#cellar" in row and str(CELLAR) not in row.replace(f'title="{CELLAR}"', "")
    notes = page.split('id="notes"')[1].split("</section>")[0]
    assert "#cellar" in notes and "Owes Tomas." in notes


def test_alice_adds_edits_and_clears_a_members_note_on_the_page(client, alice, lantern, party, party_cards):
    client.force_login(alice)
    url = reverse("groups:note-save", args=[lantern.pk])
    tomas = party_cards["Tomas"].pk
    client.post(url, {"channel": "77", "card": str(tomas), "text": "\nHides the key."})
    assert selectors.notes_for(lantern)[0]["text"] == "\nHides the key."  # kept byte for byte
    client.post(url, {"channel": "77", "card": str(tomas), "text": "Gave the key back."})
    assert [n["text"] for n in selectors.notes_for(lantern)] == ["Gave the key back."]
    answer = client.post(url, {"channel": "77", "card": str(tomas), "text": ""}, follow=True)
    assert "Cleared Tomas's note in channel 77." in text(answer)
    assert selectors.notes_for(lantern) == []
    assert [e.action for e in AuditEvent.objects.filter(action__startswith="group.note").order_by("pk")] == [
        "group.note",
        "group.note",
        "group.note.clear",
    ]


def test_a_note_for_a_card_in_no_group_or_of_another_server_is_refused_with_a_message(
    client, alice, lantern, party, harbor_card
):
    client.force_login(alice)
    answer = client.post(
        reverse("groups:note-save", args=[lantern.pk]),
        {"channel": "77", "card": str(harbor_card.pk), "text": "x"},
        follow=True,
    )
    assert "Choose a member of one of this server's groups." in text(answer)
    assert selectors.notes_for(lantern) == []


def test_alice_writes_and_clears_a_channels_authors_note_on_the_page(client, alice, lantern, cellar):
    client.force_login(alice)
    url = reverse("groups:authors-note-save", args=[lantern.pk])
    answer = client.post(url, {"channel": str(CELLAR), "text": "It is raining."}, follow=True)
    assert "Saved the Author's Note of #cellar." in text(answer)
    assert selectors.authors_note(lantern.pk, CELLAR) == "It is raining."
    section = page_text(client, lantern).split('data-testid="authors-notes"')[1].split("</section>")[0]
    assert "#cellar" in section and "It is raining." in section
    client.post(url, {"channel": str(CELLAR), "text": ""})
    assert not selectors.authors_notes_for(lantern)


def test_bob_reads_the_notes_but_has_no_form_and_cannot_post_one(client, bob, lantern, party, party_cards):
    services.authors_note_set(server=lantern, channel_id=77, text="Fog.", by=SYSTEM)
    client.force_login(bob)
    page = page_text(client, lantern)
    assert "Fog." in page and 'data-testid="authors-note-form"' not in page and "note-form" not in page
    url = reverse("groups:authors-note-save", args=[lantern.pk])
    assert client.post(url, {"channel": "77", "text": "Sun."}).status_code == 403
    assert selectors.authors_notes_for(lantern)[0]["text"] == "Fog."


def test_charlie_cannot_write_the_lantern_guilds_notes(client, charlie, lantern, party, party_cards):
    client.force_login(charlie)
    note = {"channel": "77", "card": str(party_cards["Mira"].pk), "text": "x"}
    assert client.post(reverse("groups:note-save", args=[lantern.pk]), note).status_code == 404
    assert (
        client.post(reverse("groups:authors-note-save", args=[lantern.pk]), {"channel": "77", "text": "x"})
    ).status_code == 404
    assert selectors.notes_for(lantern) == [] and selectors.authors_notes_for(lantern) == []


def test_each_member_has_a_preview_as_link_where_its_card_wins_over_the_samples_fields(
    client, alice, lantern, party
):
    client.force_login(alice)
    assert "Preview as Tomas" in page_text(client, lantern)
    url = reverse("assembly:preview", args=[lantern.pk]) + "?group=Party&speaker=Tomas"
    page = text(client.get(url))
    assert "Previewing as Tomas" in page
    shown = page.split('class="preview-result"')[1]  # what is sent, below the sample's own editor
    assert "Tomas keeps the lighthouse." in shown  # the speaker's card description, not the sample's
    assert "curious fox spirit" not in shown  # the sample's own description gave way


def test_a_muted_box_on_a_card_that_is_not_a_member_is_refused_with_a_message(
    client, alice, lantern, party_cards
):
    client.force_login(alice)
    ids = {name: card.pk for name, card in party_cards.items()}
    form = {"name": "Party", f"member-{ids['Mira']}": "on", f"muted-{ids['Tomas']}": "on"}
    answer = client.post(reverse("groups:new", args=[lantern.pk]), form)
    assert answer.status_code == 400
    assert "“Tomas” is muted but is not a member of the group." in text(answer)
    assert not selectors.groups_for(lantern)


def test_a_card_of_another_server_in_the_form_is_refused_with_a_message(
    client, alice, lantern, party_cards, harbor_card
):
    client.force_login(alice)
    form = {"name": "Party", f"member-{party_cards['Mira'].pk}": "on", f"member-{harbor_card.pk}": "on"}
    answer = client.post(reverse("groups:new", args=[lantern.pk]), form)
    assert answer.status_code == 400
    assert "not one of this server's cards" in text(answer)
    assert not selectors.groups_for(lantern)


def test_deleting_a_card_names_the_groups_it_leaves(client, alice, lantern, party, party_cards):
    client.force_login(alice)
    mira = party_cards["Mira"]
    detail = text(client.get(reverse("characters:detail", args=[lantern.pk, mira.pk])))
    assert "This card is in the group “Party”" in detail
    asked = text(client.post(reverse("characters:delete", args=[lantern.pk, mira.pk])))
    assert "It leaves the group “Party”; the other members keep their order." in asked
    answer = client.post(
        reverse("characters:delete", args=[lantern.pk, mira.pk]), {"confirmed": "1"}, follow=True
    )
    assert "Deleted the card “Mira”. It left the group “Party”." in text(answer)


def test_a_group_audit_entry_reads_in_words(client, alice, lantern, party):
    client.force_login(alice)
    page = text(client.get(reverse("servers:audit", args=[lantern.pk])))
    entry = page.split("Group created")[1].split("</tr>")[0]
    assert "generation mode: swap character cards" in entry and "who speaks next: natural order" in entry
    assert "members: Mira, Tomas, Old Tom" in entry and "muted: Old Tom" in entry
    assert "join prefix" not in entry and "join suffix" not in entry


def test_a_hostile_card_name_stays_text_in_the_links_notes_and_confirmation(
    client, alice, lantern, committed
):
    from tests.groups.conftest import add_card

    hostile = '<img src=x onerror=alert(1)>"'
    card = add_card(lantern, hostile)
    with committed(execute=True):
        services.group_save(server=lantern, name="<b>Party</b>", members=[hostile], by=SYSTEM)
    services.member_note_set(
        server=lantern,
        group_name="<b>Party</b>",
        channel_id=77,
        member=hostile,
        text="<script>x</script>",
        by=SYSTEM,
    )
    client.force_login(alice)
    page = client.get(reverse("groups:list", args=[lantern.pk])).content.decode()
    detail = client.get(reverse("characters:detail", args=[lantern.pk, card.pk])).content.decode()
    for shown in (page, detail):
        assert "<img src=x" not in shown and "<b>Party</b>" not in shown and "<script>x" not in shown
    assert "Preview as &lt;img src=x" in page and "group=%3Cb%3EParty%3C%2Fb%3E" in page
