"""The bot's events on a stored channel conversation (docs/channels.md#events)."""

from __future__ import annotations

import pytest

from conversations.models import ChannelMessage
from servers.models import AuditEvent

from .conftest import ASKER, TAVERN

pytestmark = pytest.mark.django_db


def test_a_reply_with_a_write_macro_is_answered_without_it_and_sets_the_variable(bot):
    response = bot.post("1000", "You strike the goblin. {{setvar::hp::50}}\nIt flees.")
    assert response.status_code == 201
    data = response.json()
    assert data["message"]["content"] == "You strike the goblin.\nIt flees."
    assert data["message"]["ops"] == [{"op": "setvar", "key": "hp", "value": "50"}]
    assert data["message"]["id"] == "1000"
    assert data["variables"] == {"hp": "50"}


def test_ops_resolve_in_order_against_the_state_so_far(bot):
    bot.post("1000", "{{setvar::gold::10}}")
    data = bot.post("1001", "{{addvar::gold::5}} {{setvar::purse::{{getvar::gold}} coins}}").json()
    assert data["variables"] == {"gold": 15, "purse": "15 coins"}


def test_the_same_id_twice_answers_200_with_what_is_stored_and_adds_nothing(bot):
    first = bot.post("1000", "{{incvar::turn}} Hello.")
    again = bot.post("1000", "{{incvar::turn}} Hello.")
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["message"] == first.json()["message"]
    assert bot.variables() == {"turn": 1}
    assert ChannelMessage.objects.count() == 1


def test_a_users_write_macros_write_nothing_by_default_and_stay_in_the_text(bot):
    data = bot.post("1000", "I cheat {{setvar::gold::9999}}", role="user").json()
    assert data["message"]["content"] == "I cheat {{setvar::gold::9999}}"
    assert data["message"]["ops"] == []
    assert data["variables"] == {}


def test_a_server_that_allows_users_write_macros_extracts_them(bot, lantern, alice):
    from conversations.channels.services import settings_set

    settings_set(server=lantern, user_writes=True, keep_messages=500, keep_days=30, by=alice)
    data = bot.post("1000", "I pick the lock {{setvar::door::open}}", role="user").json()
    assert data["message"]["content"] == "I pick the lock"
    assert data["variables"] == {"door": "open"}


def test_deleting_a_message_removes_its_ops_and_replays_the_rest(bot):
    bot.post("1000", "{{setvar::gold::10}}")
    bot.post("1001", "{{addvar::gold::5}}{{setvar::mood::glad}}")
    response = bot.call("DELETE", f"channels/{TAVERN}/messages/1000")
    assert response.status_code == 200
    assert bot.variables() == {"gold": 5, "mood": "glad"}


def test_an_edit_changes_the_text_without_extracting_and_keeps_the_ops(bot):
    bot.post("1000", "A {{setvar::hp::50}}")
    response = bot.call("PATCH", f"channels/{TAVERN}/messages/1000", {"content": "B {{setvar::hp::1}}"})
    assert response.status_code == 200
    assert response.json()["message"]["content"] == "B {{setvar::hp::1}}"
    assert response.json()["message"]["ops"] == [{"op": "setvar", "key": "hp", "value": "50"}]
    assert bot.variables() == {"hp": "50"}


def test_a_regenerated_reply_is_a_new_current_swipe_extracted_against_the_state_before_it(bot):
    bot.post("1000", "{{setvar::hp::10}}")
    bot.post("1001", "Ouch. {{decvar::hp}}")
    response = bot.call(
        "POST", f"channels/{TAVERN}/messages/1001/swipes", {"content": "Healed! {{incvar::hp}}"}
    )
    assert response.status_code == 201
    data = response.json()
    assert data["message"]["content"] == "Healed!"
    assert (data["message"]["swipe"], data["message"]["swipes"]) == (1, 2)
    assert data["variables"] == {"hp": 11}


