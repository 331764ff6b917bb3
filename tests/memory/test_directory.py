"""The server directory the bot pushes: names for the pages, the private flag for memory, audited,
bounded, read back with GET; ids in either spelling, answered as strings."""

from __future__ import annotations

import json

from django.urls import reverse

from servers import services as server_services
from servers.models import AuditEvent, Channel
from tests.present import present

from .conftest import LANTERN, MIRA

DIRECTORY = f"/api/v1/servers/{LANTERN}/directory"
GENERAL = "1234567890123456789"
CELLAR = "1234567890123456790"


def push(client, token, body, url=DIRECTORY):
    return client.post(
        url, data=json.dumps(body), content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token}"
    )


def tavern(**extra):
    return {
        "channels": [
            {"id": GENERAL, "name": "general", "parent": None, "private": False},
            {"id": int(CELLAR), "name": "cellar", "parent": GENERAL, "private": True},
        ],
        "members": [{"id": str(MIRA), "display_name": "Mira Ashdown"}],
        **extra,
    }


def test_the_bot_pushes_the_directory_and_reads_it_back_with_ids_as_strings(client, api_token):
    assert push(client, api_token, tavern()).status_code == 200
    answer = client.get(DIRECTORY, HTTP_AUTHORIZATION=f"Bearer {api_token}").json()
    assert answer["channels"] == [
        {"id": GENERAL, "name": "general", "parent": None, "private": False},
        {"id": CELLAR, "name": "cellar", "parent": GENERAL, "private": True},
    ]
    assert answer["members"] == [{"id": str(MIRA), "display_name": "Mira Ashdown"}]


def test_a_new_push_replaces_the_previous_directory(client, api_token):
    push(client, api_token, tavern())
    push(client, api_token, {"channels": [{"id": "77", "name": "taproom"}], "members": []})
    answer = client.get(DIRECTORY, HTTP_AUTHORIZATION=f"Bearer {api_token}").json()
    assert [c["name"] for c in answer["channels"]] == ["taproom"]
    assert answer["members"] == []


def test_a_pushed_private_flag_keeps_that_channels_memories_private(client, api_token):
    push(client, api_token, tavern())
    cellar = Channel.objects.get(discord_id=int(CELLAR))
    assert (cellar.is_private, present(cellar.parent).discord_id, cellar.name) == (
        True,
        int(GENERAL),
        "cellar",
    )
    push(client, api_token, tavern(channels=[{"id": CELLAR, "name": "cellar", "private": False}]))
    assert not Channel.objects.get(discord_id=int(CELLAR)).is_private


def test_each_push_is_audited_with_its_counts(client, api_token):
    push(client, api_token, tavern())
    event = AuditEvent.objects.get(action="server.directory")
    assert (event.server_id, event.detail) == (LANTERN, {"channels": 2, "members": 1})


def test_harbors_push_of_a_lantern_channel_id_neither_claims_it_nor_refuses_lantern(
    client, api_token, harbor_token
):
    push(
        client,
        harbor_token,
        {"channels": [{"id": "55", "name": "harbor-secret", "private": True}]},
        url="/api/v1/servers/2002/directory",
    )
    answer = push(client, api_token, {"channels": [{"id": 55, "name": "mine", "private": False}]}).json()
    assert answer["skipped_channels"] == []
    mine = Channel.objects.get(discord_id=55, owner_id=LANTERN)
    assert (mine.name, mine.is_private, mine.server_id) == ("mine", False, LANTERN)
    assert Channel.objects.get(discord_id=55, owner_id=2002).is_private  # Harbor's own record


def test_a_directory_over_the_bound_is_refused(client, api_token):
    channels = [{"id": i, "name": f"c{i}"} for i in range(1, 1002)]
    response = push(client, api_token, {"channels": channels})
    assert response.status_code == 400
    assert "at most 1000" in response.json()["error"]


def test_a_malformed_id_in_the_directory_gets_a_400_naming_it(client, api_token):
    response = push(client, api_token, {"members": [{"id": "12x", "display_name": "Ann"}]})
    assert response.status_code == 400
    assert "`members[0].id`" in response.json()["error"]


def test_the_directory_needs_the_servers_token(client, harbor_token):
    assert push(client, harbor_token, tavern()).status_code == 404


def test_bob_sees_pushed_names_on_the_memory_review(client, api_token, bob, store):
    store(int(GENERAL), user=MIRA, summary="Mira ordered ale.")
    push(client, api_token, tavern())
    client.force_login(bob)
    url = reverse("memory:review", args=[LANTERN]) + f"?channel={GENERAL}&user={MIRA}"
    body = client.get(url).content.decode()
    assert "What the bot remembers in #general for user Mira Ashdown" in body


