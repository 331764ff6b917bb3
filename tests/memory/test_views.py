"""The review page: who may see and edit it, verdicts from the shared code path, htmx and no-JS writes."""

from __future__ import annotations

from django.urls import reverse

from core.actors import SYSTEM
from memory.models import Channel
from servers.models import AuditEvent

from .conftest import HARBOR, LANTERN, MIRA


def review_url(**query) -> str:
    url = reverse("memory:review", args=[LANTERN])
    return url + ("?" + "&".join(f"{k}={v}" for k, v in query.items()) if query else "")


def private_url(channel: int) -> str:
    return reverse("memory:channel-private", args=[LANTERN, channel])


def test_carol_the_support_agent_sees_every_verdict(client, carol, store):
    store(600, summary="Mira ordered ale.")
    store(601, private=True, summary="officers only")
    store(602, hours_ago=13)
    store(800, server=HARBOR, summary="harbor talk")
    client.force_login(carol)
    response = client.get(review_url(channel=500, user=MIRA))
    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-verdict="shown"' in body
    assert 'data-verdict="hidden_private_channel"' in body
    assert 'data-verdict="expired"' in body
    assert 'data-verdict="hidden_no_opt_in"' in body
    assert "Mira ordered ale." in body
    assert "harbor talk" not in body  # another server's text stays there


def test_the_page_shows_the_items_the_contributor_produces(client, bob, store):
    store(600, summary="Mira ordered ale.")
    client.force_login(bob)
    body = client.get(review_url(channel=500, user=MIRA)).content.decode()
    assert (
        "[System: You remember a recent conversation in &lt;#600&gt; (1 hour ago): Mira ordered ale.]" in body
    )


def test_memory_text_is_escaped(client, bob, store):
    store(600, summary="<img src=x onerror=alert(1)>")
    client.force_login(bob)
    body = client.get(review_url(channel=500, user=MIRA)).content.decode()
    assert "<img src=x" not in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body


def test_charlie_gets_404_for_lantern_memory(client, charlie, lantern):
    client.force_login(charlie)
    assert client.get(review_url()).status_code == 404


def test_carol_cannot_mark_a_channel_private(client, carol, store):
    store(600)
    client.force_login(carol)
    assert client.post(private_url(600), {"private": "on"}).status_code == 403
    assert not Channel.objects.get(discord_id=600).is_private


def test_carol_cannot_turn_the_bypass_on(client, carol, lantern):
    client.force_login(carol)
    assert client.post(reverse("memory:bypass", args=[LANTERN]), {"bypass": "on"}).status_code == 403


def test_carol_sees_no_toggle_buttons(client, carol, store):
    store(600)
    client.force_login(carol)
    body = client.get(review_url()).content.decode()
    assert "Make private" not in body
    assert 'data-testid="bypass-toggle"' not in body


def test_bob_marks_a_channel_private_without_javascript_and_returns_to_his_review(client, bob, store):
    store(600)
    client.force_login(bob)
    response = client.post(
        private_url(600), {"private": "on", "channel": "500", "user": str(MIRA), "tools": "yes"}
    )
    assert response.status_code == 302
    assert response["Location"] == review_url(channel=500, user=MIRA, tools="yes")
    assert Channel.objects.get(discord_id=600).is_private
    assert AuditEvent.objects.filter(action="stm.channel_private", actor=bob).exists()


def test_bob_marks_a_channel_private_with_htmx_and_gets_the_updated_review(client, bob, store):
    store(600)
    client.force_login(bob)
    response = client.post(
        private_url(600), {"private": "on", "channel": "500", "user": str(MIRA)}, HTTP_HX_REQUEST="true"
    )
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in body
    assert 'data-verdict="hidden_private_channel"' in body


def test_alice_turns_the_bypass_on_and_private_memories_show(client, alice, store, lantern):
    store(600, private=True)
    client.force_login(alice)
    client.post(reverse("memory:bypass", args=[LANTERN]), {"bypass": "on"})
    lantern.refresh_from_db()
    assert lantern.stm_privacy_bypass
    assert 'data-verdict="shown"' in client.get(review_url(channel=500, user=MIRA)).content.decode()
    assert AuditEvent.objects.filter(action="stm.bypass_on", actor=alice).exists()


def test_bob_cannot_toggle_another_servers_channel_through_lantern(client, bob, store):
    store(800, server=HARBOR)
    client.force_login(bob)
    assert client.post(private_url(800), {"private": "on"}).status_code == 404


def test_a_dm_channel_cannot_be_reviewed_from_a_server_page(client, bob, store):
    store(900, server=None, summary="a private DM")
    client.force_login(bob)
    body = client.get(review_url(channel=900, user=MIRA)).content.decode()
    assert "is not a channel of this server" in body
    assert "a private DM" not in body


def test_a_user_id_that_is_not_a_number_asks_again(client, bob, lantern):
    client.force_login(bob)
    body = client.get(review_url(channel=500, user="mira")).content.decode()
    assert "Choose a channel and a user" in body


def test_the_consents_that_apply_are_shown_to_the_reviewer(client, bob, store, lantern):
    from memory import services

    store(600)
    store(800, server=HARBOR)
    client.force_login(bob)
    body = client.get(review_url(channel=500, user=MIRA)).content.decode()
    assert (
        "Consent relayed by this server (its memories of this user may surface in their other servers): <strong>no</strong>"
        in body
    )
    assert "<strong>0</strong> other servers" in body
    services.user_set_opt_in(user_id=MIRA, opt_in=True, server=LANTERN)
    services.user_set_opt_in(user_id=MIRA, opt_in=True, server=HARBOR)
    body = client.get(review_url(channel=500, user=MIRA)).content.decode()
    assert "may surface in their other servers): <strong>yes</strong>" in body
    assert "<strong>0</strong> other servers (this server does not receive other servers' memories)" in body
    services.server_set_receive_other_servers(server=lantern, receive=True, by=SYSTEM)
    body = client.get(review_url(channel=500, user=MIRA)).content.decode()
    assert "<strong>1</strong> other server;" in body