def test_the_same_regenerated_text_posted_again_is_a_retry(bot):
    bot.post("1000", "one")
    bot.call("POST", f"channels/{TAVERN}/messages/1000/swipes", {"content": "two"})
    again = bot.call("POST", f"channels/{TAVERN}/messages/1000/swipes", {"content": "two"})
    assert again.status_code == 200
    assert again.json()["message"]["swipes"] == 2


def test_a_retried_regeneration_with_a_random_write_macro_adds_one_swipe(bot):
    bot.post("1000", "The chest is shut.")
    loot = "{{setvar::loot::{{random::a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p}}}}Found {{getvar::loot}}."
    first = bot.call("POST", f"channels/{TAVERN}/messages/1000/swipes", {"content": loot})
    retry = bot.call("POST", f"channels/{TAVERN}/messages/1000/swipes", {"content": loot})
    assert (first.status_code, retry.status_code) == (201, 200)
    assert retry.json()["message"]["swipes"] == 2
    assert retry.json()["message"]["ops"] == first.json()["message"]["ops"]
    assert retry.json()["variables"] == first.json()["variables"]


def test_switching_swipes_replays_the_chosen_swipes_ops(bot):
    bot.post("1000", "{{setvar::path::left}}")
    bot.call("POST", f"channels/{TAVERN}/messages/1000/swipes", {"content": "{{setvar::path::right}}"})
    assert bot.variables() == {"path": "right"}
    response = bot.call("PUT", f"channels/{TAVERN}/messages/1000/swipes/current", {"index": 0})
    assert response.status_code == 200
    assert response.json()["variables"] == {"path": "left"}


def test_deleting_the_current_swipe_hands_over_to_the_one_before(bot):
    bot.post("1000", "{{setvar::path::left}}")
    bot.call("POST", f"channels/{TAVERN}/messages/1000/swipes", {"content": "{{setvar::path::right}}"})
    response = bot.call("DELETE", f"channels/{TAVERN}/messages/1000/swipes/1")
    assert response.status_code == 200
    assert response.json()["message"]["swipes"] == 1
    assert response.json()["variables"] == {"path": "left"}


def test_a_message_keeps_its_last_swipe(bot):
    bot.post("1000", "only")
    response = bot.call("DELETE", f"channels/{TAVERN}/messages/1000/swipes/0")
    assert response.status_code == 400
    assert "at least one swipe" in response.json()["error"]


def test_a_swipe_index_out_of_range_is_404_and_a_wrong_type_400(bot):
    bot.post("1000", "only")
    assert bot.call("PUT", f"channels/{TAVERN}/messages/1000/swipes/current", {"index": 3}).status_code == 404
    bad = bot.call("PUT", f"channels/{TAVERN}/messages/1000/swipes/current", {"index": "1"})
    assert bad.status_code == 400 and "`index`" in bad.json()["error"]


def test_an_event_for_any_part_of_a_split_reply_is_an_event_for_the_reply(bot):
    bot.post("1000", "Part one {{setvar::hp::5}} and two.", parts=["1001", "1002"])
    assert bot.post("1002", "retry of a part").status_code == 200
    assert bot.call("DELETE", f"channels/{TAVERN}/messages/1002").status_code == 200
    assert bot.conversation()["messages"] == []
    assert bot.variables() == {}


def test_a_repeat_may_name_the_pieces_the_bot_posted_since_and_adds_only_those(bot):
    first = bot.post("1000", "A long reply {{setvar::hp::5}}")
    again = bot.post("1000", "A long reply {{setvar::hp::5}}", parts=["1001", "1002"])
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["message"]["parts"] == ["1001", "1002"]
    assert bot.variables() == {"hp": "5"}
    assert bot.post("1003", "another", parts=["1001"]).status_code == 400


