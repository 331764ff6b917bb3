"""Who answers next (docs/groups.md): the rules SillyTavern 1.18 applies per activation strategy,
exact where they are exact, and the talkativeness draw measured over many seeds; then the bot's
`POST …/groups/<name>/next`."""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest
from django.urls import reverse

from core.actors import SYSTEM
from engine.cards import Card
from engine.groups import ChatLine, Group, GroupMember, next_speakers, talkativeness
from groups import services

SEEDS = range(4000)


def member(name: str, chance: object = None, *, muted: bool = False) -> GroupMember:
    extensions = {} if chance is None else {"talkativeness": chance}
    return GroupMember(card=Card(spec="chara_card_v2", name=name, extensions=extensions), muted=muted)


def party(*members: GroupMember, strategy: str = "natural", self_responses: bool = False) -> Group:
    return Group(name="Party", members=members, strategy=strategy, allow_self_responses=self_responses)


def user(text: str, name: str = "Ann") -> ChatLine:
    return ChatLine(role="user", name=name, content=text)


def said(name: str, text: str = "…") -> ChatLine:
    return ChatLine(role="assistant", name=name, content=text)


QUIET = (member("Mira", 0), member("Tomas", 0), member("Old Tom", 0))


def test_list_order_is_every_unmuted_member_in_order():
    group = party(member("Mira"), member("Tomas", muted=True), member("Old Tom"), strategy="list")
    assert next_speakers(group, [user("hi")], seed=1) == ["Mira", "Old Tom"]


def test_manual_waits_for_the_user_and_only_an_unattended_group_draws_one_member():
    group = party(member("Mira"), member("Tomas", muted=True), member("Old Tom"), strategy="manual")
    assert next_speakers(group, [user("Mira, Old Tom?")], seed=1) == []
    drawn = {tuple(next_speakers(group, [user("hi"), said("Mira")], seed=s)) for s in range(200)}
    assert drawn == {("Mira",), ("Old Tom",)}


def test_natural_order_answers_with_the_members_named_in_the_order_named():
    group = party(*QUIET)  # nobody speaks up unasked
    assert next_speakers(group, [user("Old Tom, and you Mira: the lamp!")], seed=7) == ["Old Tom", "Mira"]
    # Words are matched whole and without case: "tom" names Old Tom, "tomas" only Tomas.
    assert next_speakers(group, [user("where is TOMAS")], seed=7) == ["Tomas"]
    assert next_speakers(group, [user("tom?")], seed=7) == ["Old Tom"]


def test_natural_order_splits_words_as_sillytavern_does_ascii_only():
    group = party(member("Jean-Luc", 0), member("Zoë", 0))
    assert next_speakers(group, [user("luc, are you there")], seed=3) == ["Jean-Luc"]
    assert next_speakers(group, [user("zo")], seed=3) == ["Zoë"]  # "ë" is not a word character


def test_a_muted_member_named_in_the_message_does_not_answer():
    group = party(member("Mira", 0), member("Tomas", 0, muted=True))
    assert all(next_speakers(group, [user("Tomas!")], seed=s) == ["Mira"] for s in range(50))


def test_the_last_speaker_does_not_answer_itself_unless_the_group_allows_it():
    chatty = (member("Mira", 1), member("Tomas", 1), member("Old Tom", 1))
    after_tomas = [user("hi"), said("Tomas", "Ask Tomas, he knows.")]
    for seed in range(50):
        assert sorted(next_speakers(party(*chatty), after_tomas, seed)) == ["Mira", "Old Tom"]
        assert "Tomas" in next_speakers(party(*chatty, self_responses=True), after_tomas, seed)
    # After a user's message nobody is barred, not even the member who spoke before it.
    assert sorted(next_speakers(party(*chatty), [said("Tomas"), user("and?")], 1)) == [
        "Mira",
        "Old Tom",
        "Tomas",
    ]


def test_a_narrator_line_names_members_as_a_message_does_and_its_narrator_is_nobody_to_bar():
    group = party(*QUIET)
    narrated = [user("hi"), ChatLine(role="system", name="Narrator", content="Old Tom enters, then Mira.")]
    assert next_speakers(group, narrated, seed=3) == ["Old Tom", "Mira"]
    unnamed = [user("hi"), ChatLine(role="system", name="Narrator", content="Rain falls.")]
    drawn = {next_speakers(group, unnamed, seed=s)[0] for s in range(300)}
    assert drawn == {"Mira", "Tomas", "Old Tom"}


def test_when_nobody_speaks_up_one_unmuted_member_answers_preferring_those_who_ever_do():
    silent_but_one = party(member("Mira", 0), member("Tomas", 0.01), member("Old Tom", 0, muted=True))
    drawn = {tuple(next_speakers(silent_but_one, [user("hello")], seed=s)) for s in range(500)}
    assert drawn == {("Tomas",)}  # the only one who ever speaks up, chosen when its draw fails too
    everyone_silent = party(*QUIET)
    counted = Counter(next_speakers(everyone_silent, [user("hello")], seed=s)[0] for s in range(600))
    assert set(counted) == {"Mira", "Tomas", "Old Tom"} and min(counted.values()) > 120


