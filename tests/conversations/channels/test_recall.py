"""Recall (docs/channels.md#recall): the channel tool answers the stored messages of this channel
that share the most words with the query, at most 5, each cut to 500 characters, never another
channel's or server's, never a deleted message or a swipe that is not shown; audited."""

from __future__ import annotations

import pytest

from servers.models import AuditEvent

from .conftest import TAVERN

pytestmark = pytest.mark.django_db

CELLAR = "111222333444555777"


def recall(bot, query, *, channel=TAVERN, **extra):
    return bot.call("POST", f"channels/{channel}/tools/recall", {"query": query, **extra})


def recalled(bot, query, **kw):
    answer = recall(bot, query, **kw)
    assert answer.status_code == 200, answer.content
    return [m["content"] for m in answer.json()["result"]["messages"]]


def test_the_messages_sharing_most_words_with_the_query_come_first(bot):
    bot.post("1000", "The silver key is under the mat.", role="user")
    bot.post("1001", "I keep no keys, traveller.")
    bot.post("1002", "Where did the silver key go?", role="user")
    bot.post("1003", "The lamp burns low.")
    answer = recall(bot, "silver KEY mat")
    assert answer.status_code == 200
    found = answer.json()["result"]["messages"]
    assert [m["content"] for m in found] == [
        "The silver key is under the mat.",
        "Where did the silver key go?",
    ]
    assert found[0] == {
        "id": "1000",
        "role": "user",
        "name": "Mira",
        "content": "The silver key is under the mat.",
    }
    event = AuditEvent.objects.get(action="channel.recall")
    assert event.detail == {"channel": TAVERN, "query": "silver KEY mat", "found": 2}


def test_at_most_five_come_back_newest_first_on_a_tie_each_cut_to_500_characters(bot):
    for n in range(8):
        bot.post(str(2000 + n), f"Storm report {n}. " + "rain " * 200)
    found = recall(bot, "storm").json()["result"]["messages"]
    assert [m["id"] for m in found] == ["2007", "2006", "2005", "2004", "2003"]
    assert all(len(m["content"]) == 500 for m in found)


def test_a_deleted_message_and_a_swipe_not_shown_are_never_recalled(bot):
    bot.post("3000", "The dragon sleeps in the well.")
    bot.call("DELETE", f"channels/{TAVERN}/messages/3000")
    bot.post("3001", "The griffin nests on the roof.")
    bot.call("POST", f"channels/{TAVERN}/messages/3001/swipes", {"content": "Nothing nests anywhere."})
    assert recalled(bot, "dragon well") == []
    assert recalled(bot, "griffin roof") == []
    assert recalled(bot, "nests") == ["Nothing nests anywhere."]


def test_another_channel_of_the_same_server_is_not_searched(bot):
    bot.post("4000", "The cellar smells of apples.", channel=CELLAR)
    bot.post("4001", "The tavern smells of smoke.")
    assert recalled(bot, "smells apples") == ["The tavern smells of smoke."]
    assert recalled(bot, "apples", channel=CELLAR) == ["The cellar smells of apples."]


def test_charlie_cannot_recall_the_lantern_guilds_channel_and_his_own_channel_is_his(bot, harbor_bot):
    bot.post("5000", "The vault code is 7-7-1.")
    assert bot.call("POST", f"channels/{TAVERN}/tools/recall", {"query": "vault"}).status_code == 200
    stolen = harbor_bot.client.post(
        f"/api/v1/servers/{bot.server}/channels/{TAVERN}/tools/recall",
        data={"query": "vault code"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {harbor_bot.token}",
    )
    assert stolen.status_code == 404 and "7-7-1" not in stolen.content.decode()
    # The same channel id under Harbor Hall is Harbor Hall's own, and holds nothing of the Guild's.
    assert recalled(harbor_bot, "vault code") == []


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        ({"query": ""}, "`query` must be the words"),
        ({"query": 7}, "`query` must be the words"),
        ({"query": "x" * 201}, "`query` has at most 200 characters."),
        ({"query": "key", "limit": 50}, "limit"),
    ],
)
def test_a_bad_recall_is_refused_in_one_sentence_and_not_audited(bot, body, sentence):
    answer = bot.call("POST", f"channels/{TAVERN}/tools/recall", body)
    assert answer.status_code == 400 and sentence in answer.json()["error"]
    assert not AuditEvent.objects.filter(action="channel.recall").exists()


def test_a_query_of_exactly_200_characters_is_read(bot):
    bot.post("6000", "A " + "lamp " * 5)
    assert recalled(bot, ("lamp " * 40)[:200]) == ["A " + "lamp " * 5]