def test_unknown_ids_answer_404_json(bot):
    bot.post("1000", "hello")
    for method, path in (
        ("DELETE", f"channels/{TAVERN}/messages/4242"),
        ("PATCH", f"channels/{TAVERN}/messages/4242"),
        ("POST", f"channels/{TAVERN}/messages/4242/swipes"),
        ("GET", "channels/777/conversation"),
        ("DELETE", "channels/777/conversation"),
    ):
        response = bot.call(method, path, {"content": "x"} if method in ("PATCH", "POST") else None)
        assert response.status_code == 404, (method, path)
        assert response.json()["error"]


def test_messages_are_kept_in_discords_order_even_when_an_event_arrives_late(bot, stored_ids):
    bot.post("1000", "{{setvar::log::a}}")
    bot.post("1002", "{{addvar::log::c}}")
    late = bot.post("1001", "{{addvar::log::b}}").json()
    assert stored_ids(bot.conversation()) == ["1000", "1001", "1002"]
    assert late["variables"] == {"log": "abc"}


def test_content_over_32_kib_is_refused_naming_the_field_and_nothing_is_stored(bot):
    response = bot.post("1000", "x" * (32 * 1024 + 1))
    assert response.status_code == 400
    assert "`content`" in response.json()["error"]
    assert ChannelMessage.objects.count() == 0


def test_a_body_over_256_kib_is_refused(bot):
    response = bot.call(
        "POST", f"channels/{TAVERN}/messages", b'{"id": "1", "content": "' + b"x" * 300_000 + b'"}'
    )
    assert response.status_code == 413
    assert ChannelMessage.objects.count() == 0


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"id": "1", "role": "assistant", "content": "x", "histroy": []}, "histroy"),
        ({"id": "1", "role": "assistant", "content": "x", "author": {"id": "5", "nick": "M"}}, "nick"),
        ({"id": "x1", "role": "assistant", "content": "x"}, "id"),
        ({"id": "1", "role": "narrator", "content": "x"}, "role"),
        ({"id": "1", "role": "assistant"}, "content"),
        ({"id": "1", "role": "user", "content": "x"}, "id"),
        ({"id": "1", "role": "assistant", "content": 5}, "content"),
    ],
)
def test_a_bad_event_is_refused_with_a_sentence_naming_the_field(bot, body, field):
    response = bot.call("POST", f"channels/{TAVERN}/messages", body)
    assert response.status_code == 400
    assert field in response.json()["error"]
    assert ChannelMessage.objects.count() == 0


def test_direct_messages_are_never_stored_under_a_server(bot):
    response = bot.post("1000", "psst", role="user", dm=True)
    assert response.status_code == 400
    assert "Direct messages" in response.json()["error"]
    assert ChannelMessage.objects.count() == 0


def test_forgetting_a_member_removes_their_messages_everywhere_and_is_audited(bot, lantern, alice):
    from conversations.channels.services import settings_set

    settings_set(server=lantern, user_writes=True, keep_messages=500, keep_days=30, by=alice)
    bot.post("1000", "{{setvar::wish::gold}}", role="user")
    bot.post("1001", "Noted.", role="user", author={"id": "900000000000000002", "name": "Tom"})
    bot.post("1002", "hi", role="user", channel="5550")
    response = bot.call("DELETE", f"users/{ASKER}/messages")
    assert response.status_code == 200
    assert response.json()["forgotten_messages"] == 2
    assert [m["name"] for m in bot.conversation()["messages"]] == ["Tom"]
    assert bot.variables() == {}
    event = AuditEvent.objects.get(action="channel.member_forget")
    assert event.detail["user"] == ASKER and event.detail["messages"] == 2


def test_forgetting_a_channel_removes_it_and_is_audited(bot):
    bot.post("1000", "{{setvar::hp::3}}")
    response = bot.call("DELETE", f"channels/{TAVERN}/conversation")
    assert response.status_code == 200
    assert response.json()["forgotten_messages"] == 1
    assert bot.call("GET", f"channels/{TAVERN}/conversation").status_code == 404
    assert AuditEvent.objects.filter(action="channel.forget", detail__channel=TAVERN).exists()