def test_talkativeness_is_a_seeded_draw_with_that_probability():
    group = party(member("Mira", 0.3), member("Tomas", "0.8"), member("Old Tom", 1))
    picked = Counter(name for s in SEEDS for name in next_speakers(group, [user("hello")], seed=s))
    assert picked["Old Tom"] == len(SEEDS)
    assert abs(picked["Mira"] / len(SEEDS) - 0.3) < 0.03
    assert abs(picked["Tomas"] / len(SEEDS) - 0.8) < 0.03
    assert next_speakers(group, [user("hello")], seed=11) == next_speakers(group, [user("hello")], seed=11)


def test_talkativeness_is_read_as_sillytavern_reads_it():
    assert talkativeness({}) == 0.5 and talkativeness({"talkativeness": "abc"}) == 0.5
    assert talkativeness({"talkativeness": "0.25"}) == 0.25 and talkativeness({"talkativeness": 1}) == 1.0
    assert talkativeness({"talkativeness": ""}) == 0.0


def test_pooled_order_picks_one_who_has_not_spoken_since_the_users_last_message():
    group = party(
        member("Mira"), member("Tomas"), member("Old Tom"), member("Gull", muted=True), strategy="pooled"
    )
    history = [
        said("Old Tom"),
        user("hi"),
        said("Mira"),
        ChatLine("system", "Narrator", "Rain."),
        said("Tomas"),
    ]
    assert {tuple(next_speakers(group, history, seed=s)) for s in range(100)} == {("Old Tom",)}
    # Everyone has spoken: anyone but the last speaker.
    history.append(said("Old Tom"))
    assert {tuple(next_speakers(group, history, seed=s)) for s in range(200)} == {("Mira",), ("Tomas",)}
    # A user's message starts a new round: any unmuted member.
    history.append(user("again"))
    assert {tuple(next_speakers(group, history, seed=s)) for s in range(200)} == {
        ("Mira",),
        ("Tomas",),
        ("Old Tom",),
    }


# -- the API ------------------------------------------------------------------------------------------


@pytest.fixture
def stored_party(lantern, party_cards, committed):
    with committed(execute=True):
        return services.group_save(
            server=lantern,
            name="Party",
            members=["Mira", "Tomas", "Old Tom"],
            muted=["Old Tom"],
            strategy="list",
            by=SYSTEM,
        )


def post_next(client, server_id, body, token, name="Party"):
    return client.post(
        reverse("groups:api-next", args=[server_id, name]),
        data=json.dumps(body) if not isinstance(body, bytes) else body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )


@pytest.mark.django_db
def test_the_bot_asks_who_answers_next(client, lantern, stored_party, api_token):
    answer = post_next(
        client,
        lantern.pk,
        {"messages": [{"role": "user", "name": "Ann", "content": "hi"}], "seed": 5},
        api_token,
    )
    assert answer.status_code == 200
    assert answer.json() == {"speakers": ["Mira", "Tomas"], "strategy": "list", "seed": 5}
    drawn = post_next(client, lantern.pk, {"messages": []}, api_token).json()
    assert isinstance(drawn["seed"], int) and drawn["speakers"] == ["Mira", "Tomas"]


@pytest.mark.django_db
def test_a_warm_next_makes_no_query(client, lantern, stored_party, api_token, django_assert_num_queries):
    body = {"messages": [{"role": "user", "name": "Ann", "content": "hi"}], "seed": 5}
    post_next(client, lantern.pk, body, api_token)
    timings = []
    with django_assert_num_queries(0):
        for _ in range(20):
            started = time.perf_counter()
            assert post_next(client, lantern.pk, body, api_token).status_code == 200
            timings.append(time.perf_counter() - started)
    assert sorted(timings)[10] < 0.05  # the median, with a wide margin for a shared test machine


@pytest.mark.django_db
def test_a_trigger_makes_that_member_answer_next_even_muted_and_is_audited(
    client, lantern, stored_party, api_token
):
    from servers.models import AuditEvent

    body = {"messages": [], "trigger": {"member": "Old Tom", "message": "Tell them about the storm."}}
    answer = post_next(client, lantern.pk, body, api_token).json()
    assert answer["speakers"] == ["Old Tom"]
    assert answer["trigger"] == {"member": "Old Tom", "message": "Tell them about the storm."}
    event = AuditEvent.objects.get(action="group.trigger")
    assert event.detail["member"] == "Old Tom" and event.actor_label.startswith("api token ")
    by_id = {"member": stored_party.memberships.get(card__name="Tomas").card_id, "message": "You next."}
    assert post_next(client, lantern.pk, {"trigger": by_id}, api_token).json()["speakers"] == ["Tomas"]


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "status", "sentence"),
    [
        ({"messages": "hi"}, 400, "`messages` must be a list"),
        ({"messages": [{"role": "bot", "content": "x"}]}, 400, "`messages[0].role`"),
        ({"messages": [{"role": "user"}] * 201}, 400, "at most 200 messages"),
        ({"seed": -1}, 400, "`seed`"),
        ({"trigger": {"member": "Gull", "message": "hi"}}, 400, "“Gull” is not a member"),
        ({"trigger": {"member": "Mira", "message": "x" * 2001}}, 400, "at most 2000 characters"),
    ],
)
def test_a_bad_next_request_is_answered_with_one_sentence(
    client, lantern, stored_party, api_token, body, status, sentence
):
    answer = post_next(client, lantern.pk, body, api_token)
    assert answer.status_code == status and sentence in answer.json()["error"]