def test_alice_sees_a_channels_pushed_name_instead_of_its_id_in_the_audit(client, api_token, alice, lantern):
    from servers.models import Channel as StmChannel

    push(client, api_token, tavern())
    cellar = StmChannel.objects.get(discord_id=int(CELLAR))
    server_services.channel_set_private(server=lantern, channel=cellar, private=False, by=alice)
    client.force_login(alice)
    body = client.get(reverse("servers:audit", args=[LANTERN])).content.decode()
    assert "channel: #cellar</span>" in body and f'title="channel: {CELLAR}"' in body
    assert f"channel: {CELLAR}<" not in body


def test_with_a_directory_alice_picks_channels_and_members_by_name(
    client, api_token, alice, lantern, django_capture_on_commit_callbacks
):
    from presets.services import preset_import
    from tests.presets.conftest import make_preset

    preset_import(server=lantern, raw=make_preset(("greet", "Hello.", True)), filename="Inn.json", by=alice)
    client.force_login(alice)
    presets_page = client.get(f"/servers/{LANTERN}/presets/").content.decode()
    assert 'data-testid="no-directory"' in presets_page and 'data-testid="channel-id"' in presets_page
    review = client.get(f"/servers/{LANTERN}/memory/").content.decode()
    assert 'data-testid="no-directory"' in review  # before the push: how to get names
    with django_capture_on_commit_callbacks(execute=True):
        push(client, api_token, tavern())
    presets_page = client.get(f"/servers/{LANTERN}/presets/").content.decode()
    picker = presets_page[presets_page.index('data-testid="channel-picker"') :]
    picker = picker[: picker.index("</select>")]
    general, cellar = picker.index(f'value="{GENERAL}">#general'), picker.index(f'value="{CELLAR}">')
    assert general < cellar and "#cellar (thread)" in picker  # the thread under its channel
    review = client.get(f"/servers/{LANTERN}/memory/").content.decode()
    assert 'data-testid="no-directory"' not in review
    assert f'<option value="{MIRA}">Mira Ashdown</option>' in review


def test_a_review_of_an_unknown_id_says_so(client, api_token, bob, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        push(client, api_token, tavern())
    client.force_login(bob)
    page = client.get(f"/servers/{LANTERN}/memory/", {"channel": GENERAL, "user": "123"}).content.decode()
    assert "No member with id 123 is known on this server" in page
    known = client.get(f"/servers/{LANTERN}/memory/", {"channel": GENERAL, "user": MIRA}).content.decode()
    assert "is known on this server" not in known


def test_a_channel_name_typed_instead_of_an_id_is_answered(client, alice):
    client.force_login(alice)
    page = client.post(f"/servers/{LANTERN}/presets/channels/", {"channel": "general"}, follow=True)
    assert "“general” is not a channel id" in page.content.decode()


def test_the_channel_confirmation_and_the_server_home_name_the_channel_alice_picked(
    client, api_token, alice, lantern, django_capture_on_commit_callbacks
):
    from presets.services import preset_import
    from tests.presets.conftest import make_preset

    inn = preset_import(
        server=lantern, raw=make_preset(("greet", "Hello.", True)), filename="Inn.json", by=alice
    )
    with django_capture_on_commit_callbacks(execute=True):
        push(client, api_token, tavern())
    client.force_login(alice)
    answer = client.post(
        f"/servers/{LANTERN}/presets/channels/", {"channel": CELLAR, "preset": inn.preset.pk}, follow=True
    ).content.decode()
    assert "#cellar now uses “Inn”." in answer and f"Channel {CELLAR}" not in answer
    home = client.get(f"/servers/{LANTERN}/").content.decode()
    recent = home[home.index('data-testid="audit-events"') :]
    assert "Channel preset set" in recent and "channel: #cellar" in recent and f"{CELLAR}<" not in recent


def test_the_pickers_list_only_the_latest_pushs_channels_and_tell_two_miras_apart(
    client, api_token, alice, lantern, django_capture_on_commit_callbacks
):
    from presets.services import preset_import
    from tests.presets.conftest import make_preset

    preset_import(server=lantern, raw=make_preset(("greet", "Hello.", True)), filename="Inn.json", by=alice)
    with django_capture_on_commit_callbacks(execute=True):
        push(client, api_token, tavern())
        push(
            client,
            api_token,
            {
                "channels": [{"id": GENERAL, "name": "general"}],
                "members": [
                    {"id": "111111111111111111", "display_name": "Mira"},
                    {"id": "222222222222222222", "display_name": "Mira"},
                ],
            },
        )
    client.force_login(alice)
    presets_page = client.get(f"/servers/{LANTERN}/presets/").content.decode()
    picker = presets_page[presets_page.index('data-testid="channel-picker"') :]
    picker = picker[: picker.index("</select>")]
    assert "#general" in picker and "#cellar" not in picker  # the cellar was not in the latest push
    review = client.get(f"/servers/{LANTERN}/memory/").content.decode()
    assert "Mira (…1111)" in review and "Mira (…2222)" in review