def test_another_servers_token_sees_and_changes_nothing_of_this_channel(bot, harbor_bot, lantern, harbor):
    bot.post("1000", "{{setvar::secret::lantern}}")
    assert harbor_bot.call("GET", f"channels/{TAVERN}/conversation").status_code == 404
    assert harbor_bot.call("DELETE", f"channels/{TAVERN}/messages/1000").status_code == 404
    assert harbor_bot.call("DELETE", f"users/{ASKER}/messages").json()["forgotten_messages"] == 0
    # Harbor's token naming Lantern's server is refused outright.
    harbor_bot.server = lantern.pk
    assert harbor_bot.call("GET", f"channels/{TAVERN}/conversation").status_code == 404
    assert bot.variables() == {"secret": "lantern"}


MESSAGES = f"channels/{TAVERN}/messages"
REPLY = f"{MESSAGES}/1000"


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", MESSAGES, [1, 2], "JSON object"),
        ("POST", MESSAGES, b"{not json", "JSON"),
        ("POST", MESSAGES, {"id": "2000", "role": "user", "content": "x", "author": "Mira"}, "`author`"),
        (
            "POST",
            MESSAGES,
            {"id": "2000", "role": "assistant", "content": "x", "author": {"name": 5}},
            "`name`",
        ),
        (
            "POST",
            MESSAGES,
            {"id": "2000", "role": "assistant", "content": "x", "speaker": "M" * 101},
            "`speaker`",
        ),
        ("POST", MESSAGES, {"id": "2000", "role": "assistant", "content": "x", "speaker": 7}, "`speaker`"),
        ("POST", MESSAGES, {"id": "2000", "role": "assistant", "content": "x", "parts": "2001"}, "`parts`"),
        ("POST", MESSAGES, {"id": "2000", "role": "assistant", "content": "x", "parts": ["two"]}, "`parts`"),
        ("POST", MESSAGES, {"id": "2000", "role": "assistant", "content": "x", "parts": ["2000"]}, "`parts`"),
        (
            "POST",
            MESSAGES,
            {"id": "2000", "role": "assistant", "content": "x", "parts": [str(3000 + i) for i in range(21)]},
            "`parts`",
        ),
        ("POST", MESSAGES, {"id": "2000", "role": "assistant", "content": "x", "parent": "up"}, "`parent`"),
        ("POST", MESSAGES, {"id": "2000", "role": "assistant", "content": "x", "dm": "no"}, "`dm`"),
        ("POST", MESSAGES, {"id": "2000", "role": 1, "content": "x"}, "`role`"),
        ("PATCH", REPLY, {}, "`content`"),
        ("PATCH", REPLY, {"content": ["x"]}, "`content`"),
        ("PATCH", REPLY, {"content": "x", "role": "user"}, "role"),
        ("PATCH", REPLY, {"content": "x" * (32 * 1024 + 1)}, "`content`"),
        ("POST", f"{REPLY}/swipes", {}, "`content`"),
        ("POST", f"{REPLY}/swipes", {"content": 3}, "`content`"),
        ("POST", f"{REPLY}/swipes", {"content": "x", "index": 1}, "index"),
        ("PUT", f"{REPLY}/swipes/current", {}, "`index`"),
        ("PUT", f"{REPLY}/swipes/current", {"index": True}, "`index`"),
        ("PUT", f"{REPLY}/swipes/current", {"index": 1.5}, "`index`"),
        ("PUT", f"{REPLY}/swipes/current", {"index": 0, "content": "x"}, "content"),
    ],
)
def test_every_event_route_refuses_bad_input_naming_the_field_and_changes_nothing(
    bot, method, path, body, field
):
    bot.post("1000", "{{setvar::hp::5}}The lamp is lit.")
    bot.call("POST", f"{REPLY}/swipes", {"content": "{{setvar::hp::9}}The lamp is out."})
    before = bot.conversation()
    response = bot.call(method, path, body)
    assert 400 <= response.status_code < 500, response.content
    assert field in response.json()["error"], response.json()
    assert bot.conversation() == before
    assert ChannelMessage.objects.count() == 1