@pytest.mark.django_db
def test_an_oversized_body_is_refused_before_it_is_read(client, lantern, stored_party, api_token):
    answer = post_next(client, lantern.pk, b'{"messages": [' + b" " * (300 * 1024) + b"]}", api_token)
    assert answer.status_code == 413


@pytest.mark.django_db
def test_charlie_cannot_ask_about_the_lantern_guilds_group(
    client, lantern, stored_party, harbor, harbor_token
):
    assert post_next(client, lantern.pk, {"messages": []}, harbor_token).status_code == 404
    answer = post_next(client, harbor.pk, {"messages": []}, harbor_token)
    assert answer.status_code == 404 and "no group named “Party”" in answer.json()["error"]


@pytest.mark.django_db
def test_triggers_are_bounded_per_channel_and_minute(client, settings, lantern, stored_party, api_token):
    """Two members that keep triggering each other in one channel are stopped after the minute's
    allowance; another channel of the same group is not held back, and the refused triggers are
    not audited."""
    from servers.models import AuditEvent

    settings.GROUP_TRIGGERS_PER_MINUTE = 3

    def trigger(channel: str, member: str = "Mira") -> Any:
        body = {"trigger": {"member": member, "message": "Your turn.", "channel": channel}}
        return post_next(client, lantern.pk, body, api_token)

    answers = [trigger("601", member).status_code for member in ("Mira", "Tomas", "Mira", "Tomas")]
    assert answers == [200, 200, 200, 429]
    refused = trigger("601")
    assert refused.status_code == 429
    assert refused.json()["error"].startswith("At most 3 triggers a minute in this channel; try again in")
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert trigger("602").status_code == 200
    assert AuditEvent.objects.filter(action="group.trigger").count() == 4
    # a trigger that names no channel counts against its group's minute
    no_channel = {"trigger": {"member": "Mira", "message": "Your turn."}}
    assert [post_next(client, lantern.pk, no_channel, api_token).status_code for _ in range(4)] == [
        200,
        200,
        200,
        429,
    ]
    bad = {"trigger": {"member": "Mira", "message": "x", "channel": "general"}}
    assert (
        "`trigger.channel` must be a Discord id"
        in post_next(client, lantern.pk, bad, api_token).json()["error"]
    )


def test_a_word_two_names_share_stands_for_the_first_member_who_may_answer():
    """A member's word names the first member (in the group's order) whose name has it; the member
    barred from answering itself is passed over for the next one."""
    group = party(member("Tom Reed", 0), member("Old Tom", 0), member("Mira", 0))
    assert next_speakers(group, [user("tom and mira")], seed=1) == ["Tom Reed", "Mira"]
    after_reed = [user("hi"), said("Tom Reed", "Ask Tom, or Mira.")]
    assert next_speakers(group, after_reed, seed=1) == ["Old Tom", "Mira"]


@pytest.mark.django_db
def test_a_next_body_past_the_limit_is_refused_with_a_json_413(client, lantern, stored_party, api_token):
    """The work of `next` grows with its message's words; the body limit bounds it."""
    huge = {"messages": [{"role": "user", "name": "Ann", "content": "Mira " * 60_000}]}
    answer = post_next(client, lantern.pk, huge, api_token)
    assert answer.status_code == 413
    assert answer.json() == {"error": "The request body is larger than 256 KiB."}


def test_next_reads_the_channels_stored_conversation_with_each_members_name(
    client, lantern, party_cards, api_token
):
    from conversations.channels.services import message_post

    services.group_save(server=lantern, name="Crew", members=["Mira", "Tomas"], strategy="pooled", by=SYSTEM)
    message_post(
        server_id=lantern.pk,
        channel_id=42,
        message_id=1,
        role="user",
        content="Hello all",
        author_id=7,
        author_name="Ann",
    )
    message_post(
        server_id=lantern.pk, channel_id=42, message_id=2, role="assistant", content="Hi!", speaker="Mira"
    )
    answer = post_next(client, lantern.pk, {"conversation": "42", "seed": 3}, api_token, name="Crew")
    assert answer.status_code == 200
    assert answer.json()["speakers"] == ["Tomas"]  # Mira already spoke since Ann's message
    both = post_next(client, lantern.pk, {"conversation": "42", "messages": []}, api_token, name="Crew")
    assert both.status_code == 400
    assert post_next(client, lantern.pk, {"conversation": "43"}, api_token, name="Crew").status_code == 404
